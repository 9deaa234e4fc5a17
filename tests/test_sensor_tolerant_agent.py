"""The agent under a realistic robot's sensors (issue 31): a map that allows for the pose error
its frames were laid down with, a tracker that does not believe a false detection or a confused
label on one view, and an explorer that looks at the floor around it before it gives up.

Each was found on a v2 episode under ``--sensors realistic`` (dev-045-1: walled in at the first
pose with 2,300 steps of budget left; dev-034-0: a put aimed at a detection that was not there);
the tests build the situation from scratch."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Generator

import numpy as np
import pytest

from household.types import InstanceLabel
from planner.agent_config import AgentConfig
from planner.factory import _env_confirm_views, _env_pose_tolerance
from planner.navigation import Navigator, Pose
from planner.object_tracker import ObjectTracker
from planner.occupancy import OccupancyConfig, OccupancyMap
from planner.planning_budget import ActBudget
from planner.skills import Skills
from sim_bridge.sensors.profiles import PROFILES
from tests.test_holomind_components import synthetic_observation


def wall_with_gap(pose_tolerance: float) -> OccupancyMap:
    """Floor seen all over a 6 m square; a wall along z = 0 whose obstacle cells leave the cells
    with |x| < 0.2 open: a gap whose edge cells are 0.2 m from its middle, under the usual
    clearance (radius 0.2 + margin 0.04) but over it less a localiser's 5 cm."""
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=8.0, pose_tolerance=pose_tolerance))
    occ.floor[occ.cell(-3.0, -3.0)[0]:occ.cell(3.0, 3.0)[0], occ.cell(-3.0, -3.0)[1]:occ.cell(3.0, 3.0)[1]] = True
    for x in np.arange(-3.0, 3.0, occ.config.resolution):
        if abs(x) >= 0.2 - 1e-9:
            occ.obstacle[occ.cell(float(x), 0.0)] = True
    occ._grid = None
    return occ


def test_the_tight_grid_opens_a_gap_the_pose_error_closed() -> None:
    exact, tolerant = wall_with_gap(0.0), wall_with_gap(0.05)
    assert not exact.free_grid().is_free(0.0, 0.0)
    assert not exact.free_grid(tight=True).is_free(0.0, 0.0)  # no tolerance: the usual grid
    assert exact.free_grid(tight=True) is exact.free_grid()
    assert not tolerant.free_grid().is_free(0.0, 0.0)
    tight = tolerant.free_grid(tight=True)
    assert tight.is_free(0.0, 0.0)
    assert not tight.is_free(0.1, 0.0) and not tight.is_free(0.3, 0.0)  # still clear of the wall by 0.19 m
    # a changed map makes a new tight grid
    tolerant.obstacle[tolerant.cell(0.0, 0.0)] = True
    tolerant._grid = None
    assert not tolerant.free_grid(tight=True).is_free(0.0, 0.0)


def test_plans_use_the_tight_grid_only_where_the_usual_one_has_no_way() -> None:
    start = Pose(0.0, -1.5, 0.0, 30.0)
    exact = Navigator(wall_with_gap(0.0))
    assert exact.plan_to_point(start, 0.0, 1.5, 0.3) is None and exact.tight_plans == 0
    failure = exact.last_failure
    tolerant = Navigator(wall_with_gap(0.05))
    plan = tolerant.plan_to_point(start, 0.0, 1.5, 0.3)
    assert plan is not None and tolerant.tight_plans == 1
    assert "MoveAhead" in plan.actions
    # a goal on this side needs no tight grid
    assert tolerant.plan_to_point(start, 1.0, -1.5, 0.3) is not None and tolerant.tight_plans == 1
    assert failure  # the usual grid's reason is kept when there is no way at all
    blocked = wall_with_gap(0.05)
    blocked.obstacle[blocked.cell(0.0, 0.0)] = True
    nav = Navigator(blocked)
    assert nav.plan_to_point(start, 0.0, 1.5, 0.3) is None
    assert "not connected" in nav.last_failure


def test_the_pose_tolerance_and_confirmation_come_from_the_sensor_profile() -> None:
    def env(name: str) -> Any:
        return SimpleNamespace(profile=PROFILES[name])

    assert _env_pose_tolerance(env("ideal")) == 0.0 and _env_confirm_views(env("ideal")) == 1
    assert _env_pose_tolerance(env("realistic")) == PROFILES["realistic"].pose.localiser.bias_max_m
    assert _env_pose_tolerance(env("odom-only")) == 0.05
    assert _env_confirm_views(env("realistic")) == 2
    assert _env_pose_tolerance(object()) == 0.0 and _env_confirm_views(object()) == 1


