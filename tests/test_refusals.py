"""One store for "this receptacle refused this type" (issue 17).

Before, one failed put wrote two memories from two call sites under different conditions: the goal
loop's ``misfits`` only when the Replan reached it with the goal's target named, the experience
pool only when the critic's verdict was replan on the first attempt's error. A refusal met while
freeing the hand (``put_down`` catches the Replan) taught the pool but not the episode.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from household.types import Action, ActionFeedback, Observation
from planner.critic import ExperiencePool, RuleCritic
from planner.refusals import ReceptacleRefusals
from planner.roles import CriticDecision, CriticEvent, PlannerContext
from tests.skill_fakes import FakeAgentView

NO_ROOM = "PutObject: {rid} has no valid positions left for Mug|1|2"


def test_one_record_teaches_the_episode_and_experience(tmp_path):
    pool = ExperiencePool(tmp_path / "pool.json")
    refusals = ReceptacleRefusals(pool)
    refusals.record("PutObject", "no_room", "Shelf|1|1", "Shelf", "Mug")
    assert refusals.refused_here("Mug") == {"Shelf|1|1"}
    assert refusals.refused_here("Apple") == set()
    assert refusals.refuses_type("Shelf", "Mug") and not refusals.refuses_type("Shelf", "Apple")
    # the type-level fact persists: a later episode's pool loaded from the file knows it
    later = ReceptacleRefusals(ExperiencePool.load(tmp_path / "pool.json"))
    assert later.refuses_type("Shelf", "Mug") and later.refused_here("Mug") == set()


def test_without_experience_only_the_episode_remembers():
    refusals = ReceptacleRefusals(None)  # the "episodic" ablation
    refusals.record("PutObject", "wrong_receptacle", "Toaster|1|1", "Toaster", "Mug")
    assert refusals.refused_here("Mug") == {"Toaster|1|1"}
    assert not refusals.refuses_type("Toaster", "Mug")


def test_a_failure_that_is_not_a_refusal_is_refused():
    with pytest.raises(ValueError, match="not a refusal: 'out_of_reach'"):
        ReceptacleRefusals(None).record("PutObject", "out_of_reach", "Shelf|1|1", "Shelf", "Mug")


class PutDownAgent(FakeAgentView):
    """The AgentView surface ``Skills.put_down`` touches; the first spot has no room."""

    def __init__(self) -> None:
        super().__init__()
        objs = {"Shelf|1|1": "Shelf", "Desk|2|2": "Desk"}
        self.tracker = SimpleNamespace(
            get=lambda oid: SimpleNamespace(object_type=objs[oid], state={}, distance_3d=lambda _p: 0.5),
            visible_now={oid: True for oid in objs})
        self.grounder = SimpleNamespace(
            put_down_spot=lambda _ctx, _t: next(o for o in objs if o not in self.excluded_now))

    def context(self, relax_rooms: bool = False) -> PlannerContext:
        return PlannerContext(step=0, held_object_id=self.held_id, held_object_type=self.held_type, known_objects=[],
                              rooms_seen=[], history=[], experience=[], object_types=[])

    def after_interaction(self, name: str, object_id: str, obs: Observation) -> None:
        if obs.feedback.success:
            self.held_id = self.held_type = None

    def critique(self, event: CriticEvent) -> CriticDecision:
        return RuleCritic().critique(event, self.context())


def _obs(success: bool, error: str = "") -> Any:
    return SimpleNamespace(feedback=ActionFeedback("PutObject", success, error))


def test_a_refusal_met_while_freeing_the_hand_is_remembered_for_later_goals():
    from planner.skills import Skills

    agent = PutDownAgent()
    gen = Skills(agent).put_down("g1")
    assert next(gen) == Action("PutObject", "Shelf|1|1")
    assert gen.send(_obs(False, NO_ROOM.format(rid="Shelf|1|1"))) == Action("PutObject", "Desk|2|2")
    with pytest.raises(StopIteration) as done:
        gen.send(_obs(True))
    assert done.value.value is True
    assert agent.refusals.refused_here("Mug") == {"Shelf|1|1"}  # before: only the experience pool knew
    assert agent.refusals.refuses_type("Shelf", "Mug")
