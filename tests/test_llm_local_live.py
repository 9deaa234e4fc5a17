"""Live: the LLM roles against a real local model (``worldmind llm serve``, after
``make local-llm``). Skipped, with the reason, when no server answers where ``llm:local`` looks
($WORLDMIND_LLM_LOCAL_BASE or http://127.0.0.1:8080/v1)."""

from __future__ import annotations

import pytest

from planner.llm.factory import local_defaults, make_llm_roles
from planner.roles import Goal, KnownObject, PlannerContext
from household.checklist import ChecklistItem
from worldmind.cli_llm import probe

BASE = local_defaults()["api_base"]
_PROBLEM = probe(BASE, timeout=2.0)
pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=f"no local model server at {BASE} ({_PROBLEM}); "
                                "start one with `make local-llm && worldmind llm serve`")


def test_live_grounder_answers_schema_valid_json_with_constrained_decoding() -> None:
    class Fallback:
        def ground(self, goal, context):  # noqa: ANN001, ANN202
            raise AssertionError("not expected for a schema-constrained answer about two objects")

    roles = make_llm_roles("local", {"grounder": Fallback()}, max_repairs=0, timeout=600.0)
    context = PlannerContext(step=1, held_object_id=None, held_object_type=None,
                             known_objects=[KnownObject("Mug|1", "Mug", "Kitchen", (1.0, 0.0, 0.0), last_seen_step=1),
                                            KnownObject("Sink|1", "Sink", "Kitchen", (2.0, 0.0, 0.0), last_seen_step=1)],
                             rooms_seen=["Kitchen"], history=[], experience=[], object_types=["Mug", "Sink"],
                             agent_position=(0.0, 0.0, 0.0))
    goal = Goal(id="g1", text="put the mug in the sink", items=(ChecklistItem.from_dict(
        {"object": {"type": "Mug"}, "predicate": "inReceptacle", "target": {"type": "Sink"}}),))
    grounder = roles["grounder"]
    try:
        grounding = grounder.ground(goal, context)
    except AssertionError:
        pytest.fail(f"the model's answer was refused: {grounder.fallback_log}")
    usage = grounder.client.usage()
    assert usage["decisions"]["by_model"] == 1 and usage["cost_usd"] == 0.0
    assert set(grounding.bindings) <= {"object", "target", "tool"}
