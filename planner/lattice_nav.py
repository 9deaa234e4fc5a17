"""A* over the agent's own motion primitives (a state lattice).

States are (x, z, heading index); successors are exactly the actions the simulator executes
(MoveAhead/Back/Left/Right by the move step, RotateLeft/Right by the rotate step), so a found
plan replays exactly, with no path-following error. Costs are LongAct steps (one per 0.25 m,
one per 30 degrees), which makes the plan step-optimal on the lattice. States closer than half a
move step share a key, which bounds the search without changing what is executed: a plan is
the chain of moves that produced its goal state, so when a cheaper way to a key is found after
some of its successors were queued, those successors keep the chain they were checked along
(unwinding through the key's newer state would start the later moves from a point up to half a
step away, never checked for collision, and end the plan off the goal pose it tested).

The search is generic: callers give a collision test, a goal test and an admissible heuristic.
The oracle uses the simulator's exact collision test (privileged); a non-privileged planner can
pass a test over its own occupancy grid.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import math
from dataclasses import dataclass
from typing import Callable, Generator, NamedTuple

MOVES = {"MoveAhead": 0.0, "MoveRight": 90.0, "MoveBack": 180.0, "MoveLeft": 270.0}


class LatticeState(NamedTuple):
    """A pose on the lattice. A named tuple, not a dataclass: the search creates one per
    successor (millions in a long episode), and a tuple is several times cheaper to make."""

    x: float
    z: float
    yaw: float  # THOR rotation.y, degrees


# (state, the action that made it, the node it was made from); the start's action and node are None.
_Node = tuple[LatticeState, "str | None", "_Node | None"]


@dataclass
class LatticePlan:
    actions: list[str]
    states: list[LatticeState]  # state after each action (same length as actions)
    cost: float
    expanded: int


# A search under way: yields the expansions done since it last yielded; its value is the plan.
LatticeSearch = Generator[int, None, "LatticePlan | None"]


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
    stats: dict[str, int] | None = None,
) -> LatticePlan | None:
    """Cheapest action sequence from start to a goal state, or None if none is found.

    ``heuristic`` is admissible and a function of the state's position only (every caller's is:
    a walking distance or a straight line to a goal region): a turn's successor is given its
    state's value instead of a fresh call. ``weight`` > 1 runs weighted A*: the plan costs at most
    ``weight`` times the optimum and the search expands far fewer states on the lattice's many
    equal-cost detours. ``stats``, when given, gets ``expanded`` (states expanded) and ``capped``
    (1 when the search stopped at ``max_expansions``, 0 when it found a plan or ran out of
    states: no plan exists).

    The cyclic garbage collector is paused while the search runs: a search allocates a few
    hundred thousand tuples (queued states and their chains), none in a cycle (each is freed by
    its reference count), yet every few hundred allocations set off a collection that walks the
    agent's whole heap: a quarter to a third of a search's time on the v2 dev episodes (issue
    27's decision tail). It is switched on again afterwards only where it was on before."""
    return _drive(_search(start, is_free, is_goal, heuristic, move_step, rotate_step, max_expansions,
                          allow_strafe, weight, stats, None))


def plan_lattice_in_slices(
    start: LatticeState,
    is_free: Callable[[float, float], bool],
    is_goal: Callable[[LatticeState], bool],
    heuristic: Callable[[LatticeState], float],
    slice_expansions: int,
    move_step: float = 0.25,
    rotate_step: float = 30.0,
    max_expansions: int = 200_000,
    allow_strafe: bool = True,
    weight: float = 1.0,
    stats: dict[str, int] | None = None,
) -> LatticeSearch:
    """``plan_lattice``'s search, paused after every ``slice_expansions`` expansions: it yields
    the expansions done since it last yielded and returns the plan (or None) as its value.

    Why pause and not cut: an agent that may spend only so much planning per step (issue 27: no
    act may stall) goes on with the same search on its next step, so the answer is the one search's
    answer, the same as ``plan_lattice`` gives, however many steps it took. A search cut and
    started again could be cut again every time, and one cut and taken as done would report "no
    way there" where there is one. The callables are called between pauses too: what they read
    must not change while the search is paused (the navigator gives them the map as it was when
    the search started). The collector is paused only while a slice runs (``plan_lattice``)."""
    search = _search(start, is_free, is_goal, heuristic, move_step, rotate_step, max_expansions,
                     allow_strafe, weight, stats, slice_expansions)
    while True:
        try:
            expanded = _resume(search)
        except StopIteration as done:
            return done.value
        yield expanded


def _resume(search: LatticeSearch) -> int:
    """The search's next slice, with the cyclic collector paused while it runs (see
    ``plan_lattice``) and switched on again afterwards only where it was on before. Raises
    StopIteration with the plan when the search is over."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        return next(search)
    finally:
        if was_on:
            gc.enable()


def _drive(search: LatticeSearch) -> LatticePlan | None:
    """The answer of a search, all of it now."""
    try:
        while True:
            _resume(search)
    except StopIteration as done:
        return done.value


def _search(
    start: LatticeState,
    is_free: Callable[[float, float], bool],
    is_goal: Callable[[LatticeState], bool],
    heuristic: Callable[[LatticeState], float],
    move_step: float,
    rotate_step: float,
    max_expansions: int,
    allow_strafe: bool,
    weight: float,
    stats: dict[str, int] | None,
    pause_every: int | None,
) -> LatticeSearch:
    """``plan_lattice``'s search, with the collector as the caller left it; with ``pause_every``
    it yields after every that many expansions (``plan_lattice_in_slices``)."""
    move_cost = move_step / 0.25
    rot_cost = rotate_step / 30.0
    q = move_step / 2.0
    n_head = int(round(360.0 / rotate_step))
    moves = MOVES if allow_strafe else {"MoveAhead": 0.0}

    # Everything below computes exactly what the plain loop did (same expressions, same order of
    # pushes, so the same plan); what repeats is memoised: a state's key, the trigonometry of a
    # move per heading, the turns and their keys per heading, the free test per centimetre, and a
    # turn's position key and heuristic (its state's: the same position). The
    # successors are handled inline, in the order the plain loop listed them (moves, then
    # RotateRight, RotateLeft): the order of pushes decides ties.
    yaw_key: dict[float, int] = {}

    def heading_key(yaw: float) -> int:
        yk = yaw_key.get(yaw)
        if yk is None:
            yk = yaw_key[yaw] = int(round(yaw / rotate_step)) % n_head
        return yk

    # per heading: (its key, the moves as (name, dx, dz), and each turn as (name, yaw, key))
    headings: dict[float, tuple[int, list[tuple[str, float, float]], tuple[tuple[str, float, int], ...]]] = {}
    free_cache: dict[tuple[int, int], bool] = {}
    free_get = free_cache.get

    counter = itertools.count()
    start_key = (round(start.x / q), round(start.z / q), heading_key(start.yaw))
    best: dict[tuple[int, int, int], float] = {start_key: 0.0}
    best_get = best.get
    # A node is (state, the action that made it, the node it was made from): each queued state
    # carries the chain it was generated along.
    start_node: _Node = (start, None, None)
    # A queue entry is (f, tie-breaker, g, key, node, h): h for the turns (same position, same h).
    h0 = heuristic(start)
    heap = [(weight * h0, next(counter), 0.0, start_key, start_node, h0)]
    expanded = 0
    pause_step = pause_every or 0
    pause_at = pause_step if pause_step > 0 else -1  # the expansion after which it next yields
    inf = math.inf
    push, pop = heapq.heappush, heapq.heappop
    while heap:
        _, _, g, k, node, sh = pop(heap)
        if g > best_get(k, inf) + 1e-9:
            continue
        s = node[0]
        if is_goal(s):
            if stats is not None:
                stats.update(expanded=expanded, capped=0)
            return _unwind(node, g, expanded)
        expanded += 1
        if expanded > max_expansions:
            if stats is not None:
                stats.update(expanded=expanded - 1, capped=1)
            return None
        if expanded == pause_at:
            pause_at += pause_step
            yield pause_step
        sx, sz, syaw = s
        h = headings.get(syaw)
        if h is None:
            right, left = (syaw + rotate_step) % 360.0, (syaw - rotate_step) % 360.0
            h = headings[syaw] = (
                heading_key(syaw),
                [(name, math.sin(math.radians(syaw + off)) * move_step,
                  math.cos(math.radians(syaw + off)) * move_step) for name, off in moves.items()],
                (("RotateRight", right, heading_key(right)), ("RotateLeft", left, heading_key(left))))
        yk, steps, turns = h
        ng = g + move_cost
        for name, dx, dz in steps:
            nx, nz = sx + dx, sz + dz
            for px, pz in ((0.5 * (sx + nx), 0.5 * (sz + nz)), (nx, nz)):  # the midpoint, then the end
                ck = (round(px / 0.01), round(pz / 0.01))
                v = free_get(ck)
                if v is None:
                    v = free_cache[ck] = is_free(px, pz)
                if not v:
                    break
            if not v:
                continue
            nk = (round(nx / q), round(nz / q), yk)
            if ng < best_get(nk, inf) - 1e-9:
                ns = LatticeState(nx, nz, syaw)
                best[nk] = ng
                nh = heuristic(ns)
                push(heap, (ng + weight * nh, next(counter), ng, nk, (ns, name, node), nh))
        # the turns stay on the state's position: its key's cells, its heuristic
        ng = g + rot_cost
        nf = ng + weight * sh
        kx, kz = k[0], k[1]
        for name, nyaw, nyk in turns:
            nk = (kx, kz, nyk)
            if ng < best_get(nk, inf) - 1e-9:
                best[nk] = ng
                push(heap, (nf, next(counter), ng, nk, (LatticeState(sx, sz, nyaw), name, node), sh))
    if stats is not None:
        stats.update(expanded=expanded, capped=0)
    return None


def _unwind(node: _Node, cost: float, expanded: int) -> LatticePlan:
    actions: list[str] = []
    states: list[LatticeState] = []
    while True:
        s, name, prev = node
        if prev is None or name is None:
            break
        actions.append(name)
        states.append(s)
        node = prev
    actions.reverse()
    states.reverse()
    return LatticePlan(actions, states, cost, expanded)
