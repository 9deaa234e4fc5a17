"""Where the agent walks to next is chosen by the walk, not the straight line: the frontier to
explore (``planner.exploration.frontier_walks``), the receptacles a search visits, in a tour from
where the agent stands (``planner.goal_search.tour``); and the walk itself is planned near
step-optimal (``planner.navigation.Navigator``: weight 1.2 first, 2 where that runs into its cap)."""

from __future__ import annotations

import math
from collections import Counter
from types import SimpleNamespace
from typing import Any

import numpy as np

from planner.goal_search import tour
from planner.navigation import Navigator, Pose
from planner.occupancy import OccupancyConfig, OccupancyMap
from planner.exploration import frontier_walks
from tests.test_holomind_components import _two_room_map, cell_centres


def _two_rooms() -> OccupancyMap:
    """Two 4 m x 4 m rooms side by side (x < 0 and x > 0), floor seen everywhere; a dividing
    wall at x = 0 with a 1 m doorway at its south end (z < -1.0)."""
    return _two_room_map(door_z=(-math.inf, -1.0))


def test_frontier_walks_count_the_way_round_a_wall() -> None:
    """Standing by the dividing wall at its north end, a frontier just across the wall is 1 m
    away in a straight line but a walk through the doorway 3 m south; one 2.5 m away in the
    agent's own room is nearer on foot, and comes first."""
    nav = Navigator(_two_rooms())
    pose = Pose(-0.5, 1.5, 90.0, 30.0)
    across, same_room = (0.5, 1.5, 100, 1.0, 2.5), (-3.0, 1.5, 100, -3.5, 2.5)
    walk = frontier_walks(nav, pose, [across, same_room])
    assert walk[across] > 5.0  # down to the doorway and back up
    assert walk[same_room] < 3.5
    assert min([across, same_room], key=walk.__getitem__) == same_room
    assert min([across, same_room], key=lambda f: math.hypot(f[0] - pose.x, f[1] - pose.z)) == across


def test_a_frontier_the_map_knows_no_way_to_comes_last_but_is_still_ordered() -> None:
    nav = Navigator(_two_rooms())
    pose = Pose(-2.0, 0.0, 0.0, 30.0)
    outside_near, outside_far, inside = (-2.0, 5.0, 1, 0, 0), (-2.0, 5.5, 1, 0, 0), (-3.5, 1.5, 1, 0, 0)
    walk = frontier_walks(nav, pose, [outside_near, outside_far, inside])
    assert walk[inside] < walk[outside_near] < walk[outside_far]


def _box(name: str, x: float) -> SimpleNamespace:
    return SimpleNamespace(object_id=name, centroid=np.array([x, 0.8, 0.0]))


def test_the_search_visits_receptacles_as_a_tour_from_where_it_stands() -> None:
    """Boxes at x = 1, -2, 3 seen from the origin: sorted once by distance from there, the agent
    walks 1, -2, 3 (to -2 and back across, 9 m); as a tour, each next the nearest from where it
    then stands: 1, 3, -2 (7 m). A better rank still comes first wherever it is."""
    agent = SimpleNamespace(pose=SimpleNamespace(x=0.0, z=0.0))
    boxes = [_box("a", 1.0), _box("b", -2.0), _box("c", 3.0)]
    order = []
    for b in tour(boxes, lambda o: (), lambda o: 1.0, agent):
        order.append(b.object_id)
        agent.pose = SimpleNamespace(x=float(b.centroid[0]), z=0.0)  # walked there
    assert order == ["a", "c", "b"]

    agent.pose = SimpleNamespace(x=0.0, z=0.0)
    order = []
    for b in tour(boxes, lambda o: (o.object_id != "c",), lambda o: 1.0, agent):
        order.append(b.object_id)
        agent.pose = SimpleNamespace(x=float(b.centroid[0]), z=0.0)
    assert order == ["c", "a", "b"]  # the ranked one first, then the nearest from there


