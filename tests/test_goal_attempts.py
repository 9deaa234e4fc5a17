"""The goal loop's tries (``HoloMindAgent._attempt_goal``): when nothing else of a type turns up,
what was out of reach before is tried again on the grown map, and that retry is not one of the
goal's ``GOAL_ATTEMPTS``: falling on the last try, it ended the loop before the retry's grounding
ran, and the goal was given up with what was out of reach never tried on the grown map."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest

import planner.holomind as holomind
from household.checklist import ChecklistItem, ObjectSelector
from planner.holomind import GOAL_ATTEMPTS, HoloMindAgent
from planner.planning_budget import ActBudget
from planner.refusals import ReceptacleRefusals
from planner.roles import Goal
from tests.test_goal_search import _drive as _run  # drives a skill generator, returns its value


def _agent(monkeypatch: pytest.MonkeyPatch, found: list[bool]) -> tuple[HoloMindAgent, Goal, list[set[str]]]:
    """An agent whose grounder never binds the laptop while "Laptop|far" is excluded (it was out of
    reach) and binds nothing at all otherwise; each search for the missing laptop answers the next
    of ``found``. Returns the agent, the goal, and what was excluded at each grounding."""
    agent = HoloMindAgent()
    agent.obs = SimpleNamespace(step=10, agent=SimpleNamespace(held_object_id=None))  # type: ignore[assignment]
    agent.notes_log, agent.stats = [], Counter()
    agent.navigator = SimpleNamespace(budget=ActBudget(None))  # type: ignore[assignment]  # no Pass steps
    agent.refusals = ReceptacleRefusals(None)
    agent.state.unreachable.add("Laptop|far")
    agent.state.rejected_ids.clear()
    goal = Goal("g1", (ChecklistItem(ObjectSelector("Laptop"), "isOpen", value=True),), "open the laptop", {})
    excluded_at_grounding: list[set[str]] = []

    def ground(g: Goal, ctx: Any) -> Any:
        excluded_at_grounding.append(set(agent.state.excluded_now))
        return SimpleNamespace(bindings={"object": None})

    answers = iter(found)

    def search(agent_: Any, g: Goal, missing: list) -> Any:
        yield from ()
        return next(answers)

    monkeypatch.setattr(holomind, "search", search)
    agent.ground_role = SimpleNamespace(ground=ground)  # type: ignore[assignment]
    agent.context = lambda **_: SimpleNamespace(known_objects=[])  # type: ignore[assignment,method-assign]
    agent._emit_plan = lambda: None  # type: ignore[method-assign]
    return agent, goal, excluded_at_grounding


def test_the_retry_of_what_was_out_of_reach_grounds_even_after_the_last_try(monkeypatch: pytest.MonkeyPatch) -> None:
    """Searches that found something spend the first tries; the last finds nothing, so the laptop
    out of reach is allowed again, and that grounding runs (it did not before: the loop was over)."""
    tries = GOAL_ATTEMPTS - 1
    agent, goal, excluded = _agent(monkeypatch, [True] * tries + [False, False])
    assert _run(agent._attempt_goal(goal)) is False
    assert len(excluded) == GOAL_ATTEMPTS + 1
    assert all("Laptop|far" in e for e in excluded[:GOAL_ATTEMPTS])
    assert "Laptop|far" not in excluded[-1]  # the retry's grounding: out of reach before, allowed now
    assert any(n.endswith("g1: nothing else found; trying again what was out of reach before") for n in agent.notes_log)
    assert agent.state.goal_outcome["g1"]["reason"] == "not_found"


def test_the_retry_happens_once_and_the_tries_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every search finding something (a grounder that never binds): the goal stops after its
    tries, no retry among them (nothing was left unfound)."""
    agent, goal, excluded = _agent(monkeypatch, [True] * (GOAL_ATTEMPTS + 2))
    assert _run(agent._attempt_goal(goal)) is False
    assert len(excluded) == GOAL_ATTEMPTS
    assert all("Laptop|far" in e for e in excluded)
    # nothing found on the first try: retried once, then given up with a reason
    agent, goal, excluded = _agent(monkeypatch, [False, False, False])
    assert _run(agent._attempt_goal(goal)) is False
    assert len(excluded) == 2 and "Laptop|far" not in excluded[1]
    assert agent.state.goal_outcome["g1"]["reason"] == "not_found"
