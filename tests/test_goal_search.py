"""The search's close look (planner.goal_search): a station seen from afar whose companion part
(a sink's faucet) shows only from close by is walked up to, not given up on as never found."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

import numpy as np

from household.types import Action
from planner.agent_config import AgentConfig
from planner.goal_search import _look_closely, search


class _Agent:
    """The parts of the HoloMind agent the search reads: a tracker with two sinks seen from afar,
    a grounder that binds the sink role once a faucet is seen, a walk that sees the faucet of the
    sink it walks to when that sink has one."""

    def __init__(self, faucet_at: str | None) -> None:
        self.config = AgentConfig()
        self.obs = SimpleNamespace(step=100)
        self.stats: Counter = Counter()
        self.state = SimpleNamespace(inspected=set(), used_ids=set(), excluded_now=set(), unreachable=set(),
                                     relaxed_goals=set(), relaxed_relations=set())
        self.pose = SimpleNamespace(x=0.0, z=0.0)
        self.sinks = [SimpleNamespace(object_id="far", object_type="Sink", centroid=np.array([6.0, 0.5, 0.0]),
                                      gone=False, state={}),
                      SimpleNamespace(object_id="near", object_type="Sink", centroid=np.array([2.0, 0.5, 0.0]),
                                      gone=False, state={})]
        self.faucet_at = faucet_at
        self.faucet_seen = False
        self.walked: list[str] = []
        self.notes: list[str] = []
        self.tracker = SimpleNamespace(of_type=lambda t: list(self.sinks) if t == "Sink" else [],
                                       objects={o.object_id: o for o in self.sinks})
        self.skills = SimpleNamespace(navigate_to=self._walk, explore_once=self._explore)
        self.ground_role = SimpleNamespace(ground=lambda goal, ctx: SimpleNamespace(
            bindings={"target": self.faucet_at if self.faucet_seen else None}))

    def _walk(self, object_id: str, closer: bool = False):
        assert closer  # a close look
        self.walked.append(object_id)
        yield Action("MoveAhead")
        self.obs.step += 10
        self.faucet_seen = self.faucet_seen or object_id == self.faucet_at
        return True

    def _explore(self):
        return False
        yield  # a generator that explores nothing: the house is all seen

    def context(self, **_: Any) -> SimpleNamespace:
        return SimpleNamespace(known_objects=[])

    def note(self, text: str) -> None:
        self.notes.append(text)


def _drive(gen) -> Any:
    try:
        gen.send(None)
        while True:
            gen.send(None)
    except StopIteration as stop:
        return stop.value


def test_a_sink_seen_from_afar_is_looked_at_closely_nearest_first() -> None:
    agent = _Agent(faucet_at="far")
    missing = [("target", "Sink", None)]
    assert _drive(_look_closely(agent, SimpleNamespace(id="g4"), missing, "Sink", set(), start=100)) is True
    assert agent.walked == ["near", "far"]  # nearest first, until the role binds
    assert agent.notes == ["g4: bound after a close look at far"]


def test_the_close_look_is_made_once_per_object_and_can_fail() -> None:
    agent = _Agent(faucet_at=None)  # no sink has a faucet
    missing = [("target", "Sink", None)]
    assert _drive(_look_closely(agent, SimpleNamespace(id="g4"), missing, "Sink", set(), start=100)) is False
    assert sorted(agent.walked) == ["far", "near"]
    agent.walked.clear()
    assert _drive(_look_closely(agent, SimpleNamespace(id="g4"), missing, "Sink", set(), start=100)) is False
    assert agent.walked == []  # looked at already: not walked to again


def test_search_looks_closely_at_a_known_station_before_giving_up() -> None:
    agent = _Agent(faucet_at="near")
    goal = SimpleNamespace(id="g4", typed_hints=SimpleNamespace(object_room=None, object_near=None,
                                                                 object_source=None))
    assert _drive(search(agent, goal, [("target", "Sink", None)])) is True
    assert agent.walked == ["near"]
