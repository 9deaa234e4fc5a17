"""An interaction the backend refused as out of reach is tried next from nearer than where it was
refused (``HoloMindAgent.reach_wanted``, used by ``Skills._approach`` and ``Skills.interact``).

With noisy depth an object's box can reach half a metre further towards the agent than the
object: the critic's "come closer" then found the agent already within its closer reach (0.9 m)
and the action was sent again from the same pose, refused again (dev-010-0 under
``--sensors realistic --object-memory spatial``: a put into a sink refused four times at 1.56 m).
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

import numpy as np

from household.outcomes import Failure
from household.types import ActionFeedback
from planner.episode_state import EpisodeState
from planner.holomind import NEAREST_WANTED, NEARER_AFTER_REFUSAL, HoloMindAgent
from planner.navigation import Navigator, Pose
from planner.object_memory import TrackedObject
from planner.occupancy import OccupancyConfig, OccupancyMap
from planner.skills import Skills
from tests.test_goal_search import _drive
from tests.test_holomind_components import cell_centres

# A sink at camera height, 0.6 m ahead (+x) of an agent standing at the origin.
SINK = TrackedObject("sink|1", "SinkBasin", np.array([0.7, 1.45, 0.0]), np.array([0.6, 1.3, -0.1]),
                     np.array([0.8, 1.6, 0.1]), 0, 0)


def _memory(pose: Pose) -> Any:
    """What ``HoloMindAgent._note_reach`` and ``reach_wanted`` read: the episode state, the
    object memory and the reach from the agent's pose."""
    view = SimpleNamespace(state=EpisodeState(), tracker=SimpleNamespace(get=lambda i: SINK if i == SINK.object_id else None))
    view.reach_distance = lambda o: o.distance_3d(np.array([pose.x, 1.5, pose.z]))
    return view


def _obs(success: bool, failure: Failure | None = None) -> Any:
    error = "" if success else "PutObject: object sink|1 is out of reach (1.56 m > 1.50 m)"
    return SimpleNamespace(feedback=ActionFeedback("PutObject", success, error,
                                                   failure=failure.value if failure else ""))


def test_a_refusal_asks_for_a_pose_nearer_than_the_one_refused_until_an_action_works() -> None:
    view = _memory(Pose(0.0, 0.0, 90.0, 30.0))
    assert HoloMindAgent.reach_wanted(view, SINK.object_id, 0.9) == 0.9  # nothing refused yet
    HoloMindAgent._note_reach(view, "PutObject", SINK.object_id, _obs(False, Failure.OUT_OF_REACH))
    assert view.state.refused_reach[SINK.object_id] == 0.6  # as near as the agent believed it was
    assert HoloMindAgent.reach_wanted(view, SINK.object_id, 0.9) == max(0.6 - NEARER_AFTER_REFUSAL, NEAREST_WANTED)
    HoloMindAgent._note_reach(view, "PutObject", SINK.object_id, _obs(False, Failure.NO_ROOM))
    assert view.state.refused_reach[SINK.object_id] == 0.6  # another failure says nothing of reach
    HoloMindAgent._note_reach(view, "PutObject", SINK.object_id, _obs(True))
    assert HoloMindAgent.reach_wanted(view, SINK.object_id, 0.9) == 0.9  # it worked from there: forgotten


def _room(x_max: float) -> OccupancyMap:
    """Open floor for |z| <= 3.5 and -3.5 <= x <= x_max."""
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=12.0))
    pts = cell_centres(occ, np.ones((occ.n, occ.n), dtype=bool)).reshape(occ.n, occ.n, 2)
    occ.floor[:] = (pts[..., 0] >= -3.5) & (pts[..., 0] <= x_max) & (np.abs(pts[..., 1]) <= 3.5)
    return occ


def _approach(occ: OccupancyMap, refused: bool) -> tuple[bool, list[list[str]], list[str], Navigator]:
    """``Skills._approach`` to the sink within the critic's closer reach, from the origin, after a
    refusal there or not; the walk succeeds at once. Returns reached, the walks and the notes."""
    pose = Pose(0.0, 0.0, 90.0, 30.0)
    memory = _memory(pose)
    if refused:
        HoloMindAgent._note_reach(memory, "PutObject", SINK.object_id, _obs(False, Failure.OUT_OF_REACH))
    notes: list[str] = []
    navigator = Navigator(occ)
    agent = SimpleNamespace(config=SimpleNamespace(edge_reach=1.45, approach_step_cap=300), obs=SimpleNamespace(step=0), acting_step=0,
                            pose=pose, navigator=navigator, stats=Counter(), note=notes.append,
                            tracker=SimpleNamespace(get=memory.tracker.get, visible_now={SINK.object_id: 500}),
                            reach_distance=memory.reach_distance,
                            reach_wanted=lambda oid, reach: HoloMindAgent.reach_wanted(memory, oid, reach))
    walks: list[list[str]] = []

    class Walking(Skills):
        def walk(self, actions: list[str], limit: int | None = None):  # type: ignore[no-untyped-def]
            walks.append(list(actions))
            yield from ()
            return True

    reached = _drive(Walking(agent)._approach(SINK.object_id, 0.9, []))  # type: ignore[arg-type]
    return bool(reached), walks, notes, navigator


