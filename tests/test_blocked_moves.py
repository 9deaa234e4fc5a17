"""A blocked move shuts the way it tried on the agent's map, even where the agent believes it
stood (``OccupancyMap.mark_blocked``).

The map keeps every cell the agent's centre occupied free whatever else it holds
(``OccupancyMap.centers``), so the agent is never walled in on its own map. With an uncertain
pose those cells are where it believed it stood: after a relocalisation jump the agent may
believe itself in front of a doorway it walked through while it stands beside it, and the line
of believed centres through the doorway kept the way open after every bump (dev-032-0 under
``--sensors realistic``: the same ``MoveRight`` into one wall 49 times in a row). The map here
is built by hand: two rooms joined by a 1 m doorway, the agent's believed path a line of centre
cells through it, the agent 0.6 m before it, really beside it (every move ahead is blocked)."""

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


def test_with_an_uncertain_pose_a_bump_is_not_tried_again_through_believed_centres() -> None:
    occ = _walked_through(pose_tolerance=0.05)
    firsts = _first_moves(occ, bumps=6)
    assert firsts[0] == "MoveAhead"  # before any bump the way through the doorway is open
    assert len(firsts) == 2 and firsts[1] != "MoveAhead", firsts
    # the centres the bump's blocking covers are gone, those behind the agent kept
    res = occ.config.resolution
    ahead = [occ.centers[occ.cell(x, 0.0)] for x in np.arange(-0.35, 0.05, res)]
    assert not any(ahead)
    assert occ.centers[occ.cell(-0.6, 0.0)] and occ.centers[occ.cell(-1.0, 0.0)]
    assert occ.centers[occ.cell(1.0, 0.0)]  # beyond the doorway: far from the bump, kept


def test_without_the_fix_the_same_move_would_be_sent_again_and_again() -> None:
    """The failure the fix removes, shown on the same map: a bump that leaves the centres alone
    (``pose_tolerance`` 0: the pose is taken as exact, where a centre is where the body really
    stood) keeps the doorway open on the line of centres, and every plan starts with the move
    that was just blocked."""
    occ = _walked_through(pose_tolerance=0.0)
    before = occ.centers.copy()
    assert _first_moves(occ, bumps=4) == ["MoveAhead"] * 4
    assert np.array_equal(occ.centers, before)


def test_a_bump_at_the_map_edge_clears_only_inside_the_map() -> None:
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=2.0, depth_noise_k=0.0036, pose_tolerance=0.05))
    occ.centers[:] = True
    occ.mark_blocked(0.0, 0.0, 0.0, 0.0, 0.75)  # the patch's centre on the map's last row
    i, j = occ.cell(0.0, 0.95)
    assert j == occ.n - 1 and occ.obstacle[i, j] and not occ.centers[i, j]
    assert not occ.centers[occ.cell(0.0, 0.75)] and occ.centers[occ.cell(0.0, 0.0)]