BOX = ((-0.2, 0.6, 1.8), (0.2, 1.0, 2.2))
ELSEWHERE = ((1.2, 0.0, 2.4), (1.6, 0.4, 2.8))


def frame(box: tuple, label: InstanceLabel, step: int) -> Any:
    return synthetic_observation(0.0, 0.0, 0.0, 30.0, [(box[0], box[1], 1)], {1: label}, step=step)


def test_a_detection_is_believed_after_two_views_that_agree() -> None:
    tracker = ObjectTracker(confirm_views=2)
    mug = InstanceLabel("mug|1", "Mug")
    tracker.integrate(frame(BOX, mug, 1))
    assert tracker.get("mug|1") is None and tracker.of_type("Mug") == []
    tracker.integrate(frame(BOX, mug, 2))
    assert tracker.get("mug|1") is not None and len(tracker.of_type("Mug")) == 1


def test_a_false_detection_that_lands_somewhere_new_each_time_is_never_believed() -> None:
    tracker = ObjectTracker(confirm_views=2)
    ghost = InstanceLabel("spurious|0", "Vase")
    for step, box in enumerate([BOX, ELSEWHERE, BOX, ELSEWHERE], start=1):
        tracker.integrate(frame(box, ghost, step))
    assert tracker.get("spurious|0") is None and tracker.of_type("Vase") == []
    one_view = ObjectTracker()  # a segmenter with no false detections: believed at once, as before
    one_view.integrate(frame(BOX, ghost, 1))
    assert one_view.get("spurious|0") is not None


def test_a_confused_label_is_outvoted() -> None:
    """The first view called the mug a cup; the next two call it a mug."""
    tracker = ObjectTracker()
    tracker.integrate(frame(BOX, InstanceLabel("mug|1", "Cup"), 1))
    assert tracker.get("mug|1").object_type == "Cup"
    tracker.integrate(frame(BOX, InstanceLabel("mug|1", "Mug"), 2))
    assert tracker.get("mug|1").object_type == "Cup"  # a tie keeps the first
    tracker.integrate(frame(BOX, InstanceLabel("mug|1", "Mug"), 3))
    assert tracker.get("mug|1").object_type == "Mug"
    assert [o.object_id for o in tracker.of_type("Mug")] == ["mug|1"] and tracker.of_type("Cup") == []


def test_a_detection_seen_once_is_a_glimpse_until_a_second_view_believes_it() -> None:
    tracker = ObjectTracker(confirm_views=2)
    tracker.integrate(frame(BOX, InstanceLabel("key|1", "KeyChain"), 1))
    glimpse = tracker.glimpses("KeyChain")["key|1"]
    assert set(tracker.glimpses("KeyChain")) == {"key|1"} and tracker.glimpses("Mug") == {}
    tracker.integrate(frame(BOX, InstanceLabel("key|1", "KeyChain"), 2))
    rec = tracker.get("key|1")
    assert tracker.glimpses("KeyChain") == {} and ((rec.box_min <= glimpse) & (glimpse <= rec.box_max)).all()
    assert ObjectTracker().glimpses("KeyChain") == {}  # believed at once: nothing waits
    once = ObjectTracker()
    once.integrate(frame(BOX, InstanceLabel("key|1", "KeyChain"), 1))
    assert once.get("key|1") is not None and once.glimpses("KeyChain") == {}


