"""A* over the agent's own motion primitives (a state lattice).

States are (x, z, heading index); successors are exactly the actions the simulator executes
(MoveAhead/Back/Left/Right by the move step, RotateLeft/Right by the rotate step), so a found
plan replays exactly, with no path-following error. Costs are LongAct steps (one per 0.25 m,
one per 30 degrees), which makes the plan step-optimal on the lattice. States closer than half a
move step share a key, which bounds the search without changing what is executed.

The search is generic: callers give a collision test, a goal test and an admissible heuristic.
The oracle uses the simulator's exact collision test (privileged); a non-privileged planner can
pass a test over its own occupancy grid.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass
from typing import Callable

MOVES = {"MoveAhead": 0.0, "MoveRight": 90.0, "MoveBack": 180.0, "MoveLeft": 270.0}


@dataclass(frozen=True)
class LatticeState:
    x: float
    z: float
    yaw: float  # THOR rotation.y, degrees


@dataclass
class LatticePlan:
    actions: list[str]
    states: list[LatticeState]  # state after each action (same length as actions)
    cost: float
    expanded: int


def plan_lattice(
    start: LatticeState,
    is_free: Callable[[float, float], bool],
    is_goal: Callable[[LatticeState], bool],
    heuristic: Callable[[LatticeState], float],
    move_step: float = 0.25,
    rotate_step: float = 30.0,
    max_expansions: int = 200_000,
    allow_strafe: bool = True,
    weight: float = 1.0,
) -> LatticePlan | None:
    """Cheapest action sequence from start to a goal state, or None if none is found.

    ``weight`` > 1 runs weighted A*: the plan costs at most ``weight`` times the optimum and the
    search expands far fewer states on the lattice's many equal-cost detours."""
    move_cost = move_step / 0.25
    rot_cost = rotate_step / 30.0
    q = move_step / 2.0
    n_head = int(round(360.0 / rotate_step))
    moves = MOVES if allow_strafe else {"MoveAhead": 0.0}

    def key(s: LatticeState) -> tuple[int, int, int]:
        return (round(s.x / q), round(s.z / q), int(round(s.yaw / rotate_step)) % n_head)

    free_cache: dict[tuple[int, int], bool] = {}

    def free(x: float, z: float) -> bool:
        k = (round(x / 0.01), round(z / 0.01))
        v = free_cache.get(k)
        if v is None:
            v = free_cache[k] = is_free(x, z)
        return v

    counter = itertools.count()
    start_key = key(start)
    best: dict[tuple[int, int, int], float] = {start_key: 0.0}
    parent: dict[tuple[int, int, int], tuple[tuple[int, int, int] | None, str | None, LatticeState]] = {
        start_key: (None, None, start)
    }
    heap = [(weight * heuristic(start), next(counter), 0.0, start_key, start)]
    expanded = 0
    while heap:
        _, _, g, k, s = heapq.heappop(heap)
        if g > best.get(k, math.inf) + 1e-9:
            continue
        if is_goal(s):
            return _unwind(parent, k, g, expanded)
        expanded += 1
        if expanded > max_expansions:
            return None
        succ: list[tuple[str, LatticeState, float]] = []
        for name, offset in moves.items():
            h = math.radians(s.yaw + offset)
            nx, nz = s.x + math.sin(h) * move_step, s.z + math.cos(h) * move_step
            mx, mz = 0.5 * (s.x + nx), 0.5 * (s.z + nz)
            if free(mx, mz) and free(nx, nz):
                succ.append((name, LatticeState(nx, nz, s.yaw), move_cost))
        succ.append(("RotateRight", LatticeState(s.x, s.z, (s.yaw + rotate_step) % 360.0), rot_cost))
        succ.append(("RotateLeft", LatticeState(s.x, s.z, (s.yaw - rotate_step) % 360.0), rot_cost))
        for name, ns, c in succ:
            nk = key(ns)
            ng = g + c
            if ng < best.get(nk, math.inf) - 1e-9:
                best[nk] = ng
                parent[nk] = (k, name, ns)
                heapq.heappush(heap, (ng + weight * heuristic(ns), next(counter), ng, nk, ns))
    return None


def _unwind(parent, k, cost: float, expanded: int) -> LatticePlan:
    actions: list[str] = []
    states: list[LatticeState] = []
    while True:
        pk, name, s = parent[k]
        if pk is None:
            break
        actions.append(name)
        states.append(s)
        k = pk
    actions.reverse()
    states.reverse()
    return LatticePlan(actions, states, cost, expanded)
