"""A closer look along a passage the map draws narrower than it is.

Why: under a depth camera's noise (sigma growing with the square of the distance: 3 cm at 3 m,
9 cm at 5 m for a D435-class camera) a corridor seen end-on from afar is drawn with its walls
smeared inwards, and where the free strip left is narrower than the robot, everything behind it
is cut off. The coarse connectivity check still joins the two sides (a coarse cell is free where
any of its cells is), so every plan through it runs to the search's cap and fails, the
frontier is given up, and the rooms behind are never searched (dev-013-0 under the realistic
profile: a 1 m corridor drawn 10-20 cm wide, 84 m2 and five checklist items behind it). A robot
would walk as far into the passage as it can and look along it: from a metre or two the same
camera's error is millimetres, and the floor it sees there clears the smear.

``passage_look_point`` finds where to stand and where to look: the coarse walking path from the
agent towards the frontier (descending the geodesic field of the frontier's region), and on it
the farthest point the lattice can still plan to (a binary search over the path's points: a few
plans, each bounded by the search's cap). Only for maps drawn from uncertain depth or pose: on
an exact map a passage narrower than the robot is one. The agent asks it in stages
(``passage_look_point_stages``: each plan of the binary search is a ``PlanStages`` request), so
its planning budget can put a Pass between two plans or inside one, as for any plan request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Generator

import numpy as np

from planner.geodesic import DistanceField, nearest_cell, walking_distance_to
from planner.lattice_nav import LatticePlan
from planner.navigation import Navigator, Pose, finish

LOOK_AHEAD_M = 1.5  # look at the passage's floor this far beyond where the agent stands
MIN_GAIN_M = 0.75  # a stand less than this farther along the path than the agent is no closer look
# Metres round a frontier a plan to it may end within, tried in turn (planner.exploration: a
# doorway seen at an angle leaves a floor strip narrower than the lattice); the way here too.
FRONTIER_RADII = (0.5, 1.2, 2.0)


@dataclass(frozen=True)
class PassageLook:
    """Where to stand (``plan`` walks there) and the floor point along the passage to look at."""

    plan: LatticePlan
    stand_x: float
    stand_z: float
    look_x: float
    look_z: float


def _descent(field: DistanceField, x: float, z: float) -> list[tuple[float, float]]:
    """World points of the coarse cells on the steepest descent of ``field`` from (x, z) to its
    source: the walking path the coarse graph knows (empty where nothing within 0.5 m of (x, z)
    is connected to it)."""
    d = field.dist
    i = int((x - field.x0) / field.resolution)
    j = int((z - field.z0) / field.resolution)
    if not (0 <= i < d.shape[0] and 0 <= j < d.shape[1]):
        return []
    if not math.isfinite(d[i, j]):
        # The agent's own coarse cell can fall outside the component its neighbours join (a
        # few free cells around the body): start from the nearest joined cell within 0.5 m.
        start = nearest_cell(np.isfinite(d), i, j, max(1, int(0.5 / field.resolution)))
        if start is None:
            return []
        i, j = start
    path = [(i, j)]
    while d[i, j] > 0:
        window = d[max(i - 1, 0):i + 2, max(j - 1, 0):j + 2]
        k = int(np.argmin(window))
        ni, nj = max(i - 1, 0) + k // window.shape[1], max(j - 1, 0) + k % window.shape[1]
        if not d[ni, nj] < d[i, j]:
            break
        i, j = ni, nj
        path.append((i, j))
    half = field.resolution / 2.0
    return [(field.x0 + a * field.resolution + half, field.z0 + b * field.resolution + half) for a, b in path]


def _way(navigator: Navigator, pose: Pose, x: float, z: float) -> list[tuple[float, float]]:
    """The coarse way from the agent to the free floor near (x, z), at the radii the explorer's
    plans try (a frontier's own cell can be an island of free floor; the floor around it joins)."""
    grid = navigator.map.free_grid()
    for radius in FRONTIER_RADII:
        region = navigator.region_around(grid, x, z, radius)
        if region.any():
            path = _descent(walking_distance_to(region, grid), pose.x, pose.z)
            if len(path) >= 2:
                return path
    return []


def passage_look_point(navigator: Navigator, pose: Pose, x: float, z: float) -> PassageLook | None:
    """Where to look closer at the way to the frontier (x, z) that no plan reaches; None where
    the coarse map does not join the two (a wall, not a narrow passage) or the lattice plans to
    no point of the way at least ``MIN_GAIN_M`` farther along it than the agent stands (boxed
    in where it is, or already at the narrow part: the floor look round is the look there)."""
    return finish(passage_look_point_stages(navigator, pose, x, z))


def passage_look_point_stages(navigator: Navigator, pose: Pose, x: float,
                              z: float) -> Generator[None, None, PassageLook | None]:
    """``passage_look_point`` in stages: it yields before each plan of its binary search but the
    first and where those plans do (``PlanStages``: between two searches, between two slices of
    one), and returns the same answer."""
    path = _way(navigator, pose, x, z)
    if not path:
        return None
    along = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(np.asarray(path), axis=0).T))])
    # The farthest point of the path the lattice plans to (reachable points come first).
    lo, hi, best = 1, len(path) - 1, None
    first = True
    while lo <= hi:
        mid = (lo + hi) // 2
        if not first:
            yield  # a new plan request: a stage of its own (the budget may put a Pass before it)
        first = False
        plan = yield from navigator.plan_to_point_stages(pose, path[mid][0], path[mid][1], 0.3)
        if plan is not None:
            best, lo = (mid, plan), mid + 1
        else:
            hi = mid - 1
    if best is None or along[best[0]] < MIN_GAIN_M:
        return None  # no farther along than here: the floor look round (planner.exploration) is the look here
    stand, plan = best
    ahead = int(np.searchsorted(along, along[stand] + LOOK_AHEAD_M))
    look_x, look_z = path[min(ahead, len(path) - 1)]
    return PassageLook(plan, path[stand][0], path[stand][1], look_x, look_z)
