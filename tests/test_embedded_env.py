"""The embedded simulator behind the Environment seam: reset / step / ground_truth / metadata.

Dev house 0 (houses_dev.jsonl.gz, line 0) is a 4-room house: bedroom, bathroom, kitchen (fridge
6|1 with food inside, microwave small|6|31, cups, butter knife) and living room (dining table 7|1).
Tests that need the agent next to an object set ``env.pose`` to a free pose found by a ring
search around the object (privileged, test-only), then act through ``step``.
"""

from __future__ import annotations

import math
import random
from typing import Any, Iterator

import numpy as np
import pytest

from evaluation.episodes import AgentStart, Episode, HouseRef
from sim_bridge.embedded.env import AgentPose, EmbeddedConfig, EmbeddedEnvironment
from household.assets import BASIN_DEPTH
from household.house_data import HouseError, load_house
from household.frames import is_rigid_transform, thor_to_ros_points, thor_yaw_to_ros
from household.types import (
    ACTIONS,
    CONTROL_ACTIONS,
    PASS,
    NAVIGATION_ACTIONS,
    Action,
    CameraIntrinsics,
    Environment,
    Observation,
    StepResult,
    WorldState,
)

DEV_FILE = "houses_dev.jsonl.gz"
W, H = 96, 72
FRIDGE, EGG_IN_FRIDGE, MICROWAVE, CUP, DINING_TABLE = "6|1", "small|6|29", "small|6|31", "small|6|26", "7|1"

# ai2thor 5.0 ObjectMetadata field names (ai2thor 5.0's ObjectMetadata; sim_bridge/thor/README.md).
THOR_OBJECT_FIELDS = (
    "name objectId objectType assetId position rotation visible isInteractable receptacle receptacleObjectIds "
    "parentReceptacles toggleable isToggled controlledObjects breakable isBroken canFillWithLiquid "
    "isFilledWithLiquid fillLiquid dirtyable isDirty canBeUsedUp isUsedUp cookable isCooked temperature "
    "isHeatSource isColdSource sliceable isSliced openable isOpen openness pickupable isPickedUp moveable mass "
    "salientMaterials distance isMoving axisAlignedBoundingBox objectOrientedBoundingBox"
).split()
THOR_AGENT_FIELDS = ("name", "position", "rotation", "cameraHorizon", "isStanding", "inHighFrictionArea")
THOR_EVENT_FIELDS = ("objects", "agent", "inventoryObjects", "lastAction", "lastActionSuccess", "errorMessage",
                     "sceneName", "screenWidth", "screenHeight", "fov", "cameraPosition", "depthFormat")


@pytest.fixture(scope="module")
def house0() -> dict[str, Any]:
    return load_house(DEV_FILE, 0)


@pytest.fixture()
def env(house0: dict[str, Any]) -> EmbeddedEnvironment:
    environment = EmbeddedEnvironment(EmbeddedConfig(width=W, height=H))
    environment.reset(house0)
    return environment


@pytest.fixture()
def blind_env(house0: dict[str, Any]) -> EmbeddedEnvironment:
    environment = EmbeddedEnvironment(EmbeddedConfig(render=False))
    environment.reset(house0)
    return environment


# ---- helpers ---------------------------------------------------------------------------------

def _ring(center: np.ndarray, radii: tuple[float, ...], count: int = 36) -> Iterator[tuple[float, float]]:
    for radius in radii:
        for k in range(count):
            angle = 2.0 * math.pi * k / count
            yield float(center[0] + radius * math.sin(angle)), float(center[2] + radius * math.cos(angle))


def _facing(x: float, z: float, target: np.ndarray) -> float:
    """THOR yaw from (x, z) towards the target: rotation.y = atan2(dx, dz)."""
    return math.degrees(math.atan2(target[0] - x, target[2] - z)) % 360.0


