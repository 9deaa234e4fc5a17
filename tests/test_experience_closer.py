"""The skills count the tries the "come closer at once" rule's rate is made of: an interaction
sent from the usual distance is one try for its action and type; one sent after experience
brought the agent closer is not (counting it would dilute the very failures that put the rule in
force, and the rule would switch itself off and on)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from household.types import Action, ActionFeedback
from planner.critic import ExperiencePool
from planner.roles import Subgoal
from planner.skills import Skills
from tests.skill_fakes import FakeAgentView

MUG = "Mug|1|2"


class CountingAgent(FakeAgentView):
    """In view and within reach; experience is a real pool, asked through the agent's methods."""

    held_id = None
    held_type = None

    def __init__(self, pool: ExperiencePool) -> None:
        super().__init__()
        self.pool = pool
        mug = SimpleNamespace(object_type="Mug", state={}, distance_3d=lambda _p: 0.5)
        self.tracker = SimpleNamespace(get=lambda oid: mug, visible_now={MUG: True})

    def experience_closer(self, action: str, object_type: str) -> bool:
        return self.pool.approach_closer(action, object_type)

    def experience_attempted(self, action: str, object_type: str) -> None:
        self.pool.attempted(action, object_type)


def _pick_up(agent: CountingAgent) -> None:
    gen = Skills(agent).interact(Subgoal("pick", {"object_id": MUG}, "g1"), MUG)
    assert next(gen) == Action("PickupObject", MUG)  # in view and reach: sent at once
    with pytest.raises(StopIteration) as done:  # the pick-up worked: the skill ends there
        gen.send(SimpleNamespace(feedback=ActionFeedback("PickupObject", True, "")))
    assert done.value.value is True


def test_a_pick_up_from_the_usual_distance_is_one_try() -> None:
    pool = ExperiencePool()
    agent = CountingAgent(pool)
    _pick_up(agent)
    _pick_up(agent)
    assert pool.attempts == {"PickupObject|Mug": 2}
    assert not any("come closer" in n for n in agent.notes)


def test_a_pick_up_sent_closer_by_experience_is_not_a_try() -> None:
    pool = ExperiencePool()
    pool.attempted("PickupObject", "Mug")
    pool.validate(pool.record("PickupObject", "not_visible", "Mug", "navigate_to"))  # 1 failure in 1 try
    agent = CountingAgent(pool)
    _pick_up(agent)
    assert any("come closer" in n for n in agent.notes)
    assert pool.attempts == {"PickupObject|Mug": 1}  # unchanged
