"""Navigation decides reachability before it searches (issue 27): a goal region (floor in reach of
the object that sees it) that the coarse graph cannot connect to the agent gets None at once, with
the reason, instead of a lattice search run to its expansion cap (1.5 s each, several an
episode). The check may only ever cut searches that would fail: wherever it refuses, the full
search finds nothing either.

Maps are built by hand (two rooms, with and without a doorway), so what is connected is known."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

import planner.navigation as navigation
from planner.geodesic import connected
from planner.navigation import Navigator, Pose
from planner.object_tracker import TrackedObject
from planner.occupancy import OccupancyConfig, OccupancyMap


def _two_rooms(doorway: bool) -> OccupancyMap:
    """Two 4 m x 4 m rooms (x < 0, x > 0) with floor seen everywhere, walls around and between;
    a 1 m doorway at |z| < 0.5 in the dividing wall when ``doorway``."""
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=12.0))
    res = occ.config.resolution
    idx = np.arange(occ.n)
    x = (occ.x0 + res * idx)[:, None] * np.ones((1, occ.n))
    z = (occ.z0 + res * idx)[None, :] * np.ones((occ.n, 1))
    inside = (np.abs(x) <= 4.0) & (np.abs(z) <= 2.0)
    outer = ~inside & (np.abs(x) <= 4.0 + res + 1e-9) & (np.abs(z) <= 2.0 + res + 1e-9)
    mid = inside & (np.abs(x) < res / 2)
    door = mid & (np.abs(z) < 0.5) if doorway else np.zeros_like(mid)
    occ.floor[:] = inside & ~mid
    occ.obstacle[:] = outer | (mid & ~door)
    occ.wall[:] = outer | mid
    return occ


def _vase(x: float, z: float) -> TrackedObject:
    c = np.array([x, 0.8, z])
    return TrackedObject(f"Vase|{x}|{z}", "Vase", c, c - 0.1, c + 0.1, 0, 0)


START = Pose(-2.0, 0.0, 90.0, 30.0)


def test_an_object_in_a_closed_off_room_is_refused_before_any_search(monkeypatch: pytest.MonkeyPatch) -> None:
    nav = Navigator(_two_rooms(doorway=False))

    def no_search(*args, **kwargs):
        raise AssertionError("the lattice search ran for a region that is not connected")

    monkeypatch.setattr(navigation, "plan_lattice", no_search)
    assert nav.plan_to_object(START, _vase(2.5, 0.0)) is None
    assert "not connected" in nav.last_failure
    assert nav.plan_to_point(START, 2.5, 0.0) is None
    assert "not connected" in nav.last_failure


def test_the_same_object_through_a_doorway_is_planned_to() -> None:
    nav = Navigator(_two_rooms(doorway=True))
    plan = nav.plan_to_object(START, _vase(2.5, 0.0))
    assert plan is not None and nav.last_failure == ""
    end = plan.states[-1]
    assert end.x > 0.0  # in the vase's room: through the doorway
    assert _vase(2.5, 0.0).distance_3d(np.array([end.x, nav.camera_height, end.z])) <= 1.3


@pytest.mark.parametrize("doorway", [False, True])
def test_the_check_never_refuses_what_the_search_would_find(doorway: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over a spread of targets in both rooms: where the check says "not connected", the lattice
    search run anyway (the check switched off) finds no plan either."""
    occ = _two_rooms(doorway)
    nav = Navigator(occ, max_expansions=20_000)
    targets = [(x, z) for x in (-3.5, -1.0, 0.6, 1.5, 3.5) for z in (-1.5, 0.0, 1.5)]
    refused = []
    for x, z in targets:
        plan = nav.plan_to_object(START, _vase(x, z))
        if plan is None and ("not connected" in nav.last_failure or "sees it" in nav.last_failure):
            refused.append((x, z))
            with monkeypatch.context() as m:  # both checks off: the search alone decides
                m.setattr(navigation, "connected", lambda *a, **k: True)
                m.setattr(Navigator, "in_sight", lambda self, cells, x1, z1: cells.copy())
                assert nav.plan_to_object(START, _vase(x, z)) is None, (x, z)
    # every target beyond the closed wall, also the one 0.6 m behind it, whose floor in reach on
    # the agent's side does not see it
    assert refused == ([] if doorway else [(x, z) for x, z in targets if x > 0])