def find_interaction_pose(env: EmbeddedEnvironment, object_id: str,
                          radii: tuple[float, ...] = (0.6, 0.8, 1.0, 1.2)) -> AgentPose:
    """A free pose from which the object is visible and within reach."""
    center = env.table.objects[object_id].position
    for x, z in _ring(center, radii):
        if not env.collision.is_free(x, z):
            continue
        for horizon in (30.0, 0.0, 60.0, -30.0):
            pose = AgentPose(x, z, _facing(x, z, center), horizon)
            if env.interactable(object_id, pose):
                return pose
    raise AssertionError(f"no free pose can interact with {object_id}")


def go_to(env: EmbeddedEnvironment, object_id: str) -> AgentPose:
    env.pose = find_interaction_pose(env, object_id)
    return env.pose


def open_spot(env: EmbeddedEnvironment, clearance: float = 0.6) -> tuple[float, float]:
    """A free point with free floor all around it (a disc of ``clearance``)."""
    x0, z0, x1, z1 = env.layout.bounds
    for x in np.arange(x0 + 0.5, x1, 0.25):
        for z in np.arange(z0 + 0.5, z1, 0.25):
            ring = _ring(np.array([x, 0.0, z]), (clearance / 2, clearance), count=16)
            if env.collision.is_free(x, z) and all(env.collision.is_free(px, pz) for px, pz in ring):
                return float(x), float(z)
    raise AssertionError("no open floor in the house")


def step_ok(env: EmbeddedEnvironment, name: str, object_id: str | None = None, **args: Any) -> StepResult:
    result = env.step(Action(name, object_id, args))
    assert result.success, f"{name} {object_id}: {result.error}"
    return result


# ---- reset -----------------------------------------------------------------------------------

def test_is_an_environment(env: EmbeddedEnvironment) -> None:
    assert isinstance(env, Environment)


def test_reset_with_house_uses_its_agent_start(house0: dict[str, Any]) -> None:
    environment = EmbeddedEnvironment(EmbeddedConfig(width=W, height=H))
    obs = environment.reset(house0)
    start = house0["metadata"]["agent"]
    assert environment.collision.is_free(start["position"]["x"], start["position"]["z"])
    assert (environment.pose.x, environment.pose.z) == (start["position"]["x"], start["position"]["z"])
    assert environment.pose.yaw == pytest.approx(start["rotation"]["y"])
    assert environment.pose.horizon == pytest.approx(start["horizon"])
    assert obs.step == 0 and obs.feedback.success
    assert environment.ground_truth().house_id == house0["id"]


def test_reset_with_episode(house0: dict[str, Any]) -> None:
    episode = Episode(id="ep-test", house=HouseRef(DEV_FILE, 0), scenario="test", instructions={}, checklist=[],
                      max_steps=10, agent_start=AgentStart((3.5, 0.9, 3.0), (0.0, 180.0, 0.0), 0.0))
    environment = EmbeddedEnvironment(EmbeddedConfig(render=False))
    environment.reset(episode)
    assert environment.collision.is_free(3.5, 3.0)
    assert (environment.pose.x, environment.pose.z, environment.pose.yaw, environment.pose.horizon) == (3.5, 3.0, 180.0, 0.0)
    assert environment.ground_truth().house_id == house0["id"]


def test_blocked_start_is_moved_to_free_floor(house0: dict[str, Any]) -> None:
    house = dict(house0, metadata={"agent": {"position": {"x": 1.26, "y": 0.9, "z": 3.45},  # inside the counter
                                             "rotation": {"x": 0, "y": 0, "z": 0}, "horizon": 30}})
    environment = EmbeddedEnvironment(EmbeddedConfig(render=False))
    environment.reset(house)
    assert environment.collision.is_free(environment.pose.x, environment.pose.z)
    assert math.hypot(environment.pose.x - 1.26, environment.pose.z - 3.45) < 3.0


def test_reset_rejects_non_house() -> None:
    with pytest.raises(HouseError):
        EmbeddedEnvironment(EmbeddedConfig(render=False)).reset({"not": "a house"})


