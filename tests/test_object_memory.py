"""The agent's object memory behind ``planner.object_memory.ObjectMemory`` (issue 28, item 4):
the object tracker implements it, and another implementation can be injected and is used."""
from __future__ import annotations

import inspect
from typing import Any, Mapping

import numpy as np
import pytest

from household.types import Observation
from planner.agent_config import AgentConfig
from planner.holomind import HoloMindAgent
from planner.object_memory import ObjectMemory, TrackedObject
from planner.object_tracker import ObjectTracker, tracker_memory
from tests.test_holomind_agent import cup_in_fridge, run_guarded

MEMBERS = ("objects", "frame_expansions", "visible_now", "integrate", "get", "of_type", "glimpses", "seen_state",
           "note_state", "note_moved", "note_gone")


def test_the_protocol_names_what_the_planner_calls() -> None:
    assert sorted(MEMBERS) == sorted(m for m in vars(ObjectMemory) if not m.startswith("_"))


def assert_is_object_memory(memory: object) -> None:
    """The protocol, checked as the planner uses it: isinstance (runtime_checkable) and, method by
    method, the same parameters (isinstance checks names only)."""
    assert isinstance(memory, ObjectMemory)
    for name in MEMBERS:
        member = getattr(ObjectMemory, name)
        if name == "frame_expansions":
            assert isinstance(getattr(memory, name), int) and getattr(memory, name) >= 0
            continue
        if isinstance(member, property):
            assert isinstance(getattr(memory, name), Mapping), name
            continue
        assert list(inspect.signature(getattr(memory, name)).parameters) == \
            list(inspect.signature(member).parameters)[1:], name


def test_the_tracker_is_an_object_memory() -> None:
    tracker = tracker_memory(AgentConfig(depth_noise_k=0.01))
    assert isinstance(tracker, ObjectTracker) and tracker.depth_noise_k == 0.01
    assert_is_object_memory(tracker)


def test_an_object_without_the_members_is_not_one() -> None:
    assert not isinstance(object(), ObjectMemory)


class HidesOneType:
    """A second, minimal object memory: the tracker's, with every object of one type left out
    (as a memory with a blind spot would have it)."""

    frame_expansions = 0

    def __init__(self, config: AgentConfig, hidden: str) -> None:
        self._inner = ObjectTracker(depth_noise_k=config.depth_noise_k)
        self.hidden = hidden
        self.frames = 0

    def _shown(self, rec: TrackedObject | None) -> TrackedObject | None:
        return None if rec is None or rec.object_type == self.hidden else rec

    @property
    def objects(self) -> Mapping[str, TrackedObject]:
        return {k: o for k, o in self._inner.objects.items() if o.object_type != self.hidden}

    @property
    def visible_now(self) -> Mapping[str, int]:
        return {k: n for k, n in self._inner.visible_now.items() if self.get(k) is not None}

    def integrate(self, obs: Observation) -> None:
        self.frames += 1
        self._inner.integrate(obs)

    def get(self, object_id: str) -> TrackedObject | None:
        return self._shown(self._inner.get(object_id))

    def of_type(self, object_type: str) -> list[TrackedObject]:
        return [] if object_type == self.hidden else self._inner.of_type(object_type)

    def glimpses(self, object_type: str) -> dict[str, np.ndarray]:
        return {} if object_type == self.hidden else self._inner.glimpses(object_type)

    def seen_state(self, object_id: str, flag: str, since: int) -> tuple[bool, Any]:
        return self._inner.seen_state(object_id, flag, since) if self.get(object_id) else (False, None)

    def note_state(self, object_id: str, key: str, value: Any) -> None:
        self._inner.note_state(object_id, key, value)

    def note_moved(self, object_id: str, to: np.ndarray | None = None) -> None:
        self._inner.note_moved(object_id, to)

    def note_gone(self, object_id: str) -> None:
        self._inner.note_gone(object_id)


def test_a_minimal_second_memory_satisfies_the_protocol() -> None:
    assert isinstance(HidesOneType(AgentConfig(), "Cup"), ObjectMemory)


def test_an_injected_memory_is_the_one_the_agent_acts_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """"Put a cup in the fridge": with the default memory the agent does it in a few steps; with
    a memory blind to cups (the same frames) it searches the house, never grounds a cup, never
    picks one up, and the goal is not done when the budget runs out."""
    seeing, _, agent = run_guarded(cup_in_fridge(60), monkeypatch, HoloMindAgent())
    assert seeing.gc == 1.0
    # the last attempt's objects with the types it grounded them as (what a skill checks its
    # target's type against before acting: planner.skills.Skills.interact)
    (done,) = seeing.extra["goals"].values()
    assert agent.grounded_as == {oid: agent.tracker.get(oid).object_type for oid in done["bindings"].values() if oid}
    assert sorted(agent.grounded_as.values()) == ["Cup", "Fridge"]

    made: list[HidesOneType] = []

    def blind_to_cups(config: AgentConfig) -> ObjectMemory:
        made.append(HidesOneType(config, "Cup"))
        return made[-1]

    result, guard, inner = run_guarded(cup_in_fridge(60), monkeypatch, HoloMindAgent(object_memory=blind_to_cups))
    assert guard.violations == []
    assert len(made) == 1 and inner.tracker is made[0] and made[0].frames > 1  # fed every frame
    assert made[0]._inner.of_type("Cup"), "the frames showed a cup; the memory hid it"
    assert inner.stats["searches"] >= 1 and any("frontier" in n for n in result.extra["agent_notes"])
    assert result.gc == 0.0
    assert not any(h.startswith("pick") for h in inner.history)
    (goal,) = result.extra["goals"].values()
    assert goal["status"] == "active" and "bindings" not in goal
