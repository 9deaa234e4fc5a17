"""A closer look at a short stretch of seen floor that the map draws shut.

Why: on a map drawn from uncertain depth or pose, obstacles grow. Each frame's pose error moves
what it sees by a few centimetres, and a wall seen while the pose was off lands beside the real
one; a passage only a little wider than the robot (0.64 m between a bed and a wall for a 0.48 m
body with its margin) closes on the map, and every room behind it is cut off. Unlike a corridor
smeared from afar (``planner.passage_look``) the coarse map does not join the two sides either:
the plans fail at once, every frontier behind is given up, and the episode ends with the rooms
behind unsearched (dev-010-0 under the realistic profile: the only way east ran between a bed
and a wall, the wall drawn a second time 12 cm in front of itself and a bat leaning there
smeared by the depth noise; 5 of 9 items lost, stopped at step 987 of 1,593).

The floor itself was seen: between the agent's free floor and the place's lies a stretch of a
metre or less of cells whose floor showed but which the obstacles' margin closes. ``gap_cells``
finds it: grow from the agent's component of the (tight) free grid one cell at a time through
closed seen floor, taking in every free component met whole (free floor costs nothing: a way may
cross a passage, a room, then a doorway), never through an obstacle cell unless its floor
returns outvote it (a wall or a table is not outvoted), until the place's component is met
within ``MAX_GAP_M`` of closed floor; walking back, the stretch next to the agent's floor is the
gap and its first cell is where to stand. The explorer (``planner.exploration``) walks there,
forgets the obstacles within ``CLEAR_M`` of the gap (as Nav2's costmap clearing does), and looks
at it: what is really there comes back with the next frames, what a jumped pose drew does not.
Only for maps drawn from uncertain depth or pose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generator

import numpy as np
from scipy import ndimage

from household import morphology
from planner.lattice_nav import LatticePlan
from planner.geodesic import nearest_cell
from planner.navigation import Navigator, Pose, finish
from planner.passage_look import FRONTIER_RADII

MAX_GAP_M = 1.0  # more closed floor than this on the way is walls or furniture, not a map's error
# Forget obstacles this near the gap's cells: beyond the robot's radius and margin (0.24 m), what
# a pose off by a few centimetres drew a little farther out still closes it on the tight grid.
CLEAR_M = 0.35
EIGHT = np.ones((3, 3), dtype=bool)


@dataclass(frozen=True)
class GapLook:
    """Where to stand (``plan`` walks there) and the world points of the gap, agent side first."""

    plan: LatticePlan
    stand_x: float
    stand_z: float
    gap: list[tuple[float, float]]

    @property
    def middle(self) -> tuple[float, float]:
        return self.gap[len(self.gap) // 2]


def gap_cells(navigator: Navigator, pose: Pose, x: float, z: float) -> list[tuple[int, int]] | None:
    """The cells of the first gap on the way from the agent to the place (x, z) (a frontier, or an
    object walked towards): the way crosses free floor at no cost and seen floor that the map
    closes at a cell each, at most ``MAX_GAP_M`` of it in all (a way can cross more than one
    gap: a passage by a bed, then a doorway); of the cheapest such way, the stretch of closed
    floor nearest the agent, its first cell next to the agent's free floor. None where the two
    are joined already, the place has no free floor near, or no such way."""
    m = navigator.map
    grid = m.free_grid(tight=True)  # the most permissive grid the map has
    labels, _ = ndimage.label(grid.mask, structure=EIGHT)
    ai, aj = m.cell(pose.x, pose.z)
    near = nearest_cell(labels > 0, ai, aj, max(1, int(0.5 / m.config.resolution)))
    if near is None:
        return None
    mine = int(labels[near])
    theirs: set[int] = set()
    for radius in FRONTIER_RADII:
        region = navigator.region_around(grid, x, z, radius)
        theirs = {int(v) for v in np.unique(labels[region])} - {0}
        if theirs:
            break
    if not theirs or mine in theirs:
        return None
    budget = int(MAX_GAP_M / m.config.resolution)
    # The window the way can use: everything observed, and a gap's length beyond it.
    seen = m.observed() | grid.mask
    rows, cols = np.flatnonzero(seen.any(axis=1)), np.flatnonzero(seen.any(axis=0))
    w = (slice(max(int(rows[0]) - budget, 0), min(int(rows[-1]) + budget + 1, m.n)),
         slice(max(int(cols[0]) - budget, 0), min(int(cols[-1]) + budget + 1, m.n)))
    lab = labels[w]
    # Closed floor: seen, not free, and no obstacle of its own, except one its floor returns
    # outvote (counted under depth noise, ``OccupancyMap._count``): what a jumped pose drew is
    # outvoted by the frames from good poses, a wall or a table is not. Any floor return at all
    # was too little: under odom-only drift a wall 0.45 m thick with hundreds of floor returns
    # (and thousands at body height) was crossed (dev-028-0, three looks for nothing).
    obstacle = m.obstacle[w]
    if m.config.depth_noise_k > 0:
        obstacle = obstacle & ~((m.floor_hits[w] > m.obstacle_hits[w]) & ~m.bumped[w])
    closed = (m.floor[w] | m.stood[w]) & ~grid.mask[w] & ~obstacle
    cost = np.full(lab.shape, -1, dtype=np.int32)  # closed cells crossed to get here
    joined = {mine: 0}  # component -> closed cells crossed to reach it
    cost[lab == mine] = 0
    reached = lab == mine
    for step in range(1, budget + 1):
        grown = morphology.dilate(reached, EIGHT) & ~reached
        new = grown & closed
        touched = {int(v) for v in np.unique(lab[grown & (lab > 0)])} - set(joined)
        if not new.any() and not touched:
            return None
        cost[new] = step
        reached |= new
        if touched:  # components met after crossing ``step - 1`` closed cells
            cells = np.isin(lab, list(touched))
            joined.update((comp, step - 1) for comp in touched)
            cost[cells] = step - 1
            reached |= cells
            # their closed edge is as far as this step's (``step`` cells crossed): reached now
            edge = morphology.dilate(cells, EIGHT) & closed & ~reached
            cost[edge] = step
            reached |= edge
        if theirs & touched:
            target = next(iter(theirs & touched))
            return [(i + w[0].start, j + w[1].start) for i, j in _first_gap(lab, cost, joined, target, mine)]
    return None


def _first_gap(lab: np.ndarray, cost: np.ndarray, joined: dict[int, int], target: int,
               mine: int) -> list[tuple[int, int]]:
    """Back from the ``target`` component down the costs to the agent's (``mine``): the last
    stretch of closed cells walked back (the one next to the agent's floor), agent side first."""
    comp, gap = target, []
    while comp != mine:
        c = joined[comp]  # closed cells crossed before this component: its gap ends in a cell of cost c
        edge = morphology.dilate(lab == comp, EIGHT) & (lab == 0) & (cost == c)
        i, j = (int(v) for v in np.argwhere(edge)[0])
        gap = [(i, j)]
        while True:
            win = (slice(max(i - 1, 0), i + 2), slice(max(j - 1, 0), j + 2))
            prev = np.argwhere((lab[win] == 0) & (cost[win] == cost[i, j] - 1))
            if prev.size:  # the gap goes on
                i, j = max(i - 1, 0) + int(prev[0][0]), max(j - 1, 0) + int(prev[0][1])
                gap.append((i, j))
                continue
            # the gap's first cell: next to a component joined at its cost less one
            near = {int(v) for v in np.unique(lab[win])} - {0}
            comp = next(k for k in near if joined.get(k) == cost[i, j] - 1)
            break
    gap.reverse()
    return gap


def gap_look_point(navigator: Navigator, pose: Pose, x: float, z: float,
                   given_up: Callable[[float, float], bool] = lambda gx, gz: False) -> GapLook | None:
    """Where to stand to look at the gap that cuts the place (x, z) off (``gap_cells``); None
    where there is no such gap, the caller has ``given_up`` on it (asked with its middle, before
    the plan is searched), or the lattice plans to no point within 0.5 m of its near end."""
    return finish(gap_look_point_stages(navigator, pose, x, z, given_up))


def gap_look_point_stages(navigator: Navigator, pose: Pose, x: float, z: float,
                          given_up: Callable[[float, float], bool] = lambda gx, gz: False,
                          ) -> Generator[None, None, GapLook | None]:
    """``gap_look_point`` in stages: its plan is a ``PlanStages`` request (the agent's planning
    budget can put a Pass inside it), and it returns the same answer."""
    cells = gap_cells(navigator, pose, x, z)
    if not cells:
        return None
    m = navigator.map
    points = [m.center(i, j) for i, j in cells]
    gap = points[1:-1] or points  # the ends: within CLEAR_M of the next cells
    if given_up(*gap[len(gap) // 2]):
        return None
    sx, sz = points[0]
    plan = yield from navigator.plan_to_point_stages(pose, sx, sz, 0.5)
    if plan is None:
        return None
    return GapLook(plan, sx, sz, gap)