def test_reset_restores_the_house(env: EmbeddedEnvironment, house0: dict[str, Any]) -> None:
    go_to(env, FRIDGE)
    step_ok(env, "OpenObject", FRIDGE)
    env.reset(house0)
    assert not env.ground_truth().object(FRIDGE)["isOpen"]
    assert env.step_count == 0


def test_step_before_reset_raises() -> None:
    with pytest.raises(RuntimeError):
        EmbeddedEnvironment(EmbeddedConfig(render=False)).step(Action("MoveAhead"))


# ---- navigation ------------------------------------------------------------------------------

@pytest.mark.parametrize("yaw", [0.0, 90.0, 180.0, 270.0, 30.0])
@pytest.mark.parametrize("action, offset", [("MoveAhead", 0.0), ("MoveRight", 90.0), ("MoveBack", 180.0),
                                            ("MoveLeft", 270.0)])
def test_moves_follow_thor_heading(blind_env: EmbeddedEnvironment, yaw: float, action: str, offset: float) -> None:
    """rotation.y = 0 faces +z and 90 faces +x; MoveRight is a quarter turn clockwise of ahead."""
    x, z = open_spot(blind_env)
    blind_env.pose = AgentPose(x, z, yaw, 0.0)
    step_ok(blind_env, action)
    heading = math.radians(yaw + offset)
    step = blind_env.config.move_step
    assert blind_env.pose.x == pytest.approx(x + step * math.sin(heading))
    assert blind_env.pose.z == pytest.approx(z + step * math.cos(heading))
    assert blind_env.pose.yaw == yaw


def test_move_magnitude_argument(blind_env: EmbeddedEnvironment) -> None:
    x, z = open_spot(blind_env)
    blind_env.pose = AgentPose(x, z, 0.0, 0.0)
    step_ok(blind_env, "MoveAhead", moveMagnitude=0.1)
    assert (blind_env.pose.x, blind_env.pose.z) == pytest.approx((x, z + 0.1))


def test_rotation(blind_env: EmbeddedEnvironment) -> None:
    blind_env.pose = AgentPose(blind_env.pose.x, blind_env.pose.z, 0.0, 0.0)
    step_ok(blind_env, "RotateRight")
    assert blind_env.pose.yaw == pytest.approx(30.0)
    step_ok(blind_env, "RotateLeft")
    step_ok(blind_env, "RotateLeft")
    assert blind_env.pose.yaw == pytest.approx(330.0)  # wraps into [0, 360)
    step_ok(blind_env, "RotateRight", degrees=90.0)
    assert blind_env.pose.yaw == pytest.approx(60.0)
    for _ in range(12):
        step_ok(blind_env, "RotateRight")
    assert blind_env.pose.yaw == pytest.approx(60.0)


def test_look_limits(blind_env: EmbeddedEnvironment) -> None:
    blind_env.pose = AgentPose(blind_env.pose.x, blind_env.pose.z, 0.0, 0.0)
    step_ok(blind_env, "LookDown")
    step_ok(blind_env, "LookDown")
    assert blind_env.pose.horizon == pytest.approx(60.0)
    beyond = blind_env.step(Action("LookDown"))
    assert not beyond.success and "LookDown" in beyond.error
    assert blind_env.pose.horizon == pytest.approx(60.0)
    for expected in (30.0, 0.0, -30.0):
        step_ok(blind_env, "LookUp")
        assert blind_env.pose.horizon == pytest.approx(expected)
    above = blind_env.step(Action("LookUp"))
    assert not above.success
    assert blind_env.pose.horizon == pytest.approx(-30.0)
    assert above.observation.agent.horizon_deg == pytest.approx(-30.0)


