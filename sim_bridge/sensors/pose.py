"""The error of the pose the planner reads, frame by frame (issue 31).

Two kinds of robot, after ROS REP 105 ("Coordinate Frames for Mobile Platforms"):

- **odometry only** (``PoseModel`` without a ``LocaliserModel``): the pose in ``map`` is the
  ``odom`` pose, which "is guaranteed to be continuous" but "can drift in position over time,
  without any bounds" (REP 105). The error is a random walk in SE(2), accumulated from the true
  motion between frames. A stress test for a robot without a localiser (profile ``odom-only``).
- **localised** (``PoseModel`` with a ``LocaliserModel``): a localiser (Nav2 AMCL, slam_toolbox,
  visual SLAM) publishes ``map -> odom``; the ``map`` pose "should not significantly drift over
  time" but "can change in discrete jumps" (REP 105). Between two localiser updates the pose is
  odometry, so its drift accumulates; at an update the error is pulled back to the localiser's own
  bounded error (a slowly varying bias plus per-update jitter). AMCL updates its filter after the
  robot has moved ``update_min_d`` = 0.25 m or turned ``update_min_a`` = 0.2 rad (the Nav2 AMCL
  defaults, docs.nav2.org "Configuring AMCL"). Rarely, the localiser locks onto a wrong hypothesis
  (a look-alike doorway, a scan-match to the wrong wall): the pose jumps by 0.1-0.3 m, stays
  there for a stretch of travel, and jumps back when the filter re-converges.

``PoseError.update(x, y, yaw)`` takes the true pose of each frame and returns the SE(2) error
(a 3x3 matrix, world frame) to apply to what the agent is told; it never moves the simulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from household.frames import se2


@dataclass(frozen=True)
class LocaliserModel:
    """A map-frame localiser's error (see the module docstring and profiles.py for the sources)."""

    update_min_d: float = 0.25  # metres travelled between localiser updates (Nav2 AMCL default)
    update_min_a: float = 0.2  # radians turned between localiser updates (Nav2 AMCL default)
    bias_sigma_m: float = 0.02  # stationary sigma of the slowly varying bias, per axis, metres
    bias_max_m: float = 0.05  # the bias never exceeds this (a converged filter stays near the truth)
    bias_yaw_sigma_rad: float = math.radians(0.75)
    bias_yaw_max_rad: float = math.radians(1.5)
    bias_corr_m: float = 5.0  # the bias decorrelates over this much travel (Ornstein-Uhlenbeck)
    jitter_sigma_m: float = 0.01  # fresh at every update, per axis
    jitter_max_m: float = 0.025
    jitter_yaw_sigma_rad: float = math.radians(0.25)
    jitter_yaw_max_rad: float = math.radians(0.6)
    jumps_per_100m: float = 3.0  # relocalisation jumps (wrong hypothesis, then back)
    jump_min_m: float = 0.1
    jump_max_m: float = 0.3
    jump_window_m: float = 2.0  # travel during which the wrong hypothesis is held


@dataclass(frozen=True)
class PoseModel:
    """Odometry drift (sigma per metre travelled and per radian turned, as a wheel base gives),
    and, when ``localiser`` is set, the localiser that bounds it in ``map``."""

    drift_per_m: float = 0.0  # sigma of the translation error added per metre travelled, metres
    yaw_drift_per_rad: float = 0.0  # sigma of the heading error added per radian turned, radians
    localiser: LocaliserModel | None = None

    @property
    def is_exact(self) -> bool:
        return self.drift_per_m <= 0 and self.yaw_drift_per_rad <= 0 and self.localiser is None


def about(x: float, y: float, dtheta: float, dx: float, dy: float) -> np.ndarray:
    """The SE(2) error that turns by ``dtheta`` about the point (x, y), then shifts by (dx, dy)
    (the one SE(2) builder, ``household.frames.se2``, which the correction in perception inverts)."""
    return se2(dtheta, dx, dy, (x, y))


def _clip_norm(v: np.ndarray, limit: float) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v if n <= limit or n == 0 else v * (limit / n)


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


