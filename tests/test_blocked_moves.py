"""A move blocked again from where it was blocked before is counted (``OccupancyMap.mark_blocked``,
the report's ``repeated_bumps``): the loop a believed pose can hold the agent in.

The map keeps every cell the agent's centre occupied free whatever else it holds
(``OccupancyMap.centers``), so the agent is never walled in on its own map. With an uncertain
pose those cells are where it believed it stood: after a relocalisation jump the agent may
believe itself in front of a doorway it walked through while it stands beside it, and the line
of believed centres through the doorway keeps the way open after every bump (dev-032-0 under
``--sensors realistic``: the same ``MoveRight`` into one wall 49 times in a row). The map here
is built by hand: two rooms joined by a 1 m doorway, the agent's believed path a line of centre
cells through it, the agent 0.6 m before it, really beside it (every move ahead is blocked).
Two rules that took those centres back were measured and not shipped (README, "A bump against
a believed pose"); the loop stays, and is counted."""

from __future__ import annotations

import numpy as np

from planner.navigation import Navigator, Pose
from planner.occupancy import OccupancyConfig, OccupancyMap
from tests.test_navigation_reachability import _two_rooms

BEFORE_THE_DOORWAY = Pose(-0.6, 0.0, 90.0, 30.0)  # facing +x, the doorway 0.6 m ahead


def _walked_through(pose_tolerance: float) -> OccupancyMap:
    drawn = _two_rooms(doorway=True)
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=12.0, depth_noise_k=0.0036, pose_tolerance=pose_tolerance))
    for layer in ("floor", "obstacle", "wall"):
        getattr(occ, layer)[:] = getattr(drawn, layer)
    for x in np.arange(-2.0, 2.01, 0.05):  # the believed path through the doorway, along z = 0
        occ.centers[occ.cell(float(x), 0.0)] = True
    occ._grid = None
    return occ


def _first_moves(occ: OccupancyMap, bumps: int) -> list[str | None]:
    """The first action of each plan to the far room, each blocked move marked on the map."""
    nav = Navigator(occ)
    firsts: list[str | None] = []
    for _ in range(bumps):
        plan = nav.plan_to_point(BEFORE_THE_DOORWAY, 2.0, 0.0, 0.3)
        firsts.append(plan.actions[0] if plan is not None and plan.actions else None)
        if firsts[-1] != "MoveAhead":
            break
        p = BEFORE_THE_DOORWAY
        occ.mark_blocked(p.x, p.z, p.yaw, 0.0, 0.25)
    return firsts


def test_the_loop_is_there_and_each_repeat_of_the_bump_is_counted() -> None:
    occ = _walked_through(pose_tolerance=0.05)
    before = occ.centers.copy()
    # every plan begins with the move just blocked: the believed centres keep the doorway open
    assert _first_moves(occ, bumps=4) == ["MoveAhead"] * 4
    assert np.array_equal(occ.centers, before)  # counted, not acted on
    assert occ.repeated_bumps == 3  # the first bump is no repeat


def test_bumps_from_another_pose_or_in_another_direction_are_not_a_repeat() -> None:
    occ = _walked_through(pose_tolerance=0.05)
    p = BEFORE_THE_DOORWAY
    occ.mark_blocked(p.x, p.z, p.yaw, 0.0, 0.25)
    occ.mark_blocked(p.x - 0.3, p.z, p.yaw, 0.0, 0.25)  # 0.3 m back: another pose
    occ.mark_blocked(p.x, p.z, p.yaw, 90.0, 0.25)  # MoveRight from the first pose: another direction
    assert occ.repeated_bumps == 0
    # a turn's jitter later (2 cm, half a degree), the first bump again: a repeat
    occ.mark_blocked(p.x + 0.02, p.z - 0.01, p.yaw + 0.5, 0.0, 0.25)
    assert occ.repeated_bumps == 1
    # the same world direction by another move counts too: facing -z, MoveLeft heads +x
    occ2 = _walked_through(pose_tolerance=0.05)
    occ2.mark_blocked(p.x, p.z, 180.0, 270.0, 0.25)
    occ2.mark_blocked(p.x, p.z, 90.0, 0.0, 0.25)
    assert occ2.repeated_bumps == 1


def test_with_an_exact_pose_nothing_is_counted() -> None:
    """``pose_tolerance`` 0: a centre is where the body really stood, and the count is left
    out of the report."""
    occ = _walked_through(pose_tolerance=0.0)
    assert _first_moves(occ, bumps=3) == ["MoveAhead"] * 3
    assert occ.repeated_bumps == 0