def test_walking_into_a_wall_fails_naming_it(blind_env: EmbeddedEnvironment) -> None:
    wall_ids = {w.id for w in blind_env.layout.walls}
    blind_env.pose = AgentPose(4.25, 10.5, 90.0, 0.0)  # living room, facing the wall at x = 5.03
    results = [blind_env.step(Action("MoveAhead")) for _ in range(12)]
    assert results[0].success
    failures = [r for r in results if not r.success]
    assert failures, "walked 3 m east without meeting the wall"
    error = failures[0].error
    assert "wall" in error and any(wall_id in error for wall_id in wall_ids), error
    # the agent stopped short of the wall and stays put on every later attempt
    assert blind_env.pose.x < 5.025 - blind_env.config.agent_radius
    assert all(not r.success for r in results[results.index(failures[0]):])
    assert blind_env.collision.is_free(blind_env.pose.x, blind_env.pose.z)


def test_walking_into_furniture_fails_naming_it(blind_env: EmbeddedEnvironment) -> None:
    table = blind_env.table.objects[DINING_TABLE]
    x, z = next((x, z) for x, z in _ring(table.position, (1.2, 1.4)) if blind_env.collision.is_free(x, z))
    blind_env.pose = AgentPose(x, z, _facing(x, z, table.position), 0.0)
    results = [blind_env.step(Action("MoveAhead")) for _ in range(8)]
    errors = [r.error for r in results if not r.success]
    assert errors and DINING_TABLE in errors[0] and "object" in errors[0]


def test_agent_never_leaves_the_house(blind_env: EmbeddedEnvironment) -> None:
    rng = random.Random(0)
    moves = ("MoveAhead", "MoveAhead", "MoveAhead", "MoveBack", "MoveLeft", "MoveRight", "RotateLeft", "RotateRight")
    failures = 0
    for _ in range(1500):
        result = blind_env.step(Action(rng.choice(moves)))
        failures += not result.success
        x, z = blind_env.pose.x, blind_env.pose.z
        assert blind_env.collision.room_at(x, z) is not None, (x, z)
        assert blind_env.collision.is_free(x, z), (x, z, blind_env.collision.collision(x, z))
    assert failures > 0  # the walk did meet walls or furniture


def test_front_door_does_not_let_the_agent_out(blind_env: EmbeddedEnvironment) -> None:
    """House 0's kitchen has a door in the exterior wall z = 0 (x in [0.83, 2.82]), closed as in
    THOR (openness 0): walking at it ends in a failed step at the wall, never outside."""
    x, z = 1.8, 1.5
    assert blind_env.collision.is_free(x, z)
    blind_env.pose = AgentPose(x, z, 180.0, 0.0)  # facing -z, straight at the doorway
    results = [blind_env.step(Action("MoveAhead")) for _ in range(12)]
    assert results[0].success
    failures = [r for r in results if not r.success]
    assert failures and "collide with wall" in failures[0].error and "outside" not in failures[0].error
    assert blind_env.pose.z >= 0.0
    assert blind_env.collision.room_at(blind_env.pose.x, blind_env.pose.z) is not None


def test_unknown_action_is_an_unsuccessful_step(blind_env: EmbeddedEnvironment) -> None:
    result = blind_env.step(Action("Fly"))
    assert not result.success and "Fly" in result.error


def test_every_action_in_the_vocabulary_is_accepted(blind_env: EmbeddedEnvironment) -> None:
    """No action of the seam's vocabulary raises (interactions fail cleanly without a target)."""
    for name in ACTIONS:
        result = blind_env.step(Action(name))
        assert isinstance(result, StepResult)
        assert "Unknown action" not in result.error
        if name not in NAVIGATION_ACTIONS and name not in CONTROL_ACTIONS:
            assert not result.success
        if name == PASS:
            assert result.success  # nothing moves, nothing fails


def test_stop_ends_the_episode(blind_env: EmbeddedEnvironment) -> None:
    step_ok(blind_env, "Stop")
    after = blind_env.step(Action("MoveAhead"))
    assert not after.success and "stopped" in after.error


# ---- interaction preconditions -----------------------------------------------------------------

