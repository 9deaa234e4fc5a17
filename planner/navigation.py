"""Path planning on the agent's own occupancy map: to an object, to a point, to a frontier.

Plans are lattice A* (``planner.lattice_nav``) over the agent's own motion primitives, so a plan
is exactly the actions to send; the collision test is the agent's free grid (seen floor clear of
seen obstacles) and the heuristic is the geodesic walking distance on that grid
(``planner.reach_region.walking_distance_to``), as the oracle uses on the simulator's grid. The
difference from the oracle is only what the grid knows: here, what the agent has seen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from planner.lattice_nav import LatticePlan, LatticeState, plan_lattice
from planner.object_tracker import TrackedObject
from planner.occupancy import OccupancyMap
from planner.reach_region import walking_distance_to

HORIZONS = (30.0, 0.0, 60.0, -30.0)
HALF_VFOV = 45.0


@dataclass(frozen=True)
class Pose:
    """THOR pose of the agent: floor (x, z), yaw (rotation.y), horizon (pitch, + is down)."""

    x: float
    z: float
    yaw: float
    horizon: float


class Navigator:
    def __init__(self, occupancy: OccupancyMap, move_step: float = 0.25, rotate_step: float = 30.0,
                 camera_height: float = 1.5, weight: float = 2.0, max_expansions: int = 60_000) -> None:
        self.map = occupancy
        self.move_step = move_step
        self.rotate_step = rotate_step
        self.camera_height = camera_height
        self.weight = weight
        self.max_expansions = max_expansions

    def line_of_sight(self, x0: float, z0: float, x1: float, z1: float) -> bool:
        """No wall-band cell on the straight line (furniture does not block a view from above)."""
        n = max(int(math.hypot(x1 - x0, z1 - z0) / (self.map.config.resolution * 0.7)), 1)
        for t in np.linspace(0.0, 1.0, n + 1)[1:-1]:
            i, j = self.map.cell(x0 + t * (x1 - x0), z0 + t * (z1 - z0))
            if self.map.inside(i, j) and self.map.wall[i, j]:
                return False
        return True

    def _region_near(self, obj: TrackedObject, reach: float) -> np.ndarray:
        m = self.map
        res = m.config.resolution
        i0, j0 = m.cell(obj.box_min[0] - reach, obj.box_min[2] - reach)
        i1, j1 = m.cell(obj.box_max[0] + reach, obj.box_max[2] + reach)
        i0, j0 = max(i0, 0), max(j0, 0)
        i1, j1 = min(i1 + 1, m.n), min(j1 + 1, m.n)
        region = np.zeros((m.n, m.n), dtype=bool)
        xs = m.x0 + res * np.arange(i0, i1)
        zs = m.z0 + res * np.arange(j0, j1)
        gx, gz = np.meshgrid(xs, zs, indexing="ij")
        dx = np.maximum(np.maximum(obj.box_min[0] - gx, 0.0), gx - obj.box_max[0])
        dz = np.maximum(np.maximum(obj.box_min[2] - gz, 0.0), gz - obj.box_max[2])
        dy = max(obj.box_min[1] - self.camera_height, 0.0, self.camera_height - obj.box_max[1])
        region[i0:i1, j0:j1] = dx * dx + dz * dz + dy * dy <= reach * reach
        return region & self.map.free_grid().mask

    def plan_to_object(self, pose: Pose, obj: TrackedObject, reach: float = 1.3,
                       max_bearing: float = 40.0, avoid: Sequence[tuple[float, float]] = ()) -> LatticePlan | None:
        """A plan to a pose within ``reach`` of the object that faces it with a clear line of
        sight, not within 0.4 m of a point in ``avoid`` (viewpoints it did not show from)."""
        grid = self.map.free_grid()
        region = self._region_near(obj, reach)
        if not region.any():
            return None
        field = walking_distance_to(region, grid)
        cx, cz = float(obj.centroid[0]), float(obj.centroid[2])
        cam = self.camera_height

        def is_goal(s: LatticeState) -> bool:
            if obj.distance_3d(np.array([s.x, cam, s.z])) > reach:
                return False
            if any(math.hypot(s.x - x, s.z - z) < 0.4 for x, z in avoid):
                return False
            bearing = math.degrees(math.atan2(cx - s.x, cz - s.z))
            if abs((bearing - s.yaw + 180.0) % 360.0 - 180.0) > max_bearing:
                return False
            return self.line_of_sight(s.x, s.z, cx, cz)

        def heuristic(s: LatticeState) -> float:
            walk = field.at(s.x, s.z) - field.slack
            straight = max(0.0, obj.distance_xz(s.x, s.z) - reach)
            return max(straight, walk if walk != math.inf else 1e6) / 0.25

        return self._plan(pose, grid, is_goal, heuristic)

    def plan_to_point(self, pose: Pose, x: float, z: float, radius: float = 0.5) -> LatticePlan | None:
        grid = self.map.free_grid()
        i, j = self.map.cell(x, z)
        region = np.zeros_like(grid.mask)
        r = max(int(radius / self.map.config.resolution), 1)
        region[max(i - r, 0):i + r + 1, max(j - r, 0):j + r + 1] = True
        region &= grid.mask
        if not region.any():
            return None
        field = walking_distance_to(region, grid)

        def is_goal(s: LatticeState) -> bool:
            return math.hypot(s.x - x, s.z - z) <= radius

        def heuristic(s: LatticeState) -> float:
            walk = field.at(s.x, s.z) - field.slack
            straight = max(0.0, math.hypot(s.x - x, s.z - z) - radius)
            return max(straight, walk if walk != math.inf else 1e6) / 0.25

        return self._plan(pose, grid, is_goal, heuristic)

    def walking_distance(self, pose: Pose, x: float, z: float) -> float:
        """Geodesic metres from the agent to a point's neighbourhood (inf if not connected)."""
        grid = self.map.free_grid()
        i, j = self.map.cell(pose.x, pose.z)
        region = np.zeros_like(grid.mask)
        region[max(i - 2, 0):i + 3, max(j - 2, 0):j + 3] = True
        field = walking_distance_to(region & grid.mask if (region & grid.mask).any() else region, grid)
        return float(field.at(x, z))

    def _plan(self, pose: Pose, grid, is_goal, heuristic) -> LatticePlan | None:
        start = LatticeState(pose.x, pose.z, pose.yaw)
        is_free = grid.is_free

        def free(x: float, z: float) -> bool:
            return is_free(x, z) or math.hypot(x - pose.x, z - pose.z) < 1e-6

        return plan_lattice(start, free, is_goal, heuristic, self.move_step, self.rotate_step,
                            max_expansions=self.max_expansions, weight=self.weight)

    def horizon_for(self, pose: Pose, obj: TrackedObject) -> float:
        """The camera pitch (from THOR's allowed set) that best centres the object; the current
        one when it already shows it (no step spent)."""
        dist = max(math.hypot(obj.centroid[0] - pose.x, obj.centroid[2] - pose.z), 0.05)
        pitch = math.degrees(math.atan2(self.camera_height - float(obj.centroid[1]), dist))
        if abs(pitch - pose.horizon) < HALF_VFOV - 10.0:
            return pose.horizon
        return min(HORIZONS, key=lambda h: abs(h - pitch))
