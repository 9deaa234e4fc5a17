"""Exploration: walking to frontiers of the agent's own map, and the recoveries for when no
frontier can be walked to (look along a passage drawn too narrow, clear and look at a short
stretch of seen floor drawn shut, look at the floor around, clear a map that shuts the agent in).

Split from ``planner.skills`` (which keeps the skills a subgoal or role names and the motion
primitives): the frontier being walked to and the places a recovery was done are this module's
state, one ``Explorer`` per episode's ``Skills``.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Generator, Protocol

from household.types import Action, Observation
from planner.agent_config import AgentConfig
from planner.gap_look import CLEAR_M, gap_look_point_stages
from planner.navigation import HALF_VFOV, HORIZONS, Navigator, Pose, heading_error
from planner.occupancy import OccupancyMap
from planner.passage_look import FRONTIER_RADII, passage_look_point_stages
from planner.planning_budget import planned_in_stages

# A skill: yields actions, receives observations, returns whether it succeeded (planner.skills).
SkillGen = Generator[Action, Observation, bool]


class ExplorerAgent(Protocol):
    """What exploration reads and calls on the agent (a part of ``planner.skills.AgentView``)."""

    config: AgentConfig
    navigator: Navigator
    occupancy: OccupancyMap
    stats: Counter[str]

    @property
    def pose(self) -> Pose: ...
    def note(self, text: str) -> None: ...
    def frontier_failed(self, x: float, z: float) -> bool: ...
    def fail_frontier(self, x: float, z: float, reached: bool = False) -> None: ...
    def forgive_frontiers(self) -> None: ...


class Moves(Protocol):
    """The motion primitives exploration walks with (``planner.skills.Skills``)."""

    def walk(self, actions: list[str], limit: int | None = None) -> Generator[Action, Observation, bool]: ...
    def turn_to(self, x: float, z: float) -> Generator[Action, Observation, None]: ...
    def set_horizon(self, target: float) -> Generator[Action, Observation, None]: ...


Frontier = tuple[float, float, int, float, float]  # planner.occupancy.OccupancyMap.frontier's
STUCK_WALKS = 3  # walks to one frontier blocked before their first step, after which it is given up
STUCK_RADIUS = 0.6  # metres: blocked walks to frontiers this close count for the same frontier
GAP_LOOKS = 3  # clearings of one gap (``look_across_gap``): a passage that keeps closing is given up after
_IN_PLACE_M = 0.1  # a walk that ended this near where it began made no way before its bump


def blocked_in_place(ok: bool, start: Pose, end: Pose) -> bool:
    """Whether a walk was blocked where it stood (before its first step went anywhere): what
    ``STUCK_WALKS`` counts, for frontiers here and for approaches (``planner.skills``)."""
    return not ok and math.hypot(end.x - start.x, end.z - start.z) < _IN_PLACE_M


def frontier_walks(navigator: Navigator, pose: Pose, fronts: list[Frontier]) -> dict[Frontier, float]:
    """How far the agent walks to each frontier: the walking distance on its map, not the
    straight line (a frontier behind a wall is a whole detour away; chosen by the straight line,
    the nearest frontier was often a walk of a hundred steps or more round the house). Where
    the map knows no way there, the straight line doubled, plus 5 m: last, but still ordered."""
    field = navigator.walking_field(pose)
    out: dict[Frontier, float] = {}
    for f in fronts:
        d = field.at(f[0], f[1])
        out[f] = d if math.isfinite(d) else 2.0 * math.hypot(f[0] - pose.x, f[1] - pose.z) + 5.0
    return out


def in_view(pose: Pose, x: float, z: float) -> bool:
    """Whether a point on the floor plan lies within the camera's half-angle of view; the vertical
    one is used, the narrower for a landscape image (53 degrees across at THOR's 90 and 4:3)."""
    if math.hypot(x - pose.x, z - pose.z) < 1e-6:
        return True
    return abs(heading_error(pose.x, pose.z, pose.yaw, x, z)) <= HALF_VFOV


def first_time_here(places: list[tuple[float, float]], pose: Pose) -> bool:
    """Whether no place in ``places`` lies within 0.5 m of the pose; if so, the pose is added (a
    recovery done once per place)."""
    if any(math.hypot(pose.x - x, pose.z - z) < 0.5 for x, z in places):
        return False
    places.append((pose.x, pose.z))
    return True


class Explorer:
    """Frontier exploration for one episode: what the agent walks to when it needs to see more."""

    def __init__(self, agent: ExplorerAgent, moves: Moves) -> None:
        self.a = agent
        self.moves = moves
        self._frontier_goal: tuple[float, float] | None = None  # the frontier being walked to
        self._frontier_toward: tuple[float, float] | None = None  # ... and what it was chosen for
        self._floor_looks: list[tuple[float, float]] = []  # where the agent looked at the floor around it
        self._cleared: list[tuple[float, float]] = []  # where the agent cleared its map, shut in
        self._stuck: list[tuple[float, float]] = []  # frontiers whose walk was blocked before its first step
        self._passage_looks: list[tuple[float, float]] = []  # frontiers whose way the agent looked along
        self._gap_looks: list[tuple[float, float]] = []  # gaps (their middles) cleared and looked at, per look

    def _stuck_near(self, x: float, z: float) -> list[tuple[float, float]]:
        return [f for f in self._stuck if math.hypot(x - f[0], z - f[1]) < STUCK_RADIUS]

    def look_around(self) -> Generator[Action, Observation, None]:
        for _ in range(3):
            for _ in range(3):
                yield Action("RotateRight")

    def explore_once(self, toward: tuple[float, float] | None = None) -> SkillGen:
        """Walk towards the best frontier (nearest, or nearest to ``toward``); False when the
        map has none left."""
        a = self.a
        if a.config.pose_tolerance > 0 and a.navigator.shut_in(a.pose):
            unstuck = yield from self.clear_and_look_again()
            if unstuck:
                return True
        every = a.occupancy.frontier()
        fronts = [f for f in every if not a.frontier_failed(f[0], f[1])]
        uncertain = a.config.depth_noise_k > 0 or a.config.pose_tolerance > 0
        if not fronts:
            if toward is not None and uncertain:
                # no frontier left to walk to, and the object walked towards cut off on the map
                looked = yield from self.look_across_gap([toward])
                if looked:
                    return True
            if every and a.config.pose_tolerance > 0:
                # Given up on every frontier, each after plans that failed on the map of their
                # moment: with an uncertain pose that map can hold a wall drawn where the pose
                # jumped (a localiser's relocalisation puts the agent 0.1-0.3 m off for a while).
                # Look at the floor around from here, and give those frontiers another chance.
                looked = yield from self.look_at_the_floor_around()
                if looked:
                    a.forgive_frontiers()
                    return True
                # Looked at the floor here already: the map around may hold a pocket drawn while
                # the pose was off (every plan exhausts a handful of poses). Clear it and look
                # again (which forgives the frontiers too), once per place, before giving up.
                return (yield from self.clear_and_look_again())
            return False
        p = a.pose
        walk = frontier_walks(a.navigator, p, fronts)
        if toward is None:
            fronts.sort(key=lambda f: walk[f] - 0.1 * math.sqrt(f[2]))
        else:
            fronts.sort(key=lambda f: math.hypot(f[0] - toward[0], f[1] - toward[1]) + 0.5 * walk[f])
        # Keep walking to the frontier chosen last time while it is still one (walks are cut
        # into pieces of 24 steps; re-choosing after each piece swung between two far frontiers).
        # Not when heading for an object: there the best way in changes as the map grows.
        last = self._frontier_goal if toward is None and self._frontier_toward is None else None
        if last is not None:
            same = [f for f in fronts if math.hypot(f[0] - last[0], f[1] - last[1]) < 0.75]
            fronts = same[:1] + [f for f in fronts if f not in same[:1]]
        for x, z, size, ox, oz in fronts[:4]:
            # A doorway seen at an angle leaves a floor strip narrower than the lattice: then get
            # as close as the lattice allows and look from there.
            for radius in FRONTIER_RADII:
                plan = yield from planned_in_stages(a.navigator.budget, a.navigator.plan_to_point_stages(p, x, z, radius))
                if plan is not None:
                    break
            a.note(f"frontier ({x:.2f}, {z:.2f}) size {size}: "
                   + (f"no plan ({a.navigator.last_failure})" if plan is None else str(len(plan.actions))))
            if plan is None:
                a.fail_frontier(x, z)
                continue
            self._frontier_goal, self._frontier_toward = (x, z), toward
            if not in_view(a.pose, x, z):
                # The lattice walks sideways and backwards as cheaply as ahead, so a walk to a
                # frontier behind the camera maps nothing on the way and ends with a turn to look.
                # Face it first (the same turn, paid before the walk) and plan again from there:
                # what lies between shows while walking, and the search can end before arriving.
                yield from self.moves.turn_to(x, z)
                turned = yield from planned_in_stages(a.navigator.budget, a.navigator.plan_to_point_stages(a.pose, x, z, radius))
                if turned is None:
                    # The old plan's moves are relative to the old heading: never walk them from
                    # this one. The turn showed something new; the next call chooses again.
                    a.note(f"frontier ({x:.2f}, {z:.2f}): no plan after turning to it "
                           f"({a.navigator.last_failure})")
                    return True
                plan = turned
            start = a.pose
            ok = yield from self.moves.walk(plan.actions, limit=24)
            if blocked_in_place(ok, start, a.pose):
                # Blocked where it stood. The bump is on the map, but where the pose is off (a
                # localiser's error) it can land beside the cell the plan goes through, and cells
                # stood on stay free: the same plan then bumps again, step after step (dev-023-0
                # under the realistic profile: 378 blocked MoveAheads in a row). As navigate_to
                # gives up an object after 6 bumps, give up a frontier after STUCK_WALKS.
                self._stuck.append((x, z))
                near = self._stuck_near(x, z)
                if len(near) >= STUCK_WALKS:
                    a.note(f"frontier ({x:.2f}, {z:.2f}): blocked {STUCK_WALKS} times before a step; giving it up")
                    self._frontier_goal = None
                    self._stuck = [f for f in self._stuck if f not in near]
                    a.fail_frontier(x, z)
                    a.fail_frontier(x, z)  # twice: given up as unreachable (forgiven like the others)
                    a.stats["frontiers_blocked"] += 1
            if ok and math.hypot(a.pose.x - x, a.pose.z - z) <= radius + 0.25:
                self._frontier_goal = None
                a.fail_frontier(x, z, reached=True)  # reached: do not come back for it
                # and look at what was unexplored (or at the object the walk was for)
                yield from self.moves.turn_to(*(toward if toward is not None else (ox, oz)))
            return True
        if uncertain:
            looked = yield from self.look_along_passage(fronts[:4])
            if looked:
                return True
            # what the walk is for first (an object the map cuts off has no frontier near it)
            looked = yield from self.look_across_gap(([toward] if toward is not None else [])
                                                     + [(f[0], f[1]) for f in fronts[:4]])
            if looked:
                return True
        yield from self.look_at_the_floor_around()
        return True

    def look_along_passage(self, fronts: list[Frontier]) -> Generator[Action, Observation, bool]:
        """No frontier has a plan, on a map drawn from uncertain depth or pose: walk as far along
        the coarse way to one of them as the lattice allows and look along it, once per
        frontier (``planner.passage_look``: a corridor seen end-on from afar is drawn narrower
        than the robot). False where no frontier has such a way (or all were looked along)."""
        a = self.a
        for x, z, *_ in fronts:
            if any(math.hypot(x - px, z - pz) < 1.0 for px, pz in self._passage_looks):
                continue
            look = yield from planned_in_stages(a.navigator.budget, passage_look_point_stages(a.navigator, a.pose, x, z))
            if look is None:
                continue
            self._passage_looks.append((x, z))
            a.note(f"frontier ({x:.2f}, {z:.2f}): no plan, but the coarse map joins it; looking along the way "
                   f"at ({look.look_x:.2f}, {look.look_z:.2f}) from ({look.stand_x:.2f}, {look.stand_z:.2f}), "
                   f"a walk of {len(look.plan.actions)}")
            a.stats["passage_looks"] += 1
            yield from self.moves.walk(look.plan.actions)
            yield from self.sweep_floor_at(look.look_x, look.look_z)
            return True
        return False

    def sweep_floor_at(self, x: float, z: float) -> Generator[Action, Observation, None]:
        """Face the floor point (x, z), pitch the camera at it and turn 30 degrees each way (both
        walls of a passage, both sides of a gap), then back to the pitch the agent explores at."""
        a = self.a
        yield from self.moves.turn_to(x, z)
        horizon = a.pose.horizon
        yield from self.moves.set_horizon(a.navigator.horizon_toward(a.pose, x, 0.0, z, centred=True))
        for name in ("RotateLeft", "RotateRight", "RotateRight", "RotateLeft"):
            yield Action(name)
        yield from self.moves.set_horizon(horizon)

    def look_across_gap(self, places: list[tuple[float, float]]) -> Generator[Action, Observation, bool]:
        """No frontier has a plan and the coarse map joins none, on a map drawn from uncertain
        depth or pose: where a stretch of seen floor of a metre or less cuts one of ``places``
        (an object walked towards, the frontiers) off
        (``planner.gap_look``: a passage a little wider than the robot drawn shut), walk to its
        near end, forget the obstacles within ``CLEAR_M`` of it, look at it, and give the
        frontiers another chance. Up to ``GAP_LOOKS`` times per gap: a passage a few
        centimetres wider than the robot closes again on the map as the pose errs (dev-010-0:
        cleared on the way in, shut again on the way back). False where there is none (or all
        were looked at as often)."""
        a = self.a
        m = a.occupancy
        def given_up(gx: float, gz: float) -> bool:
            return sum(math.hypot(gx - px, gz - pz) < 0.5 for px, pz in self._gap_looks) >= GAP_LOOKS

        for x, z in places:
            look = yield from planned_in_stages(a.navigator.budget,
                                              gap_look_point_stages(a.navigator, a.pose, x, z, given_up))
            if look is None:
                continue
            gx, gz = look.middle
            self._gap_looks.append((gx, gz))
            a.note(f"({x:.2f}, {z:.2f}) cut off by {len(look.gap) * m.config.resolution:.2f} m of seen "
                   f"floor the map draws shut at ({gx:.2f}, {gz:.2f}); clearing it and looking from "
                   f"({look.stand_x:.2f}, {look.stand_z:.2f}), a walk of {len(look.plan.actions)}")
            a.stats["gap_looks"] += 1
            yield from self.moves.walk(look.plan.actions)
            for px, pz in look.gap:
                m.clear_around(px, pz, CLEAR_M)
            yield from self.sweep_floor_at(gx, gz)
            a.forgive_frontiers()
            return True
        return False

    def clear_and_look_again(self) -> Generator[Action, Observation, bool]:
        """Shut in on the map (no move leaves the pose, or every frontier given up where the
        floor was looked at already): clear the obstacles within 0.6 m and look round again,
        once per place; False where it was done here already. With an uncertain
        pose, what was seen and bumped while the pose had jumped can wall the agent in where the
        house is open (dev-061-0 under the realistic profile: stopped at step 1,434 of 3,486 with
        every goal "no plan"). As Nav2's clear-costmap recovery: what is really there comes back
        with the next frames."""
        a = self.a
        p = a.pose
        if not first_time_here(self._cleared, p):
            return False
        n = a.occupancy.clear_around(p.x, p.z, 0.6)
        a.note(f"shut in on the map at ({p.x:.2f}, {p.z:.2f}): cleared {n} obstacle cells around, looking again")
        for _ in range(12):
            yield Action("RotateRight")
        a.forgive_frontiers()
        return True

    def look_at_the_floor_around(self) -> Generator[Action, Observation, bool]:
        """No frontier has a plan: look down and turn around, once per place.

        At the usual pitch the camera sees no floor within about 0.9 m of the body, and the map
        assumes only 0.45 m around where the agent stood to be free; the ring between is unknown.
        Where the way out of a nook runs through that ring, no plan leads anywhere until the
        floor there is seen (dev-045-1 under a localiser's few centimetres of pose error: walled
        in at step 17 with 2,300 steps of budget left). Like Nav2's recovery behaviours (clear,
        spin, re-plan), a turn with the camera pitched down maps it; once per place, so an agent
        truly shut in still gives up."""
        a = self.a
        p = a.pose
        if not first_time_here(self._floor_looks, p):
            return False
        a.note(f"no frontier has a plan: looking at the floor around ({p.x:.2f}, {p.z:.2f})")
        horizon = p.horizon
        yield from self.moves.set_horizon(max(HORIZONS))
        for _ in range(11):
            yield Action("RotateRight")
        yield from self.moves.set_horizon(horizon)
        return True
