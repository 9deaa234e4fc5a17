"""LLM planner roles over litellm's real mock path: validation, repair, fallback, cache, accounting.

No test reaches the network: every litellm call carries ``mock_response=`` (or goes to an
in-process scripted provider), and an autouse fixture makes any socket connect fail the test.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import json  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

from household.checklist import ChecklistItem  # noqa: E402
from planner.llm import (  # noqa: E402
    LLMCacheMissError,
    LLMClient,
    LLMConfig,
    LLMCritic,
    LLMDecomposer,
    LLMGrounder,
    LLMRefiner,
    LLMRoleError,
    LLMTranslator,
    load_llm_config,
    make_llm_roles,
    model_spec_from_planner,
)
from planner.llm import schemas  # noqa: E402
from planner.roles import (  # noqa: E402
    CriticDecision,
    CriticEvent,
    Goal,
    Grounding,
    KnownObject,
    PlannerContext,
    Subgoal,
)

REPO = Path(__file__).resolve().parents[1]
MOCK_MODEL = "openai/worldmind-mock"  # not in litellm's cost map: cost must be 0 / "unknown"
FAKE_KEY = "sk-worldmind-FAKE-7f3a9c21d4e8b6"

VALID = {
    "decompose": json.dumps({"goals": [
        {"id": "g1", "text": "put a mug in the sink", "items": [
            {"object": {"type": "Mug"}, "predicate": "inReceptacle", "target": {"type": "Sink"}}],
         "hints": {"object_room": "Kitchen"}},
        {"id": "g2", "text": "turn on the coffee machine", "items": [
            {"object": {"type": "CoffeeMachine"}, "predicate": "isToggled", "value": True}]}]}),
    "refine": json.dumps({"id": "g1", "text": "put Mug|1|2 in Sink|3", "items": [
        {"object": {"type": "Mug", "id": "Mug|1|2"}, "predicate": "inReceptacle", "target": {"type": "Sink"}}]}),
    "ground": json.dumps({"bindings": {"object": "Mug|1|2", "target": "Sink|3"}}),
    "translate": json.dumps({"subgoals": [
        {"skill": "navigate_to", "args": {"object_id": "Mug|1|2"}},
        {"skill": "pick", "args": {"object_id": "Mug|1|2"}},
        {"skill": "navigate_to", "args": {"object_id": "Sink|3"}},
        {"skill": "place", "args": {"receptacle_id": "Sink|3"}}]}),
    "critique": json.dumps({"verdict": "refine", "diagnosis": "The hand was full.",
                            "fix": [{"skill": "put_down", "args": {}}], "replan_level": "low"}),
}


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open an internet socket fails the test."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any, *args: Any) -> Any:
        if self.family == getattr(socket, "AF_UNIX", None):
            return real_connect(self, address, *args)
        raise AssertionError(f"test tried to reach the network: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Records the kwargs of every litellm.completion call, then runs the real function."""
    import litellm

    calls: list[dict[str, Any]] = []
    real = litellm.completion

    def wrapper(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(litellm, "completion", wrapper)
    return calls


def ctx() -> PlannerContext:
    return PlannerContext(
        step=7, held_object_id=None, held_object_type=None,
        known_objects=[
            KnownObject("Mug|1|2", "Mug", "Kitchen", (1.0, 2.0, 0.9), {"isDirty": True}, 5),
            KnownObject("Sink|3", "Sink", "Kitchen", (2.0, 2.0, 0.9), {}, 6),
            KnownObject("CoffeeMachine|4", "CoffeeMachine", "Kitchen", (3.0, 2.0, 0.9), {"isToggled": False}, 4),
        ],
        rooms_seen=["Kitchen"], history=["navigate_to(Mug|1|2)"], experience=["close the fridge after use"],
        object_types=["Apple", "CoffeeMachine", "Knife", "Mug", "Sink"],
    )


def goal() -> Goal:
    item = ChecklistItem.from_dict({"object": {"type": "Mug"}, "predicate": "inReceptacle", "target": {"type": "Sink"}})
    return Goal(id="g1", items=(item,), text="put a mug in the sink")


def event() -> CriticEvent:
    return CriticEvent(kind="action", subgoal=Subgoal("pick", {"object_id": "Mug|1|2"}, goal_id="g1"),
                       action="PickupObject", success=False, error="hand is full", context_note="held: Apple|9")


class FakeFallback:
    """Stands in for the deterministic roles (written elsewhere): answers recognisably."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def decompose(self, instruction: str, context: PlannerContext) -> list[Goal]:
        self.calls.append("decompose")
        return [Goal(id="fallback", items=(), text=instruction)]

    def refine(self, goal: Goal, context: PlannerContext) -> Goal:
        self.calls.append("refine")
        return goal

    def ground(self, goal: Goal, context: PlannerContext) -> Grounding:
        self.calls.append("ground")
        return Grounding(goal_id=goal.id, bindings={"object": None})

    def translate(self, goal: Goal, grounding: Grounding, context: PlannerContext) -> list[Subgoal]:
        self.calls.append("translate")
        return [Subgoal("search", {"object_type": "Mug"}, goal_id=goal.id)]

    def critique(self, event: CriticEvent, context: PlannerContext) -> CriticDecision:
        self.calls.append("critique")
        return CriticDecision(verdict="replan", diagnosis="fallback critic")


def client(mocks: list[Any] | None, **kw: Any) -> LLMClient:
    return LLMClient(LLMConfig(model=kw.pop("model", MOCK_MODEL), mock_responses=mocks, **kw))


def run_role(role: str, c: LLMClient, fallback: Any = None) -> Any:
    """Invoke one role by its client role name."""
    if role == "decompose":
        return LLMDecomposer(c, fallback).decompose("Put a mug in the sink, then start the coffee machine.", ctx())
    if role == "refine":
        return LLMRefiner(c, fallback).refine(goal(), ctx())
    if role == "ground":
        return LLMGrounder(c, fallback).ground(goal(), ctx())
    if role == "translate":
        g = Grounding("g1", {"object": "Mug|1|2", "target": "Sink|3"})
        return LLMTranslator(c, fallback).translate(goal(), g, ctx())
    if role == "critique":
        return LLMCritic(c, fallback).critique(event(), ctx())
    raise AssertionError(role)


# --------------------------------------------------------------------------- valid output per role


def test_decomposer_valid_output() -> None:
    c = client([VALID["decompose"]])
    goals = run_role("decompose", c)
    assert [g.id for g in goals] == ["g1", "g2"]
    assert goals[0].items[0].predicate == "inReceptacle" and goals[0].items[0].target.type == "Sink"
    assert goals[0].hints == {"object_room": "Kitchen"}
    assert goals[1].items[0].value is True
    assert c.usage()["calls"] == 1 and c.usage()["repairs"] == 0 and c.usage()["fallbacks"] == 0


def test_refiner_valid_output() -> None:
    refined = run_role("refine", client([VALID["refine"]]))
    assert refined.id == "g1" and refined.items[0].object.id == "Mug|1|2"


def test_grounder_valid_output() -> None:
    grounding = run_role("ground", client([VALID["ground"]]))
    assert grounding == Grounding("g1", {"object": "Mug|1|2", "target": "Sink|3"})


def test_translator_valid_output_sets_goal_id() -> None:
    subgoals = run_role("translate", client([VALID["translate"]]))
    assert [s.skill for s in subgoals] == ["navigate_to", "pick", "navigate_to", "place"]
    assert subgoals[3].args == {"receptacle_id": "Sink|3"}
    assert all(s.goal_id == "g1" for s in subgoals)


def test_critic_valid_output() -> None:
    decision = run_role("critique", client([VALID["critique"]]))
    assert decision.verdict == "refine" and decision.replan_level == "low"
    assert decision.fix == (Subgoal("put_down", {}, goal_id="g1"),)


def test_critic_drops_fix_unless_refine() -> None:
    answer = json.dumps({"verdict": "replan", "diagnosis": "wrong object", "fix": [{"skill": "put_down", "args": {}}],
                         "replan_level": "high"})
    decision = run_role("critique", client([answer]))
    assert decision == CriticDecision("replan", "wrong object", (), "high")


def test_prompt_lists_vocabulary_memory_and_example() -> None:
    messages = LLMTranslator(client([])).messages(goal(), Grounding("g1", {"object": "Mug|1|2"}), ctx())
    text = "\n".join(m["content"] for m in messages)
    for expected in ("Mug|1|2 | Mug | Kitchen", "navigate_to(object_id)", "Object types (this goal's): Mug, Sink",
                     "Example", "close the fridge after use", "step 7"):
        assert expected in text
    # Only the goal's types and candidates (planner.llm.roles.goal_types): the coffee machine is not listed.
    assert "CoffeeMachine" not in text


# --------------------------------------------------------------------------- failures and repair


@pytest.mark.parametrize("bad, kind", [
    ("", "empty"),
    ('{"goals": [{"id": "g1", "text": "put a mug', "truncated"),
    ('{"plan": ["pick mug"]}', "schema"),
    ("I'm sorry, I can't help with that.", "refusal"),
    ("Sure! The plan is to pick up the mug.", "not_json"),
])
def test_bad_answer_is_repaired_on_second_answer(bad: str, kind: str, spy: list[dict[str, Any]]) -> None:
    c = client([bad, VALID["decompose"]])
    goals = run_role("decompose", c, FakeFallback())
    assert [g.id for g in goals] == ["g1", "g2"]  # the model's answer, not the fallback
    assert len(spy) == 2 and c.usage()["repairs"] == 1 and c.usage()["fallbacks"] == 0
    repair = spy[1]["messages"]
    assert repair[:-2] == spy[0]["messages"]  # the same conversation, extended
    assert repair[-2]["role"] == "assistant" and repair[-1]["role"] == "user"
    assert "Problem:" in repair[-1]["content"]


@pytest.mark.parametrize("bad, kind", [
    (['{"goals": [{"id": "g1", "text": "put a mug', '{"goals": [{"id": "g2", "text": "put', '{"goals": ['],
     "truncated"),
    (['{"plan": ["pick mug"]}', '{"plan": ["pick cup"]}', '{"plan": []}'], "schema"),
    (["I'm sorry, I can't help with that", "Sorry, I can't help with that.", "I'm sorry, I can't do that"],
     "refusal"),
])
def test_repair_bound_reached_uses_fallback_and_records_why(bad: list[str], kind: str,
                                                            spy: list[dict[str, Any]]) -> None:
    fb = FakeFallback()
    c = client(bad, max_repairs=2)
    role = LLMDecomposer(c, fb)
    goals = role.decompose("put a mug in the sink", ctx())
    assert [g.id for g in goals] == ["fallback"] and fb.calls == ["decompose"]
    assert len(spy) == 3  # 1 + max_repairs, then no more calls
    usage = c.usage()
    assert usage["repairs"] == 2 and usage["failures"] == 1 and usage["fallbacks"] == 1
    assert usage["fallback_events"][0]["role"] == "decompose"
    assert f"[{kind}]" in usage["fallback_events"][0]["reason"]
    assert role.fallback_log[0]["kind"] == kind and role.fallback_log[0]["step"] == 7


def test_schema_error_is_quoted_in_repair_prompt(spy: list[dict[str, Any]]) -> None:
    bad = json.dumps({"goals": [{"id": "g1", "text": "x", "items": [
        {"object": {"type": "Mug"}, "predicate": "isLevitating"}]}]})
    c = client([bad, VALID["decompose"]])
    run_role("decompose", c)
    assert "isLevitating" in spy[1]["messages"][-1]["content"]
    assert "$.goals[0].items[0].predicate" in spy[1]["messages"][-1]["content"]


def test_a_state_the_object_cannot_take_is_repaired_as_the_parser_refuses_it(spy: list[dict[str, Any]]) -> None:
    """"The sink clean" is met before the robot moves (a sink is never dirty in THOR): the answer
    is sent back with the asset database's reason, as the parser reports the same clause."""
    never_dirty = json.dumps({"goals": [{"id": "g1", "text": "clean the sink", "items": [
        {"object": {"type": "Sink"}, "predicate": "isDirty", "value": False}]}]})
    c = client([never_dirty, VALID["decompose"]])
    goals = run_role("decompose", c)
    assert [g.id for g in goals] == ["g1", "g2"] and c.usage()["repairs"] == 1
    assert ("at $.goals[0].items[0].predicate: the asset database says Sink is not dirtyable"
            in spy[1]["messages"][-1]["content"])
    # opening and switching the same way: a mug is never open, so "the mug closed" is met already
    spy.clear()
    never_open = json.dumps({"goals": [{"id": "g1", "text": "close the mug", "items": [
        {"object": {"type": "Mug"}, "predicate": "isOpen", "value": False}]}]})
    c = client([never_open, VALID["decompose"]])
    run_role("decompose", c)
    assert ("at $.goals[0].items[0].predicate: the asset database says Mug is not openable"
            in spy[1]["messages"][-1]["content"])


def test_checklist_rules_in_the_schema_are_quoted_for_the_items_own_predicate(spy: list[dict[str, Any]]) -> None:
    """The item schema has one alternative per kind of predicate; a repair quotes the alternative
    of the item's own predicate (inReceptacle needs a target), not the closest other one."""
    no_target = json.dumps({"goals": [{"id": "g1", "text": "x", "items": [
        {"object": {"type": "Mug"}, "predicate": "inReceptacle"}]}]})
    c = client([no_target, VALID["decompose"]])
    run_role("decompose", c)
    assert "at $.goals[0].items[0]: 'target' is a required property" in spy[1]["messages"][-1]["content"]


def test_checklist_rules_beyond_json_schema_trigger_repair(spy: list[dict[str, Any]]) -> None:
    """An id with a count over 1 is a rule only the semantic check states."""
    two_of_one = json.dumps({"goals": [{"id": "g1", "text": "x", "items": [
        {"object": {"type": "Mug", "id": "Mug|1|2", "count": 2}, "predicate": "isDirty", "value": False}]}]})
    c = client([two_of_one, VALID["decompose"]])
    run_role("decompose", c)
    assert "count must be 1" in spy[1]["messages"][-1]["content"]


def test_unknown_object_type_is_rejected() -> None:
    bad = json.dumps({"goals": [{"id": "g1", "text": "x", "items": [
        {"object": {"type": "Teapot"}, "predicate": "isToggled"}]}]})
    fb = FakeFallback()
    run_role("decompose", client([bad] * 3), fb)
    assert fb.calls == ["decompose"]


@pytest.mark.parametrize("role, bad", [
    ("ground", {"bindings": {"object": "Mug|9|9", "target": "Sink|3"}}),
    ("translate", {"subgoals": [{"skill": "pick", "args": {"object_id": "Mug|9|9"}}]}),
    ("critique", {"verdict": "refine", "diagnosis": "x", "fix": [{"skill": "open", "args": {"object_id": "Mug|9|9"}}]}),
    ("refine", {"id": "g1", "text": "x", "items": [{"object": {"type": "Mug", "id": "Mug|9|9"},
                                                   "predicate": "isDirty", "value": False}]}),
])
def test_hallucinated_object_ids_are_a_validation_failure(role: str, bad: dict[str, Any],
                                                         spy: list[dict[str, Any]]) -> None:
    fb = FakeFallback()
    c = client([json.dumps(bad), VALID[role]])
    run_role(role, c, fb)
    assert fb.calls == [] and c.usage()["repairs"] == 1
    assert "Mug|9|9" in spy[1]["messages"][-1]["content"]
    # and after the bound, the fallback answers
    fb2 = FakeFallback()
    c2 = client([json.dumps(bad)] * 3)
    run_role(role, c2, fb2)
    assert fb2.calls == [role] and c2.usage()["fallbacks"] == 1


def test_grounding_of_wrong_type_triggers_repair(spy: list[dict[str, Any]]) -> None:
    c = client([json.dumps({"bindings": {"object": "Sink|3", "target": "Sink|3"}}), VALID["ground"]])
    assert run_role("ground", c).bindings["object"] == "Mug|1|2"
    # the goal's schema lists only fitting ids per role, so the Sink is refused as off-schema
    assert "$.bindings.object" in spy[1]["messages"][-1]["content"] and "Sink|3" in spy[1]["messages"][-1]["content"]
    # and the check behind the schema (for providers that do not enforce it) names the type
    problems = schemas.validate_ground({"bindings": {"object": "Sink|3"}}, goal(), ctx())
    assert problems and "is a Sink" in problems[0]


def test_excluded_ids_may_not_be_bound(spy: list[dict[str, Any]]) -> None:
    c = ctx()
    c.excluded_ids = ["Mug|1|2"]
    c.agent_position = (0.0, 0.0, 0.0)
    fb = FakeFallback()
    client_ = client([VALID["ground"]] * 3)
    role = LLMGrounder(client_, fb)
    assert "Do not bind (finished goals or failed twice): Mug|1|2" in role.messages(goal(), c)[1]["content"]
    assert "2.2m" in role.messages(goal(), c)[1]["content"]  # distance from the agent to Mug|1|2
    role.ground(goal(), c)
    assert fb.calls == ["ground"] and "Mug|1|2" in spy[1]["messages"][-1]["content"]
    assert "Mug|1|2" not in schemas.ground_schema(c)["properties"]["bindings"]["properties"]["object"]["anyOf"][0]["enum"]


def test_skill_args_are_checked() -> None:
    bad = json.dumps({"subgoals": [{"skill": "place", "args": {"object_id": "Sink|3"}}]})
    fb = FakeFallback()
    run_role("translate", client([bad] * 3), fb)
    assert fb.calls == ["translate"]


def test_code_fences_and_surrounding_prose_are_tolerated() -> None:
    fenced = "```json\n" + VALID["ground"] + "\n```"
    assert run_role("ground", client([fenced])).bindings["object"] == "Mug|1|2"
    chatty = "Here is the grounding: " + VALID["ground"] + " Hope it helps."
    c = client([chatty])
    assert run_role("ground", c).bindings["target"] == "Sink|3" and c.usage()["repairs"] == 0


def test_without_fallback_the_typed_error_propagates() -> None:
    with pytest.raises(LLMRoleError) as info:
        run_role("ground", client(["", "{}", "[]"]))
    assert info.value.attempts == 3 and info.value.role == "ground"


@pytest.mark.parametrize("bad", ["", '{"plan": ["pick mug"]}', "I'm sorry, I can't help with that"])
def test_a_repeated_refused_answer_stops_the_repairs(bad: str, spy: list[dict[str, Any]]) -> None:
    """A model that sends back the answer it was asked to fix gets no further repair call (the
    recorded small model did so in 27 of 29 repairs): the fallback comes one call earlier."""
    fb = FakeFallback()
    c = client([bad] * 3, max_repairs=2)
    goals = LLMDecomposer(c, fb).decompose("put a mug in the sink", ctx())
    assert [g.id for g in goals] == ["fallback"] and len(spy) == 2
    usage = c.usage()
    assert usage["repairs"] == 1 and usage["repeats"] == 1 and usage["failures"] == 1
    assert "repeated the refused answer" in usage["fallback_events"][0]["reason"]


def test_exhausted_mock_responses_are_a_test_error_not_a_fallback() -> None:
    from planner.llm.client import MockResponsesExhaustedError

    fb = FakeFallback()
    with pytest.raises(MockResponsesExhaustedError):
        run_role("ground", client([""]), fb)
    assert fb.calls == []


def test_max_repairs_zero_means_one_attempt(spy: list[dict[str, Any]]) -> None:
    fb = FakeFallback()
    run_role("critique", client(["", VALID["critique"]], max_repairs=0), fb)
    assert len(spy) == 1 and fb.calls == ["critique"]


def test_transport_errors_are_retried_then_fall_back(spy: list[dict[str, Any]]) -> None:
    import litellm

    err = litellm.InternalServerError(message="upstream down", llm_provider="openai", model=MOCK_MODEL)
    fb = FakeFallback()
    c = client([err, VALID["ground"]])
    assert run_role("ground", c, fb).bindings["object"] == "Mug|1|2"
    assert c.usage()["retries"] == 1 and fb.calls == []
    c2 = client([err] * 3)
    run_role("ground", c2, fb)
    assert fb.calls == ["ground"] and "[api_error]" in c2.usage()["fallback_events"][0]["reason"]


# --------------------------------------------------------------------------- response format


def test_schema_capable_model_gets_response_format(spy: list[dict[str, Any]]) -> None:
    run_role("ground", client([VALID["ground"]], model="openai/gpt-4o-mini"))
    rf = spy[0]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["schema"] == schemas.ground_schema(ctx(), goal())
    assert "JSON schema" not in spy[0]["messages"][-1]["content"]


def test_other_models_get_the_schema_in_the_prompt(spy: list[dict[str, Any]]) -> None:
    run_role("ground", client([VALID["ground"]]))
    assert "response_format" not in spy[0]
    assert json.dumps(schemas.ground_schema(ctx(), goal()), separators=(",", ":"), sort_keys=True) in \
        spy[0]["messages"][-1]["content"]


# --------------------------------------------------------------------------- cache


def test_cache_hit_replays_identically_without_a_call(tmp_path: Path, spy: list[dict[str, Any]]) -> None:
    # Record a run that needed one repair, so the replay covers a whole repair conversation.
    rec = client(["not json", VALID["translate"]], cache_dir=tmp_path, cache_mode="read_write")
    recorded = run_role("translate", rec)
    assert len(spy) == 2 and len(list(tmp_path.rglob("*.json"))) == 2
    assert not list(tmp_path.rglob(".tmp-*"))  # atomic writes leave no temp files

    spy.clear()
    replay = client(None, cache_dir=tmp_path, cache_mode="replay_only")
    assert run_role("translate", replay) == recorded
    assert spy == []
    usage = replay.usage()
    assert usage["calls"] == 0 and usage["cache_hits"] == 2 and usage["repairs"] == 1

    again = client([], cache_dir=tmp_path, cache_mode="read_write")  # read_write also reads first
    assert run_role("translate", again) == recorded and spy == []


def test_cache_off_always_calls(tmp_path: Path, spy: list[dict[str, Any]]) -> None:
    c = client([VALID["ground"]] * 2, cache_dir=tmp_path, cache_mode="off")
    run_role("ground", c)
    run_role("ground", c)
    assert len(spy) == 2 and not list(tmp_path.rglob("*.json"))


def test_cache_key_depends_on_model_messages_schema_temperature() -> None:
    msgs = [{"role": "user", "content": "a"}]
    base = client([]).cache_key(msgs, {"type": "object"})
    assert base == client([]).cache_key(msgs, {"type": "object"})
    assert base != client([], model="openai/other").cache_key(msgs, {"type": "object"})
    assert base != client([], api_base="http://127.0.0.1:8000").cache_key(msgs, {"type": "object"})
    assert base != client([]).cache_key([{"role": "user", "content": "b"}], {"type": "object"})
    assert base != client([]).cache_key(msgs, {"type": "array"})
    assert base != client([], temperature=0.5).cache_key(msgs, {"type": "object"})


def test_replay_only_miss_is_a_clear_error_not_a_fallback(tmp_path: Path, spy: list[dict[str, Any]]) -> None:
    fb = FakeFallback()
    c = client(None, cache_dir=tmp_path, cache_mode="replay_only")
    with pytest.raises(LLMCacheMissError) as info:
        run_role("decompose", c, fb)
    assert "replay_only" in str(info.value) and "'decompose'" in str(info.value) and str(tmp_path) in str(info.value)
    assert fb.calls == [] and spy == []


def test_replay_only_needs_a_cache_dir() -> None:
    with pytest.raises(ValueError, match="cache_dir"):
        LLMConfig(model=MOCK_MODEL, cache_mode="replay_only")


# --------------------------------------------------------------------------- accounting


def test_usage_counts_tokens_calls_latency_and_unknown_cost() -> None:
    c = client([VALID["decompose"], "", VALID["ground"]])
    run_role("decompose", c)
    run_role("ground", c)
    u = c.usage()
    assert u["calls"] == 3 and u["repairs"] == 1
    assert u["prompt_tokens"] > 0 and u["completion_tokens"] > 0
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
    assert u["cost_usd"] == 0.0 and u["cost_status"] == "unknown"
    assert u["latency_s"] > 0
    assert u["by_role"]["decompose"]["calls"] == 1 and u["by_role"]["ground"]["calls"] == 2
    json.dumps(u)  # report-ready
    c.reset_usage()
    assert c.usage()["calls"] == 0 and c.usage()["by_role"] == {}


def test_mocked_calls_never_report_a_price_even_for_priced_models() -> None:
    c = client([VALID["ground"]], model="openai/gpt-4o-mini")
    run_role("ground", c)
    assert c.usage()["cost_usd"] == 0.0 and c.usage()["cost_status"] == "unknown"


# --------------------------------------------------------------------------- secrets


def test_api_key_never_leaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: list[dict[str, Any]]) -> None:
    import litellm

    monkeypatch.setenv("WORLDMIND_TEST_LLM_KEY", FAKE_KEY)
    leaky = litellm.AuthenticationError(message=f"Incorrect API key provided: {FAKE_KEY}", llm_provider="openai",
                                        model=MOCK_MODEL)
    fb = FakeFallback()
    c = client([VALID["ground"], "", VALID["translate"], leaky, leaky, leaky], cache_dir=tmp_path,
               api_key_env="WORLDMIND_TEST_LLM_KEY")
    run_role("ground", c, fb)
    run_role("translate", c, fb)
    run_role("critique", c, fb)
    assert spy[0]["api_key"] == FAKE_KEY  # read from the environment and passed to litellm ...
    assert fb.calls == ["critique"]
    # ... but nowhere else:
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert FAKE_KEY not in path.read_text(encoding="utf-8"), path
    assert FAKE_KEY not in json.dumps(c.usage())
    assert FAKE_KEY not in repr(c.config)
    with pytest.raises(LLMRoleError) as info:
        client([leaky] * 3, api_key_env="WORLDMIND_TEST_LLM_KEY").call_json("x", [{"role": "user", "content": "q"}],
                                                                            {"type": "object"})
    assert FAKE_KEY not in str(info.value) and "***" in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_a_key_pasted_as_api_key_env_is_refused_without_echo() -> None:
    with pytest.raises(ValueError) as info:
        LLMConfig(model=MOCK_MODEL, api_key_env=FAKE_KEY)
    assert FAKE_KEY not in str(info.value)


