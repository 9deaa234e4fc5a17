"""THOR's Crouch and Stand, end to end: the embedded simulator's camera, the step count, the
THOR call, the robot skill, and the oracle, which crouches only where no standing pose sees.

Why: ProcTHOR rests things on low shelves under deep tops, in bottom drawers and in boxes on the
floor. From a camera 1.5 m up within 1.5 m of reach no pose sees them; THOR's default agent
crouches (its camera drops to the body centre, 0.9 m) and does. Dev house 2's pen small|4|15 on a
side table's low shelf is such an object. (Dev house 0's watch small|7|44 on a side table's low
shelf was one too until the range was measured as THOR measures it, from the agent's capsule:
from 1.4 m across a standing camera sees under that top. An agent that measures its reach from
the camera, as the HoloMind agent built without a backend does, still crouches for it.)
"""

from __future__ import annotations

import json
import math

import pytest

from evaluation.metrics import StepCounter
from household.house_data import load_house
from household.outcomes import Failure
from household.types import NAVIGATION_ACTIONS, POSTURE_ACTIONS, Action
from privileged.oracle import OraclePlanner
from sim_bridge.embedded.env import AgentPose, EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.ros import skills as robot
from sim_bridge.thor.actions import StepSizes, to_thor_call

LOW_WATCH = "small|7|44"  # house 0: the agent test below
LOW_PEN, CUP = "small|4|15", "small|6|30"  # house 2: the oracle's tests


@pytest.fixture(scope="module")
def house0() -> dict:
    return load_house("houses_dev.jsonl.gz", 0)


@pytest.fixture(scope="module")
def house2() -> dict:
    return load_house("houses_dev.jsonl.gz", 2)


def _env(house: dict, render: bool = True) -> EmbeddedEnvironment:
    env = EmbeddedEnvironment(EmbeddedConfig(width=64, height=48, render=render))
    env.reset(house)
    return env


def test_crouch_lowers_the_camera_to_the_body_centre_and_stand_raises_it(house0) -> None:
    env = _env(house0)
    assert env.metadata()["agent"]["isStanding"] is True
    down = env.step(Action("Crouch"))
    assert down.success
    meta = env.metadata()
    assert meta["agent"]["isStanding"] is False and meta["cameraPosition"]["y"] == pytest.approx(0.9)
    assert down.observation.world_from_camera[2, 3] == pytest.approx(0.9)  # REP 103: z up
    again = env.step(Action("Crouch"))  # THOR refuses a second Crouch
    assert not again.success and "already crouching" in again.error
    assert again.observation.feedback.failure == Failure.BAD_REQUEST.value
    up = env.step(Action("Stand"))
    assert up.success and up.observation.world_from_camera[2, 3] == pytest.approx(1.5)
    assert not env.step(Action("Stand")).success


def test_posture_is_navigation_and_a_successful_change_is_one_step() -> None:
    assert set(POSTURE_ACTIONS) <= set(NAVIGATION_ACTIONS)
    counter = StepCounter()
    assert counter.record("Crouch", True, (1.0, 2.0), (1.0, 2.0), 90.0, 90.0, 30.0, 30.0) == 1.0
    assert counter.record("Stand", False, (1.0, 2.0), (1.0, 2.0), 90.0, 90.0, 30.0, 30.0) == 0.0  # refused: no cost
    assert counter.nav_steps == 1.0 and counter.manip_steps == 0.0


def test_posture_goes_to_thor_as_is_and_to_a_robot_as_the_posture_skill() -> None:
    assert to_thor_call(Action("Crouch"), StepSizes()) == {"action": "Crouch"}
    assert to_thor_call(Action("Stand"), StepSizes()) == {"action": "Stand"}
    goal = robot.goal_for_action("Crouch")
    assert (goal.skill, goal.direction) == ("posture", "crouch")
    assert robot.action_for_goal(robot.goal_for_action("Stand")) == ("Stand", None, {})
    with pytest.raises(robot.SkillError, match="direction"):
        robot.SkillGoal(skill="posture", direction="kneel").validate()


