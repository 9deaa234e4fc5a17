"""A closer look along a passage the map draws narrower than it is (issue 31; dev-013-0 under
the realistic profile: a corridor seen end-on from afar, drawn 10-20 cm wide, cut off 84 m2).

The map is built from scratch: floor seen over a 6 m square, a wall along z = 0 whose gap leaves
one column of free cells (the coarse graph joins the two sides, a lattice plan does not get
through); the lattice is a stand-in that plans only on the near side, so what is checked is the
choice of where to stand and where to look, not the lattice."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any, Generator

import numpy as np
import pytest

import planner.exploration as exploration
from planner.agent_config import AgentConfig
from planner.navigation import Navigator, Pose
from planner.occupancy import OccupancyConfig, OccupancyMap
from planner.passage_look import PassageLook, passage_look_point, passage_look_point_stages
from planner.planning_budget import planned_in_stages
from planner.skills import Skills
from tests.test_sensor_tolerant_agent import ShutIn, run


def wall_with_slit(closed: bool = False) -> OccupancyMap:
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=8.0, depth_noise_k=0.0036))
    lo, hi = occ.cell(-3.0, -3.0), occ.cell(3.0, 3.0)
    occ.floor[lo[0]:hi[0], lo[1]:hi[1]] = True
    for x in np.arange(-3.0, 3.0, occ.config.resolution):
        if closed or abs(x) >= 0.25 - 1e-9:
            occ.obstacle[occ.cell(float(x), 0.0)] = True
    occ._grid = None
    return occ


class NearSideOnly(Navigator):
    """Plans to points on the near side of the wall only (z < -0.3), as the lattice would where
    the free strip through the wall is narrower than its moves can follow."""

    def __init__(self, occ: OccupancyMap) -> None:
        super().__init__(occ)
        self.asked: list[tuple[float, float]] = []

    def plan_to_point_stages(self, pose: Pose, x: float, z: float, radius: float = 0.5) -> Any:
        self.asked.append((x, z))
        yield  # a stage, as a real request has
        return SimpleNamespace(actions=["MoveAhead"] * 4) if z < -0.3 else None


def test_the_agent_stands_as_far_along_the_way_as_it_plans_and_looks_beyond() -> None:
    occ = wall_with_slit()
    assert occ.free_grid().is_free(0.0, 0.0) and not occ.free_grid().is_free(0.1, 0.0)  # a one-cell slit
    nav = NearSideOnly(occ)
    look = passage_look_point(nav, Pose(1.0, -2.0, 0.0, 30.0), 0.0, 2.0)
    assert look is not None and look.plan is not None
    assert -0.8 < look.stand_z < -0.3 and abs(look.stand_x) < 0.5, look  # at the wall, by the slit
    assert 0.5 < look.look_z - look.stand_z < 2.0 and abs(look.look_x) < 0.75, look  # looking through it
    assert len(nav.asked) <= 6  # a binary search over the way, not a plan per point


def test_the_look_asked_in_stages_under_a_small_budget_is_the_one_call_look() -> None:
    """With the real lattice: the explorer asks the look in stages, and under an act budget far
    below one plan the binary search's plans are spread over acts with Passes between them;
    the look is the one the unbounded one-call request finds."""
    pose = Pose(1.0, -2.0, 0.0, 30.0)
    whole = passage_look_point(Navigator(wall_with_slit()), pose, 0.0, 2.0)
    assert whole is not None
    bounded = Navigator(wall_with_slit(), act_expansions=5)
    gen = planned_in_stages(bounded.budget, passage_look_point_stages(bounded, pose, 0.0, 2.0))
    passes, spent = 0, []
    bounded.budget.begin_act()
    try:
        action = next(gen)
        while True:
            assert action.name == "Pass"
            passes += 1
            spent.append(bounded.budget.spent)
            bounded.budget.begin_act()  # the next frame's act
            action = gen.send(None)
    except StopIteration as done:
        staged = done.value
    assert passes >= 2 and max(spent) <= 5 + 250  # an act: its budget and at most one slice
    assert staged is not None
    assert (staged.stand_x, staged.stand_z, staged.look_x, staged.look_z) == \
        (whole.stand_x, whole.stand_z, whole.look_x, whole.look_z)
    assert staged.plan.actions == whole.plan.actions


def test_no_closer_look_where_the_map_has_no_way_at_all() -> None:
    nav = NearSideOnly(wall_with_slit(closed=True))
    assert passage_look_point(nav, Pose(1.0, -2.0, 0.0, 30.0), 0.0, 2.0) is None
    assert nav.asked == []


def test_no_closer_look_from_where_the_agent_already_stands_at_the_narrow_part() -> None:
    """Already at the slit (or boxed in where it stands): no walk gains anything, and the look
    round at the floor there (the explorer's other recovery) is the look."""
    nav = NearSideOnly(wall_with_slit())
    assert passage_look_point(nav, Pose(0.0, -0.5, 0.0, 30.0), 0.0, 2.0) is None
    assert nav.asked  # it did ask the lattice


@pytest.mark.parametrize("noisy", [True, False])
def test_the_explorer_looks_along_the_way_once_per_frontier_and_only_on_an_uncertain_map(monkeypatch, noisy) -> None:
    agent = ShutIn()
    agent.config = AgentConfig(depth_noise_k=0.0036 if noisy else 0.0)
    agent.stats = Counter()
    agent.navigator.horizon_toward = lambda pose, x, y, z, centred=False: 60.0
    looks: list[tuple[float, float]] = []

    def fake(navigator: Any, pose: Pose, x: float, z: float) -> Generator[None, None, PassageLook]:
        looks.append((x, z))
        yield  # a stage: the request as the explorer makes it, in stages
        return PassageLook(SimpleNamespace(actions=["MoveAhead", "MoveAhead"]), 1.0, 0.0, 2.5, 0.0)

    monkeypatch.setattr(exploration, "passage_look_point_stages", fake)
    skills = Skills(agent)  # type: ignore[arg-type]
    first = run(skills.explore_once(), agent)
    if not noisy:
        assert looks == [] and "RotateRight" in first and first.count("RotateRight") == 11  # the floor look
        return
    assert looks == [(3.0, 0.0)] and agent.stats["passage_looks"] == 1
    assert first[:2] == ["MoveAhead", "MoveAhead"] and "LookDown" in first
    sweep = [n for n in first if n.startswith("Rotate")]
    assert sweep[-4:] == ["RotateLeft", "RotateRight", "RotateRight", "RotateLeft"]
    assert agent.pose.horizon == 30.0  # back to the pitch it explores at
    second = run(skills.explore_once(), agent)  # the same frontier: no second look, the floor look
    assert looks == [(3.0, 0.0)] and second.count("RotateRight") == 11