def test_unknown_object_fails_naming_it(blind_env: EmbeddedEnvironment) -> None:
    result = blind_env.step(Action("PickupObject", "Apple|+01.00|+00.90|-01.00"))
    assert not result.success and "Apple|+01.00|+00.90|-01.00" in result.error


def test_interaction_without_object_id_fails(blind_env: EmbeddedEnvironment) -> None:
    result = blind_env.step(Action("OpenObject"))
    assert not result.success and result.error


def test_out_of_reach_fails_naming_it(env: EmbeddedEnvironment) -> None:
    pose = go_to(env, CUP)
    cup = env.table.objects[CUP]
    # back off along the line of sight until the cup is more than 1.5 m away
    for distance in np.arange(1.6, 4.0, 0.1):
        x = cup.position[0] - distance * math.sin(math.radians(pose.yaw))
        z = cup.position[2] - distance * math.cos(math.radians(pose.yaw))
        if env.collision.is_free(x, z) and cup.distance_to_point(env.camera_position(AgentPose(x, z, pose.yaw, 0))) > 1.5:
            env.pose = AgentPose(x, z, pose.yaw, pose.horizon)
            break
    assert not env.in_reach(CUP)
    result = env.step(Action("PickupObject", CUP))
    assert not result.success
    assert CUP in result.error and "reach" in result.error
    assert env.table.held is None


def test_object_behind_the_agent_is_not_visible(env: EmbeddedEnvironment) -> None:
    pose = go_to(env, CUP)
    env.pose = AgentPose(pose.x, pose.z, (pose.yaw + 180.0) % 360.0, pose.horizon)
    assert env.in_reach(CUP) and not env.is_visible(CUP)
    result = env.step(Action("PickupObject", CUP))
    assert not result.success and CUP in result.error and "visible" in result.error


def test_object_in_closed_fridge_is_not_visible(env: EmbeddedEnvironment) -> None:
    go_to(env, FRIDGE)
    assert env.in_reach(EGG_IN_FRIDGE)
    result = env.step(Action("PickupObject", EGG_IN_FRIDGE))
    assert not result.success and EGG_IN_FRIDGE in result.error
    step_ok(env, "OpenObject", FRIDGE)
    go_to(env, EGG_IN_FRIDGE)  # now it can be seen from somewhere
    step_ok(env, "PickupObject", EGG_IN_FRIDGE)
    assert env.table.held == EGG_IN_FRIDGE


# ---- interactions through the seam -------------------------------------------------------------

def test_pickup_updates_status_metadata_and_render(env: EmbeddedEnvironment) -> None:
    go_to(env, CUP)
    before = step_ok(env, "RotateRight", degrees=0.0).observation
    assert any(label.object_id == CUP for label in before.id_to_label.values())
    obs = step_ok(env, "PickupObject", CUP).observation
    assert obs.agent.held_object_id == CUP and obs.agent.held_object_type == "Cup"
    meta = env.metadata()
    assert meta["inventoryObjects"] == [{"objectId": CUP, "objectType": "Cup"}]
    assert meta["lastAction"] == "PickupObject" and meta["lastActionSuccess"] is True
    cup = env.ground_truth().object(CUP)
    assert cup["isPickedUp"] and not cup["parentReceptacles"]
    assert env.ground_truth().held_object_id == CUP
    assert all(label.object_id != CUP for label in obs.id_to_label.values())  # not drawn while held


def test_held_object_follows_the_agent(env: EmbeddedEnvironment) -> None:
    go_to(env, CUP)
    step_ok(env, "PickupObject", CUP)
    start = env.table.objects[CUP].position.copy()
    step_ok(env, "RotateRight", degrees=180.0)
    moved = False
    for _ in range(4):
        moved |= env.step(Action("MoveAhead")).success
    assert moved
    held = env.table.objects[CUP].position
    assert np.linalg.norm(held - start) > 0.2
    camera = env.camera_position()
    assert np.linalg.norm((held - camera)[[0, 2]]) < 0.6  # still in the agent's hand