def test_the_tour_weighs_distance_by_how_likely_a_find_is() -> None:
    agent = SimpleNamespace(pose=SimpleNamespace(x=0.0, z=0.0))
    near_unlikely, far_likely = _box("sofa", 1.0), _box("fridge", 3.0)
    likely = {"sofa": 0.1, "fridge": 0.9}
    first = next(tour([near_unlikely, far_likely], lambda o: (), lambda o: likely[o.object_id], agent))
    assert first.object_id == "fridge"


def _open_room(half: float = 3.5) -> OccupancyMap:
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=12.0))
    pts = cell_centres(occ, np.ones((occ.n, occ.n), dtype=bool)).reshape(occ.n, occ.n, 2)
    inside = (np.abs(pts[..., 0]) <= half) & (np.abs(pts[..., 1]) <= half)
    occ.floor[:] = inside
    return occ


def test_plans_across_a_room_are_near_step_optimal() -> None:
    """Across a room on the diagonal: the greedy search (weight 2) strafes and steps in a zigzag
    all the way; the finer one first (weight 1.2) turns and walks straighter, in fewer steps."""
    occ = _open_room()
    start = Pose(-3.0, -3.0, 0.0, 30.0)
    fine = Navigator(occ).plan_to_point(start, 2.5, 1.5, 0.3)
    greedy = Navigator(occ, fine_weight=2.0).plan_to_point(start, 2.5, 1.5, 0.3)
    assert fine is not None and greedy is not None
    assert fine.cost < greedy.cost
    assert any(a.startswith("Rotate") for a in fine.actions)


def test_where_the_finer_search_runs_into_its_cap_the_greedy_one_still_plans() -> None:
    occ = _open_room()
    start = Pose(-3.0, -3.0, 0.0, 30.0)
    greedy = Navigator(occ, fine_weight=2.0).plan_to_point(start, 2.5, 1.5, 0.3)
    assert greedy is not None
    nav = Navigator(occ, max_expansions=greedy.expanded + 1)
    fine_capped = Navigator(occ, max_expansions=greedy.expanded + 1, weight=1.2, fine_weight=1.2)
    assert fine_capped.plan_to_point(start, 2.5, 1.5, 0.3) is None  # the finer search alone: capped
    plan = nav.plan_to_point(start, 2.5, 1.5, 0.3)
    assert plan is not None and plan.cost == greedy.cost


class _FrontierAgent:
    """What ``Explorer`` reads (``planner.exploration.ExplorerAgent``), over the two rooms, with
    the frontier bookkeeping of ``planner.holomind.HoloMindAgent``."""

    def __init__(self, fronts: list[tuple[float, float, int, float, float]]) -> None:
        from planner.agent_config import AgentConfig

        self.config = AgentConfig()
        self.occupancy = SimpleNamespace(frontier=lambda: list(fronts))
        self.navigator = Navigator(_two_rooms())
        self.pose = Pose(-2.0, 0.0, 90.0, 30.0)
        self.failed: list[tuple[float, float, int]] = []
        self.notes: list[str] = []
        self.stats: Counter[str] = Counter()

    def note(self, text: str) -> None:
        self.notes.append(text)

    def frontier_failed(self, x: float, z: float) -> bool:
        return sum(w for fx, fz, w in self.failed if math.hypot(x - fx, z - fz) < 0.6) >= 2

    def fail_frontier(self, x: float, z: float, reached: bool = False) -> None:
        self.failed.append((x, z, 2 if reached else 1))

    def forgive_frontiers(self) -> None:
        self.failed = [f for f in self.failed if f[2] >= 2]


class _BlockedMoves:
    """Every walk is blocked at its first move; ``step_m`` is how far the pose moved before."""

    def __init__(self, agent: _FrontierAgent, step_m: float = 0.0) -> None:
        self.agent, self.step_m, self.walks = agent, step_m, 0

    def walk(self, actions: list[str], limit: int | None = None):  # type: ignore[no-untyped-def]
        from household.types import Action

        self.walks += 1
        yield Action(actions[0])
        p = self.agent.pose
        self.agent.pose = Pose(p.x + self.step_m, p.z, p.yaw, p.horizon)
        return False

    def turn_to(self, x: float, z: float):  # type: ignore[no-untyped-def]
        yield from ()

    def set_horizon(self, target: float):  # type: ignore[no-untyped-def]
        yield from ()


