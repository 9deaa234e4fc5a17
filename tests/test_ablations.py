"""Ablations as injected components (issue 28, item 4; planner.ablations): each ablation name
selects one no-op part, built by one table that the factory uses; the agent asks no switch."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from household.checklist import ChecklistItem, ObjectSelector
from household.errors import InputError
from planner.ablations import (ABLATED, AgentParts, DagOrder, DiagnosingCritic, Episodic, InstructionOrder,
                               NoCritic, NoEpisodic, NoExperience, parts_for)
from planner.agent_config import ABLATIONS, AgentConfig
from planner.critic import ExperiencePool, RuleCritic
from planner.factory import make_agent
from planner.holomind import HoloMindAgent
from planner.refusals import ReceptacleRefusals
from planner.roles import CriticDecision, CriticEvent, Goal, Subgoal
from tests.test_holomind_agent import cup_in_fridge, run_guarded

GOAL = Goal("g1", (ChecklistItem(ObjectSelector("Cup"), "inReceptacle", ObjectSelector("Fridge")),), "cup in fridge")
FAILED_PUT = CriticEvent("action", Subgoal("place", {"receptacle_id": "Fridge|1"}, "g1"), "PutObject", False,
                         "Fridge|1 is closed", failure="closed")


class Host:
    """The agent as a stage sees it; asking for the context is recorded (it re-segments rooms)."""

    def __init__(self) -> None:
        self.critic = RuleCritic()
        self.refiner = self
        self.asked: list[str] = []
        self.recorded: list[CriticDecision] = []

    def context(self) -> Any:
        self.asked.append("context")
        return _context()

    def record_critic(self, event: CriticEvent, decision: CriticDecision) -> None:
        self.recorded.append(decision)

    def refine(self, goal: Goal, context: Any) -> Goal:
        self.asked.append("refine")
        return dataclasses.replace(goal, text="refined")


def _context() -> Any:
    from planner.roles import PlannerContext
    return PlannerContext(0, "Cup|1", "Cup", [], [], [], [], [], (0.0, 0.0, 0.0), [])


def test_every_ablation_names_one_part() -> None:
    assert tuple(ABLATED) == ABLATIONS
    full = parts_for()
    for name in ABLATIONS:
        ablated = parts_for({name})
        changed = [f.name for f in dataclasses.fields(AgentParts) if type(getattr(ablated, f.name)) is not
                   type(getattr(full, f.name))]
        assert changed == [ABLATED[name][0]], name
    assert isinstance(full.critic, DiagnosingCritic) and isinstance(full.goal_order, DagOrder)
    assert isinstance(full.episodic, Episodic)


def test_an_unknown_ablation_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="unknown ablation 'memory'"):
        parts_for({"memory", "critic"})
    with pytest.raises(InputError, match="unknown ablation 'memory'"):
        make_agent("deterministic", None, ablate=["memory"])


def test_the_factory_injects_the_parts_the_names_select() -> None:
    agent = make_agent("deterministic", None, ablate=["critic", "high-level"])
    assert isinstance(agent.parts.critic, NoCritic) and isinstance(agent.parts.goal_order, InstructionOrder)
    assert isinstance(agent.parts.episodic, Episodic)
    assert agent.name == "deterministic-no-critic-no-high-level"
    full = make_agent("deterministic", None)
    assert isinstance(full.parts.critic, DiagnosingCritic) and isinstance(full.parts.goal_order, DagOrder)


def test_the_episodic_ablation_leaves_the_pool_file_unread(tmp_path: Path) -> None:
    pool_path = tmp_path / "pool.json"
    pool = ExperiencePool.load(pool_path)
    pool.validate(pool.record("PutObject", "closed", "Fridge", "open"))
    assert make_agent("deterministic", None, experience_path=pool_path).experience.rules()
    ablated = make_agent("deterministic", None, ablate=["episodic"], experience_path=pool_path)
    assert isinstance(ablated.experience, NoExperience) and ablated.experience.rules() == []


def test_the_agent_has_no_ablation_switches() -> None:
    """The switches the agent used to read are gone: only the parts say what is off."""
    for switch in ("critic", "episodic", "high_level"):
        assert not hasattr(AgentConfig(), switch)
    with pytest.raises(ValueError, match="not beside them"):
        HoloMindAgent(parts=parts_for(), experience=ExperiencePool())


def test_no_critic_asks_nobody_and_logs_nothing() -> None:
    host = Host()
    decision = NoCritic().review(FAILED_PUT, host)
    assert (decision.verdict, decision.diagnosis) == ("replan", "no critic: PutObject failed (Fridge|1 is closed)")
    assert host.asked == [] and host.recorded == []
    decision = DiagnosingCritic().review(FAILED_PUT, host)
    assert decision.verdict == "refine" and host.asked == ["context"] and host.recorded == [decision]


def test_instruction_order_neither_refines_nor_defers() -> None:
    host = Host()
    assert InstructionOrder().refine(GOAL, host) is GOAL and host.asked == []
    assert DagOrder().refine(GOAL, host).text == "refined" and host.asked == ["context", "refine"]
    assert not InstructionOrder().set_aside(False, False, True)
    assert DagOrder().set_aside(False, False, True)
    assert not DagOrder().set_aside(True, False, True) and not DagOrder().set_aside(False, True, True)
    assert not DagOrder().set_aside(False, False, False)


def test_no_episodic_memory_knows_and_learns_nothing() -> None:
    memory = NoEpisodic()
    store = memory.experience
    store.validate(store.record("PutObject", "closed", "Fridge", "open"))
    assert store.proactive_fix("PutObject", "Fridge") is None and store.rules() == []
    assert not store.approach_closer("PickupObject", "Cup")
    refusals = ReceptacleRefusals(store)
    refusals.record("PutObject", "no_room", "Shelf|1", "Shelf", "Cup")
    assert refusals.refused_here("Cup") == {"Shelf|1"}  # this episode's fact stays
    assert not refusals.refuses_type("Shelf", "Cup")  # no experience across episodes
    beliefs = memory.beliefs("ep")
    beliefs.record(3, "OpenObject", "Fridge|1", True)
    assert len(beliefs) == 0 and beliefs.state_of("Fridge|1") == {}
    assert memory.recall({"isOpen": True}) == {} and Episodic().recall({"isOpen": True}) == {"isOpen": True}


class CountingCritic:
    """A critic stage that counts what it is handed, then lets the default decide."""

    def __init__(self) -> None:
        self.events: list[CriticEvent] = []

    def review(self, event: CriticEvent, host: Any) -> CriticDecision:
        self.events.append(event)
        return DiagnosingCritic().review(event, host)


def test_an_injected_critic_stage_is_the_one_the_agent_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The closed fridge makes the put fail once: the injected stage gets that failure."""
    stage = CountingCritic()
    result, guard, _ = run_guarded(cup_in_fridge(60), monkeypatch,
                                   HoloMindAgent(parts=dataclasses.replace(parts_for(), critic=stage)))
    assert guard.violations == [] and result.gc == 1.0
    assert [(e.action, e.failure) for e in stage.events] == [("PutObject", "closed")]
    assert result.extra["critic_refine"] == 1


def test_without_the_critic_the_failed_put_fails_the_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    result, guard, agent = run_guarded(cup_in_fridge(60), monkeypatch,
                                       HoloMindAgent(AgentConfig(ablate=frozenset({"critic"}))))
    assert guard.violations == []
    assert result.extra["critic_interventions"] == 0 and agent.critic_log == []
    assert any("no critic: PutObject failed" in n for n in result.extra["agent_notes"])