def test_come_closer_walks_nearer_after_a_refusal_from_a_pose_the_box_says_is_in_reach() -> None:
    reached, walks, _, _ = _approach(_room(3.5), refused=False)
    assert reached and walks == []  # 0.6 m by the box: within 0.9, no step (what happened before)
    reached, walks, _, navigator = _approach(_room(3.5), refused=True)
    wanted = max(0.6 - NEARER_AFTER_REFUSAL, NEAREST_WANTED)
    plan = navigator.plan_to_object(Pose(0.0, 0.0, 90.0, 30.0), SINK, wanted)
    assert plan is not None and plan.actions
    assert reached and walks == [plan.actions]  # walked to a pose within the nearer reach


def test_with_no_nearer_floor_the_approach_gives_up_instead_of_exploring() -> None:
    """No floor nearer than where it was refused (the counter's edge): the approach fails at once
    (the goal loop sets the object aside as unreachable and may retry it on a grown map) instead
    of exploring towards an object it already stood by."""
    reached, walks, notes, _ = _approach(_room(0.1), refused=True)
    assert not reached and walks == []
    assert notes == [f"coming within {NEAREST_WANTED:.2f} m of {SINK.object_id}, nearer than where it was out of reach",
                     f"no pose nearer to {SINK.object_id} than where it was out of reach"]


def test_a_refusal_as_not_visible_keeps_the_pose_until_an_action_works() -> None:
    """The backend's visibility is a function of the pose: the pose it said "not visible" from is
    kept (``HoloMindAgent.views_refused``), and forgotten once an interaction with it works."""
    view = _memory(Pose(0.0, 0.0, 90.0, 30.0))
    view.pose = Pose(0.25, -0.5, 90.0, 30.0)
    assert HoloMindAgent.views_refused(view, SINK.object_id) == []
    HoloMindAgent._note_reach(view, "PickupObject", SINK.object_id, _obs(False, Failure.NOT_VISIBLE))
    assert HoloMindAgent.views_refused(view, SINK.object_id) == [(0.25, -0.5)]
    assert SINK.object_id not in view.state.refused_reach  # not a refusal for reach
    HoloMindAgent._note_reach(view, "PickupObject", SINK.object_id, _obs(False, Failure.NO_ROOM))
    assert HoloMindAgent.views_refused(view, SINK.object_id) == [(0.25, -0.5)]
    HoloMindAgent._note_reach(view, "PickupObject", SINK.object_id, _obs(True))
    assert HoloMindAgent.views_refused(view, SINK.object_id) == []


def test_come_closer_after_not_visible_stands_elsewhere_than_the_refused_pose() -> None:
    """The critic's "come closer" after a "not visible" found the agent within its closer reach and
    the object in its frame (a few pixels of a mug in a sink): it sent the action again from the
    same pose, refused again (dev-023-0). ``navigate_to`` now avoids the refused pose."""
    occ = _room(3.5)
    pose = Pose(0.0, 0.0, 90.0, 30.0)
    memory = _memory(pose)
    navigator = Navigator(occ)
    refused: list[tuple[float, float]] = []
    agent = SimpleNamespace(config=SimpleNamespace(edge_reach=1.45, approach_step_cap=300, approach_reach=1.3),
                            obs=SimpleNamespace(step=0), acting_step=0, pose=pose, navigator=navigator,
                            stats=Counter(), note=lambda text: None,
                            tracker=SimpleNamespace(get=memory.tracker.get, visible_now={SINK.object_id: 500}),
                            reach_distance=memory.reach_distance, reach_wanted=lambda oid, reach: reach,
                            views_refused=lambda oid: list(refused))
    walks: list[list[str]] = []

    class Walking(Skills):
        def walk(self, actions: list[str], limit: int | None = None):  # type: ignore[no-untyped-def]
            walks.append(list(actions))
            yield from ()
            return True

        def _look_at(self, object_id: str, closer: bool):  # type: ignore[no-untyped-def]
            yield from ()
            return True

    assert _drive(Walking(agent).navigate_to(SINK.object_id, closer=True)) is True  # type: ignore[arg-type]
    assert walks == []  # in reach and in view: no step
    refused.append((0.0, 0.0))
    assert _drive(Walking(agent).navigate_to(SINK.object_id, closer=True)) is True  # type: ignore[arg-type]
    plan = navigator.plan_to_object(pose, SINK, 0.9, avoid=[(0.0, 0.0)])
    assert plan is not None and plan.actions and walks == [plan.actions]  # walked off the refused pose


