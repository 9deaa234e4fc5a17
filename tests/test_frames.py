"""THOR (y up, left-handed) <-> ROS REP 103 (x forward, y left, z up) conversions.

The last tests close the loop through the embedded simulator: a depth pixel back-projected with
the observation's intrinsics and ``world_from_camera`` must land on the box of the object whose
instance id that pixel carries.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim_bridge.embedded.env import AgentPose, EmbeddedConfig, EmbeddedEnvironment
from household.house_data import load_house
from sim_bridge.embedded.objects import SimObject
from sim_bridge.embedded.render import CameraPose
from household.frames import (
    ROS_FROM_THOR,
    camera_pose_from_world_from_camera,
    is_rigid_transform,
    ros_to_thor_points,
    ros_yaw_to_thor,
    thor_camera_to_ros_pose,
    thor_to_ros_points,
    thor_yaw_to_ros,
    world_from_camera,
)
from household.types import Action, CameraIntrinsics, Observation

RNG_SEED = 1234


def _angle_diff(a: float, b: float) -> float:
    """Smallest absolute difference between two angles in degrees."""
    return abs((a - b + 180.0) % 360.0 - 180.0)


def _thor_facing(yaw_deg: float) -> np.ndarray:
    """THOR's facing direction for rotation.y: 0 faces +z, 90 faces +x."""
    yaw = math.radians(yaw_deg)
    return np.array([math.sin(yaw), 0.0, math.cos(yaw)])


def _ros_facing(yaw_deg: float) -> np.ndarray:
    yaw = math.radians(yaw_deg)
    return np.array([math.cos(yaw), math.sin(yaw), 0.0])


# ---- points ----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "thor, ros",
    [
        ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0)),  # THOR forward (+z) -> ROS forward (+x)
        ((1.0, 0.0, 0.0), (0.0, -1.0, 0.0)),  # THOR right (+x) -> ROS right (-y)
        ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),  # THOR up (+y) -> ROS up (+z)
        ((2.0, 0.9, -3.0), (-3.0, -2.0, 0.9)),
    ],
)
def test_thor_to_ros_axes(thor: tuple[float, float, float], ros: tuple[float, float, float]) -> None:
    np.testing.assert_allclose(thor_to_ros_points(np.array(thor)), ros, atol=1e-12)
    np.testing.assert_allclose(ros_to_thor_points(np.array(ros)), thor, atol=1e-12)


def test_point_round_trips_both_ways() -> None:
    rng = np.random.default_rng(RNG_SEED)
    pts = rng.uniform(-20.0, 20.0, size=(7, 5, 3))  # any leading shape
    np.testing.assert_allclose(ros_to_thor_points(thor_to_ros_points(pts)), pts, atol=1e-12)
    np.testing.assert_allclose(thor_to_ros_points(ros_to_thor_points(pts)), pts, atol=1e-12)
    assert thor_to_ros_points(pts).shape == pts.shape


def test_point_map_is_a_reflection_preserving_distances() -> None:
    # Left-handed -> right-handed: an orthogonal map with determinant -1.
    assert np.linalg.det(ROS_FROM_THOR) == pytest.approx(-1.0)
    np.testing.assert_allclose(ROS_FROM_THOR @ ROS_FROM_THOR.T, np.eye(3), atol=1e-12)
    rng = np.random.default_rng(RNG_SEED)
    a, b = rng.normal(size=(2, 3))
    assert np.linalg.norm(thor_to_ros_points(a) - thor_to_ros_points(b)) == pytest.approx(np.linalg.norm(a - b))


# ---- yaw -------------------------------------------------------------------------------------

@pytest.mark.parametrize("thor_yaw", [0.0, 30.0, 90.0, 135.0, 180.0, 270.0, 359.0, 12.5])
def test_thor_yaw_maps_facing_direction(thor_yaw: float) -> None:
    """The ROS yaw must describe the same heading as THOR's rotation.y, after the point map."""
    ros_yaw = thor_yaw_to_ros(thor_yaw)
    np.testing.assert_allclose(thor_to_ros_points(_thor_facing(thor_yaw)), _ros_facing(ros_yaw), atol=1e-12)
    assert -180.0 < ros_yaw <= 180.0