def test_put_cook_and_fill_through_the_seam(env: EmbeddedEnvironment) -> None:
    """Cup into the microwave, run it: the cup is hot (a heat source), the put shows in metadata."""
    go_to(env, CUP)
    step_ok(env, "PickupObject", CUP)
    go_to(env, MICROWAVE)
    closed = env.step(Action("PutObject", MICROWAVE))
    assert not closed.success and MICROWAVE in closed.error
    step_ok(env, "OpenObject", MICROWAVE)
    step_ok(env, "PutObject", MICROWAVE)
    step_ok(env, "CloseObject", MICROWAVE)
    step_ok(env, "ToggleObjectOn", MICROWAVE)
    opened = env.step(Action("OpenObject", MICROWAVE))
    assert not opened.success and MICROWAVE in opened.error
    truth = env.ground_truth()
    assert truth.object(CUP)["parentReceptacles"][0] == MICROWAVE
    assert CUP in truth.object(MICROWAVE)["receptacleObjectIds"]
    assert truth.object(CUP)["temperature"] == "Hot"
    assert truth.object(MICROWAVE)["isToggled"] and not truth.object(MICROWAVE)["isOpen"]
    assert truth.held_object_id is None


def test_vessel_filled_in_a_pedestal_sink_can_be_taken_out_again(env: EmbeddedEnvironment) -> None:
    """House 0's sink (Sink_4) is a 1 m box from the floor to its rim. A cup put in it rests in
    the basin near the rim, as ProcTHOR's own sink contents do, not on the pedestal's floor where
    the rim hides it: from where it was put and filled, the robot can take it out again."""
    sink, faucet = "5|0|0", "5|0|1"
    go_to(env, CUP)
    step_ok(env, "PickupObject", CUP)
    go_to(env, sink)
    step_ok(env, "PutObject", sink)
    cup, basin = env.table.objects[CUP], env.table.objects[sink]
    rim = basin.position[1] + basin.size[1] / 2.0
    bottom = cup.position[1] - cup.size[1] / 2.0
    assert rim - BASIN_DEPTH["Sink"] - 1e-6 <= bottom < rim
    pose = env.pose
    env.pose = find_interaction_pose(env, faucet)
    step_ok(env, "ToggleObjectOn", faucet)
    step_ok(env, "ToggleObjectOff", faucet)
    env.pose = pose
    assert env.ground_truth().object(CUP)["isFilledWithLiquid"]
    step_ok(env, "PickupObject", CUP)


def test_failed_interaction_changes_nothing(env: EmbeddedEnvironment) -> None:
    before = env.metadata()["objects"]
    result = env.step(Action("ToggleObjectOn", "no|such|object"))
    assert not result.success
    assert env.metadata()["objects"] == before
    meta = env.metadata()
    assert meta["lastActionSuccess"] is False and "no|such|object" in meta["errorMessage"]


# ---- observations ----------------------------------------------------------------------------

def test_observation_images(env: EmbeddedEnvironment) -> None:
    go_to(env, FRIDGE)
    obs = step_ok(env, "RotateLeft", degrees=0.0).observation
    assert isinstance(obs, Observation)
    assert obs.rgb.shape == (H, W, 3) and obs.rgb.dtype == np.uint8
    assert obs.depth.shape == (H, W) and obs.depth.dtype == np.float32
    assert obs.instance_ids.shape == (H, W) and np.issubdtype(obs.instance_ids.dtype, np.integer)
    assert np.all(obs.depth >= 0) and np.all(np.isfinite(obs.depth))
    assert obs.depth.max() > 0.3 and obs.depth.max() < 30.0  # metres, not millimetres
    assert obs.rgb.max() > 0
    ids = set(np.unique(obs.instance_ids)) - {0}
    assert ids == set(obs.id_to_label)
    assert FRIDGE in {label.object_id for label in obs.id_to_label.values()}
    for label in obs.id_to_label.values():
        assert env.table.objects[label.object_id].type == label.object_type
    # an object pixel always has a depth
    assert np.all(obs.depth[obs.instance_ids > 0] > 0)


