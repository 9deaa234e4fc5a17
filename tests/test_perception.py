"""Perception: frames and back-projection (round trips through transforms3d-built poses), voxel
keys, per-instance geometry on an exact synthetic scene and on the embedded simulator, and bad
input (NaN/inf/zero depth, mismatched masks, non-rigid poses, empty frames)."""

from __future__ import annotations

import numpy as np
import pytest
from spatial_scene import Box, render
from transforms3d.euler import euler2mat

from perception.backproject import (
    KEY_LIMIT,
    camera_to_pixel,
    check_pose,
    invert_pose,
    pack_coords,
    pixel_to_camera,
    pose_from_rt,
    sorted_unique,
    split_pose,
    transform_points,
    unpack_keys,
    voxel_keys,
    world_to_pixel,
    yaw_box,
)
from perception.observations import PerceptionError
from perception.perceive import BACKGROUND, UNKNOWN, Perception, PerceptionConfig
from household.frames import world_from_camera
from household.types import CameraIntrinsics

INTR = CameraIntrinsics.from_fov(160, 120, 90.0)


def random_pose(rng: np.random.Generator) -> np.ndarray:
    return pose_from_rt(euler2mat(*rng.uniform(-np.pi, np.pi, 3)), rng.uniform(-5, 5, 3))


def test_pose_compose_split_invert_round_trip() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        pose = random_pose(rng)
        rot, trans = split_pose(pose)
        assert np.allclose(pose_from_rt(rot, trans), pose)
        assert np.allclose(invert_pose(pose) @ pose, np.eye(4), atol=1e-12)


def test_pixel_world_pixel_round_trip_with_simulator_style_poses() -> None:
    rng = np.random.default_rng(1)
    for yaw, pitch in [(0.0, 0.0), (90.0, 30.0), (-135.0, -20.0), (33.0, 60.0)]:
        pose = world_from_camera(rng.uniform(-3, 3, 3), yaw, pitch)
        u = rng.uniform(0, INTR.width - 1, 50)
        v = rng.uniform(0, INTR.height - 1, 50)
        d = rng.uniform(0.3, 8.0, 50)
        world = transform_points(pose, pixel_to_camera(u, v, d, INTR))
        u2, v2, d2 = world_to_pixel(world, INTR, pose)
        assert np.allclose(u2, u) and np.allclose(v2, v) and np.allclose(d2, d)
    # The optical axis maps to the REP 103 forward of a yaw-0, level camera: +x.
    pose = world_from_camera(np.zeros(3), 0.0, 0.0)
    ahead = transform_points(pose, pixel_to_camera(np.array([INTR.cx]), np.array([INTR.cy]), np.array([2.0]), INTR))
    assert np.allclose(ahead, [[2.0, 0.0, 0.0]])
    _, _, z = camera_to_pixel(np.array([[0.0, 0.0, -1.0]]), INTR)
    assert z[0] < 0  # behind the camera: callers must check z


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_transform_points_gives_the_bits_of_the_broadcast_definition(dtype: type) -> None:
    """Column by column, the same operations in the same order as p[:, k:k+1] * r[:, k] summed
    over k, plus t: every map and memory built from it stays as committed results measured it."""
    rng = np.random.default_rng(5)
    for n in (0, 1, 7, 5000):
        pose = random_pose(rng)
        points = (rng.normal(0, 4, (n, 3)) * (100 if dtype is np.int64 else 1)).astype(dtype)
        r = pose[:3, :3].astype(points.dtype if points.dtype == np.float32 else np.float64)
        t = pose[:3, 3].astype(r.dtype)
        want = points[:, 0:1] * r[:, 0] + points[:, 1:2] * r[:, 1] + points[:, 2:3] * r[:, 2] + t
        got = transform_points(pose, points)
        assert got.dtype == want.dtype and got.shape == (n, 3)
        assert np.array_equal(got, want)