# --------------------------------------------------------------------------- factory and config


def test_make_llm_roles_builds_all_roles_on_one_client(tmp_path: Path) -> None:
    fb = FakeFallback()
    roles = make_llm_roles(MOCK_MODEL, {"decomposer": fb, "critic": fb},
                           mock_responses=[VALID["decompose"], "", "", ""], max_repairs=2)
    assert set(roles) == {"decomposer", "refiner", "grounder", "translator", "critic"}
    assert len({id(r.client) for r in roles.values()}) == 1
    assert isinstance(roles["grounder"], LLMGrounder) and roles["critic"].fallback is fb
    roles["decomposer"].decompose("put a mug in the sink", ctx())
    assert roles["critic"].critique(event(), ctx()).diagnosis == "fallback critic"
    usage = roles["translator"].client.usage()
    assert usage["by_role"]["decompose"]["calls"] == 1 and usage["by_role"]["critique"]["fallbacks"] == 1
    with pytest.raises(ValueError, match="unknown role"):
        make_llm_roles(MOCK_MODEL, {"planner": fb})


def test_config_layers_file_env_overrides(tmp_path: Path) -> None:
    cfg = tmp_path / "llm.yaml"
    cfg.write_text("llm:\n  api_base: http://file:1\n  max_repairs: 1\n  cache_dir: /tmp/x\n", encoding="utf-8")
    env = {"WORLDMIND_LLM_API_BASE": "http://127.0.0.1:8080/v1", "WORLDMIND_LLM_API_KEY_ENV": "MY_KEY"}
    c = load_llm_config("hosted_vllm/qwen", cfg, {"timeout": 5.0}, environ=env)
    assert (c.model, c.api_base, c.api_key_env, c.max_repairs, c.timeout) == \
        ("hosted_vllm/qwen", "http://127.0.0.1:8080/v1", "MY_KEY", 1, 5.0)
    assert c.cache_dir == Path("/tmp/x")
    js = tmp_path / "llm.json"
    js.write_text(json.dumps({"api_base": "http://j:2", "temperature": 0}), encoding="utf-8")
    assert load_llm_config("ollama/llama3", js, environ={}).api_base == "http://j:2"
    assert load_llm_config("ollama/llama3", None, environ={"WORLDMIND_LLM_CONFIG": str(js)}).api_base == "http://j:2"