def test_observation_intrinsics_and_pose(env: EmbeddedEnvironment) -> None:
    obs = step_ok(env, "RotateRight").observation
    assert obs.intrinsics == CameraIntrinsics.from_fov(W, H, env.config.fov_deg)
    assert (obs.intrinsics.width, obs.intrinsics.height) == (W, H)
    assert is_rigid_transform(obs.world_from_camera)
    camera_thor = np.array([env.pose.x, env.config.camera_height, env.pose.z])
    np.testing.assert_allclose(obs.world_from_camera[:3, 3], thor_to_ros_points(camera_thor))
    np.testing.assert_allclose(obs.agent.position, thor_to_ros_points(np.array([env.pose.x, 0.0, env.pose.z])))
    assert obs.agent.yaw_deg == pytest.approx(thor_yaw_to_ros(env.pose.yaw))
    assert obs.agent.horizon_deg == pytest.approx(env.pose.horizon)
    assert obs.step == env.step_count == 1
    assert obs.feedback.action == "RotateRight" and obs.feedback.success


def test_observation_carries_action_feedback(blind_env: EmbeddedEnvironment) -> None:
    result = blind_env.step(Action("PickupObject", "ghost"))
    assert result.observation.feedback.success is False
    assert result.observation.feedback.error == result.error
    assert result.observation.feedback.action == "PickupObject"


def test_render_false_gives_no_images(blind_env: EmbeddedEnvironment) -> None:
    obs = blind_env.step(Action("RotateRight")).observation
    assert obs.rgb is None and obs.depth is None and obs.instance_ids is None
    assert obs.id_to_label == {}
    assert is_rigid_transform(obs.world_from_camera)


def test_same_actions_same_observations(house0: dict[str, Any]) -> None:
    actions = [Action("RotateRight"), Action("MoveAhead"), Action("LookDown"), Action("MoveAhead"),
               Action("RotateLeft"), Action("MoveBack")]
    runs = []
    for _ in range(2):
        environment = EmbeddedEnvironment(EmbeddedConfig(width=W, height=H))
        environment.reset(house0)
        runs.append([environment.step(a).observation for a in actions])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a.rgb, b.rgb)
        np.testing.assert_array_equal(a.depth, b.depth)
        np.testing.assert_array_equal(a.instance_ids, b.instance_ids)
        assert a.id_to_label == b.id_to_label


# ---- metadata and ground truth ---------------------------------------------------------------

def test_metadata_has_thor_field_names(env: EmbeddedEnvironment) -> None:
    meta = env.metadata()
    for key in THOR_EVENT_FIELDS:
        assert key in meta, key
    for key in THOR_AGENT_FIELDS:
        assert key in meta["agent"], key
    assert meta["objects"]
    for obj in meta["objects"]:
        missing = [k for k in THOR_OBJECT_FIELDS if k not in obj]
        assert not missing, (obj["objectId"], missing)
        assert set(obj["position"]) == {"x", "y", "z"} and set(obj["rotation"]) == {"x", "y", "z"}
        assert set(obj["axisAlignedBoundingBox"]) >= {"cornerPoints", "center", "size"}
        assert len(obj["axisAlignedBoundingBox"]["cornerPoints"]) == 8
        assert len(obj["objectOrientedBoundingBox"]["cornerPoints"]) == 8
        assert obj["temperature"] in ("RoomTemp", "Hot", "Cold")
    assert meta["screenWidth"] == W and meta["screenHeight"] == H
    assert meta["depthFormat"] == "Meters"