@pytest.mark.parametrize("bad", [
    np.diag([2.0, 1.0, 1.0, 1.0]),  # scaled
    np.diag([1.0, 1.0, -1.0, 1.0]),  # reflection
    np.eye(3),  # wrong shape
    np.full((4, 4), np.nan),
    np.array([[1, 0.3, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]),  # shear
])
def test_non_rigid_poses_are_refused(bad: np.ndarray) -> None:
    with pytest.raises(PerceptionError, match="world_from_camera"):
        check_pose(bad)


def test_voxel_keys_round_trip_and_range() -> None:
    rng = np.random.default_rng(2)
    coords = rng.integers(-KEY_LIMIT, KEY_LIMIT + 1, size=(1000, 3))
    assert np.array_equal(unpack_keys(pack_coords(coords)), coords)
    keys = voxel_keys(rng.uniform(-50, 50, (500, 3)), 0.05)
    assert np.array_equal(sorted_unique(keys), np.unique(keys))
    with pytest.raises(PerceptionError, match="key range"):
        pack_coords(np.array([[KEY_LIMIT + 1, 0, 0]]))


def test_yaw_box_recovers_a_rotated_footprint() -> None:
    rng = np.random.default_rng(3)
    local = rng.uniform([-1.0, -0.25, 0.0], [1.0, 0.25, 0.5], (4000, 3))
    yaw = np.radians(30.0)
    rot = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    centre, extents, got = yaw_box(local @ rot.T + [3.0, -1.0, 0.0])
    assert np.allclose(extents, [2.0, 0.5, 0.5], atol=0.02)
    assert np.isclose(np.cos(2 * (got - yaw)), 1.0, atol=1e-3)  # direction up to 180 degrees
    assert np.allclose(centre, [3.0, -1.0, 0.25], atol=0.02)


def test_instance_geometry_on_an_exact_scene() -> None:
    # A box 2 m ahead, its front face (x = 1.8) square to the camera: the visible area is that face.
    box = Box("b1", "Cabinet", (2.0, 0.0, 1.5), (0.4, 0.6, 0.5))
    obs = render([box], (0.0, 0.0, 1.5), 0.0, 0.0, floor=False)
    frame = Perception(PerceptionConfig(voxel_size=0.05)).process(obs)
    assert len(frame.objects) == 1
    o = frame.objects[0]
    assert (o.label, o.source_id) == ("Cabinet", "b1")
    assert o.n_pixels == int((obs.instance_ids == 1).sum())
    assert np.array_equal(o.full_mask(120, 160), obs.instance_ids == 1)
    assert o.surface_area == pytest.approx(0.6 * 0.5, rel=0.05)
    assert np.allclose(o.centroid, [1.8, 0.0, 1.5], atol=0.01)
    pixel = 1.8 / INTR.fx  # one pixel's footprint: the box is of pixel centres, up to half a pixel inside
    assert np.allclose(o.aabb_min, [1.8, -0.3, 1.25], atol=pixel) and np.allclose(o.aabb_max, [1.8, 0.3, 1.75], atol=pixel)
    assert np.all(np.abs(o.points - [1.8, 0.0, 1.5]) <= [0.05, 0.3 + 0.05, 0.25 + 0.05])
    assert np.array_equal(o.voxel_keys, np.unique(o.voxel_keys))
    assert o.crop is not None and o.crop.shape[:2] == o.mask.shape
    assert not o.touches_border
    assert (frame.instance_of_pixel[obs.instance_ids == 1] == 0).all()
    assert (frame.instance_of_pixel[obs.instance_ids == 0] == UNKNOWN).all()  # no floor: no depth


def test_points_land_on_their_objects_in_the_simulator() -> None:
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
    from household.house_data import load_house
    from household.frames import thor_to_ros_points

    env = EmbeddedEnvironment(EmbeddedConfig(width=160, height=120))
    obs = env.reset(load_house("houses_dev.jsonl.gz", 0))
    frame = Perception(PerceptionConfig(min_pixels=5, oriented_boxes=True)).process(obs)
    assert frame.objects
    for o in frame.objects:
        sim = env.table.objects[o.source_id]
        corners = thor_to_ros_points(sim.corners())
        lo, hi = corners.min(axis=0) - 0.05, corners.max(axis=0) + 0.05  # one voxel of slack
        assert np.all((o.points >= lo) & (o.points <= hi)), o.source_id
        assert o.obb is not None and np.all(o.obb.extents > 0)
    background = (obs.instance_ids == 0) & (obs.depth > 0.1)
    assert (frame.instance_of_pixel[background] == BACKGROUND).all()


def test_bad_depth_values_are_ignored_with_a_warning() -> None:
    box = Box("b1", "Cabinet", (2.0, 0.0, 1.5), (0.4, 0.6, 0.5))
    obs = render([box], (0.0, 0.0, 1.5), 0.0, 0.0)
    clean = Perception().process(obs).objects[0]
    mask = obs.instance_ids == 1
    rows, cols = np.nonzero(mask)
    obs.depth[rows[:10], cols[:10]] = np.nan
    obs.depth[rows[10:20], cols[10:20]] = np.inf
    obs.depth[rows[20:30], cols[20:30]] = -1.0
    obs.depth[rows[30:40], cols[30:40]] = 0.0
    frame = Perception().process(obs)
    assert frame.objects[0].n_pixels == clean.n_pixels - 40
    assert any("NaN, inf or negative" in w for w in frame.warnings)
    assert np.all(np.isfinite(frame.depth)) and (frame.depth >= 0).all()
    obs.depth[:] = np.nan
    empty = Perception().process(obs)
    assert empty.objects == [] and empty.warnings


def test_malformed_observations_are_refused() -> None:
    box = Box("b1", "Cabinet", (2.0, 0.0, 1.5), (0.4, 0.6, 0.5))
    perception = Perception()
    obs = render([box], (0.0, 0.0, 1.5), 0.0, 0.0)
    obs.instance_ids = obs.instance_ids[:, :-1]
    with pytest.raises(PerceptionError, match="instance_ids"):
        perception.process(obs)
    obs = render([box], (0.0, 0.0, 1.5), 0.0, 0.0)
    obs.depth = obs.depth[1:]
    with pytest.raises(PerceptionError, match="depth"):
        perception.process(obs)
    obs = render([box], (0.0, 0.0, 1.5), 0.0, 0.0)
    obs.world_from_camera = obs.world_from_camera * 1.01
    with pytest.raises(PerceptionError, match="rigid"):
        perception.process(obs)
    obs = render([box], (0.0, 0.0, 1.5), 0.0, 0.0)
    obs.depth = None
    with pytest.raises(PerceptionError, match="required"):
        perception.process(obs)
    obs = render([box], (0.0, 0.0, 1.5), 0.0, 0.0)
    obs.rgb = obs.rgb[..., :2]
    with pytest.raises(PerceptionError, match="rgb"):
        perception.process(obs)


def test_filters_unlabelled_small_and_ignored_instances() -> None:
    boxes = [Box("b1", "Cabinet", (2.0, 0.0, 1.5), (0.4, 0.6, 0.5)), Box("b2", "Floor", (2.0, 1.0, 1.5), (0.4, 0.4, 0.4)),
             Box("b3", "Pen", (1.5, -0.4, 1.5), (0.02, 0.02, 0.02))]
    obs = render(boxes, (0.0, 0.0, 1.5), 0.0, 0.0)
    obs.instance_ids[-5:, :5] = 99  # an instance with no label (on the floor, so with depth)
    frame = Perception(PerceptionConfig(ignore_labels=("Floor",))).process(obs)
    assert [o.label for o in frame.objects] == ["Cabinet"]
    assert any("[99]" in w for w in frame.warnings)
    assert (frame.instance_of_pixel[obs.instance_ids == 3] == UNKNOWN).all()  # too small: dropped
    empty = render([], (0.0, 0.0, 1.5), 0.0, 30.0)
    frame = Perception().process(empty)
    assert frame.objects == [] and (frame.instance_of_pixel == BACKGROUND).any()
