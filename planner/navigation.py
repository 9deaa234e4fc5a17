"""Path planning on the agent's own occupancy map: to an object, to a point, to a frontier.

Plans are lattice A* (``planner.lattice_nav``) over the agent's own motion primitives, so a plan
is exactly the actions to send; the collision test is the agent's free grid (seen floor clear of
seen obstacles) and the heuristic is the geodesic walking distance on that grid
(``planner.geodesic.walking_distance_to``), as the oracle uses on the simulator's grid. The
difference from the oracle is only what the grid knows: here, what the agent has seen.

Before searching, each plan asks whether any goal pose can exist and be reached: for an object,
mapped floor in reach from which the line of sight to it crosses no wall (``in_sight``), and
whether that floor is connected to the agent on the coarse graph (``planner.geodesic.connected``).
Where not, the search would only have found that out at its expansion cap (1.5 s a time, twice
an episode on dev-002-0, more on others). The heuristic is seeded with the same in-sight floor,
so the search goes to the side of a wall the object is seen from; on dev-002-0 the searches
took 4.9 s before and 0.12 s after. ``last_failure`` says why the latest plan came back empty.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Generator, Sequence, TypeVar

import numpy as np

from household import morphology
from household.free_grid import FreeGrid
from planner.lattice_nav import LatticePlan, LatticeState, plan_lattice, plan_lattice_in_slices
from planner.object_memory import TrackedObject
from planner.occupancy import OccupancyMap
from planner.planning_budget import SLICE_EXPANSIONS, ActBudget
from planner.geodesic import DistanceField, connected, true_window, walking_distance_to

HORIZONS = (30.0, 0.0, 60.0, -30.0)
# A pose within this of a viewpoint to avoid (one the object did not show from, or an interaction
# with it was refused from as not visible) is no new viewpoint.
AVOID_RADIUS = 0.4
# A viewpoint the object did not show from (something in front of it) leaves out, besides its disc,
# every pose on that side of the object: within this many degrees of the hidden viewpoint's bearing
# as seen from the object. Its disc alone sent the next viewpoints 0.4 m to either side, behind the
# same occluder (dev-041-1: three hidden viewpoints on an armchair, where one across it saw it).
# Where no pose on another side is mapped, in reach and connected, the disc alone applies.
HIDDEN_SIDE_DEG = 45.0
_CELL_AND_NEIGHBOURS = np.ones((3, 3), dtype=bool)
HALF_VFOV = 45.0
# Lattice states one search may expand (issue 27: bounded work per step). On the v2 dev episodes
# measured, every plan found took at most about 1,500 expansions (17 ms); the searches that went
# further found nothing: they ran out of states (6,000 to 44,000 of them, 0.5 s) or to the former
# cap of 60,000 (1 s), several in one step. A search cut here is counted (``capped_searches``)
# and said in ``last_failure``, which the notes of the report carry.
MAX_EXPANSIONS = 8_000
# The weight of the first search (weighted A*: a plan costs at most this times the optimum); the
# second, at ``weight``, only where the first ran into MAX_EXPANSIONS.
FINE_WEIGHT = 1.2

# A plan request in stages (``Navigator.plan_to_object_stages``): it yields between two searches
# (the fine one and the coarse one; the usual grid and the tight one) and, under an act budget,
# between two slices of a search (``lattice_nav.plan_lattice_in_slices``), and returns the plan.
# The agent's planning budget (``planner.planning_budget.planned_in_stages``) may put a Pass at any
# of them; driven to its end without pauses (``finish``) it is the one-call request.
PlanStages = Generator[None, None, "LatticePlan | None"]
T = TypeVar("T")


def finish(stages: Generator[None, None, T]) -> T:
    """The answer of a request made in stages (a ``PlanStages``, or a look made of several),
    all of them now."""
    try:
        while True:
            next(stages)
    except StopIteration as done:
        return done.value


@dataclass(frozen=True)
class Pose:
    """THOR pose of the agent: floor (x, z), yaw (rotation.y), horizon (pitch, + is down)."""

    x: float
    z: float
    yaw: float
    horizon: float


def grown_by_a_cell(mask: np.ndarray) -> np.ndarray:
    """The mask grown by one cell (8-neighbours), computed on the box round its True cells: the
    same cells as a dilation of the whole 960 x 960 grid (9 ms a plan, the larger part of what a
    plan to an object cost beside its search, issue 27)."""
    out = np.zeros_like(mask)
    window = true_window(mask, grow=1)
    if window is not None:
        out[window] = morphology.dilate(mask[window], _CELL_AND_NEIGHBOURS)
    return out


def heading_error(x0: float, z0: float, yaw: float, x: float, z: float) -> float:
    """Degrees to turn from ``yaw`` at (x0, z0) to face (x, z), in [-180, 180) (+ is clockwise,
    THOR's RotateRight). The lattice goal test in ``_plan_to_object`` keeps inline copies (its
    bearing check and ``on_a_side``, the bearing from the object's centre): it runs for every
    expanded state."""
    bearing = math.degrees(math.atan2(x - x0, z - z0))
    return (bearing - yaw + 180.0) % 360.0 - 180.0


class Navigator:
    def __init__(self, occupancy: OccupancyMap, move_step: float = 0.25, rotate_step: float = 30.0,
                 camera_height: float = 1.5, weight: float = 2.0, max_expansions: int = MAX_EXPANSIONS,
                 fine_weight: float = FINE_WEIGHT, reach_span: tuple[float, float] | None = None,
                 act_expansions: int | None = None) -> None:
        self.map = occupancy
        self.move_step = move_step
        self.rotate_step = rotate_step
        self.camera_height = camera_height
        self.reach_span = reach_span  # AgentConfig.reach_span: None measures reach from the camera
        self.weight = weight
        self.fine_weight = fine_weight
        self.max_expansions = max_expansions
        self.last_failure = ""  # why the latest plan_to_* returned None
        # Searches that failed on the current free grid: the same request on the same grid fails
        # the same way (the search is deterministic), so it is answered at once. Cleared whenever
        # the map makes a new grid (any observation, bump or newly stood-on cell does).
        self._failed: dict[tuple, str] = {}
        self._failed_grid: object | None = None
        self.failure_cache_hits = 0
        self.capped_searches = 0  # searches stopped at max_expansions (no plan: given up)
        # Expansions spent in the current act (the agent calls budget.begin_act() every act), and
        # the most after which it starts no further plan (None: unbounded; planner.planning_budget).
        self.budget = ActBudget(act_expansions)
        # Wall cells this near the object do not hide it: with a noisy depth camera and pose the
        # wall band is smeared a few tens of centimetres into the room, over the counter or shelf
        # whose object stands against the wall, and every line of sight to the object crossed it
        # (50 "no mapped free floor ... sees it" on every 10th v2 episode under --sensors
        # realistic). Three sigma of depth noise at 4 m plus the pose tolerance; 0 with exact
        # sensors, where the wall band is as thin as the wall.
        c = occupancy.config
        self.sight_slack = min(0.3, 3.0 * c.depth_noise_k * 16.0 + c.pose_tolerance) \
            if c.depth_noise_k > 0 or c.pose_tolerance > 0 else 0.0
        self.tight_plans = 0  # plans found only on the tight grid

    def _tight_retry(self, plan: Callable[[bool], PlanStages]) -> PlanStages:
        """``plan(False)`` on the usual grid; where it finds nothing and the map allows for pose
        error (``OccupancyConfig.pose_tolerance``), ``plan(True)`` on the tight grid, a stage of
        its own. The first failure's reason stays in ``last_failure`` when both fail."""
        found = yield from plan(False)
        if found is not None or self.map.config.pose_tolerance <= 0:
            return found
        why = self.last_failure
        yield  # the tight grid's searches: a stage of their own
        found = yield from plan(True)
        if found is None:
            self.last_failure = why
        else:
            self.tight_plans += 1
        return found

    def line_of_sight(self, x0: float, z0: float, x1: float, z1: float, wall: np.ndarray | None = None) -> bool:
        """No wall-band cell on the straight line (furniture does not block a view from above).
        Samples at k/n of the way (what ``np.linspace`` gives), in plain Python: this runs for
        every lattice state that is in reach and facing the object. ``wall``: the map's wall
        band as it was when a search started (a search paused over steps keeps its map); the
        map's own by default."""
        m = self.map
        res = m.config.resolution
        length = math.hypot(x1 - x0, z1 - z0)
        n = max(int(length / (res * 0.7)), 1)
        step = 1.0 / n
        size = m.n
        if wall is None:
            wall = m.wall
        last = n if self.sight_slack <= 0 else min(n, int(math.floor((1.0 - self.sight_slack / max(length, 1e-9)) * n)) + 1)
        for k in range(1, last):
            t = k * step
            i = int(round((x0 + t * (x1 - x0) - m.x0) / res))
            j = int(round((z0 + t * (z1 - z0) - m.z0) / res))
            if 0 <= i < size and 0 <= j < size and wall[i, j]:
                return False
        return True

    def in_sight(self, cells: np.ndarray, x1: float, z1: float) -> np.ndarray:
        """``line_of_sight`` from the centre of every cell flagged in ``cells`` to (x1, z1), at
        once: the cells a goal pose may stand on, so the search is guided to the side of a wall
        the object is seen from (and told at once when no floor in reach sees it)."""
        m = self.map
        res = m.config.resolution
        out = np.zeros_like(cells)
        ci, cj = np.nonzero(cells)
        if ci.size == 0:
            return out
        x0 = m.x0 + res * ci
        z0 = m.z0 + res * cj
        length = np.hypot(x1 - x0, z1 - z0)
        n = np.maximum((length / (res * 0.7)).astype(np.int64), 1)
        clear = np.ones(ci.size, dtype=bool)
        step = 1.0 / n
        last = n if self.sight_slack <= 0 else np.minimum(
            n, np.floor((1.0 - self.sight_slack / np.maximum(length, 1e-9)) * n).astype(np.int64) + 1)
        for k in range(1, int(n.max())):
            live = (k < last) & clear
            if not live.any():
                break
            t = k * step[live]
            i = np.rint((x0[live] + t * (x1 - x0[live]) - m.x0) / res).astype(np.int64)
            j = np.rint((z0[live] + t * (z1 - z0[live]) - m.z0) / res).astype(np.int64)
            inside = (i >= 0) & (j >= 0) & (i < m.n) & (j < m.n)
            hit = np.zeros(i.size, dtype=bool)
            hit[inside] = m.wall[i[inside], j[inside]]
            idx = np.flatnonzero(live)
            clear[idx[hit]] = False
        out[ci[clear], cj[clear]] = True
        return out

    def _region_near(self, obj: TrackedObject, reach: float, tight: bool = False) -> np.ndarray:
        """Free cells (of the tight grid with ``tight``) whose centre is within ``reach`` of the
        object's box (camera height)."""
        m = self.map
        res = m.config.resolution
        i0, j0 = m.cell(obj.box_min[0] - reach, obj.box_min[2] - reach)
        i1, j1 = m.cell(obj.box_max[0] + reach, obj.box_max[2] + reach)
        # Clamped to the map, and empty where the box lies wholly off it (an object seen beyond the
        # map's edge: a negative end would slice from the far side, dev house 7's survey)
        i0, j0 = min(max(i0, 0), m.n), min(max(j0, 0), m.n)
        i1, j1 = max(min(i1 + 1, m.n), i0), max(min(j1 + 1, m.n), j0)
        region = np.zeros((m.n, m.n), dtype=bool)
        xs = m.x0 + res * np.arange(i0, i1)
        zs = m.z0 + res * np.arange(j0, j1)
        gx, gz = np.meshgrid(xs, zs, indexing="ij")
        dx = np.maximum(np.maximum(obj.box_min[0] - gx, 0.0), gx - obj.box_max[0])
        dz = np.maximum(np.maximum(obj.box_min[2] - gz, 0.0), gz - obj.box_max[2])
        dy = self.height_gap(float(obj.box_min[1]), float(obj.box_max[1]))
        region[i0:i1, j0:j1] = dx * dx + dz * dz + dy * dy <= reach * reach
        return region & self.map.free_grid(tight=tight).mask

    def _span(self) -> tuple[float, float]:
        """The heights reach is measured from: the reach span (AgentConfig.reach_span), or the
        camera's height alone."""
        return self.reach_span if self.reach_span is not None else (self.camera_height, self.camera_height)

    def height_gap(self, y_min: float, y_max: float) -> float:
        """The vertical part of the reach distance to a box spanning y_min..y_max; the same
        wherever the agent stands (the formula of ``TrackedObject.distance_to_upright``)."""
        lo, hi = self._span()
        return max(y_min - hi, 0.0, lo - y_max)

    def reach_distance(self, obj: TrackedObject, x: float, z: float) -> float:
        """How far obj is for an agent standing at (x, z), as its reach is measured."""
        return obj.distance_to_upright(x, z, *self._span())

    def _known_failure(self, key: tuple) -> bool:
        """True (with ``last_failure`` restored) when this request already failed on this grid."""
        grid = self.map.free_grid()
        if grid is not self._failed_grid:
            self._failed, self._failed_grid = {}, grid
        why = self._failed.get(key)
        if why is None:
            return False
        self.failure_cache_hits += 1
        self.last_failure = why
        return True

    def _remember(self, key: tuple, plan: LatticePlan | None) -> LatticePlan | None:
        if plan is None and len(self._failed) < 4096:
            self._failed[key] = self.last_failure
        return plan

    def plan_to_object(self, pose: Pose, obj: TrackedObject, reach: float = 1.3,
                       max_bearing: float = 40.0, avoid: Sequence[tuple[float, float]] = (),
                       hidden: Sequence[tuple[float, float]] = ()) -> LatticePlan | None:
        """A plan to a pose within ``reach`` of the object that faces it with a clear line of
        sight, not within ``AVOID_RADIUS`` of a point in ``avoid`` (viewpoints it did not show
        from) and, where the map has one elsewhere, not on the side of the object of a point in
        ``hidden`` (viewpoints it was hidden from: ``HIDDEN_SIDE_DEG``)."""
        return finish(self.plan_to_object_stages(pose, obj, reach, max_bearing, avoid, hidden))

    def plan_to_object_stages(self, pose: Pose, obj: TrackedObject, reach: float = 1.3, max_bearing: float = 40.0,
                              avoid: Sequence[tuple[float, float]] = (),
                              hidden: Sequence[tuple[float, float]] = ()) -> PlanStages:
        """``plan_to_object`` in stages (``PlanStages``)."""
        key = ("object", pose.x, pose.z, pose.yaw, obj.object_id, tuple(map(float, obj.centroid)),
               tuple(map(float, obj.box_min)), tuple(map(float, obj.box_max)), reach, max_bearing,
               tuple((float(a), float(b)) for a, b in avoid), tuple((float(a), float(b)) for a, b in hidden))
        if self._known_failure(key):
            return None
        found = yield from self._tight_retry(
            lambda tight: self._plan_to_object(pose, obj, reach, max_bearing, avoid, hidden, tight))
        return self._remember(key, found)

    def _plan_to_object(self, pose: Pose, obj: TrackedObject, reach: float, max_bearing: float,
                        avoid: Sequence[tuple[float, float]], hidden: Sequence[tuple[float, float]],
                        tight: bool) -> PlanStages:
        grid = self.map.free_grid(tight=tight)
        res = self.map.config.resolution
        region = self._region_near(obj, reach, tight)
        if not region.any():
            self.last_failure = f"no mapped free floor within {reach:.2f} m of {obj.object_id}"
            return None
        cx, cz = float(obj.centroid[0]), float(obj.centroid[2])
        if self.reach_distance(obj, pose.x, pose.z) > reach:
            # Before searching: is there floor in reach that sees the object, and is it connected
            # to the agent? A state off a cell centre may be in reach and in sight where its
            # cell's centre is not: test on the region grown by half a cell diagonal, its
            # in-sight cells grown by one cell (a superset of where goal states can lie).
            loose = self._region_near(obj, reach + 0.75 * res, tight)
            sight = self.in_sight(loose, cx, cz)  # per cell: the region's cells are among these
            loose_sight = loose & grown_by_a_cell(sight)
            if not loose_sight.any():
                self.last_failure = f"no mapped free floor within {reach:.2f} m of {obj.object_id} sees it"
                return None
            if not connected(loose_sight, grid, pose.x, pose.z, self.move_step + res):
                self.last_failure = f"the floor that sees {obj.object_id} is not connected to the agent on its map"
                return None
        else:
            sight = self.in_sight(region, cx, cz)
        # The heuristic leads to the cells a goal pose can stand on: in reach, in sight, not a
        # viewpoint that did not show the object.
        seed = region & sight
        if avoid and seed.any():
            seed &= ~self._near_any(avoid)
            if not seed.any():
                # Every cell in reach and in sight is by a viewpoint to avoid: no search (it would
                # spend its whole cap looking for a goal state that is not there).
                self.last_failure = f"every floor cell that sees {obj.object_id} in reach is by a viewpoint to avoid"
                return None
        sides = self._hidden_bearings(cx, cz, hidden)
        if sides:
            across = seed & ~self._on_sides(seed, cx, cz, sides)
            if across.any() and connected(across, grid, pose.x, pose.z, self.move_step + res):
                seed = across
            else:
                sides = []  # no mapped pose on another side the agent can walk to: the discs alone
        field = walking_distance_to(seed if seed.any() else region, grid)
        (bx0, by0, bz0), (bx1, by1, bz1) = (float(v) for v in obj.box_min), (float(v) for v in obj.box_max)
        dy = self.height_gap(by0, by1)
        dy2 = dy * dy
        slack = field.slack
        # The goal test reads the wall band as it is now, also where the search goes on over
        # later steps (the grid and the field are this map's already).
        wall = self.map.wall.copy()

        def is_goal(s: LatticeState) -> bool:
            x, z = s.x, s.z
            dx = max(bx0 - x, 0.0, x - bx1)
            dz = max(bz0 - z, 0.0, z - bz1)
            if math.sqrt(dx * dx + dy2 + dz * dz) > reach:
                return False
            if any(math.hypot(x - ax, z - az) < AVOID_RADIUS for ax, az in avoid):
                return False
            if sides and on_a_side(x, z):
                return False
            bearing = math.degrees(math.atan2(cx - x, cz - z))  # heading_error, inline: per expanded state
            if abs((bearing - s.yaw + 180.0) % 360.0 - 180.0) > max_bearing:
                return False
            return self.line_of_sight(x, z, cx, cz, wall)

        def on_a_side(x: float, z: float) -> bool:
            b = math.degrees(math.atan2(x - cx, z - cz))
            return any(abs((b - s + 180.0) % 360.0 - 180.0) < HIDDEN_SIDE_DEG for s in sides)

        def heuristic(s: LatticeState) -> float:
            x, z = s.x, s.z
            walk = field.at(x, z) - slack
            dx = max(bx0 - x, 0.0, x - bx1)
            dz = max(bz0 - z, 0.0, z - bz1)
            straight = max(0.0, math.hypot(dx, dz) - reach)
            return max(straight, walk if walk != math.inf else 1e6) / 0.25

        return (yield from self._plan(pose, grid, is_goal, heuristic))

    @staticmethod
    def _hidden_bearings(cx: float, cz: float, hidden: Sequence[tuple[float, float]]) -> list[float]:
        """The bearings (degrees, THOR x over z) from the object's centre (cx, cz) to each
        viewpoint it was hidden from; none for a viewpoint over its centre (no side to speak of)."""
        return [math.degrees(math.atan2(hx - cx, hz - cz)) for hx, hz in hidden
                if math.hypot(hx - cx, hz - cz) > 1e-6]

    def _on_sides(self, cells: np.ndarray, cx: float, cz: float, bearings: Sequence[float]) -> np.ndarray:
        """Of ``cells`` (a mask), those whose centre lies within ``HIDDEN_SIDE_DEG`` of one of
        ``bearings`` as seen from (cx, cz) (the sides ``is_goal`` rejects)."""
        res = self.map.config.resolution
        ci, cj = np.nonzero(cells)
        b = np.degrees(np.arctan2(self.map.x0 + res * ci - cx, self.map.z0 + res * cj - cz))
        side = np.zeros(ci.shape, dtype=bool)
        for s in bearings:
            side |= np.abs((b - s + 180.0) % 360.0 - 180.0) < HIDDEN_SIDE_DEG
        out = np.zeros_like(cells, dtype=bool)
        out[ci[side], cj[side]] = True
        return out

    def _near_any(self, points: Sequence[tuple[float, float]]) -> np.ndarray:
        """Per cell: its centre lies within ``AVOID_RADIUS`` of one of ``points`` (the disc
        ``is_goal`` rejects, not the square around it, which also took the corners)."""
        n, res = self.map.n, self.map.config.resolution
        near = np.zeros((n, n), dtype=bool)
        r = int(math.ceil(AVOID_RADIUS / res))
        for ax, az in points:
            i, j = self.map.cell(ax, az)
            i0, i1, j0, j1 = max(i - r, 0), min(i + r + 1, n), max(j - r, 0), min(j + r + 1, n)
            if i0 >= i1 or j0 >= j1:
                continue
            cx = self.map.x0 + np.arange(i0, i1) * res
            cz = self.map.z0 + np.arange(j0, j1) * res
            near[i0:i1, j0:j1] |= np.hypot(cx[:, None] - ax, cz[None, :] - az) < AVOID_RADIUS
        return near

    def plan_to_point(self, pose: Pose, x: float, z: float, radius: float = 0.5) -> LatticePlan | None:
        """A plan to a pose within ``radius`` of (x, z)."""
        return finish(self.plan_to_point_stages(pose, x, z, radius))

    def plan_to_point_stages(self, pose: Pose, x: float, z: float, radius: float = 0.5) -> PlanStages:
        """``plan_to_point`` in stages (``PlanStages``)."""
        key = ("point", pose.x, pose.z, pose.yaw, float(x), float(z), float(radius))
        if self._known_failure(key):
            return None
        found = yield from self._tight_retry(lambda tight: self._plan_to_point(pose, x, z, radius, tight))
        return self._remember(key, found)

    def region_around(self, grid: FreeGrid, x: float, z: float, radius: float) -> np.ndarray:
        """The free cells of ``grid`` in the square of half-side ``radius`` (at least a cell)
        round (x, z): the goal region of a plan to a point."""
        i, j = self.map.cell(x, z)
        r = max(int(radius / self.map.config.resolution), 1)
        region = np.zeros_like(grid.mask)
        region[max(i - r, 0):i + r + 1, max(j - r, 0):j + r + 1] = True
        return region & grid.mask

    def _plan_to_point(self, pose: Pose, x: float, z: float, radius: float, tight: bool) -> PlanStages:
        grid = self.map.free_grid(tight=tight)
        i, j = self.map.cell(x, z)
        r = max(int(radius / self.map.config.resolution), 1)
        region = self.region_around(grid, x, z, radius)
        if not region.any():
            self.last_failure = f"no mapped free floor within {radius:.2f} m of ({x:.2f}, {z:.2f})"
            return None
        if math.hypot(pose.x - x, pose.z - z) > radius:
            # grown by one cell: states off a cell centre (see plan_to_object)
            loose = np.zeros_like(grid.mask)
            loose[max(i - r - 1, 0):i + r + 2, max(j - r - 1, 0):j + r + 2] = True
            loose &= grid.mask
            if not connected(loose, grid, pose.x, pose.z, self.move_step + self.map.config.resolution):
                self.last_failure = f"({x:.2f}, {z:.2f}) is not connected to the agent on its map"
                return None
        field = walking_distance_to(region, grid)

        def is_goal(s: LatticeState) -> bool:
            return math.hypot(s.x - x, s.z - z) <= radius

        def heuristic(s: LatticeState) -> float:
            walk = field.at(s.x, s.z) - field.slack
            straight = max(0.0, math.hypot(s.x - x, s.z - z) - radius)
            return max(straight, walk if walk != math.inf else 1e6) / 0.25

        return (yield from self._plan(pose, grid, is_goal, heuristic))

    def shut_in(self, pose: Pose) -> bool:
        """No move of the lattice (a step ahead, back or aside at any heading) leaves the pose on
        the most permissive grid the map has (the tight one where it allows for pose error).
        The usual grid is asked first: it is built for planning anyway, and where a move leaves
        on it, it leaves on the tight one too (free there is free with less clearance), so the
        tight grid is built only for an agent that looks shut in."""
        moves = [(math.sin(h) * self.move_step, math.cos(h) * self.move_step)
                 for k in range(int(round(360.0 / self.rotate_step))) for a in (0.0, 90.0, 180.0, 270.0)
                 for h in (math.radians(pose.yaw + k * self.rotate_step + a),)]
        for tight in (False, True):
            grid = self.map.free_grid(tight=tight)
            if any(grid.is_free(pose.x + 0.5 * dx, pose.z + 0.5 * dz) and grid.is_free(pose.x + dx, pose.z + dz)
                   for dx, dz in moves):
                return False
        return True

    def walking_distance(self, pose: Pose, x: float, z: float) -> float:
        """Geodesic metres from the agent to a point's neighbourhood (inf if not connected)."""
        return float(self.walking_field(pose).at(x, z))

    def walking_field(self, pose: Pose) -> DistanceField:
        """Geodesic metres from the agent to everywhere on its map (inf where not connected):
        one field answers the distance to many points (the frontiers to choose among)."""
        grid = self.map.free_grid()
        i, j = self.map.cell(pose.x, pose.z)
        region = np.zeros_like(grid.mask)
        region[max(i - 2, 0):i + 3, max(j - 2, 0):j + 3] = True
        return walking_distance_to(region & grid.mask if (region & grid.mask).any() else region, grid)

    def _plan(self, pose: Pose, grid, is_goal, heuristic) -> PlanStages:
        """The fine search, and where it ran into its cap the coarse one, a stage of its own (on
        the grid and goal of the first: the plan is checked against the map it was made on)."""
        start = LatticeState(pose.x, pose.z, pose.yaw)
        is_free = grid.is_free

        def free(x: float, z: float) -> bool:
            return is_free(x, z) or math.hypot(x - pose.x, z - pose.z) < 1e-6

        stats: dict[str, int] = {}

        def search(weight: float) -> PlanStages:
            # Under an act budget the search pauses every SLICE_EXPANSIONS expansions (a stage
            # boundary: the agent may hand in a Pass and go on with it on the next frame).
            if self.budget.expansions is None:
                found = plan_lattice(start, free, is_goal, heuristic, self.move_step, self.rotate_step,
                                     max_expansions=self.max_expansions, weight=weight, stats=stats)
                self.budget.charge(stats.get("expanded", 0))
                return found
            slices = plan_lattice_in_slices(start, free, is_goal, heuristic, SLICE_EXPANSIONS, self.move_step,
                                            self.rotate_step, max_expansions=self.max_expansions,
                                            weight=weight, stats=stats)
            charged = 0
            while True:
                try:
                    expanded = next(slices)
                except StopIteration as done:
                    self.budget.charge(stats.get("expanded", 0) - charged)  # the last slice's
                    return done.value
                self.budget.charge(expanded)
                charged += expanded
                yield

        plan = None
        if self.fine_weight < self.weight:
            # Near step-optimal first: at weight 2 the search follows the walking-distance
            # heuristic greedily, which zigzags (strafe, step, strafe) where one turn and a straight
            # walk cost less; plans came out about a tenth longer than at 1.2. Where the finer
            # search runs into its cap, the coarse one, as before (never fewer plans found).
            plan = yield from search(self.fine_weight)
            if plan is None and not stats.get("capped"):
                self.last_failure = f"no plan: all {stats.get('expanded', 0)} poses reachable on the map tried"
                return None
            if plan is None:
                yield  # the coarse search: a stage of its own
        if plan is None:
            plan = yield from search(self.weight)
        if plan is not None:
            self.last_failure = ""
        elif stats.get("capped"):
            self.capped_searches += 1
            self.last_failure = f"search given up at its cap of {self.max_expansions} expansions (bounded work per step)"
        else:
            self.last_failure = f"no plan: all {stats.get('expanded', 0)} poses reachable on the map tried"
        return plan

    def horizon_for(self, pose: Pose, obj: TrackedObject, camera_height: float | None = None) -> float:
        """The camera pitch (from THOR's allowed set) that best centres the object from a camera
        ``camera_height`` up (default: standing); the current one when it already shows it (no
        step spent)."""
        return self.horizon_toward(pose, float(obj.centroid[0]), float(obj.centroid[1]), float(obj.centroid[2]),
                                   camera_height)

    def horizons_over(self, pose: Pose, x: float, z: float, y_low: float, y_high: float) -> list[float]:
        """The camera pitches (THOR's allowed set, nearest the current first) that together show
        the span from ``y_low`` to ``y_high`` of a thing at (``x``, ``z``) from the standing camera:
        none where the current pitch shows it whole. What a look into an opened fridge needs: it
        was walked to and opened looking down at its middle, its upper shelves out of view."""
        dist = max(math.hypot(x - pose.x, z - pose.z), 0.05)
        first = math.degrees(math.atan2(self.camera_height - y_high, dist))
        last = math.degrees(math.atan2(self.camera_height - y_low, dist))
        half = HALF_VFOV - 5.0  # the span's ends may lie near the image's edge, not at its centre
        left = [a for a in np.arange(math.floor(first), math.ceil(last) + 1.0) if abs(a - pose.horizon) > half]
        out: list[float] = []
        while left:
            best = max(HORIZONS, key=lambda h: (sum(abs(a - h) <= half for a in left), -abs(h - pose.horizon)))
            if not any(abs(a - best) <= half for a in left):
                break  # beyond every allowed pitch (a shelf right above the camera)
            out.append(best)
            left = [a for a in left if abs(a - best) > half]
        return sorted(out, key=lambda h: abs(h - pose.horizon))

    def horizon_toward(self, pose: Pose, x: float, y: float, z: float, camera_height: float | None = None,
                       centred: bool = False) -> float:
        """``horizon_for`` a point (THOR x, y, z): a part of a surface, not a whole object.
        ``centred``: the allowed pitch nearest the point's even where the current one shows it."""
        dist = max(math.hypot(x - pose.x, z - pose.z), 0.05)
        cam = self.camera_height if camera_height is None else camera_height
        pitch = math.degrees(math.atan2(cam - y, dist))
        if not centred and abs(pitch - pose.horizon) < HALF_VFOV - 10.0:
            return pose.horizon
        return min(HORIZONS, key=lambda h: abs(h - pitch))