def test_metadata_describes_the_house(env: EmbeddedEnvironment, house0: dict[str, Any]) -> None:
    meta = env.metadata()
    by_id = {o["objectId"]: o for o in meta["objects"]}
    assert set(by_id) == set(env.table.objects)
    fridge = by_id[FRIDGE]
    assert fridge["objectType"] == "Fridge" and fridge["openable"] and fridge["receptacle"] and fridge["isColdSource"]
    assert EGG_IN_FRIDGE in fridge["receptacleObjectIds"]
    assert by_id[EGG_IN_FRIDGE]["parentReceptacles"] == [FRIDGE]
    assert by_id[EGG_IN_FRIDGE]["temperature"] == "Cold"
    assert by_id[CUP]["pickupable"] and by_id[CUP]["canFillWithLiquid"]
    agent = meta["agent"]
    assert (agent["position"]["x"], agent["position"]["z"]) == (env.pose.x, env.pose.z)
    assert agent["rotation"]["y"] == env.pose.yaw and agent["cameraHorizon"] == env.pose.horizon


def test_visible_and_interactable_flags_match_the_agent_view(env: EmbeddedEnvironment) -> None:
    go_to(env, CUP)
    meta = {o["objectId"]: o for o in env.metadata()["objects"]}
    assert meta[CUP]["visible"] and meta[CUP]["isInteractable"]
    assert not meta[EGG_IN_FRIDGE]["visible"]  # inside the closed fridge
    far = [o for o in meta.values() if o["distance"] > 3.0]
    assert far and not any(o["isInteractable"] for o in far)
    for object_id, obj in meta.items():
        if obj["isInteractable"]:
            assert env.interactable(object_id), object_id


def test_ground_truth(env: EmbeddedEnvironment, house0: dict[str, Any]) -> None:
    truth = env.ground_truth()
    assert isinstance(truth, WorldState)
    assert truth.house_id == house0["id"]
    assert {r.id for r in truth.rooms} == {r["id"] for r in house0["rooms"]}
    assert truth.room_of_point(env.pose.x, env.pose.z) is not None
    assert truth.room_of(truth.object(FRIDGE)).room_type == "Kitchen"
    assert truth.held_object_id is None
    with pytest.raises(KeyError, match="nope"):
        truth.object("nope")


def test_sliced_objects_stay_in_ground_truth(env: EmbeddedEnvironment) -> None:
    butter_knife = "small|6|32"
    bread = "small|6|36"
    go_to(env, butter_knife)
    step_ok(env, "PickupObject", butter_knife)
    go_to(env, bread)
    step_ok(env, "SliceObject", bread)
    truth = env.ground_truth()
    assert truth.object(bread)["isSliced"]
    slices = [o for o in truth.objects if o["objectType"] == "BreadSliced"]
    assert slices
    again = env.step(Action("PickupObject", bread))
    assert not again.success and bread in again.error


# ---- known bugs ------------------------------------------------------------------------------

def test_long_move_does_not_tunnel_through_a_wall(blind_env: EmbeddedEnvironment) -> None:
    # Living room at x < 5.025, bedroom beyond; the wall between them is solid (no door).
    x, z = 4.775, 7.75
    assert blind_env.collision.is_free(x, z) and blind_env.collision.is_free(x + 1.0, z)
    assert blind_env.collision.room_at(x, z) != blind_env.collision.room_at(x + 1.0, z)
    blind_env.pose = AgentPose(x, z, 90.0, 0.0)
    result = blind_env.step(Action("MoveAhead", args={"moveMagnitude": 1.0}))
    assert not result.success and "wall" in result.error
    assert blind_env.pose.x == pytest.approx(x)


def test_interactable_object_on_toilet_can_be_picked_up(env: EmbeddedEnvironment) -> None:
    soap_bar = "small|5|14"
    go_to(env, soap_bar)
    assert {o["objectId"]: o for o in env.metadata()["objects"]}[soap_bar]["isInteractable"]
    step_ok(env, "PickupObject", soap_bar)


def test_potato_on_c_shaped_counter_is_reachable(env: EmbeddedEnvironment) -> None:
    potato = "small|6|20"
    assert env.table.objects[potato].parent == "6|0"
    go_to(env, potato)  # raises when no free pose can interact with it
    step_ok(env, "PickupObject", potato)
