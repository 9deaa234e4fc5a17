"""Pose correction for a robot without a localiser: each depth frame registered against the
agent's own map, seeded by odometry (issue 31; DESIGN "Planner": "without one, the stack registers
depth against its own map and publishes ``map -> odom`` itself").

``ScanToMapCorrector.correct(obs)`` takes an observation whose pose is odometry (REP 105 ``odom``:
continuous, drifting without bound) and returns it with the pose in ``map``: the odometry pose
composed with the current ``map -> odom`` correction, refined by registering the frame's depth
against a voxel map of what earlier frames saw (``perception.scan_registration``). The map keeps
the first well-observed estimate of each voxel (a voxel stops averaging after ``freeze_hits``
hits), so the map stays anchored to where the robot first saw a wall, when its drift was small,
and later frames localise against it rather than dragging it along: with a robot that keeps
coming back through the same rooms, this is localisation against a map built on the way.

What it refuses, and says so in ``diagnostics`` (the agent reports them per episode):
- a frame with no usable depth: the pose is odometry composed with the last correction;
- no map near the robot yet (a new area): the same, and the frame is mapped at that pose;
- too few correspondences (under ``min_inliers`` or ``min_inlier_fraction`` of the frame's
  points: it sees mostly what is not mapped yet): the same, and the frame is mapped;
- a registration that diverges (a correction larger than the drift since the last full fix can
  explain, or a large residual): the same, and the frame is not mapped;
- a scene that pins down only some directions (facing one wall): corrected along those only;
- an odometry jump of more than ``max_odometry_jump_m`` or ``max_odometry_jump_deg`` between two
  frames (a wheel slip, a reset odometry): the jump is not believed; the pose stays at the last
  good ``map`` estimate and the correction absorbs the jump.

Nothing already mapped is ever removed. Corrections are applied to each frame before anything
downstream stores it, so the occupancy map, the object tracker and the memory receive map-frame
poses; a past frame is never re-posed (there is no pose graph), so nothing stored needs
re-anchoring. The correction is an SE(2) in the REP 103 floor plane; ``map_from_odom`` gives it
as a 4x4 for the ROS layer's ``map -> odom`` transform.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from household.frames import apply_se2, lift_se2, reposed_agent, se2, se2_yaw
from household.types import Observation
from perception.backproject import pixel_to_camera, voxel_keys
from perception.scan_registration import Registration, RegistrationConfig, RegistrationTarget, register_se2

OUTCOMES = ("registered", "partly constrained", "no depth", "sparse map", "diverged", "odometry jump")


@dataclass(frozen=True)
class CorrectorConfig:
    voxel_m: float = 0.05  # the map's voxel size
    freeze_hits: int = 8  # a voxel seen this often keeps its estimate
    pixel_stride: int = 5  # every k-th pixel of each row and column is registered
    min_range_m: float = 0.3
    max_range_m: float = 4.5
    floor_z_m: float = 0.0  # the floor's height in map (REP 103: the base footprint's plane)
    floor_margin_m: float = 0.05  # points this near the floor carry no planar information
    crop_radius_m: float = 6.0  # map points this far (x, y) from the camera form the target
    # The target (normals, search tree) is rebuilt when the camera is this far from where it was
    # built, or the map has grown by this share of the target's size since, or after this many
    # frames: normals are most of a registration's cost, and frozen voxels do not change.
    target_refresh_m: float = 0.75
    target_refresh_growth: float = 0.1
    target_refresh_frames: int = 20
    depth_noise_k: float = 0.0036  # sigma(z) = k z^2, metres (the camera's datasheet figure)
    point_sigma_m: float = 0.01  # a point's error beside the depth noise (voxels, plane fit)
    max_map_sigma_m: float = 0.03  # returns noisier than this register (weighted) but are not mapped
    min_map_points: int = 200
    min_inliers: int = 120
    min_inlier_fraction: float = 0.3
    max_rmse_m: float = 0.05
    # The largest correction one frame may make: what odometry can have drifted since the last
    # frame the scene pinned down in all three directions (a floor of ``correction_floor_*``
    # plus ``drift_allowance`` of the travel and turn since; Nav2 AMCL's default odometry alphas
    # are 0.2, generous for a wheel base), never past ``max_correction_*``. A larger one is a
    # registration that slid onto the wrong wall: diverged.
    correction_floor_m: float = 0.05
    correction_floor_deg: float = 1.5
    drift_allowance: float = 0.1
    max_correction_m: float = 0.4
    max_correction_deg: float = 12.0
    max_odometry_jump_m: float = 1.0
    max_odometry_jump_deg: float = 60.0
    registration: RegistrationConfig = RegistrationConfig()


class VoxelPointMap:
    """Map points, one per voxel (the mean of its first ``freeze_hits`` hits), in sorted arrays."""

    def __init__(self, voxel_m: float, freeze_hits: int) -> None:
        self.voxel_m = voxel_m
        self.freeze_hits = freeze_hits
        self.keys = np.zeros(0, dtype=np.int64)
        self.sums = np.zeros((0, 3))
        self.hits = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def points(self) -> np.ndarray:
        return self.sums / self.hits[:, None] if len(self.keys) else np.zeros((0, 3))

    def insert(self, points: np.ndarray) -> None:
        if len(points) == 0:
            return
        keys = voxel_keys(points, self.voxel_m)
        order = np.argsort(keys, kind="stable")
        keys, pts = keys[order], points[order]
        uniq, start, count = np.unique(keys, return_index=True, return_counts=True)
        sums = np.add.reduceat(pts, start, axis=0)
        pos = np.searchsorted(self.keys, uniq)
        known = (pos < len(self.keys)) & (self.keys[np.minimum(pos, max(len(self.keys) - 1, 0))] == uniq) \
            if len(self.keys) else np.zeros(len(uniq), dtype=bool)
        kp = pos[known]
        open_ = self.hits[kp] < self.freeze_hits
        self.sums[kp[open_]] += sums[known][open_]
        self.hits[kp[open_]] += count[known][open_]
        new = ~known
        if new.any():
            keys_all = np.concatenate([self.keys, uniq[new]])
            order_all = np.argsort(keys_all, kind="stable")
            self.keys = keys_all[order_all]
            self.sums = np.concatenate([self.sums, sums[new]])[order_all]
            self.hits = np.concatenate([self.hits, count[new]])[order_all]

    def near(self, x: float, y: float, radius: float) -> np.ndarray:
        pts = self.points
        if not len(pts):
            return pts
        close = (pts[:, 0] - x) ** 2 + (pts[:, 1] - y) ** 2 <= radius * radius
        return pts[close]


def planar_pose(world_from_camera: np.ndarray) -> np.ndarray:
    """The 3x3 SE(2) of a camera pose's floor-plane position and heading. The heading is read off
    the optical x axis (right in the image, level for a camera that tilts but does not roll):
    forward = up x right, defined even when the camera looks straight down."""
    right = world_from_camera[:3, 0]
    return se2(math.atan2(float(right[0]), float(-right[1])), float(world_from_camera[0, 3]),
               float(world_from_camera[1, 3]))


class ScanToMapCorrector:
    """The ``map -> odom`` correction of one episode (see the module docstring)."""

    def __init__(self, config: CorrectorConfig = CorrectorConfig()) -> None:
        self.config = config
        self.map = VoxelPointMap(config.voxel_m, config.freeze_hits)
        self.map_from_odom_se2 = np.eye(3)
        self.outcomes: Counter[str] = Counter()
        self.last_outcome = ""
        self.last_registration: Registration | None = None
        self._last_odom: np.ndarray | None = None  # planar odometry pose of the last frame
        self.frames = 0
        self._target: RegistrationTarget | None = None
        self._target_at = (0.0, 0.0, 0, 0)  # where (x, y), at what map size and frame it was built
        self._since_fix = (0.0, 0.0)  # odometry travel (m) and turn (rad) since the last full registration
        self._fix = np.eye(3)  # map_from_odom_se2 at the last full registration

    # ---- the correction ------------------------------------------------------------------------
    @property
    def map_from_odom(self) -> np.ndarray:
        """The 4x4 ``map -> odom`` transform (REP 105) now."""
        return lift_se2(self.map_from_odom_se2)

    def correct(self, obs: Observation) -> Observation:
        """``obs`` with its agent pose and camera pose in ``map``."""
        cfg = self.config
        self.frames += 1
        odom_cam = np.asarray(obs.world_from_camera, dtype=float)
        odom_planar = planar_pose(odom_cam)
        if self._last_odom is not None:
            step = np.linalg.inv(self._last_odom) @ odom_planar
            dist, turn = math.hypot(step[0, 2], step[1, 2]), abs(se2_yaw(step))
            if dist > cfg.max_odometry_jump_m or math.degrees(turn) > cfg.max_odometry_jump_deg:
                # the odometry's own step is not believed: keep the last map pose (the last
                # frame's odometry under the correction it ended with, which is still the current one)
                last_map = self.map_from_odom_se2 @ self._last_odom
                self.map_from_odom_se2 = last_map @ np.linalg.inv(odom_planar)
                self._fix = self.map_from_odom_se2  # the jump is not drift: bounds count from here
                self._record("odometry jump")
            else:
                self._since_fix = (self._since_fix[0] + dist, self._since_fix[1] + turn)
        cam = lift_se2(self.map_from_odom_se2) @ odom_cam
        points, weights, mappable = self._frame_points(obs, cam)
        if points is None:
            self._record("no depth")
        else:
            pivot = (float(cam[0, 3]), float(cam[1, 3]))
            outcome, delta = self._register(points, weights, self._target_near(pivot), pivot)
            if delta is not None:
                self.map_from_odom_se2 = delta @ self.map_from_odom_se2
                cam = lift_se2(delta) @ cam
                points = apply_se2(delta, points)
            if outcome != "diverged":
                self.map.insert(points[mappable])
            self._record(outcome)
        self._last_odom = odom_planar
        return self._reposed(obs, cam)

    def plausible_correction(self) -> tuple[float, float]:
        """The largest correction (metres, degrees) odometry's drift since the last full fix explains."""
        cfg = self.config
        travel, turn = self._since_fix
        return (min(cfg.max_correction_m, cfg.correction_floor_m + cfg.drift_allowance * travel),
                min(cfg.max_correction_deg, cfg.correction_floor_deg + cfg.drift_allowance * math.degrees(turn)))

    def _frame_points(self, obs: Observation, cam: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """The frame's usable returns in ``map`` at the predicted pose, their weights, and which
        of them are precise enough to map."""
        cfg = self.config
        if obs.depth is None:
            return None, np.zeros(0), np.zeros(0, dtype=bool)
        depth = np.asarray(obs.depth, dtype=float)
        if depth.ndim != 2 or depth.shape != (obs.intrinsics.height, obs.intrinsics.width):
            return None, np.zeros(0), np.zeros(0, dtype=bool)
        k = max(1, cfg.pixel_stride)
        vv, uu = np.mgrid[k // 2:depth.shape[0]:k, k // 2:depth.shape[1]:k]
        d = depth[vv, uu]
        ok = np.isfinite(d) & (d >= cfg.min_range_m) & (d <= cfg.max_range_m)
        if ok.sum() < cfg.min_inliers:
            return None, np.zeros(0), np.zeros(0, dtype=bool)
        u, v, d = uu[ok].astype(float), vv[ok].astype(float), d[ok]
        pts = pixel_to_camera(u, v, d, obs.intrinsics) @ cam[:3, :3].T + cam[:3, 3]
        above = pts[:, 2] > cfg.floor_z_m + cfg.floor_margin_m
        if above.sum() < cfg.min_inliers:
            return None, np.zeros(0), np.zeros(0, dtype=bool)
        depth_sigma = cfg.depth_noise_k * d[above] ** 2
        w = (cfg.point_sigma_m ** 2) / (depth_sigma ** 2 + cfg.point_sigma_m ** 2)
        return pts[above], w, depth_sigma <= cfg.max_map_sigma_m

    def _target_near(self, pivot: tuple[float, float]) -> RegistrationTarget | None:
        """The registration target around ``pivot`` (cached; see ``CorrectorConfig``)."""
        cfg = self.config
        x, y, size, frame = self._target_at
        if (self._target is None or math.hypot(pivot[0] - x, pivot[1] - y) > cfg.target_refresh_m
                or len(self.map) - size > cfg.target_refresh_growth * max(len(self._target), 1)
                or self.frames - frame >= cfg.target_refresh_frames):
            pts = self.map.near(pivot[0], pivot[1], cfg.crop_radius_m)
            self._target = RegistrationTarget.build(pts, cfg.registration) if len(pts) >= cfg.min_map_points else None
            self._target_at = (pivot[0], pivot[1], len(self.map), self.frames)
        return self._target

    def _register(self, points: np.ndarray, weights: np.ndarray, target: RegistrationTarget | None,
                  pivot: tuple[float, float]) -> tuple[str, np.ndarray | None]:
        cfg = self.config
        if target is None or len(target) < cfg.min_map_points:
            return "sparse map", None
        max_m, max_deg = self.plausible_correction()
        reg = register_se2(points, weights, target, pivot, cfg.registration, search_m=max_m)
        self.last_registration = reg
        if reg is None or reg.inliers < cfg.min_inliers or reg.inlier_fraction < cfg.min_inlier_fraction:
            return "sparse map", None  # the frame sees mostly what is not mapped yet: odometry, then map it
        # what the correction would have moved the sensor since the last full fix, all frames together
        since = (reg.delta @ self.map_from_odom_se2) @ np.linalg.inv(self._fix)
        moved = float(np.hypot(*(since[:2, :2] @ np.asarray(pivot) + since[:2, 2] - np.asarray(pivot))))
        if reg.rmse_m > cfg.max_rmse_m or moved > max_m or abs(math.degrees(se2_yaw(since))) > max_deg:
            return "diverged", None
        if reg.constrained < 3:
            return "partly constrained", (reg.delta if reg.constrained else None)
        self._since_fix = (0.0, 0.0)
        self._fix = reg.delta @ self.map_from_odom_se2
        return "registered", reg.delta

    def _record(self, outcome: str) -> None:
        self.outcomes[outcome] += 1
        self.last_outcome = outcome

    def _reposed(self, obs: Observation, cam: np.ndarray) -> Observation:
        return dataclasses.replace(obs, agent=reposed_agent(obs.agent, self.map_from_odom_se2), world_from_camera=cam)

    # ---- what happened --------------------------------------------------------------------------
    def diagnostics(self) -> dict[str, object]:
        """Frames by outcome, the correction now (metres, degrees) and the map's size."""
        t = self.map_from_odom_se2
        return {"frames": self.frames, "outcomes": {k: int(self.outcomes[k]) for k in OUTCOMES if self.outcomes[k]},
                "last_outcome": self.last_outcome,
                "correction_m": round(float(math.hypot(t[0, 2], t[1, 2])), 4),
                "correction_deg": round(math.degrees(se2_yaw(t)), 3), "map_voxels": len(self.map)}