def test_first_views_waiting_to_be_believed_are_bounded_oldest_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A detector's false detections are each their own id and never come back: the tracker keeps
    at most ``MAX_TENTATIVE`` first views, dropping the oldest (a robot runs for days)."""
    import planner.object_tracker as object_tracker

    monkeypatch.setattr(object_tracker, "MAX_TENTATIVE", 3)
    tracker = ObjectTracker(confirm_views=2)
    for step in range(1, 6):
        tracker.integrate(frame(BOX, InstanceLabel(f"spurious|{step}.0", "Vase"), step))
    assert list(tracker.tentative) == ["spurious|3.0", "spurious|4.0", "spurious|5.0"]
    assert set(tracker.glimpses("Vase")) == set(tracker.tentative)
    tracker.integrate(frame(BOX, InstanceLabel("spurious|5.0", "Vase"), 6))  # a second view still counts
    assert tracker.get("spurious|5.0") is not None and "spurious|5.0" not in tracker.tentative


def test_the_views_that_confirm_a_detection_all_vote_for_its_type() -> None:
    """Behind a detector (two views to believe): a soap bottle first seen as one, then once as
    a spray bottle, is a soap bottle (the first view's label while tied), not the confirming
    view's; dev-047-1 put a soap bottle on a dresser for "place a spray on a dresser"."""
    tracker = ObjectTracker(confirm_views=2)
    tracker.integrate(frame(BOX, InstanceLabel("bottle|1", "SoapBottle"), 1))
    tracker.integrate(frame(BOX, InstanceLabel("bottle|1", "SprayBottle"), 2))
    rec = tracker.get("bottle|1")
    assert rec.object_type == "SoapBottle" and rec.type_votes == {"SoapBottle": 1, "SprayBottle": 1}
    assert tracker.of_type("SprayBottle") == []
    tracker = ObjectTracker(confirm_views=2)  # a view that lands elsewhere starts the count again
    tracker.integrate(frame(ELSEWHERE, InstanceLabel("bottle|1", "SoapBottle"), 1))
    tracker.integrate(frame(BOX, InstanceLabel("bottle|1", "SprayBottle"), 2))
    tracker.integrate(frame(BOX, InstanceLabel("bottle|1", "SprayBottle"), 3))
    assert tracker.get("bottle|1").type_votes == {"SprayBottle": 2}


def _no_plan(*args: Any, **kwargs: Any) -> Generator[None, None, None]:
    """A plan request in stages (``navigation.PlanStages``) that finds nothing."""
    return None
    yield  # a generator


class ShutIn:
    """Just enough of an agent for ``Skills.explore_once``: a frontier no plan reaches."""

    def __init__(self, pose_tolerance: float = 0.0, given_up: bool = False) -> None:
        self.config = AgentConfig(pose_tolerance=pose_tolerance)
        self.given_up = given_up
        self.forgiven = 0
        self.pose = Pose(0.0, 0.0, 0.0, 30.0)
        self.notes: list[str] = []
        self.occupancy = SimpleNamespace(frontier=lambda: [(3.0, 0.0, 100, 3.5, 0.0)])
        self.navigator = SimpleNamespace(plan_to_point=lambda *a, **k: None, plan_to_point_stages=_no_plan,
                                         last_failure="not connected",
                                         budget=ActBudget(None),  # planner.planning_budget: no bound
                                         walking_field=lambda pose: SimpleNamespace(at=lambda x, z: float("inf")),
                                         shut_in=lambda pose: self.boxed,
                                         map=OccupancyMap((0.0, 0.0), OccupancyConfig(size=8.0)),  # nothing seen
                                         region_around=lambda grid, x, z, radius: np.zeros_like(grid.mask))
        self.boxed = False
        self.occupancy.clear_around = lambda x, z, r: self.cleared.append((x, z, r)) or 7
        self.cleared: list[tuple[float, float, float]] = []
        self.failed: list[tuple[float, float]] = []

    def frontier_failed(self, x: float, z: float) -> bool:
        return self.given_up

    def forgive_frontiers(self) -> None:
        self.forgiven += 1
        self.given_up = False

    def fail_frontier(self, x: float, z: float, reached: bool = False) -> None:
        self.failed.append((x, z))

    def note(self, text: str) -> None:
        self.notes.append(text)


def run(gen: Any, agent: ShutIn) -> list[str]:
    """Drive a skill generator, turning the agent's pose as the actions say; the action names."""
    names: list[str] = []
    try:
        action = next(gen)
        while True:
            names.append(action.name)
            p = agent.pose
            if action.name in ("LookDown", "LookUp"):
                agent.pose = Pose(p.x, p.z, p.yaw, p.horizon + (30.0 if action.name == "LookDown" else -30.0))
            obs = SimpleNamespace(feedback=SimpleNamespace(success=True))
            action = gen.send(obs)
    except StopIteration:
        return names


def test_shut_in_the_explorer_looks_at_the_floor_around_once_per_place() -> None:
    agent = ShutIn()
    skills = Skills(agent)  # type: ignore[arg-type]
    first = run(skills.explore_once(), agent)
    assert first[0] == "LookDown" and first.count("RotateRight") == 11 and first[-1] == "LookUp"
    assert agent.pose.horizon == 30.0  # back to the pitch it explores at
    assert any("looking at the floor" in n for n in agent.notes)
    assert run(skills.explore_once(), agent) == []  # the same place: nothing more to see
    agent.pose = Pose(2.0, 0.0, 0.0, 30.0)
    assert "RotateRight" in run(skills.explore_once(), agent)  # somewhere else: look again


def test_a_smeared_wall_just_in_front_of_an_object_does_not_hide_it_under_noise() -> None:
    """A wall-band cell 0.15 m in front of the object hides it from an exact map's viewpoint but
    not from a noisy one's (the band is smeared that far into the room); 0.5 m in front, it is
    a wall in both, and line_of_sight and in_sight agree."""
    def nav(noisy: bool, wall_at: float) -> Navigator:
        config = OccupancyConfig(size=8.0, depth_noise_k=0.0036 if noisy else 0.0, pose_tolerance=0.05 if noisy else 0.0)
        occ = OccupancyMap((0.0, 0.0), config)
        occ.wall[occ.cell(0.0, wall_at)] = True
        return Navigator(occ)

    for noisy, wall_at, seen in ((False, -0.15, False), (True, -0.15, True), (False, -0.5, False), (True, -0.5, False)):
        n = nav(noisy, wall_at)
        assert n.line_of_sight(0.0, -2.0, 0.0, 0.0) is seen, (noisy, wall_at)
        cells = np.zeros_like(n.map.wall)
        cells[n.map.cell(0.0, -2.0)] = True
        assert bool(n.in_sight(cells, 0.0, 0.0)[n.map.cell(0.0, -2.0)]) is seen, (noisy, wall_at)
    assert nav(False, 0.0).sight_slack == 0.0 and 0.2 < nav(True, 0.0).sight_slack <= 0.3


def test_with_an_uncertain_pose_frontiers_given_up_get_another_chance_after_a_look() -> None:
    """Every frontier given up (plans failed on the map of their moment): with an exact pose the
    explorer is done; with an uncertain one it looks at the floor around, once per place, and
    forgives the frontiers it gave up for want of a plan; given up again there, it clears the map
    around (a pocket drawn while the pose was off: dev-013-0 under the realistic profile, every
    plan exhausting 12 poses at step 411 with 3,000 steps of budget left) and looks again, once."""
    exact = ShutIn(pose_tolerance=0.0, given_up=True)
    gen = Skills(exact).explore_once()  # type: ignore[arg-type]
    try:
        next(gen)
        raise AssertionError("no action expected")
    except StopIteration as stop:
        assert stop.value is False
    uncertain = ShutIn(pose_tolerance=0.05, given_up=True)
    skills = Skills(uncertain)  # type: ignore[arg-type]
    assert "RotateRight" in run(skills.explore_once(), uncertain) and uncertain.forgiven == 1
    uncertain.given_up = True  # given up again, here: the map around is cleared and looked at again
    again = run(skills.explore_once(), uncertain)
    assert again.count("RotateRight") == 12 and uncertain.cleared and uncertain.forgiven == 2
    uncertain.given_up = True  # and a third time: nothing more to try here
    assert run(skills.explore_once(), uncertain) == [] and uncertain.forgiven == 2


def boxed_in(pose_tolerance: float) -> OccupancyMap:
    """Floor all round; obstacle cells on a ring 0.3 m from (0, 0): no lattice move leaves the
    centre on either grid, though a bump-free house would let it."""
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=6.0, depth_noise_k=0.0036, pose_tolerance=pose_tolerance))
    occ.floor[:, :] = True
    for a in np.linspace(0.0, 2.0 * np.pi, 120, endpoint=False):
        i, j = occ.cell(0.3 * float(np.sin(a)), 0.3 * float(np.cos(a)))
        occ.obstacle[i, j] = occ.bumped[i, j] = True
        occ.obstacle_hits[i, j] = 50
    occ._grid = None
    return occ


