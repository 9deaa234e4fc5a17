"""A closer look at a short stretch of seen floor the map draws shut (issue 31; dev-010-0 under
the realistic profile: the only way east ran between a bed and a wall, 0.64 m for a 0.48 m
body, and a wall drawn 12 cm in front of itself closed it on the map).

The maps are built from scratch: floor seen over a 6 m square, walls (returns at body height
and above, no floor) along z = 0 and optionally z = 1.5, each with a 0.64 m passage whose floor
was seen, and in it a column of obstacle cells on seen floor (what a jumped pose draws): the
two sides are apart on the tight grid. The navigator is the real one; its lattice plans are a
stand-in where the explorer is checked."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any, Generator

import numpy as np
import pytest
from scipy import ndimage

import planner.exploration as exploration
from planner.agent_config import AgentConfig
from planner.gap_look import CLEAR_M, MAX_GAP_M, GapLook, gap_cells, gap_look_point
from planner.navigation import Navigator, Pose
from planner.occupancy import OccupancyConfig, OccupancyMap
from planner.skills import Skills
from tests.test_sensor_tolerant_agent import ShutIn, run

START = Pose(0.0, -2.0, 0.0, 30.0)
BEYOND = (0.0, 2.5)  # a frontier past the last wall


def walled(walls: tuple[float, ...] = (0.0,), ghost: bool = True, thick: float = 0.1) -> OccupancyMap:
    """Walls ``thick`` metres thick across x at each z of ``walls``, each with a 0.64 m passage;
    with ``ghost``, a column of obstacle cells down the passage's middle, 0.2 m longer each side."""
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=8.0, depth_noise_k=0.0036, pose_tolerance=0.05))
    res = occ.config.resolution
    lo, hi = occ.cell(-3.0, -3.0), occ.cell(3.0, 3.0)
    occ.floor[lo[0]:hi[0], lo[1]:hi[1]] = True
    for wz in walls:
        for x in np.arange(-3.0, 3.0, res):
            for z in np.arange(wz - thick / 2, wz + thick / 2 + 1e-9, res):
                if abs(x) < 0.32:
                    continue  # the passage: floor seen, nothing at body height
                i, j = occ.cell(float(x), float(z))
                occ.floor[i, j] = False
                occ.obstacle[i, j] = occ.wall[i, j] = True
        if ghost:
            for z in np.arange(wz - thick / 2 - 0.2, wz + thick / 2 + 0.2 + 1e-9, res):
                occ.obstacle[occ.cell(0.0, float(z))] = True  # on floor that was seen
    occ._grid = None
    return occ


def joined(occ: OccupancyMap, a: tuple[float, float], b: tuple[float, float]) -> bool:
    labels, _ = ndimage.label(occ.free_grid(tight=True).mask, structure=np.ones((3, 3)))
    la, lb = labels[occ.cell(*a)], labels[occ.cell(*b)]
    return bool(la and la == lb)


def test_the_passage_is_open_without_the_ghost_and_shut_with_it() -> None:
    assert joined(walled(ghost=False), (0.0, -2.0), BEYOND)
    assert not joined(walled(), (0.0, -2.0), BEYOND)


def test_the_gap_is_the_passage_cells_from_the_agent_side_to_the_far_side() -> None:
    occ = walled()
    cells = gap_cells(Navigator(occ), START, *BEYOND)
    assert cells is not None
    points = [occ.center(i, j) for i, j in cells]
    assert all(abs(x) < 0.32 for x, _ in points), points  # in the passage, not through the wall
    assert points[0][1] < 0 < points[-1][1]  # the agent's side first
    assert len(cells) * occ.config.resolution <= MAX_GAP_M
    grid = occ.free_grid(tight=True).mask
    assert not any(grid[c] for c in cells)  # closed floor only
    # its two ends touch the two sides' free floor
    for (i, j), side in ((cells[0], START), (cells[-1], BEYOND)):
        near = grid[i - 1:i + 2, j - 1:j + 2]
        assert near.any(), side


def test_clearing_round_the_gap_joins_the_two_sides() -> None:
    occ = walled()
    for i, j in gap_cells(Navigator(occ), START, *BEYOND) or []:
        occ.clear_around(*occ.center(i, j), CLEAR_M)
    assert joined(occ, (0.0, -2.0), BEYOND)


def test_no_gap_through_a_wall_already_joined_or_with_no_floor_near_the_frontier() -> None:
    shut = walled(ghost=False)
    i, j = shut.cell(0.0, 0.0)
    shut.floor[i - 8:i + 9, j - 1:j + 2] = False  # the passage walled up: returns at body height and above
    shut.obstacle[i - 8:i + 9, j - 1:j + 2] = shut.wall[i - 8:i + 9, j - 1:j + 2] = True
    shut._grid = None
    assert not joined(shut, (0.0, -2.0), BEYOND)
    assert gap_cells(Navigator(shut), START, *BEYOND) is None
    assert gap_cells(Navigator(walled(ghost=False)), START, *BEYOND) is None  # nothing to clear
    unseen = walled()
    unseen.floor[:, unseen.cell(0.0, 0.3)[1]:] = False  # nothing seen beyond the wall
    unseen._grid = None
    assert gap_cells(Navigator(unseen), START, *BEYOND) is None  # no free floor near the frontier