class PoseError:
    """The pose error state of one episode. Seeded by the caller's generator (its own stream, so
    the pose error does not depend on image sizes or on what the depth and segmentation draw)."""

    def __init__(self, model: PoseModel, rng: np.random.Generator) -> None:
        self.model = model
        self.rng = rng
        self.err = np.eye(3)
        self._last: tuple[float, float, float] | None = None
        self._since_d = 0.0  # travel and turn since the last localiser update
        self._since_a = 0.0
        self.corrected = False  # whether the last update applied a localiser correction
        self.in_jump = False  # whether a wrong hypothesis is held
        self.jumps = 0
        self._jump = np.zeros(2)
        self._jump_left = 0.0
        loc = model.localiser
        if loc is not None:
            self._bias = _clip_norm(rng.normal(0.0, loc.bias_sigma_m, size=2), loc.bias_max_m)
            self._bias_yaw = float(np.clip(rng.normal(0.0, loc.bias_yaw_sigma_rad),
                                           -loc.bias_yaw_max_rad, loc.bias_yaw_max_rad))

    def update(self, x: float, y: float, yaw: float) -> np.ndarray:
        """Advance to the true pose (x, y, yaw in radians) of a new frame; the error to apply."""
        self.corrected = False
        if self.model.is_exact:
            return self.err
        if self._last is None:  # first frame: the localiser starts converged (or odometry at zero)
            self._last = (x, y, yaw)
            if self.model.localiser is not None:
                self._correct(x, y, 0.0)
            return self.err
        dist = float(math.hypot(x - self._last[0], y - self._last[1]))
        turn = abs(_wrap(yaw - self._last[2]))
        self._last = (x, y, yaw)
        if dist > 0 or turn > 0:
            self._odometry(x, y, dist, turn)
        loc = self.model.localiser
        if loc is not None:
            self._since_d += dist
            self._since_a += turn
            # (a tolerance: a 0.25 m move read back from float positions may be 0.2499999...)
            if self._since_d >= loc.update_min_d - 1e-9 or self._since_a >= loc.update_min_a - 1e-9:
                self._correct(x, y, self._since_d)
                self._since_d = self._since_a = 0.0
        return self.err

    def _odometry(self, x: float, y: float, dist: float, turn: float) -> None:
        """Odometry drift for one motion: heading error about where the robot is now, then a shift."""
        m = self.model
        dtheta = float(self.rng.normal(0.0, m.yaw_drift_per_rad * turn + 1e-12))
        dxy = self.rng.normal(0.0, m.drift_per_m * dist + 1e-12, size=2)
        self.err = about(x, y, dtheta, float(dxy[0]), float(dxy[1])) @ self.err

    def _correct(self, x: float, y: float, travelled: float) -> None:
        """A localiser update: the error becomes the localiser's (bias + jitter, or a held jump)."""
        loc = self.model.localiser
        assert loc is not None
        self.corrected = True
        self._advance_bias(travelled, loc)
        if self.in_jump:
            self._jump_left -= travelled
            if self._jump_left <= 0:
                self.in_jump = False  # re-converged: this update jumps back
        elif travelled > 0 and self.rng.random() < -math.expm1(-loc.jumps_per_100m / 100.0 * travelled):
            size = float(self.rng.uniform(loc.jump_min_m, loc.jump_max_m))
            angle = float(self.rng.uniform(-math.pi, math.pi))
            self._jump = size * np.array([math.cos(angle), math.sin(angle)])
            self._jump_left, self.in_jump = loc.jump_window_m, True
            self.jumps += 1
        if self.in_jump:  # the wrong hypothesis is offset by the jump alone (its size bounds the error)
            self.err = about(x, y, self._bias_yaw, float(self._jump[0]), float(self._jump[1]))
            return
        jitter = _clip_norm(self.rng.normal(0.0, loc.jitter_sigma_m, size=2), loc.jitter_max_m)
        jyaw = float(np.clip(self.rng.normal(0.0, loc.jitter_yaw_sigma_rad), -loc.jitter_yaw_max_rad,
                             loc.jitter_yaw_max_rad))
        off = self._bias + jitter
        self.err = about(x, y, self._bias_yaw + jyaw, float(off[0]), float(off[1]))

    def _advance_bias(self, travelled: float, loc: LocaliserModel) -> None:
        """Ornstein-Uhlenbeck over distance: keeps its stationary sigma, clipped to its bound."""
        if travelled <= 0:
            return
        rho = math.exp(-travelled / loc.bias_corr_m)
        kick = math.sqrt(max(0.0, 1.0 - rho * rho))
        self._bias = _clip_norm(rho * self._bias + kick * self.rng.normal(0.0, loc.bias_sigma_m, size=2),
                                loc.bias_max_m)
        self._bias_yaw = float(np.clip(rho * self._bias_yaw + kick * self.rng.normal(0.0, loc.bias_yaw_sigma_rad),
                                       -loc.bias_yaw_max_rad, loc.bias_yaw_max_rad))