def _explore(explorer, calls: int) -> list[bool]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(calls):
        gen = explorer.explore_once()
        try:
            next(gen)
            while True:
                gen.send(None)
        except StopIteration as stop:
            out.append(bool(stop.value))
    return out


def test_a_frontier_whose_walk_is_blocked_where_the_agent_stands_is_given_up_after_three() -> None:
    """A plan that bumps at its first move, again and again (the bump drawn beside the cell the
    plan crosses, where the pose is off: dev-023-0 under the realistic profile looped 378 times)
    is given up after STUCK_WALKS walks; walks that made way before their bump are not counted."""
    from planner.exploration import STUCK_WALKS, Explorer

    front = (2.0, 0.0, 50, 3.0, 0.0)  # across the doorway, reachable on the map
    agent = _FrontierAgent([front])
    moves = _BlockedMoves(agent)
    explorer = Explorer(agent, moves)  # type: ignore[arg-type]
    assert _explore(explorer, STUCK_WALKS) == [True] * STUCK_WALKS
    assert agent.frontier_failed(2.0, 0.0)
    assert any("giving it up" in n for n in agent.notes) and agent.stats["frontiers_blocked"] == 1
    assert _explore(explorer, 1) == [False]  # no frontier left: exploration says so
    assert moves.walks == STUCK_WALKS

    moving = _FrontierAgent([front])
    explorer = Explorer(moving, _BlockedMoves(moving, step_m=0.25))  # type: ignore[arg-type]
    assert _explore(explorer, STUCK_WALKS + 2) == [True] * (STUCK_WALKS + 2)
    assert not moving.frontier_failed(2.0, 0.0)


class _RecordingMoves:
    """Turns face the point asked for at once; walks are recorded and end where they aim."""

    def __init__(self, agent: _FrontierAgent) -> None:
        self.agent = agent
        self.turns: list[tuple[float, float]] = []
        self.walks: list[list[str]] = []

    def walk(self, actions: list[str], limit: int | None = None):  # type: ignore[no-untyped-def]
        from household.types import Action

        self.walks.append(list(actions))
        yield Action(actions[0])
        return True

    def turn_to(self, x: float, z: float):  # type: ignore[no-untyped-def]
        from household.types import Action

        self.turns.append((x, z))
        p = self.agent.pose
        self.agent.pose = Pose(p.x, p.z, math.degrees(math.atan2(x - p.x, z - p.z)) % 360.0, p.horizon)
        yield Action("RotateRight")

    def set_horizon(self, target: float):  # type: ignore[no-untyped-def]
        yield from ()


def test_a_frontier_behind_the_camera_is_faced_before_the_walk_and_the_walk_planned_from_there() -> None:
    """The lattice strafes and backs up as cheaply as it walks ahead, so a walk to a frontier
    behind the agent would map nothing on the way. Facing west (yaw 270) in the west room, a
    frontier 1.5 m east is behind the camera: the agent turns to it first, and the walk it then
    sends was planned from the new heading (straight ahead). One ahead of it is walked to unturned."""
    from planner.exploration import Explorer, in_view

    front = (-0.5, 0.0, 50, 0.0, 0.0)
    agent = _FrontierAgent([front])
    agent.pose = Pose(-2.0, 0.0, 270.0, 30.0)
    assert not in_view(agent.pose, -0.5, 0.0)
    moves = _RecordingMoves(agent)
    assert _explore(Explorer(agent, moves), 1) == [True]  # type: ignore[arg-type]
    assert moves.turns[0] == (-0.5, 0.0)
    assert in_view(agent.pose, -0.5, 0.0)
    assert moves.walks and set(moves.walks[0]) == {"MoveAhead"}

    ahead = _FrontierAgent([front])
    ahead.pose = Pose(-2.0, 0.0, 90.0, 30.0)
    moves = _RecordingMoves(ahead)
    assert _explore(Explorer(ahead, moves), 1) == [True]  # type: ignore[arg-type]
    assert moves.walks and moves.walks[0][0] == "MoveAhead"
    assert moves.turns in ([], [(0.0, 0.0)])  # at most the look out over the frontier on arrival


