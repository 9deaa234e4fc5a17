"""Typed action outcomes (household.outcomes): every backend says why an action failed as an
enumerated situation, the critic and skills act on it, and text is read only as a fallback."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from household.outcomes import FAILURES, Failure, classify_text, failure_of
from household.types import ActionFeedback, AgentStatus
from planner.critic import RuleCritic, situation_of
from planner.roles import CriticEvent, PlannerContext, Subgoal
from sim_bridge.ros import payloads

ROOT = Path(__file__).resolve().parents[1]


def _context(held: str | None = None) -> PlannerContext:
    return PlannerContext(step=3, held_object_id=held, held_object_type=None, known_objects=[], rooms_seen=[],
                          history=[], experience=[], object_types=[])


def test_parse_keeps_known_codes_and_reads_unknown_ones_as_unknown() -> None:
    assert Failure.parse("closed") is Failure.CLOSED
    assert Failure.parse(Failure.NO_ROOM) is Failure.NO_ROOM
    assert Failure.parse("") is Failure.NONE and Failure.parse(None) is Failure.NONE
    assert Failure.parse("gripper_on_fire") is Failure.UNKNOWN  # a newer adapter's code
    assert "" not in FAILURES and len(set(FAILURES)) == len(FAILURES)


def test_the_code_wins_over_the_text_and_text_is_the_fallback() -> None:
    assert failure_of(True, "closed", "whatever") is Failure.NONE
    assert failure_of(False, "no_room", "Mug is closed") is Failure.NO_ROOM
    assert failure_of(False, "", "Fridge|1 (Fridge) is closed; open it before putting Cup in it") is Failure.CLOSED
    assert failure_of(False, "", "the gremlins did it") is Failure.UNKNOWN
    assert classify_text("") is Failure.UNKNOWN


def test_the_critic_acts_on_the_code_not_the_wording() -> None:
    put = Subgoal("place", {"receptacle_id": "Fridge|1|2"}, goal_id="g1")
    coded = CriticEvent("action", put, "PutObject", False, "Der Kuehlschrank ist zu", failure="closed")
    decision = RuleCritic().critique(coded, _context("Cup|1|1"))
    assert decision.verdict == "refine" and decision.situation == "closed"
    assert decision.fix[0].skill == "open" and decision.fix[0].args["object_id"] == "Fridge|1|2"
    uncoded = CriticEvent("action", put, "PutObject", False, "Der Kuehlschrank ist zu")
    assert situation_of(uncoded) == "unknown"
    assert RuleCritic().critique(uncoded, _context("Cup|1|1")).verdict == "replan"


def test_a_refusal_code_teaches_the_refusal_store() -> None:
    put = Subgoal("place", {"receptacle_id": "Desk|1|2"}, goal_id="g1")
    event = CriticEvent("action", put, "PutObject", False, "robot: placement planner found no surface",
                        failure="no_room")
    decision = RuleCritic().critique(event, _context("Laptop|1|1"))
    assert decision.verdict == "replan" and decision.situation == "no_room"


@pytest.mark.parametrize("path, exception", [
    ("sim_bridge/embedded/interactions.py", "InteractionError"),
    ("sim_bridge/embedded/env.py", "InteractionError"),
    ("sim_bridge/habitat/backend.py", "_Failed"),
])
def test_every_failure_a_backend_raises_carries_a_code(path: str, exception: str) -> None:
    """A new failure written without its Failure would reach the critic as text only."""
    tree = ast.parse((ROOT / path).read_text())
    raised = [node.exc for node in ast.walk(tree) if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
              and isinstance(node.exc.func, ast.Name) and node.exc.func.id == exception]
    assert raised, f"no {exception} raised in {path}"
    for call in raised:
        assert len(call.args) == 2, f"{path}:{call.lineno}: {exception} without a Failure"
        code = call.args[1]
        assert isinstance(code, ast.Attribute) and isinstance(code.value, ast.Name) and code.value.id == "Failure", \
            f"{path}:{call.lineno}: the second argument must be a Failure member"
        assert code.attr in Failure.__members__, f"{path}:{call.lineno}: no Failure.{code.attr}"


def test_the_code_travels_in_the_agent_status_payload() -> None:
    agent = AgentStatus((1.0, 2.0, 0.0), 90.0, 30.0, "Cup|1|1", "Cup")
    fb = ActionFeedback("PutObject", False, "Fridge|1|2 (Fridge) is closed", "closed")
    data = payloads.agent_status_to_payload(agent, 7, fb)
    _, step, back = payloads.agent_status_from_payload(data)
    assert step == 7 and back == fb
    del data["feedback"]["failure"]  # a bag recorded before codes existed
    _, _, old = payloads.agent_status_from_payload(data)
    assert old.failure == "" and failure_of(old.success, old.failure, old.error) is Failure.CLOSED