def test_shut_in_on_the_map_is_told_and_clearing_round_the_agent_frees_it() -> None:
    occ = boxed_in(0.05)
    nav = Navigator(occ)
    here = Pose(0.0, 0.0, 0.0, 30.0)
    assert nav.shut_in(here)
    assert not Navigator(wall_with_gap(0.05)).shut_in(Pose(0.0, -1.5, 0.0, 30.0))
    far = occ.cell(2.0, 2.0)
    occ.obstacle[far] = True
    cleared = occ.clear_around(0.0, 0.0, 0.6)
    assert cleared > 0 and not occ.obstacle[occ.cell(0.3, 0.0)] and not occ.bumped[occ.cell(0.3, 0.0)]
    assert occ.obstacle_hits[occ.cell(0.3, 0.0)] == 0
    assert occ.obstacle[far]  # beyond the radius: kept
    assert not nav.shut_in(here)


def test_shut_in_with_an_uncertain_pose_the_explorer_clears_and_looks_once_per_place() -> None:
    agent = ShutIn(pose_tolerance=0.05)
    agent.boxed = True
    skills = Skills(agent)  # type: ignore[arg-type]
    first = run(skills.explore_once(), agent)
    assert first == ["RotateRight"] * 12 and agent.cleared == [(0.0, 0.0, 0.6)] and agent.forgiven == 1
    assert any("shut in" in n for n in agent.notes)
    again = run(skills.explore_once(), agent)  # the same place: no second clearing
    assert len(agent.cleared) == 1 and again[:1] == ["LookDown"]
    exact = ShutIn(pose_tolerance=0.0)
    exact.boxed = True
    run(Skills(exact).explore_once(), exact)  # type: ignore[arg-type]
    assert exact.cleared == []  # with an exact pose the map is not second-guessed