def test_a_frontier_whose_plan_fails_after_the_turn_is_not_walked_with_the_old_heading_moves() -> None:
    """The plan made before the turn names moves relative to the old heading (MoveBack towards a
    frontier behind): after the turn they would lead away from it. Where no plan is found from
    the new heading, nothing is walked, the note says why, and exploration reports progress (the
    turn showed something) so the next call chooses again."""
    from planner.exploration import Explorer

    front = (-0.5, 0.0, 50, 0.0, 0.0)
    agent = _FrontierAgent([front])
    agent.pose = Pose(-2.0, 0.0, 270.0, 30.0)
    real = agent.navigator.plan_to_point_stages

    def before_the_turn_only(pose: Pose, *args: Any) -> Any:
        if pose.yaw == 270.0:
            return (yield from real(pose, *args))
        return None

    agent.navigator.plan_to_point_stages = before_the_turn_only  # type: ignore[method-assign]
    moves = _RecordingMoves(agent)
    assert _explore(Explorer(agent, moves), 1) == [True]  # type: ignore[arg-type]
    assert moves.turns == [(-0.5, 0.0)] and moves.walks == []
    assert any("no plan after turning" in n for n in agent.notes)


def test_an_approach_blocked_where_the_agent_stands_gives_the_object_up_after_three() -> None:
    """Walking towards an object seen beyond the mapped floor, a plan that bumps at its first move
    again and again (dev-045-1 under the realistic profile: 3 x 161 blocked MoveAheads towards one
    mug, the bump drawn beside the cell the plan crossed) gives the object up after STUCK_WALKS
    walks, as a frontier is given up; walks that made way before their bump are not counted."""
    from household.types import Action
    from planner.agent_config import AgentConfig
    from planner.exploration import STUCK_WALKS
    from planner.object_memory import TrackedObject
    from planner.skills import Skills

    # beyond the mapped floor (|x| <= 3.5): no pose within reach on the map, but floor towards it
    mug = TrackedObject("mug|1", "Mug", np.array([5.0, 0.9, 0.0]), np.array([4.95, 0.85, -0.05]),
                        np.array([5.05, 0.95, 0.05]), 0, 0)

    def run(step_m: float) -> tuple[bool, int, list[str]]:
        notes: list[str] = []
        agent = SimpleNamespace(config=AgentConfig(), obs=SimpleNamespace(step=0), acting_step=0, pose=Pose(0.0, 0.0, 90.0, 30.0),
                                navigator=Navigator(_open_room()), stats=Counter(), note=notes.append,
                                tracker=SimpleNamespace(get=lambda i: mug if i == "mug|1" else None, visible_now={}))
        agent.reach_distance = lambda o: o.distance_3d(np.array([agent.pose.x, 1.5, agent.pose.z]))
        agent.reach_wanted = lambda oid, reach: reach
        walks = []

        class Bumping(Skills):
            def walk(self, actions: list[str], limit: int | None = None):  # type: ignore[no-untyped-def]
                walks.append(actions)
                yield Action(actions[0])
                agent.obs.step += 1
                agent.acting_step += 1
                p = agent.pose  # made way (to and fro across the room) before the bump, or not
                agent.pose = Pose(p.x, p.z + (step_m if len(walks) % 2 else -step_m), p.yaw, p.horizon)
                return False

        gen = Bumping(agent)._approach("mug|1", 1.4, [])  # type: ignore[arg-type]
        try:
            next(gen)
            while True:
                gen.send(None)
        except StopIteration as stop:
            return bool(stop.value), len(walks), notes

    reached, walks, notes = run(0.0)
    assert not reached and walks == STUCK_WALKS
    assert notes == [f"no way towards mug|1: blocked {STUCK_WALKS} times before a step"]
    reached, walks, notes = run(0.25)
    assert not reached and walks > STUCK_WALKS  # it made way each time: up to the approach's step cap
    assert not any("blocked" in n for n in notes)
