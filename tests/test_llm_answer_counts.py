"""What every LLM report now counts per role: answers, schema-valid answers, accepted answers and
the latency of each call (median, p95); and the bounds that let a constrained decoder close the JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from planner.llm import schemas
from planner.llm.answers import schema_errors
from planner.llm.client import LLMClient, LLMConfig
from planner.llm.roles import LLMDecomposer
from planner.llm.usage import latency_quantile
from planner.roles import PlannerContext
from tests.llm_stub_server import StubServer, chat_reply

GOOD = json.dumps({"goals": [{"id": "g1", "text": "wash the mug", "items": [
    {"object": {"type": "Mug"}, "predicate": "isDirty", "value": False}]}]})
SEMANTIC = json.dumps({"goals": [{"id": "g1", "text": "x", "items": [  # schema-valid, refused by the checks
    {"object": {"type": "Mug", "id": "Mug|1", "count": 2}, "predicate": "isDirty", "value": False}]}]})


def _context() -> PlannerContext:
    from planner.roles import KnownObject
    return PlannerContext(step=0, held_object_id=None, held_object_type=None,
                          known_objects=[KnownObject("Mug|1", "Mug", "Kitchen", (0.0, 0.0, 0.0), last_seen_step=0)],
                          rooms_seen=[], history=[], experience=[], object_types=["Mug", "Sink"])


class _Parser:
    def decompose(self, instruction: str, context: Any) -> list:
        return []


def test_answers_schema_valid_and_accepted_are_counted_per_answer() -> None:
    replies = iter(["not json", SEMANTIC, GOOD])
    with StubServer(lambda body: chat_reply(next(replies))) as server:
        c = LLMClient(LLMConfig(model="openai/stub", api_base=server.base_url, max_repairs=2))
        goals = LLMDecomposer(c, _Parser()).decompose("wash the mug", _context())
    assert [g.id for g in goals] == ["g1"]
    u = c.usage()["by_role"]["decompose"]
    assert (u["calls"], u["answers"], u["schema_valid"], u["accepted"]) == (3, 3, 2, 1)
    assert u["latency_p50_s"] is not None and u["latency_p95_s"] >= u["latency_p50_s"]
    assert len(c.call_latencies("decompose")) == 3
    assert u["call_latencies_s"] == [round(x, 3) for x in c.call_latencies("decompose")]  # poolable over episodes
    assert c.usage()["answers"] == 3  # the episode total sums the roles


def test_latency_quantiles_are_nearest_rank() -> None:
    assert latency_quantile([], 0.5) is None
    assert latency_quantile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert latency_quantile([float(i) for i in range(1, 21)], 0.95) == 19.0
    assert latency_quantile([1.0, 9.0], 0.95) == 9.0


def _walk(schema: Any, path: str = "$") -> list[str]:
    """Places where a decoder held to the schema could write forever: an unbounded free string
    (no enum, no maxLength) or an array without maxItems."""
    out: list[str] = []
    if isinstance(schema, dict):
        kinds = schema.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if "string" in kinds and "enum" not in schema and "maxLength" not in schema and "pattern" not in schema:
            out.append(path)
        if "array" in kinds and "maxItems" not in schema:
            out.append(path)
        if schema.get("type") == "object" and schema.get("additionalProperties") not in (False, None) \
                and "maxProperties" not in schema:
            out.append(path)
        for key, value in schema.items():
            out += _walk(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for k, value in enumerate(schema):
            out += _walk(value, f"{path}[{k}]")
    return out


@pytest.mark.parametrize("name", ["decompose", "refine", "translate", "critique"])
def test_every_role_schema_lets_a_constrained_decoder_close_the_json(name: str) -> None:
    from planner.roles import Goal
    from household.checklist import ChecklistItem
    ctx = _context()
    goal = Goal("g1", "wash the mug", (ChecklistItem.from_dict({"object": {"type": "Mug"}, "predicate": "isDirty",
                                                               "value": False}),))
    schema = {"decompose": lambda: schemas.decompose_schema(ctx), "refine": lambda: schemas.refine_schema(goal, ctx),
              "translate": lambda: schemas.translate_schema(ctx), "critique": lambda: schemas.critique_schema(ctx)}[name]()
    assert _walk(schema) == []


def test_a_looping_answer_is_outside_the_schema() -> None:
    schema = schemas.decompose_schema(_context())
    item = {"object": {"type": "Mug"}, "predicate": "isDirty", "value": False}
    too_many = {"goals": [{"id": f"g{k}", "text": "x", "items": [item]} for k in range(schemas.MAX_GOALS + 1)]}
    assert schema_errors(too_many, schema) == [f"at $.goals: too long: {schemas.MAX_GOALS + 1} items, "
                                               f"at most {schemas.MAX_GOALS}"]
    long_text = {"goals": [{"id": "g1", "text": "wash " * 100, "items": [item]}]}
    assert schema_errors(long_text, schema) == [f"at $.goals[0].text: too long: 500 characters, "
                                                f"at most {schemas.MAX_TEXT_CHARS}"]


@pytest.mark.parametrize("item, problem", [
    ({"object": {"type": "Mug"}, "predicate": "inRoom", "value": "Kitchen", "target": {"type": "Sink"}},
     "'target' was unexpected"),
    ({"object": {"type": "Mug"}, "predicate": "inRoom", "value": True}, "True is not of type 'string'"),
    ({"object": {"type": "Mug"}, "predicate": "inReceptacle"}, "'target' is a required property"),
    ({"object": {"type": "Mug"}, "predicate": "isFilledWithLiquid", "value": "milk"}, "'milk' is not an allowed value"),
])
def test_the_item_schema_states_the_checklist_rules_per_kind_of_predicate(item: dict, problem: str) -> None:
    errors = schema_errors({"goals": [{"id": "g1", "text": "x", "items": [item]}]}, schemas.decompose_schema(_context()))
    assert errors and problem in errors[0]


def test_every_predicate_has_an_item_alternative() -> None:
    from household.checklist import PREDICATES
    item = schemas.decompose_schema(_context())["properties"]["goals"]["items"]["properties"]["items"]["items"]
    names = [n for alt in item["anyOf"] for n in alt["properties"]["predicate"]["enum"]]
    assert sorted(names) == sorted(PREDICATES)


def test_the_bounds_admit_what_the_parser_and_the_agent_write() -> None:
    """A refined goal echoes its hints and a null value: the bounds must not refuse them."""
    schema = schemas.decompose_schema(_context())
    hints = {"object_room": "Kitchen", "quantifier": "all", "all_of": "Plate,Bowl,Mug,Cup,Pan,Pot",
             "category": "dishes", "count_of": "1/all", "distinct_group": "g1",
             "other_goal_types": ",".join(["SomeLongTypeName"] * 20)}
    goal = {"id": "g1", "text": "wash the dishes", "hints": hints, "items": [
        {"object": {"type": "Mug"}, "predicate": "isDirty", "value": None},
        {"object": {"type": "Mug"}, "predicate": "isFilledWithLiquid", "value": None}]}
    assert schema_errors({"goals": [goal]}, schema) == []


def test_hint_names_are_the_known_keys_and_nothing_else() -> None:
    """llama.cpp ignores propertyNames: with free hint names a small model could write a name
    without end. The schema names every known key (planner.goal_hints.HINT_KEYS) and no other."""
    from planner.goal_hints import HINT_KEYS
    schema = schemas.decompose_schema(_context())
    hints = schema["properties"]["goals"]["items"]["properties"]["hints"]
    assert sorted(hints["properties"]) == sorted(k.name for k in HINT_KEYS)
    assert hints["additionalProperties"] is False
    goal = {"id": "g1", "text": "wash the mug", "items": [{"object": {"type": "Mug"}, "predicate": "isDirty",
                                                            "value": False}]}
    assert schema_errors({"goals": [{**goal, "hints": {k.name: "x" for k in HINT_KEYS[:16]}}]}, schema) == []
    errors = schema_errors({"goals": [{**goal, "hints": {"object_roomroomroomroom": "Kitchen"}}]}, schema)
    assert errors and "object_roomroomroomroom" in " ".join(errors)
