"""Pose correction for a robot without a localiser (issue 31): depth frames registered against the
agent's own map (perception/pose_correction.py, perception/scan_registration.py).

The frames are ray cast here, exactly, from a walled room with furniture-sized boxes (REP 103:
x forward, y left, z up; the floor at z = 0), and the odometry error is applied as a known SE(2),
so each test knows the true pose and checks the corrected one against it."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest

from household.types import ActionFeedback, AgentStatus, CameraIntrinsics, Observation
from household.frames import apply_se2, lift_se2, se2
from perception.pose_correction import CorrectorConfig, ScanToMapCorrector, VoxelPointMap
from perception.scan_registration import RegistrationTarget, register_se2
from planner.factory import _env_pose_correction, make_agent
from sim_bridge.sensors.profiles import PROFILES

INTR = CameraIntrinsics.from_fov(320, 240, 90.0)  # the embedded simulator's frame
CAMERA_Z = 1.5
ROOM = ((0.0, 0.0, 0.0), (6.0, 5.0, 2.6))  # inside of the walls
BOXES = [((1.0, 3.8, 0.0), (2.2, 5.0, 0.9)),  # a counter against the far wall
         ((4.2, 0.6, 0.0), (5.0, 1.4, 1.2)),  # a cabinet
         ((2.8, 2.0, 0.0), (3.3, 2.5, 0.75))]  # a table in the middle


def camera_pose(x: float, y: float, yaw_deg: float, pitch_deg: float = 20.0) -> np.ndarray:
    """world_from_camera (optical frame: x right, y down, z forward) at (x, y, CAMERA_Z)."""
    psi, p = math.radians(yaw_deg), math.radians(pitch_deg)
    z_axis = np.array([math.cos(psi) * math.cos(p), math.sin(psi) * math.cos(p), -math.sin(p)])
    x_axis = np.array([math.sin(psi), -math.cos(psi), 0.0])
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2] = x_axis, np.cross(z_axis, x_axis), z_axis
    pose[:3, 3] = (x, y, CAMERA_Z)
    return pose


def render(pose: np.ndarray, room: tuple = ROOM, boxes: list = BOXES) -> np.ndarray:
    """Exact z-depth of the room's inside and the boxes seen from ``pose``."""
    v, u = np.mgrid[0:INTR.height, 0:INTR.width]
    rays = np.stack([(u - INTR.cx) / INTR.fx, (v - INTR.cy) / INTR.fy, np.ones(u.shape)], axis=-1).reshape(-1, 3)
    dirs = rays @ pose[:3, :3].T  # world direction per unit z-depth
    origin = pose[:3, 3]
    lo, hi = np.array(room[0]), np.array(room[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        exits = np.where(dirs > 0, (hi - origin) / dirs, np.where(dirs < 0, (lo - origin) / dirs, np.inf))
        depth = exits.min(axis=1)
        for blo, bhi in boxes:
            t1, t2 = (np.array(blo) - origin) / dirs, (np.array(bhi) - origin) / dirs
            near = np.nanmax(np.minimum(t1, t2), axis=1)
            far = np.nanmin(np.maximum(t1, t2), axis=1)
            hit = (near <= far) & (near > 0) & (near < depth)
            depth[hit] = near[hit]
    return depth.reshape(INTR.height, INTR.width).astype(np.float32)


def frame(true_x: float, true_y: float, yaw_deg: float, error: np.ndarray, step: int = 0,
          depth: np.ndarray | None | str = "render") -> Observation:
    """The frame at the true pose, its pose as odometry reports it (``error``: 3x3 SE(2) applied
    to the truth)."""
    truth = camera_pose(true_x, true_y, yaw_deg)
    told = lift_se2(error) @ truth
    px, py = (error @ np.array([true_x, true_y, 1.0]))[:2]
    dyaw = math.degrees(math.atan2(error[1, 0], error[0, 0]))
    image = render(truth) if isinstance(depth, str) else depth
    return Observation(step, INTR, told, AgentStatus((float(px), float(py), 0.9), yaw_deg + dyaw, 20.0),
                       ActionFeedback("MoveAhead", True), depth=image)


def position_error(obs: Observation, x: float, y: float) -> float:
    return math.hypot(obs.agent.position[0] - x, obs.agent.position[1] - y)


def walk() -> list[tuple[float, float, float]]:
    """A walk round the room, turning on the spot at the ends (x, y, yaw in degrees)."""
    poses = [(1.0 + 0.25 * i, 1.2, 0.0) for i in range(12)]
    poses += [(4.0, 1.2, 30.0 * k) for k in range(1, 4)]
    poses += [(4.0, 1.2 + 0.25 * i, 90.0) for i in range(1, 8)]
    poses += [(4.0, 3.0, 90.0 + 30.0 * k) for k in range(1, 4)]
    poses += [(4.0 - 0.25 * i, 3.0, 180.0) for i in range(1, 10)]
    return poses


def test_registration_recovers_a_known_planar_offset() -> None:
    truth = camera_pose(2.0, 1.5, 40.0)
    pts_map = _points(render(truth), truth)
    target = RegistrationTarget.build(pts_map)
    offset = se2(math.radians(2.0), 0.06, -0.04, (2.0, 1.5))
    reg = register_se2(apply_se2(offset, pts_map[::3]), np.ones(len(pts_map[::3])), target, (2.0, 1.5), search_m=0.1)
    assert reg is not None and reg.constrained == 3
    recovered = reg.delta @ offset  # the correction undoes the offset
    assert math.hypot(recovered[0, 2], recovered[1, 2]) < 0.005
    assert abs(math.degrees(math.atan2(recovered[1, 0], recovered[0, 0]))) < 0.1


def test_facing_one_wall_the_direction_along_it_is_left_to_odometry() -> None:
    """A plain wall pins down the distance to it and the heading, not the slide along it: the
    update is kept only in the constrained directions (degeneracy), never invented along the wall."""
    room = ((0.0, -50.0, 0.0), (3.0, 50.0, 2.6))  # a wall 100 m wide in front, nothing else
    truth = camera_pose(1.0, 0.0, 0.0)
    pts = _points(render(truth, room, []), truth)
    pts = pts[pts[:, 0] > 2.9]  # the wall alone (no floor, ceiling or side walls in view)
    target = RegistrationTarget.build(pts)
    slide = se2(0.0, 0.0, 0.2)  # 20 cm along the wall
    reg = register_se2(apply_se2(slide, pts[::2]), np.ones(len(pts[::2])), target, (1.0, 0.0), search_m=0.1)
    assert reg is not None and reg.constrained < 3
    assert abs(reg.delta[1, 2]) < 0.01  # no made-up motion along the wall


def test_a_drifting_walk_is_held_within_centimetres_of_the_truth() -> None:
    corrector = ScanToMapCorrector(CorrectorConfig(depth_noise_k=0.0))
    raw, fixed = [], []
    drift = np.eye(3)
    for i, (x, y, yaw) in enumerate(walk()):
        if i:  # odometry: 3 cm per step sideways and 0.4 degree per step, about where the robot is
            drift = se2(math.radians(0.4), 0.0, 0.03, (x, y)) @ drift
        obs = frame(x, y, yaw, drift, step=i)
        raw.append(position_error(obs, x, y))
        fixed.append(position_error(corrector.correct(obs), x, y))
    assert max(raw) > 0.5  # the odometry alone ends far off
    assert max(fixed) < 0.05
    diag = corrector.diagnostics()
    assert diag["frames"] == len(walk()) and diag["outcomes"].get("registered", 0) > len(walk()) // 2
    assert diag["map_voxels"] > 1000


def test_a_frame_without_depth_keeps_the_last_correction_and_the_map() -> None:
    corrector = ScanToMapCorrector()
    drift = se2(0.0, 0.05, 0.0)
    corrector.correct(frame(1.0, 1.2, 0.0, np.eye(3)))
    corrector.correct(frame(1.25, 1.2, 0.0, drift, step=1))
    before, voxels = corrector.map_from_odom_se2.copy(), len(corrector.map)
    for depth in (None, np.zeros((INTR.height, INTR.width), np.float32), np.full((3, 3), 2.0, np.float32)):
        out = corrector.correct(frame(1.25, 1.2, 0.0, drift, step=2, depth=depth))
        assert corrector.last_outcome == "no depth"
        assert np.allclose(corrector.map_from_odom_se2, before) and len(corrector.map) == voxels
        assert position_error(out, 1.25, 1.2) < 0.025  # the last correction still applies (odometry: 0.05 off)


def test_an_odometry_jump_of_metres_is_not_believed() -> None:
    corrector = ScanToMapCorrector()
    for i in range(3):
        corrector.correct(frame(1.0 + 0.25 * i, 1.2, 0.0, np.eye(3), step=i))
    voxels = len(corrector.map)
    jump = se2(0.0, 2.5, -1.0)  # the odometry suddenly says 2.7 m away; the robot moved 0.25 m
    out = corrector.correct(frame(1.75, 1.2, 0.0, jump, step=3))
    assert corrector.outcomes["odometry jump"] == 1
    assert position_error(out, 1.75, 1.2) < 0.3  # the last good map pose, refined, not the jump
    assert len(corrector.map) >= voxels  # nothing mapped is lost
    assert corrector.diagnostics()["outcomes"]["odometry jump"] == 1


def test_a_correction_larger_than_the_drift_since_the_last_fix_is_refused() -> None:
    """A registration that wants to move the pose 40 cm a step or two after a full fix slid onto the
    wrong geometry (or the world changed): the pose moves no more than the bound."""
    corrector = ScanToMapCorrector()
    for i in range(4):
        corrector.correct(frame(1.0 + 0.25 * i, 1.2, 0.0, np.eye(3), step=i))
    max_m, _ = corrector.plausible_correction()
    assert max_m <= 0.15
    voxels = len(corrector.map)
    off = se2(0.0, 0.4, 0.0)
    out = corrector.correct(frame(2.0, 1.2, 0.0, off, step=4))
    assert corrector.last_outcome != "registered"
    assert position_error(out, 2.0, 1.2) > 0.4 - max_m  # not pulled by more than the plausible bound
    if corrector.last_outcome == "diverged":
        assert len(corrector.map) == voxels


def test_the_voxel_map_keeps_its_first_estimates_once_frozen() -> None:
    vmap = VoxelPointMap(0.05, freeze_hits=2)
    vmap.insert(np.array([[0.01, 0.01, 0.01], [0.02, 0.02, 0.02]]))
    vmap.insert(np.array([[0.04, 0.04, 0.04], [1.0, 1.0, 1.0]]))
    assert len(vmap) == 2
    pts = vmap.points[np.argsort(vmap.points[:, 0])]
    assert np.allclose(pts[0], [0.015, 0.015, 0.015])  # the third hit came after the freeze
    assert np.allclose(pts[1], [1.0, 1.0, 1.0])
    assert len(vmap.near(0.0, 0.0, 0.5)) == 1


def test_the_agent_corrects_its_pose_only_where_no_localiser_bounds_it() -> None:
    def env(profile: str) -> SimpleNamespace:
        return SimpleNamespace(profile=PROFILES[profile], config=SimpleNamespace(move_step=0.25))

    assert _env_pose_correction(env("odom-only")) and _env_pose_correction(env("harsh"))
    assert not _env_pose_correction(env("realistic")) and not _env_pose_correction(env("ideal"))
    assert not _env_pose_correction(SimpleNamespace())  # a robot's planner node: no profile
    assert make_agent("deterministic", env("odom-only")).config.pose_correction
    assert not make_agent("deterministic", env("odom-only"), pose_correction=False).config.pose_correction
    assert make_agent("deterministic", env("realistic"), pose_correction=True).config.pose_correction


def test_the_agent_reads_the_corrected_pose_and_reports_the_correction() -> None:
    agent = make_agent("deterministic", SimpleNamespace(profile=PROFILES["odom-only"],
                                                        config=SimpleNamespace(move_step=0.25)))
    episode = SimpleNamespace(id="synthetic", instruction=lambda kind: "Put the mug on the table.")
    drift = np.eye(3)
    first = frame(1.0, 1.2, 0.0, drift)
    agent.reset(episode, first)
    agent.act(first)  # as the runner does: the first act is on the frame reset() was given
    assert agent.localiser.frames == 1  # ... which is registered once
    for i, (x, y, yaw) in enumerate(walk()[1:12], start=1):
        drift = se2(0.0, 0.0, 0.03, (x, y)) @ drift
        obs = frame(x, y, yaw, drift, step=i)
        agent.act(obs)
        assert position_error(agent.obs, x, y) < 0.05 < position_error(obs, x, y) or i < 3
    extra = agent.report_extra()["pose_correction"]
    assert extra["frames"] == 12 and extra["correction_m"] > 0.2


def _points(depth: np.ndarray, pose: np.ndarray) -> np.ndarray:
    v, u = np.nonzero(depth > 0)
    d = depth[v, u].astype(float)
    cam = np.stack([(u - INTR.cx) / INTR.fx * d, (v - INTR.cy) / INTR.fy * d, d], axis=1)
    pts = cam @ pose[:3, :3].T + pose[:3, 3]
    return pts[pts[:, 2] > 0.05]


@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_non_finite_depth_is_skipped_not_registered(bad: str) -> None:
    corrector = ScanToMapCorrector()
    depth = render(camera_pose(1.0, 1.2, 0.0))
    depth[::3] = float(bad)  # a third of the rows
    out = corrector.correct(frame(1.0, 1.2, 0.0, np.eye(3), depth=depth))
    assert np.isfinite(corrector.map.points).all() and len(corrector.map) > 0
    assert dataclasses.replace(out).agent.position[0] == pytest.approx(1.0)


@pytest.mark.parametrize("pitch", [0.0, 30.0, 89.9, 90.0])
def test_the_planar_heading_holds_when_the_camera_looks_down(pitch: float) -> None:
    from perception.pose_correction import planar_pose

    for yaw in (0.0, 75.0, -120.0, 180.0):
        t = planar_pose(camera_pose(1.0, 2.0, yaw, pitch))
        heading = math.degrees(math.atan2(t[1, 0], t[0, 0]))
        assert abs((heading - yaw + 180.0) % 360.0 - 180.0) < 1e-6
        assert (t[0, 2], t[1, 2]) == pytest.approx((1.0, 2.0))