def test_an_interaction_is_not_sent_again_from_a_pose_it_was_refused_from_as_not_visible() -> None:
    """In view and in reach by the memory, at a pose the backend said "not visible" from: the skill
    walks to another viewpoint first (``navigate_to``) instead of sending the action from there."""
    from household.types import Action
    from planner.roles import Subgoal
    from tests.skill_fakes import FakeAgentView

    class Agent(FakeAgentView):
        def __init__(self, refused: list[tuple[float, float]]) -> None:
            super().__init__()
            self.pose = Pose(1.0, 2.0, 90.0, 30.0)
            self.refused = refused
            mug = SimpleNamespace(object_type="Mug", state={}, distance_3d=lambda _p: 0.5)
            self.tracker = SimpleNamespace(get=lambda oid: mug, visible_now={"Mug|1": 50})

        def views_refused(self, object_id: str) -> list[tuple[float, float]]:
            return list(self.refused)

    walked: list[str] = []

    class Recording(Skills):
        def navigate_to(self, object_id: str, closer: bool = False):  # type: ignore[no-untyped-def]
            walked.append(object_id)
            self.a.pose = Pose(1.0, 2.5, 90.0, 30.0)  # type: ignore[misc]  # stood elsewhere
            yield from ()
            return True

    pick = Subgoal("pick", {"object_id": "Mug|1"}, "g1")
    skills = Recording(Agent([]))  # type: ignore[arg-type]
    assert next(skills.interact(pick, "Mug|1")) == Action("PickupObject", "Mug|1") and walked == []
    skills = Recording(Agent([(1.1, 2.1)]))  # type: ignore[arg-type]  # refused 0.14 m from here
    assert next(skills.interact(pick, "Mug|1")) == Action("PickupObject", "Mug|1") and walked == ["Mug|1"]
    skills = Recording(Agent([(1.0, 2.6)]))  # type: ignore[arg-type]  # refused 0.6 m away: here is new
    assert next(skills.interact(pick, "Mug|1")) == Action("PickupObject", "Mug|1") and walked == ["Mug|1"]


def test_with_every_viewpoint_avoided_the_planner_says_so_without_searching() -> None:
    """Every floor cell in reach that sees the sink lies by a viewpoint to avoid: no plan, and the
    failure names why, instead of a search spending its whole cap (dev-080-0: "search given up at
    its cap of 8000 expansions"); one viewpoint left open is planned to."""
    occ = _room(0.1)  # the floor ends 0.5 m short of the sink: the viewpoints are one strip
    navigator = Navigator(occ)
    pose = Pose(-2.0, 0.0, 90.0, 30.0)
    strip = [(x, z) for x in (-0.5, -0.2, 0.1) for z in np.arange(-1.5, 1.51, 0.3)]
    assert navigator.plan_to_object(pose, SINK, 0.9) is not None
    assert navigator.plan_to_object(pose, SINK, 0.9, avoid=strip) is None
    assert navigator.last_failure == f"every floor cell that sees {SINK.object_id} in reach is by a viewpoint to avoid"
    open_one = [(x, z) for x, z in strip if x < -0.3 or abs(z) > 0.35]  # a gap by the sink's front
    plan = navigator.plan_to_object(pose, SINK, 0.9, avoid=open_one)
    assert plan is not None and plan.states
    end = plan.states[-1]
    assert all(np.hypot(end.x - x, end.z - z) >= 0.4 for x, z in open_one)  # stands in the gap


def test_when_only_refused_viewpoints_see_the_object_the_approach_tries_them_again() -> None:
    """Refused as not visible from every pose that sees and reaches it: the refusals are a
    preference, not a wall. The approach drops them (a note says so) and stands where it was
    refused before, instead of giving the object up as unreachable (dev-080-0, dev-097-0)."""
    occ = _room(0.1)
    pose = Pose(0.0, 0.0, 90.0, 30.0)
    memory = _memory(pose)
    notes: list[str] = []
    agent = SimpleNamespace(config=SimpleNamespace(edge_reach=1.45, approach_step_cap=300, approach_reach=1.3),
                            obs=SimpleNamespace(step=0), acting_step=0, pose=pose, navigator=Navigator(occ),
                            stats=Counter(), note=notes.append,
                            tracker=SimpleNamespace(get=memory.tracker.get, visible_now={SINK.object_id: 500}),
                            reach_distance=memory.reach_distance, reach_wanted=lambda oid, reach: reach)
    walks: list[list[str]] = []

    class Walking(Skills):
        def walk(self, actions: list[str], limit: int | None = None):  # type: ignore[no-untyped-def]
            walks.append(list(actions))
            yield from ()
            return True

    refused = [(x, z) for x in (-0.5, -0.2, 0.1) for z in np.arange(-1.5, 1.51, 0.3)] + [(0.0, 0.0)]
    avoid = list(refused) + [(-3.0, 3.0)]  # and a viewpoint this call found the sink hidden from
    assert _drive(Walking(agent)._approach(SINK.object_id, 0.9, avoid, refused)) is True  # type: ignore[arg-type]
    assert walks == []  # in view and in reach where it stands, a refused pose: tried again from here
    assert notes == [f"no viewpoint on {SINK.object_id} away from where it was refused as not visible: trying those again"]
    assert refused == [] and avoid == [(-3.0, 3.0)]  # the call's own viewpoint is still avoided
