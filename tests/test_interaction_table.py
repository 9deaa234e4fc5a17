"""One table of interactions (household.interactions), read by everything else: a declared
interaction without an executor, a robot skill, a THOR call or a planner skill fails here, before
it fails an episode (as pour once failed every watering goal over ROS)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from household.interactions import BY_ACTION, INTERACTION_SKILLS, INTERACTIONS, ROBOT_OBJECT_SKILLS, interaction
from household.types import INTERACTION_ACTIONS, Action
from memory.belief.effects import ALREADY, STATE_EFFECTS, THOR_FLAGS
from planner.roles import SKILLS as PLANNER_SKILLS
from planner.skills import _INTERACTION_OF
from sim_bridge.embedded.env import EXECUTORS
from sim_bridge.habitat.backend import HABITAT_INTERACTIONS
from sim_bridge.ros import skills as robot
from sim_bridge.thor import fake_player
from sim_bridge.thor.actions import OBJECT_ACTIONS, StepSizes, to_thor_call

ROOT = Path(__file__).resolve().parents[1]
ACTION_FILE = ROOT / "ros_ws" / "src" / "worldmind_interfaces" / "action" / "ExecuteSkill.action"
ROWS = [pytest.param(i, id=i.action) for i in INTERACTIONS]


def _action_constants() -> set[str]:
    return set(re.findall(r"^string [A-Z_]+=(\w+)\s*$", ACTION_FILE.read_text(), flags=re.M))


def test_the_action_vocabulary_is_the_table() -> None:
    assert INTERACTION_ACTIONS == tuple(i.action for i in INTERACTIONS)
    assert set(INTERACTION_SKILLS) <= set(PLANNER_SKILLS)
    assert interaction("OpenObject").skill == "open"
    with pytest.raises(KeyError, match="unknown interaction 'Teleport'.*PickupObject"):
        interaction("Teleport")


@pytest.mark.parametrize("row", ROWS)
def test_every_interaction_has_an_embedded_executor(row) -> None:
    assert row.action in EXECUTORS


@pytest.mark.parametrize("row", ROWS)
def test_every_interaction_is_a_robot_skill_both_ways(row) -> None:
    args = {k: "water" for k in row.passes}
    goal = robot.goal_for_action(row.action, "Thing|1|2", args)
    assert goal.skill == row.robot_skill and goal.skill in robot.OBJECT_SKILLS
    assert robot.action_for_goal(goal) == (row.action, "Thing|1|2", args)
    assert row.robot_skill in _action_constants(), f"ExecuteSkill.action lacks the constant for {row.robot_skill!r}"


def test_the_action_file_lists_exactly_the_robot_skills() -> None:
    assert _action_constants() == set(robot.SKILLS)
    assert set(ROBOT_OBJECT_SKILLS) == set(robot.OBJECT_SKILLS)


@pytest.mark.parametrize("row", ROWS)
def test_every_interaction_is_a_thor_call_and_the_stand_in_player_runs_it(row) -> None:
    args = {k: "wine" for k in row.passes}
    call = to_thor_call(Action(row.action, "Thing|1|2", args), StepSizes())
    assert call["action"] == row.action and call["objectId"] == "Thing|1|2"
    assert {k: call[k] for k in row.thor_args} == dict(row.thor_args) and all(call[k] == "wine" for k in row.passes)
    assert OBJECT_ACTIONS[row.action] == dict(row.thor_args)
    assert row.action in fake_player.SIM_ACTIONS


@pytest.mark.parametrize("row", ROWS)
def test_every_interaction_is_a_planner_skill(row) -> None:
    assert _INTERACTION_OF[row.skill] == row.action


@pytest.mark.parametrize("row", ROWS)
def test_habitat_executes_the_rows_marked_for_it(row) -> None:
    assert (row.action in HABITAT_INTERACTIONS) == row.habitat


def test_belief_effects_come_from_the_table() -> None:
    for row in INTERACTIONS:
        assert STATE_EFFECTS.get(row.action) == row.belief
        if row.already:
            assert ALREADY[row.already] == row.belief
    assert THOR_FLAGS["isOpen"] == ("open", "open") and THOR_FLAGS["isToggled"] == ("power", "on")


def test_the_table_rejects_duplicates() -> None:
    from household import interactions as mod

    with pytest.raises(ValueError, match="declared twice"):
        mod._check(INTERACTIONS + (BY_ACTION["OpenObject"],))