def test_a_start_off_the_free_grid_still_plans_out_of_it() -> None:
    """A start inside an obstacle's dilation (the map grew around the agent): the first move
    leaves it, so the check looks one move around the start, not at the start's cell alone."""
    occ = _two_rooms(doorway=True)
    occ.obstacle[occ.cell(-2.0, 0.15)] = True  # 0.15 m from the start: the start cell is blocked
    occ._grid = None
    nav = Navigator(occ)
    assert not occ.free_grid().is_free(-2.0, 0.0)
    assert nav.plan_to_object(START, _vase(-3.5, -1.5)) is not None


OFF_MAP = {"goal outside the map": (40.0, 40.0), "goal below the map's low edge": (-9.0, -9.0),
           "goal below the map's low edge in z only": (2.5, -9.0)}


@pytest.mark.parametrize("case", ["empty map", "start inside a wall", *OFF_MAP])
def test_bad_requests_get_an_answer_with_the_reason(case: str) -> None:
    """Including objects remembered beyond the map's edge (on the low side a negative cell index
    sliced the map from its far end: dev house 7 stopped with a broadcast error)."""
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=12.0)) if case == "empty map" else _two_rooms(True)
    nav = Navigator(occ)
    start = Pose(0.0, 1.5, 90.0, 30.0) if case == "start inside a wall" else START
    target = OFF_MAP.get(case, (2.5, 0.0))
    t0 = time.perf_counter()
    plan = nav.plan_to_object(start, _vase(*target))
    point = nav.plan_to_point(start, *target)
    assert plan is None and point is None and nav.last_failure
    assert time.perf_counter() - t0 < 5.0  # bounded: no search to the cap (generous on a loaded machine)


def test_connected_reads_components_of_the_coarse_graph() -> None:
    occ = _two_rooms(doorway=False)
    grid = occ.free_grid()
    left = np.zeros_like(grid.mask)
    left[occ.cell(-3.0, 0.0)] = True
    right = np.zeros_like(grid.mask)
    right[occ.cell(3.0, 0.0)] = True
    assert connected(left, grid, -2.0, 0.0, 0.3)
    assert not connected(right, grid, -2.0, 0.0, 0.3)
    assert not connected(left, grid, 30.0, 30.0, 0.3)  # from outside the map: nothing near
    assert math.isfinite(Navigator(occ).walking_distance(START, -3.0, 0.0))


def test_in_sight_equals_line_of_sight_cell_by_cell() -> None:
    occ = _two_rooms(doorway=True)
    nav = Navigator(occ)
    cells = occ.free_grid().mask.copy()
    cells[::3, :] = False  # a sample, to keep it quick
    for target in ((2.5, 0.0), (0.6, -1.5), (-1.0, 1.0)):
        fast = nav.in_sight(cells, *target)
        ci, cj = np.nonzero(cells)
        for i, j in zip(ci[::7], cj[::7]):
            x, z = occ.center(int(i), int(j))
            assert fast[i, j] == nav.line_of_sight(x, z, *target), (i, j, target)


def test_a_failed_search_is_not_run_again_on_the_same_map(monkeypatch: pytest.MonkeyPatch) -> None:
    """Within one act the agent may ask for the same plan several times (each candidate view,
    each retry); on an unchanged map the deterministic search fails the same way, so it is
    answered from the failures of the current grid, and a map change forgets them."""
    occ = _two_rooms(doorway=True)
    # too few to get through the doorway: the search fails (one search a request: no finer first)
    nav = Navigator(occ, max_expansions=3, fine_weight=2.0)
    calls = []
    real = navigation.plan_lattice
    monkeypatch.setattr(navigation, "plan_lattice", lambda *a, **k: calls.append(1) or real(*a, **k))
    vase = _vase(2.5, 1.0)
    assert nav.plan_to_object(START, vase) is None and len(calls) == 1
    why = nav.last_failure
    assert "expansions" in why
    assert nav.plan_to_object(START, vase) is None and len(calls) == 1 and nav.last_failure == why
    assert nav.failure_cache_hits == 1
    assert nav.plan_to_point(START, 2.5, 1.0) is None and len(calls) == 2  # another request: searched
    assert nav.plan_to_point(START, 2.5, 1.0) is None and len(calls) == 2
    occ.mark_blocked(-2.0, 1.5, 0.0, 0.0, 0.25)  # the map changes: a new grid, the failures forgotten
    assert nav.plan_to_object(START, vase) is None and len(calls) == 3
    moved = Pose(START.x + 0.25, START.z, START.yaw, START.horizon)
    assert nav.plan_to_object(moved, vase) is None and len(calls) == 4  # another start: searched