def test_config_file_may_not_hold_a_key(tmp_path: Path) -> None:
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"api_key": FAKE_KEY}), encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_llm_config(MOCK_MODEL, cfg, environ={})
    assert "api_key_env" in str(info.value) and FAKE_KEY not in str(info.value)
    with pytest.raises(ValueError, match="unknown LLM config field"):
        load_llm_config(MOCK_MODEL, None, {"modle": "x"}, environ={})


def test_model_spec_from_planner() -> None:
    assert model_spec_from_planner("llm:openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert model_spec_from_planner("llm:hosted_vllm/meta-llama/Llama-3.1-8B") == "hosted_vllm/meta-llama/Llama-3.1-8B"
    assert model_spec_from_planner("oracle") is None
    with pytest.raises(ValueError):
        model_spec_from_planner("llm:")


# --------------------------------------------------------------------------- no network at import


def test_cost_map_env_is_set_before_litellm_is_imported() -> None:
    """In a fresh interpreter without the variable: importing the planner does not import
    litellm, the client sets the variable first, and a mocked call works with sockets disabled."""
    code = r"""
import os, socket, sys
assert "LITELLM_LOCAL_MODEL_COST_MAP" not in os.environ
def refuse(*a, **k):
    raise SystemExit("network access attempted: %r" % (a,))
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
import planner.llm
assert "litellm" not in sys.modules, "importing planner.llm must not import litellm"
assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
from planner.llm import LLMClient, LLMConfig
c = LLMClient(LLMConfig(model="openai/worldmind-mock", mock_responses=['{"ok": true}']))
assert c.call_json("probe", [{"role": "user", "content": "q"}], {"type": "object"}) == {"ok": True}
import litellm
assert len(litellm.model_cost) > 100  # the bundled local cost map
print("OK")
"""
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("OK")


# --------------------------------------------------------------------------- end to end, scripted provider


def test_end_to_end_run_through_a_scripted_litellm_provider(tmp_path: Path) -> None:
    """All five roles over one client and litellm's custom-provider dispatch, with a repair."""
    from planner.llm.scripted import ScriptedTable, ScriptRule, register_scripted_provider

    table = ScriptedTable([
        ScriptRule("You are the task decomposer", [VALID["decompose"]]),
        ScriptRule("You are the goal refiner", [VALID["refine"]]),
        ScriptRule("You are the object grounder", ["{\"bindings\": {\"object\": \"Mug|7|7\"}}", VALID["ground"]]),
        ScriptRule("You are the skill planner", [VALID["translate"]]),
        ScriptRule("You are the critic", [json.dumps({"verdict": "pass", "diagnosis": "ok"})]),
    ])
    provider = register_scripted_provider(table)
    fb = FakeFallback()
    roles = make_llm_roles(f"{provider}/planner", {n: fb for n in
                                                   ("decomposer", "refiner", "grounder", "translator", "critic")},
                           cache_dir=tmp_path)
    c = ctx()
    goals = roles["decomposer"].decompose("Put a mug in the sink, then start the coffee machine.", c)
    first = roles["refiner"].refine(goals[0], c)
    grounding = roles["grounder"].ground(first, c)
    plan = roles["translator"].translate(first, grounding, c)
    verdicts = [roles["critic"].critique(CriticEvent("subgoal", sg, None, True, ""), c).verdict for sg in plan]
    assert fb.calls == []
    assert grounding.bindings == {"object": "Mug|1|2", "target": "Sink|3"}
    assert [s.skill for s in plan] == ["navigate_to", "pick", "navigate_to", "place"]
    assert verdicts == ["pass"] * 4
    usage = roles["critic"].client.usage()
    # 4 distinct critic prompts, 1 each for the others, +1 repair for the grounder
    assert usage["calls"] == 9 and usage["repairs"] == 1 and usage["fallbacks"] == 0

    # The recorded run replays offline with the provider gone.
    import litellm

    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != provider]
    replay = make_llm_roles(f"{provider}/planner", {}, cache_dir=tmp_path, cache_mode="replay_only")
    assert replay["grounder"].ground(first, c) == grounding
    assert replay["grounder"].client.usage()["cache_hits"] == 2