def test_of_two_gaps_in_a_row_the_one_next_to_the_agent_comes_first() -> None:
    occ = walled(walls=(0.0, 1.5))
    cells = gap_cells(Navigator(occ), START, *BEYOND)
    assert cells is not None
    zs = [occ.center(i, j)[1] for i, j in cells]
    assert all(-0.5 < z < 0.5 for z in zs), zs


def test_a_gap_longer_than_the_limit_is_a_wall_not_a_map_error() -> None:
    occ = walled(thick=1.6)  # a corridor 1.6 m long, shut all along: more than MAX_GAP_M
    assert gap_cells(Navigator(occ), START, *BEYOND) is None


def _plans(answer: Any, asked: list[tuple[float, float]] | None = None) -> Any:
    """A stand-in for ``Navigator.plan_to_point_stages``: records the point, one stage, ``answer``."""
    def stages(pose: Pose, x: float, z: float, radius: float = 0.5) -> Generator[None, None, Any]:
        if asked is not None:
            asked.append((x, z))
        yield
        return answer
    return stages


def test_where_to_stand_is_the_near_end_and_none_without_a_plan() -> None:
    occ = walled()
    nav = Navigator(occ)
    nav.plan_to_point_stages = _plans(SimpleNamespace(actions=["MoveAhead"] * 6))  # type: ignore[method-assign]
    look = gap_look_point(nav, START, *BEYOND)
    assert look is not None and -0.6 < look.stand_z < 0 and abs(look.stand_x) < 0.32
    assert abs(look.middle[1]) < 0.3
    planned: list[tuple[float, float]] = []
    nav.plan_to_point_stages = _plans(None, planned)  # type: ignore[method-assign]
    assert gap_look_point(nav, START, *BEYOND, given_up=lambda gx, gz: True) is None
    assert planned == []  # a gap given up costs no plan
    assert gap_look_point(nav, START, *BEYOND) is None and len(planned) == 1


@pytest.mark.parametrize("noisy", [True, False])
def test_the_explorer_clears_the_gap_and_looks_at_it_a_few_times_at_most_and_only_on_an_uncertain_map(
        monkeypatch, noisy) -> None:
    agent = ShutIn()
    agent.config = AgentConfig(depth_noise_k=0.0036 if noisy else 0.0)
    agent.stats = Counter()
    agent.occupancy.config = OccupancyConfig()
    agent.navigator.horizon_toward = lambda pose, x, y, z, centred=False: 60.0
    gap = [(1.0, 0.0), (1.0, 0.05), (1.0, 0.1)]
    asked: list[tuple[float, float]] = []

    def fake(navigator: Any, pose: Pose, x: float, z: float, given_up: Any) -> Generator[None, None, GapLook | None]:
        asked.append((x, z))
        look = GapLook(SimpleNamespace(actions=["MoveAhead", "MoveAhead"]), 1.0, -0.3, gap)
        yield  # a stage: the request as the explorer makes it, in stages
        return None if given_up(*look.middle) else look

    def no_passage(*args: Any) -> Generator[None, None, None]:
        return None
        yield  # a request in stages that has none

    monkeypatch.setattr(exploration, "passage_look_point_stages", no_passage)
    monkeypatch.setattr(exploration, "gap_look_point_stages", fake)
    skills = Skills(agent)  # type: ignore[arg-type]
    first = run(skills.explore_once(), agent)
    if not noisy:
        assert asked == [] and first.count("RotateRight") == 11 and agent.cleared == []  # the floor look
        return
    assert asked == [(3.0, 0.0)] and agent.stats["gap_looks"] == 1
    assert agent.cleared == [(x, z, CLEAR_M) for x, z in gap]
    assert first[:2] == ["MoveAhead", "MoveAhead"] and "LookDown" in first
    assert [n for n in first if n.startswith("Rotate")][-4:] == ["RotateLeft", "RotateRight", "RotateRight", "RotateLeft"]
    assert agent.pose.horizon == 30.0 and agent.forgiven == 1
    assert any("cut off by" in n for n in agent.notes)
    for _ in range(exploration.GAP_LOOKS - 1):
        run(skills.explore_once(), agent)
    assert agent.stats["gap_looks"] == exploration.GAP_LOOKS
    last = run(skills.explore_once(), agent)  # the same gap once more: given up, the floor look
    assert agent.stats["gap_looks"] == exploration.GAP_LOOKS and last.count("RotateRight") == 11


def test_an_obstacle_is_crossed_only_where_its_floor_returns_outvote_it() -> None:
    """A ghost line right across the passage, on floor seen many times from good poses: crossed.
    The same line with more returns at body height than floor returns (a wall, a table; dev-028-0
    under odom-only: a real wall with hundreds of floor returns and thousands above): not."""
    def across(floor: int, obstacle: int) -> OccupancyMap:
        occ = walled(ghost=False)
        for x in np.arange(-0.3, 0.3 + 1e-9, occ.config.resolution):
            i, j = occ.cell(float(x), 0.0)
            occ.obstacle[i, j] = True
            occ.floor_hits[i, j], occ.obstacle_hits[i, j] = floor, obstacle
        occ._grid = None
        return occ

    ghost, wall = across(floor=200, obstacle=60), across(floor=200, obstacle=2000)
    assert not joined(ghost, (0.0, -2.0), BEYOND) and not joined(wall, (0.0, -2.0), BEYOND)
    cells = gap_cells(Navigator(ghost), START, *BEYOND)
    assert cells is not None and any(abs(ghost.center(i, j)[1]) < 0.03 for i, j in cells)  # through the line
    assert gap_cells(Navigator(wall), START, *BEYOND) is None