def test_the_oracle_crouches_for_a_low_shelf_and_only_there(house2) -> None:
    env = _env(house2, render=False)
    pen = env.table.objects[LOW_PEN]
    side_table = env.table.objects[pen.parent or ""]
    oracle = OraclePlanner(env)

    def run(script) -> list[str]:
        names = []
        for action in script:
            names.append(action.name)
            assert env.step(action).success, action
        return names

    fetched = run(oracle.fetch_script(pen))
    assert env.table.held == LOW_PEN and fetched.count("Crouch") == 1 and "Stand" not in fetched
    assert oracle.report_extra()["oracle_crouched_for"] == [LOW_PEN]  # the generator stores it
    assert not env.pose.standing  # it took the pen crouched (no standing pose sees it: next test)
    # put back on its side table, then the cup on the dining table: a standing pose sees the
    # cup, so the oracle stands up for it (when still crouched) and crouches no more
    run(oracle.place_script(pen, side_table))
    assert pen.parent == side_table.id
    crouched = not env.pose.standing
    nxt = run(oracle.fetch_script(env.table.objects[CUP]))
    assert env.table.held == CUP and "Crouch" not in nxt and nxt.count("Stand") == int(crouched)
    assert env.pose.standing


def test_no_standing_pose_within_reach_sees_the_low_pen(house2) -> None:
    """The premise of the test above, checked on the simulator: standing, no free pose within
    reach of the pen sees it; crouched, some do."""
    env = _env(house2, render=False)
    pen = env.table.objects[LOW_PEN]
    grid = env.collision.free_grid()
    cx, cz = float(pen.position[0]), float(pen.position[2])
    seen = {True: 0, False: 0}
    for i in range(grid.mask.shape[0]):
        for j in range(grid.mask.shape[1]):
            x, z = grid.x0 + grid.resolution * i, grid.z0 + grid.resolution * j
            if not grid.mask[i, j] or (x - cx) ** 2 + (z - cz) ** 2 > 1.6 ** 2:
                continue
            yaw = math.degrees(math.atan2(cx - x, cz - z))
            for standing in (True, False):
                pose = AgentPose(x, z, yaw, 0.0, standing)
                if not env.in_reach(LOW_PEN, pose):
                    continue
                seen[standing] += any(env.is_visible(LOW_PEN, AgentPose(x, z, yaw, h, standing))
                                      for h in (0.0, 30.0, 60.0))
    assert seen[True] == 0 and seen[False] > 0


def test_the_agent_crouches_for_a_watch_it_saw_from_afar_and_brings_it(tmp_path, house0) -> None:
    """House 0 with the low-shelf watch as its only watch: the agent sees it from across the room
    (a far camera looks under the side table's top), walks up, finds no standing view of it within
    reach, crouches, sees it and takes it to the bed (GC 1). Before Crouch (`worldmind run` at
    320x240, same episode) it gave the watch up as unreachable and stopped with GC 0."""
    from evaluation.episodes import Episode
    from evaluation.runner import run_episode
    from planner.holomind import HoloMindAgent

    house = json.loads(json.dumps(house0))
    others = {"small|4|7", "small|7|41", "small|7|39"}  # the house's other watches

    def prune(objects: list) -> list:
        return [{**o, "children": prune(o.get("children") or [])} for o in objects if o["id"] not in others]

    house["objects"] = prune(house["objects"])
    houses = tmp_path / "low-watch.jsonl"
    houses.write_text(json.dumps(house) + "\n")
    episode = Episode.from_dict({
        "id": "crouch-watch", "house": {"file": str(houses), "index": 0}, "scenario": "Daily Cleaning & Tidying",
        "instructions": {"detailed": "Please put the watch on the bed.", "concise": "watch on the bed"},
        "max_steps": 800, "checklist": [{"object": {"type": "Watch"}, "predicate": "inReceptacle",
                                          "target": {"type": "Bed"}}]})
    env = EmbeddedEnvironment(EmbeddedConfig(width=160, height=120))
    agent = HoloMindAgent()
    result, world = run_episode(env, agent, episode)
    notes = result.extra.get("agent_notes") or []
    assert any(f"{LOW_WATCH} in view crouched" in n for n in notes), notes[-10:]
    assert result.gc == 1.0 and world.object(LOW_WATCH)["parentReceptacles"]