def test_yaw_special_values() -> None:
    assert thor_yaw_to_ros(0.0) == pytest.approx(0.0)
    assert thor_yaw_to_ros(90.0) == pytest.approx(-90.0)  # THOR +x is ROS -y
    assert thor_yaw_to_ros(270.0) == pytest.approx(90.0)
    assert thor_yaw_to_ros(180.0) == pytest.approx(180.0)
    assert ros_yaw_to_thor(-90.0) == pytest.approx(90.0)


def test_yaw_round_trips_both_ways() -> None:
    rng = np.random.default_rng(RNG_SEED)
    for thor_yaw in rng.uniform(0.0, 360.0, 50):
        back = ros_yaw_to_thor(thor_yaw_to_ros(thor_yaw))
        assert 0.0 <= back < 360.0
        assert _angle_diff(back, thor_yaw) < 1e-9
    for ros_yaw in rng.uniform(-540.0, 540.0, 50):
        back = thor_yaw_to_ros(ros_yaw_to_thor(ros_yaw))
        assert -180.0 < back <= 180.0
        assert _angle_diff(back, ros_yaw) < 1e-9


# ---- camera pose -----------------------------------------------------------------------------

def _optical_axes(pose: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World directions of the optical x (right), y (down) and z (forward) axes."""
    return pose[:3, 0], pose[:3, 1], pose[:3, 2]


def test_thor_camera_at_yaw_90_looks_along_ros_minus_y() -> None:
    pose = thor_camera_to_ros_pose(np.array([1.0, 1.5, 2.0]), 90.0, 0.0)
    right, down, forward = _optical_axes(pose)
    np.testing.assert_allclose(forward, [0.0, -1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(down, [0.0, 0.0, -1.0], atol=1e-12)
    np.testing.assert_allclose(right, [-1.0, 0.0, 0.0], atol=1e-12)  # facing -y, right is -x
    np.testing.assert_allclose(pose[:3, 3], thor_to_ros_points(np.array([1.0, 1.5, 2.0])), atol=1e-12)


def test_thor_camera_at_yaw_0_looks_along_ros_plus_x() -> None:
    right, down, forward = _optical_axes(thor_camera_to_ros_pose(np.zeros(3), 0.0, 0.0))
    np.testing.assert_allclose(forward, [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(right, [0.0, -1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(down, [0.0, 0.0, -1.0], atol=1e-12)


@pytest.mark.parametrize("horizon", [10.0, 30.0, 60.0])
@pytest.mark.parametrize("thor_yaw", [0.0, 90.0, 225.0])
def test_positive_horizon_pitches_optical_axis_down(horizon: float, thor_yaw: float) -> None:
    _, down, forward = _optical_axes(thor_camera_to_ros_pose(np.zeros(3), thor_yaw, horizon))
    assert forward[2] < 0.0
    assert forward[2] == pytest.approx(-math.sin(math.radians(horizon)))
    # Pitch leaves the heading alone: the horizontal part still points along the THOR yaw.
    horizontal = forward[:2] / np.linalg.norm(forward[:2])
    np.testing.assert_allclose(horizontal, _ros_facing(thor_yaw_to_ros(thor_yaw))[:2], atol=1e-12)
    assert down[2] < 0.0  # image "down" still points (partly) to the floor


def test_negative_horizon_looks_up() -> None:
    _, _, forward = _optical_axes(thor_camera_to_ros_pose(np.zeros(3), 0.0, -30.0))
    assert forward[2] == pytest.approx(math.sin(math.radians(30.0)))


def test_camera_rotations_are_proper() -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(30):
        pose = thor_camera_to_ros_pose(rng.uniform(-5, 5, 3), rng.uniform(0, 360), rng.uniform(-60, 60))
        assert np.linalg.det(pose[:3, :3]) == pytest.approx(1.0)
        assert is_rigid_transform(pose)


def test_world_from_camera_round_trip() -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(50):
        position = rng.uniform(-10, 10, 3)
        yaw = float(rng.uniform(-179.0, 180.0))
        pitch = float(rng.uniform(-85.0, 85.0))
        got_position, got_yaw, got_pitch = camera_pose_from_world_from_camera(world_from_camera(position, yaw, pitch))
        np.testing.assert_allclose(got_position, position, atol=1e-12)
        assert _angle_diff(got_yaw, yaw) < 1e-9
        assert got_pitch == pytest.approx(pitch, abs=1e-9)


def test_camera_pose_round_trip_from_matrix() -> None:
    """pose -> (position, yaw, pitch) -> pose reproduces the matrix."""
    rng = np.random.default_rng(RNG_SEED + 1)
    for _ in range(30):
        pose = thor_camera_to_ros_pose(rng.uniform(-5, 5, 3), rng.uniform(0, 360), rng.uniform(-60, 60))
        np.testing.assert_allclose(world_from_camera(*camera_pose_from_world_from_camera(pose)), pose, atol=1e-12)


def test_thor_camera_pose_round_trip_through_ros() -> None:
    position_thor, yaw_thor, horizon = np.array([3.0, 1.5, -2.0]), 250.0, 30.0
    pose = thor_camera_to_ros_pose(position_thor, yaw_thor, horizon)
    position_ros, yaw_ros, pitch = camera_pose_from_world_from_camera(pose)
    np.testing.assert_allclose(ros_to_thor_points(position_ros), position_thor, atol=1e-12)
    assert _angle_diff(ros_yaw_to_thor(yaw_ros), yaw_thor) < 1e-9
    assert pitch == pytest.approx(horizon)


def test_camera_pose_with_roll_is_rejected() -> None:
    pose = world_from_camera(np.zeros(3), 0.0, 0.0)
    roll = np.array([[1.0, 0.0, 0.0], [0.0, math.cos(0.3), -math.sin(0.3)], [0.0, math.sin(0.3), math.cos(0.3)]])
    rolled = pose.copy()
    rolled[:3, :3] = roll @ pose[:3, :3]  # roll about the body's forward (+x) axis
    with pytest.raises(ValueError, match="roll"):
        camera_pose_from_world_from_camera(rolled)


@pytest.mark.parametrize("thor_yaw, horizon", [(0.0, 0.0), (90.0, 30.0), (200.0, -30.0), (315.0, 60.0)])
def test_ros_pose_agrees_with_renderer_thor_pose(thor_yaw: float, horizon: float) -> None:
    """The renderer's THOR-frame camera, mapped through the point conversion, is the ROS pose."""
    position = np.array([1.0, 1.5, 2.0])
    thor_pose = CameraPose.from_thor(position, thor_yaw, horizon).matrix()
    ros_pose = thor_camera_to_ros_pose(position, thor_yaw, horizon)
    np.testing.assert_allclose(ROS_FROM_THOR @ thor_pose[:3, :3], ros_pose[:3, :3], atol=1e-12)
    rng = np.random.default_rng(RNG_SEED)
    cam_points = rng.uniform(-2, 2, size=(20, 3))
    via_thor = thor_to_ros_points(cam_points @ thor_pose[:3, :3].T + thor_pose[:3, 3])
    via_ros = cam_points @ ros_pose[:3, :3].T + ros_pose[:3, 3]
    np.testing.assert_allclose(via_thor, via_ros, atol=1e-12)


# ---- is_rigid_transform ----------------------------------------------------------------------

def test_is_rigid_transform_rejects_non_rigid() -> None:
    good = world_from_camera(np.array([1.0, 2.0, 3.0]), 40.0, 20.0)
    assert is_rigid_transform(good)
    reflected = good.copy()
    reflected[:3, 0] *= -1.0
    scaled = good.copy()
    scaled[:3, :3] *= 1.1
    bad_row = good.copy()
    bad_row[3] = [0.0, 0.0, 1.0, 1.0]
    with_nan = good.copy()
    with_nan[0, 3] = np.nan
    assert not is_rigid_transform(reflected)
    assert not is_rigid_transform(scaled)
    assert not is_rigid_transform(bad_row)
    assert not is_rigid_transform(with_nan)
    assert not is_rigid_transform(good[:3])
    assert not is_rigid_transform(np.eye(3))


def test_is_rigid_transform_draws_the_line_where_allclose_does() -> None:
    """The check is np.allclose's (|a - b| <= atol + 1e-5 |b|) and a determinant within the
    tolerance, written out: perturbations either side of the tolerance, against that rule."""
    rng = np.random.default_rng(5)
    base = world_from_camera(np.array([0.5, -1.0, 2.0]), 75.0, -10.0)
    for _ in range(300):
        pose = base.copy()
        i, j = rng.integers(0, 3), rng.integers(0, 4)
        pose[i if j < 3 else 3, j] += rng.choice([-1, 1]) * rng.uniform(0.0, 3e-4)
        rot = pose[:3, :3]
        want = (np.allclose(rot @ rot.T, np.eye(3), atol=1e-4) and abs(np.linalg.det(rot) - 1.0) < 1e-4
                and np.allclose(pose[3], [0.0, 0.0, 0.0, 1.0], atol=1e-4))
        assert is_rigid_transform(pose) == want


# ---- back-projection through the embedded simulator -----------------------------------------

def test_intrinsics_from_fov() -> None:
    k = CameraIntrinsics.from_fov(320, 240, 90.0)
    assert (k.width, k.height) == (320, 240)
    assert k.fx == pytest.approx(120.0) and k.fy == pytest.approx(120.0)
    assert (k.cx, k.cy) == (pytest.approx(159.5), pytest.approx(119.5))
    # A ray through the top pixel edge makes half the vertical field of view with the axis.
    assert math.degrees(math.atan((k.cy + 0.5) / k.fy)) == pytest.approx(45.0)
    np.testing.assert_allclose(k.matrix(), [[120.0, 0.0, 159.5], [0.0, 120.0, 119.5], [0.0, 0.0, 1.0]])


def _back_project(obs: Observation) -> np.ndarray:
    """(H, W, 3) REP 103 world points of every pixel, from the public intrinsics and pose."""
    k = obs.intrinsics
    v, u = np.mgrid[0:k.height, 0:k.width]
    d = obs.depth.astype(np.float64)
    cam = np.stack([(u - k.cx) / k.fx * d, (v - k.cy) / k.fy * d, d], axis=-1)
    pose = obs.world_from_camera
    return cam @ pose[:3, :3].T + pose[:3, 3]


def _box_local_ros(obj: SimObject, points_ros: np.ndarray) -> np.ndarray:
    """Coordinates of REP 103 points in the object's box frame, with the box from THOR."""
    center_ros = thor_to_ros_points(obj.position)
    axes_ros = thor_to_ros_points(obj.rotation().T)  # rows: the box's local x, y, z axes in ROS
    return (points_ros - center_ros) @ axes_ros.T


def _pose_seeing(env: EmbeddedEnvironment, object_id: str) -> AgentPose:
    """A free pose whose camera sees the object (ring search around it)."""
    center = env.table.objects[object_id].position
    for radius in (1.0, 1.3, 0.8, 1.6):
        for k in range(24):
            angle = 2.0 * math.pi * k / 24
            x, z = center[0] + radius * math.sin(angle), center[2] + radius * math.cos(angle)
            if not env.collision.is_free(x, z):
                continue
            yaw = math.degrees(math.atan2(center[0] - x, center[2] - z)) % 360.0
            for horizon in (30.0, 0.0, 60.0):
                pose = AgentPose(float(x), float(z), yaw, horizon)
                if env.is_visible(object_id, pose):
                    return pose
    raise AssertionError(f"no free pose sees {object_id}")


@pytest.fixture(scope="module")
def env() -> EmbeddedEnvironment:
    environment = EmbeddedEnvironment(EmbeddedConfig(width=160, height=120, fov_deg=90.0))
    environment.reset(load_house("houses_dev.jsonl.gz", 0))
    return environment


@pytest.mark.parametrize("target", ["6|1", "7|1", "4|1", "5|1"])  # Fridge, DiningTable, Dresser, Toilet
def test_back_projected_depth_lands_on_rendered_object_box(env: EmbeddedEnvironment, target: str) -> None:
    pose = _pose_seeing(env, target)
    env.pose = AgentPose(pose.x, pose.z, (pose.yaw - 30.0) % 360.0, pose.horizon)
    result = env.step(Action("RotateRight"))  # an observation taken through the public seam
    assert result.success
    obs = result.observation
    assert obs.intrinsics == CameraIntrinsics.from_fov(160, 120, 90.0)
    assert is_rigid_transform(obs.world_from_camera)
    np.testing.assert_allclose(
        obs.world_from_camera, thor_camera_to_ros_pose(env.camera_position(), env.pose.yaw, env.pose.horizon), atol=1e-9)
    points = _back_project(obs)
    labels = {label.object_id: k for k, label in obs.id_to_label.items()}
    assert target in labels, f"{target} not rendered; saw {sorted(labels)}"
    checked = 0
    for object_id, k in labels.items():
        mask = (obs.instance_ids == k) & (obs.depth > 0)
        if not mask.any():
            continue
        obj = env.table.objects[object_id]
        local = _box_local_ros(obj, points[mask])
        excess = np.abs(local) - obj.size / 2.0
        assert excess.max() < 0.02, f"{object_id}: back-projected pixel {excess.max():.3f} m outside its box"
        checked += 1
    assert checked >= 1


def test_back_projected_floor_pixels_lie_at_height_zero(env: EmbeddedEnvironment) -> None:
    """Pixels with no instance at the bottom of a downward view hit the floor: ROS z = 0 there."""
    x, z = 4.25, 10.5  # the house's agent start, in the living room, facing the wall at x = 5.03
    assert env.collision.is_free(x, z)
    env.pose = AgentPose(x, z, 90.0, 0.0)
    obs = env.step(Action("LookDown")).observation  # horizon 30: the bottom rows see the floor ahead
    assert env.pose.horizon == pytest.approx(30.0)
    points = _back_project(obs)
    bottom = np.zeros_like(obs.instance_ids, dtype=bool)
    bottom[-5:, :] = True
    floor = bottom & (obs.instance_ids == 0) & (obs.depth > 0)
    assert floor.sum() > 50
    np.testing.assert_allclose(points[floor][:, 2], 0.0, atol=0.01)
    # ... and ahead of the agent (THOR +x is ROS -y): a bottom-row ray leaves the 1.5 m high
    # camera about 73-75 degrees below the horizon, so it meets the floor 0.40-0.47 m ahead.
    ahead = -(points[floor][:, 1] - obs.agent.position[1])
    assert ahead.min() > 0.38 and ahead.max() < 0.5


def test_point_conversions_are_the_matrices_exactly_signed_zeros_included():
    """The conversions are written as permutations (no BLAS threads); they must give the very
    numbers the matrix products give."""
    from household.frames import ROS_FROM_THOR, THOR_FROM_ROS, ros_to_thor_points, thor_to_ros_points
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(500, 3)) * 10.0
    pts[::7] = 0.0
    pts[1::11] = -0.0
    pts[2::13, 1] = np.inf
    for fn, m in ((ros_to_thor_points, THOR_FROM_ROS), (thor_to_ros_points, ROS_FROM_THOR)):
        finite = np.isfinite(pts).all(axis=1)
        want = pts[finite] @ m.T
        got = fn(pts[finite])
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))
        assert fn(pts[0]).shape == (3,) and fn(pts.reshape(50, 10, 3)).shape == (50, 10, 3)
        assert np.isinf(fn(pts[2])).any()  # a non-finite coordinate moves, it does not spread
