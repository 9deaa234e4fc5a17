"""The oracle: a privileged planner that solves LongAct episodes from ground truth.

It proves an episode feasible and gives the reference step counts other planners are measured
against. It reads the simulator's object table (privileged) and the episode checklist, then works
item by item: the first unsatisfied item (in an order where state changes such as slicing,
cooking, filling and cleaning precede placement, and holding comes last) is turned into a short
script of skills (fetch, place, toggle, ...), each compiled to atomic actions with lattice navigation (weighted A*,
at most ``search_weight`` times the step-optimal path). After every failed action it re-plans from the new ground truth.
Where no pose of the lattice sees an object within reach, a walk may end with one move shorter
than a step (THOR's ``moveMagnitude``) onto a sliver of floor between furniture.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterator, cast

from household.checklist import ChecklistItem, ItemResult, evaluate_checklist
from household.interactions import setter
from planner.lattice_nav import MOVES, LatticeState, plan_lattice
from privileged.reach_region import reachable_region, walking_distance_to
from household.assets import SLICER_TYPES
from household.receptacle_filters import ORACLE_PUT_DOWN, ORACLE_ROOM_SURFACE
from sim_bridge.embedded.collision import CollisionMap
from sim_bridge.embedded.env import AgentPose, EmbeddedEnvironment
from sim_bridge.embedded.interactions import ObjectTable, find_placement
from sim_bridge.embedded.objects import SimObject
from household.types import Action

# Which unsatisfied item is worked on first: state changes before placements, holding last.
_PRIORITY = {"isSliced": 0, "isCooked": 1, "isFilledWithLiquid": 2, "isDirty": 3, "inReceptacle": 4,
             "inRoom": 5, "isToggled": 6, "isOpen": 7, "isHeld": 8}
_HORIZONS = (30.0, 0.0, 60.0, -30.0)
_MAX_SOLVES_PER_ITEM = 3
_MAX_UNREACHABLE_PER_ITEM = 8
# Lengths of the one shorter move that may end a walk (THOR's MoveAhead takes a moveMagnitude):
# where the floor within reach of an object is a sliver between furniture a few centimetres
# across, no pose of the 0.25 m lattice lies on it, but a short step from one does.
_FINISHING_STEPS = tuple(0.025 * k for k in range(1, 10))


class OracleError(RuntimeError):
    """The oracle could not make progress; the message says on which item and why."""


class _Unreachable(Exception):
    """No pose sees and reaches this object; the oracle then tries another candidate."""

    def __init__(self, object_id: str) -> None:
        super().__init__(object_id)
        self.object_id = object_id


class OraclePlanner:
    """Agent interface: ``reset(episode, observation)`` then ``act(observation)`` until Stop."""

    name = "oracle"
    privileged = True

    def __init__(self, env: EmbeddedEnvironment, max_replans: int = 20, search_weight: float = 1.5) -> None:
        self.env = env
        self.search_weight = search_weight
        self.max_replans = max_replans
        self.checklist: list[ChecklistItem] = []
        self._script: Iterator[Action] | None = None
        self.replans = 0
        self.notes: list[str] = []
        self._failures: dict[str, int] = {}
        self.given_up: dict[int, str] = {}  # checklist index -> why the oracle could not do it
        self._solved: dict[int, int] = {}  # checklist index -> times achieved (undone in between)
        self._unreachable: dict[int, int] = {}  # checklist index -> unreachable objects met
        self.crouched_for: list[str] = []  # objects only a crouched pose saw (low shelves, drawers)

    def reset(self, episode: Any, observation: Any = None) -> None:
        self.checklist = list(episode.checklist)
        self._script = self._run()
        self.replans = 0
        self.notes = []
        self._failures = {}
        self._solved = {}
        self._unreachable = {}
        self.given_up = {}
        self.crouched_for = []

    def act(self, observation: Any) -> Action:
        if observation is not None and not observation.feedback.success and observation.feedback.action:
            self.replans += 1
            self._last_failed = getattr(self, "_last_target", None)
            if self._last_failed:
                self._failures[self._last_failed] = self._failures.get(self._last_failed, 0) + 1
            self.notes.append(f"replan after {observation.feedback.action}: {observation.feedback.error}")
            if self.replans > self.max_replans:
                raise OracleError(f"gave up after {self.max_replans} replans; last error: {observation.feedback.error}")
            self._script = self._run()
        try:
            action = next(cast(Iterator[Action], self._script))  # made by reset()
        except StopIteration:
            return Action("Stop")
        self._last_target = action.object_id
        return action

    @property
    def _table(self) -> ObjectTable:
        """The simulator's object table (privileged); set, since the env was reset before the oracle runs."""
        return cast(ObjectTable, self.env.table)

    def _usable(self, obj: SimObject) -> bool:
        """Objects an action failed on twice are avoided (e.g. an unreachable or stuck one)."""
        return self._failures.get(obj.id, 0) < 2

    # ---- the script -------------------------------------------------------------------------
    def _run(self) -> Iterator[Action]:
        solved: tuple[int, ItemResult] | None = None  # the item just worked on, with its before-result
        while True:
            result = evaluate_checklist(self.checklist, self.env.ground_truth())
            if solved is not None:
                # Judge the last item on this same read of the world (nothing acted in between).
                self._judge(*solved, result.items[solved[0]])
                solved = None
            todo = [(i, r) for i, r in enumerate(result.items) if not r.satisfied and i not in self.given_up]
            if not todo:
                return
            todo.sort(key=lambda ir: (_PRIORITY.get(self.checklist[ir[0]].predicate, 9), ir[0]))
            index, item_result = todo[0]
            item = self.checklist[index]
            if self._solved.get(index, 0) >= _MAX_SOLVES_PER_ITEM:
                # Undone again and again by other items (two items wanting one object): stop
                # the ping-pong rather than burn the step budget.
                self.given_up[index] = f"undone {_MAX_SOLVES_PER_ITEM} times by other items"
                self.notes.append(f"gave up on checklist[{index}]: {self.given_up[index]}")
                continue
            protected = {oid for r in result.items if r.satisfied for oid in r.object_ids}
            try:
                yield from self._solve_item(item, item_result, protected)
            except _Unreachable as exc:
                self.notes.append(f"unreachable: {exc.object_id}")
                self._failures[exc.object_id] = 2
                self._unreachable[index] = self._unreachable.get(index, 0) + 1
                if self._unreachable[index] >= _MAX_UNREACHABLE_PER_ITEM:
                    # Every lookup skips unreachable objects, so this only bounds the search.
                    self.given_up[index] = f"{_MAX_UNREACHABLE_PER_ITEM} objects it needs are out of reach"
                    self.notes.append(f"gave up on checklist[{index}]: {self.given_up[index]}")
                continue
            except OracleError as exc:
                # This item cannot be done here; the others may still be (the generator drops
                # the goals the oracle gives up on).
                self.given_up[index] = str(exc)
                self.notes.append(f"gave up on checklist[{index}]: {exc}")
                continue
            solved = (index, item_result)

    def _judge(self, index: int, before: ItemResult, after: ItemResult) -> None:
        """Count a success, or give the item up when solving it changed nothing."""
        if after.satisfied:
            self._solved[index] = self._solved.get(index, 0) + 1
        if after.satisfied_units <= before.satisfied_units:
            self.given_up[index] = "no progress"
            self.notes.append(f"gave up on checklist[{index}]: no progress ({self.checklist[index].describe()})")

    def _solve_item(self, item: ChecklistItem, res: ItemResult, protected: set[str]) -> Iterator[Action]:
        table = self._table
        done = set(res.object_ids)
        # Objects serving another satisfied item are never taken from it.
        cands = [table.objects[c] for c in res.candidate_ids
                 if c not in done and c not in protected and table.objects[c].active and self._usable(table.objects[c])]
        if not cands:
            raise OracleError(f"no candidate object left: {self._why_no_candidate(res, done, protected)} "
                              f"({item.describe()})")
        # Prefer objects in the open, then the nearest.
        cands.sort(key=lambda o: (table.enclosed_by_closed(o) is not None, self._distance(o)))
        obj = cands[0]
        pred, value = item.predicate, item.expected
        if pred == "inReceptacle":
            targets = [table.objects[t] for t in res.target_ids if table.objects[t].active and self._usable(table.objects[t])]
            targets = [t for t in targets if find_placement(obj, t, table.children(t.id)) is not None or t.id == obj.parent]
            if not targets:
                raise OracleError(f"no receptacle with room for {obj.id} among {res.target_ids}")
            targets.sort(key=lambda t: math.dist(obj.position, t.position))
            yield from self._fetch(obj)
            yield from self._place(obj, targets[0])
        elif pred == "inRoom":
            rec = self._receptacle_in_room(obj, str(value))
            yield from self._fetch(obj)
            yield from self._place(obj, rec)
        elif pred == "isSliced":
            knife = self._held_type(SLICER_TYPES) or self._nearest(
                lambda o: o.type in SLICER_TYPES and o.affords("pickupable"))
            if knife is None:
                raise OracleError(f"no knife to slice {obj.id}")
            if self._table.held != knife.id:
                yield from self._fetch(knife)
            yield from self._interact(obj, "SliceObject")
        elif pred == "isCooked":
            # A toaster for what it takes (bread slices: "toast"), else a microwave.
            heater = self._nearest(lambda o: o.type == "Toaster" and table.catalog.accepts("Toaster", obj.type)
                                   and find_placement(obj, o, table.children(o.id)) is not None) or self._nearest(
                lambda o: o.type == "Microwave")
            if heater is None:
                raise OracleError(f"no microwave or toaster to cook {obj.id}")
            yield from self._fetch(obj)
            yield from self._place(obj, heater)
            if heater.affords("openable") and heater.is_open:
                yield from self._interact(heater, "CloseObject")
            yield from self._set_flag(heater, "isToggled", True)
            yield from self._set_flag(heater, "isToggled", False)
        elif pred == "isFilledWithLiquid" and value == "wine":
            bottle = self._held_type(frozenset({"WineBottle"})) or self._nearest(
                lambda o: o.type == "WineBottle" and o.affords("pickupable") and o.id != obj.id)
            if bottle is None:
                raise OracleError(f"no wine bottle to pour into {obj.id}")
            if table.held == obj.id:
                yield from self._free_hand()
            yield from self._fetch(bottle)
            yield from self._interact(obj, "FillObjectWithLiquid", {"fillLiquid": "wine"})
        elif pred == "isFilledWithLiquid" and not obj.affords("pickupable"):
            # Watering a plant: fill a vessel at the sink (or coffee machine), then pour from it.
            liquid = value if isinstance(value, str) else "water"
            held = table.objects[table.held] if table.held else None
            vessel = held if held is not None and held.is_filled and held.fill_liquid == liquid else None
            if vessel is None:
                vessel = self._nearest(lambda o: o.affords("fillable") and o.affords("pickupable")
                                       and o.id not in protected and (not o.is_filled or o.fill_liquid == liquid)
                                       and table.enclosed_by_closed(o) is None)
                if vessel is None:
                    raise OracleError(f"nothing to carry {liquid} to {obj.id} in")
                if not (vessel.is_filled and vessel.fill_liquid == liquid):
                    yield from self._fill_at_station(vessel, liquid)
            yield from self._fetch(vessel)
            yield from self._interact(obj, "FillObjectWithLiquid", {"fillLiquid": liquid})
        elif pred in ("isFilledWithLiquid", "isDirty"):
            yield from self._fill_at_station(obj, value if isinstance(value, str) else "water")
        elif pred == "isHeld":
            if value:
                yield from self._fetch(obj)
            elif table.held == obj.id:
                yield from self._free_hand()
        elif setter(pred, value) is not None:  # one interaction on the object (isOpen, isToggled, ...)
            yield from self._set_flag(obj, pred, bool(value))
        else:
            raise OracleError(f"the oracle has no recipe for predicate {pred!r}")

    def _fill_at_station(self, obj: SimObject, liquid: str) -> Iterator[Action]:
        """Put obj under a running faucet (water; also washes it) or in a running coffee machine."""
        if liquid == "coffee":
            station = self._nearest(lambda o: o.type == "CoffeeMachine")
            switch = station
        else:
            station = self._nearest(lambda o: o.type == "Sink" and self._faucet_for(o) is not None)
            switch = self._faucet_for(station) if station else None
        if station is None or switch is None:
            raise OracleError(f"no reachable {'coffee machine' if liquid == 'coffee' else 'sink with a faucet'} "
                              f"for {obj.id}")
        if find_placement(obj, station, self._table.children(station.id)) is None:
            yield from self._clear_station(station, obj)
        yield from self._fetch(obj)
        yield from self._place(obj, station)
        if switch.is_toggled:
            yield from self._set_flag(switch, "isToggled", False)
        yield from self._set_flag(switch, "isToggled", True)
        yield from self._set_flag(switch, "isToggled", False)

    def _clear_station(self, station: SimObject, obj: SimObject) -> Iterator[Action]:
        """Make room for obj in a full sink or coffee machine: take out, one at a time, what no
        satisfied item needs there (a bowl washed for an earlier item, left in the sink, kept
        the pot of a later one out) and put it down elsewhere. Nothing when nothing may go."""
        table = self._table
        result = evaluate_checklist(self.checklist, self.env.ground_truth())
        placed = {oid for item, r in zip(self.checklist, result.items) if r.satisfied
                  and item.predicate in ("inReceptacle", "inRoom") for oid in r.object_ids}
        for child in sorted(table.children(station.id), key=lambda c: -float(c.size.prod())):
            if find_placement(obj, station, table.children(station.id)) is not None:
                return
            if child.id in placed or not child.affords("pickupable") or not self._usable(child):
                continue
            self.notes.append(f"took {child.id} out of {station.id} to make room for {obj.id}")
            yield from self._fetch(child)
            yield from self._free_hand()

    def _why_no_candidate(self, res: ItemResult, done: set[str], protected: set[str]) -> str:
        """Why every object the item's selector matches is ruled out, for the generator's
        infeasibility counts: out of reach, or taken by another satisfied item."""
        table = self._table
        rest = [c for c in res.candidate_ids if c not in done]
        if not rest:
            return "no matching object in the house"
        if all(not table.objects[c].active for c in rest):
            return "every matching object is gone (sliced)"
        if any(not self._usable(table.objects[c]) for c in rest):
            return "the matching objects are out of reach or failed twice"
        if all(c in protected for c in rest):
            return "the matching objects serve other items"
        return "no usable matching object"

    def report_extra(self) -> dict[str, Any]:
        """What the runner adds to the episode report: replans and the items given up."""
        return {"oracle_replans": self.replans, "oracle_given_up": {str(k): v for k, v in self.given_up.items()},
                "oracle_notes": self.notes[-20:], "oracle_crouched_for": list(self.crouched_for)}

    # ---- skills, also driven one by one by ``worldmind audit houses --act`` ----------------------
    def fetch_script(self, obj: SimObject) -> Iterator[Action]:
        """Actions that walk to obj and pick it up (free the hand first, open its container);
        the caller steps the environment between them. OracleError when no pose sees and
        reaches obj."""
        try:
            yield from self._fetch(obj)
        except _Unreachable as exc:
            raise OracleError(f"no free pose connected to the agent sees {exc.object_id} within reach") from None

    def place_script(self, obj: SimObject, receptacle: SimObject) -> Iterator[Action]:
        """Actions that carry the held obj to the receptacle and put it there."""
        try:
            yield from self._place(obj, receptacle)
        except _Unreachable as exc:
            raise OracleError(f"no free pose connected to the agent sees {exc.object_id} within reach") from None

    def _fetch(self, obj: SimObject) -> Iterator[Action]:
        if self._table.held == obj.id:
            return
        yield from self._free_hand()
        yield from self._interact(obj, "PickupObject")

    def _place(self, obj: SimObject, receptacle: SimObject) -> Iterator[Action]:
        if receptacle.must_be_open and not receptacle.is_open:
            yield from self._interact(receptacle, "OpenObject")
        yield from self._interact(receptacle, "PutObject")

    def _set_flag(self, obj: SimObject, flag: str, value: bool) -> Iterator[Action]:
        """Make THOR flag ``flag`` (isToggled, isOpen, ...) ``value`` with the interaction the
        table names for it (household.interactions.setter); nothing when it holds already."""
        # SimObject keeps THOR's flags as snake_case fields: isToggled -> is_toggled
        field = re.sub(r"(?<!^)(?=[A-Z])", "_", flag).lower()
        if not hasattr(obj, field):
            raise OracleError(f"the simulator keeps no {flag} ({field}) on {obj.id}")
        if bool(getattr(obj, field)) == value:
            return
        row = setter(flag, value)
        if row is None:
            raise OracleError(f"no interaction sets {flag} to {value}")
        yield from self._interact(obj, row.action)

    def _free_hand(self) -> Iterator[Action]:
        table = self._table
        if table.held is None:
            return
        held = table.objects[table.held]
        rec = self._nearest(lambda o: ORACLE_PUT_DOWN.admits(o.type, held.type, receptacle=o.affords("receptacle"),
                                                             catalog=table.catalog)
                            and find_placement(held, o, table.children(o.id)) is not None)
        if rec is None:
            raise OracleError(f"nowhere to put down {held.id}")
        yield from self._interact(rec, "PutObject")

    def _interact(self, obj: SimObject, name: str, args: dict[str, Any] | None = None) -> Iterator[Action]:
        box = self._table.enclosed_by_closed(obj)
        if box is not None:
            yield from self._interact(box, "OpenObject")
        yield from self._goto(obj)
        yield Action(name, obj.id, dict(args or {}))

    def _goto(self, obj: SimObject) -> Iterator[Action]:
        """Walk to a pose that sees obj within reach. Standing first; only where no standing pose
        does (a low shelf under a deep top, a bottom drawer, a box on the floor) a crouched one,
        as THOR's agent would: a Crouch at the end of that walk, a Stand at the end of the next
        walk to an object a standing pose sees."""
        env = self.env
        if env.interactable(obj.id):
            return
        # Lattice poses first, standing then crouched; only where none sees it, a walk that ends
        # with one shorter step (so every walk that worked before stays what it was).
        found = (self._search_pose(obj, standing=True) or self._search_pose(obj, standing=False)
                 or self._search_pose(obj, standing=True, finishing=True)
                 or self._search_pose(obj, standing=False, finishing=True))
        if found is None:
            raise _Unreachable(obj.id)
        actions, standing, target_h = found
        if not standing and obj.id not in self.crouched_for:
            self.crouched_for.append(obj.id)
        yield from actions
        if env.pose.standing != standing:
            yield Action("Stand" if standing else "Crouch")
        while abs(env.pose.horizon - target_h) > 1e-6:
            yield Action("LookDown" if target_h > env.pose.horizon else "LookUp")

    def _search_pose(self, obj: SimObject, standing: bool, finishing: bool = False
                     ) -> tuple[list[Action], bool, float] | None:
        """The lattice plan to a pose that sees obj within reach with the camera standing (or
        crouched): (moves and turns, standing, camera horizon there), or None when there is none.
        With ``finishing``, a lattice pose also counts when one straight move shorter than a
        lattice step (``_FINISHING_STEPS``, any of the four directions) takes the agent, over
        free floor, to such a pose; the plan then ends with that move."""
        env = self.env
        reach = env.config.reach - 0.05
        center = obj.position
        cx, cz = float(center[0]), float(center[2])
        grid = cast(CollisionMap, env.collision).free_grid()  # the env was reset
        near = reachable_region(env, obj, grid, reach)
        if near is None:
            return None
        field = walking_distance_to(near, grid)
        # The box distance in pure Python: this runs for every expanded lattice state.
        rot = obj.rotation()
        ux, uz = float(rot[0, 0]), float(rot[2, 0])  # local x axis in world (x, z)
        part_centers, part_sizes = obj.local_boxes()  # one box, or the runs of an L or C counter
        # THOR's range is measured from the agent's upright capsule (env.range_span): per box,
        # the height gap between the two is the same wherever the agent stands.
        lo, hi = env.range_span()
        parts = [(float(pc[0]), float(pc[2]), float(ps[0]) / 2.0, float(ps[2]) / 2.0,
                  max(float(center[1] + pc[1] - ps[1] / 2.0) - hi, lo - float(center[1] + pc[1] + ps[1] / 2.0), 0.0) ** 2)
                 for pc, ps in zip(part_centers, part_sizes)]
        horizon_of: dict[tuple[float, float, int], float] = {}
        finish_of: dict[tuple[float, float, int], tuple[str, float, float]] = {}

        def box_distance(x: float, z: float) -> float:
            dx, dz = x - cx, z - cz
            lx, lz = dx * ux + dz * uz, -dx * uz + dz * ux
            best = math.inf
            for px, pz, hx, hz, gap2 in parts:
                ex, ez = max(abs(lx - px) - hx, 0.0), max(abs(lz - pz) - hz, 0.0)
                best = min(best, ex * ex + ez * ez + gap2)
            return math.sqrt(best)

        def sees_from(x: float, z: float, yaw: float) -> float | None:
            """The camera horizon at which a pose within reach sees obj (None: none does)."""
            if box_distance(x, z) > reach:
                return None
            bearing = math.degrees(math.atan2(cx - x, cz - z))
            if abs((bearing - yaw + 180.0) % 360.0 - 180.0) > 50.0:
                return None
            for h in sorted(_HORIZONS, key=lambda h: abs(h - env.pose.horizon)):
                if env.is_visible(obj.id, AgentPose(x, z, yaw, h, standing)):
                    return h
            return None

        def finishing_move(s: LatticeState) -> tuple[str, float, float] | None:
            """(move, length, camera horizon at its end) of one short straight move from s to a
            pose that sees obj, over free floor; None when there is none."""
            if box_distance(s.x, s.z) > reach + env.config.move_step:
                return None
            for name, offset in MOVES.items():
                heading = math.radians(s.yaw + offset)
                dx, dz = math.sin(heading), math.cos(heading)
                for length in _FINISHING_STEPS:
                    x, z = s.x + dx * length, s.z + dz * length
                    if not grid.is_free(x, z):
                        break  # the floor ends here: longer moves in this direction end beyond it
                    h = sees_from(x, z, s.yaw)
                    if h is not None:
                        return name, length, h
            return None

        def is_goal(s: LatticeState) -> bool:
            key = (round(s.x, 4), round(s.z, 4), int(s.yaw))
            h = sees_from(s.x, s.z, s.yaw)
            if h is not None:
                horizon_of[key] = h
                return True
            if finishing:
                move = finishing_move(s)
                if move is not None:
                    finish_of[key] = move
                    return True
            return False

        def heuristic(s: LatticeState) -> float:
            straight = max(0.0, box_distance(s.x, s.z) - reach)
            walk = field.at(s.x, s.z) - field.slack
            return max(straight, walk if walk != math.inf else 1e6) / 0.25

        start = LatticeState(env.pose.x, env.pose.z, env.pose.yaw)
        plan = plan_lattice(start, grid.is_free, is_goal, heuristic,
                            env.config.move_step, env.config.rotate_step, max_expansions=40_000,
                            weight=self.search_weight)
        if plan is None:
            return None
        end = plan.states[-1] if plan.states else start
        key = (round(end.x, 4), round(end.z, 4), int(end.yaw))
        actions = [Action(name) for name in plan.actions]
        if key in finish_of:
            name, length, target_h = finish_of[key]
            actions.append(Action(name, args={"moveMagnitude": round(length, 4)}))
        else:
            target_h = horizon_of.get(key, env.pose.horizon)
        return actions, standing, target_h

    # ---- lookups ----------------------------------------------------------------------------
    def _distance(self, obj: SimObject) -> float:
        return math.hypot(obj.position[0] - self.env.pose.x, obj.position[2] - self.env.pose.z)

    def _nearest(self, pred) -> SimObject | None:
        cands = [o for o in self._table.active() if not o.is_picked_up and self._usable(o) and pred(o)]
        return min(cands, key=self._distance) if cands else None

    def _held_type(self, types: frozenset[str]) -> SimObject | None:
        held = self._table.held
        return self._table.objects[held] if held and self._table.objects[held].type in types else None

    def _faucet_for(self, sink: SimObject) -> SimObject | None:
        faucets = [o for o in self._table.active() if o.type == "Faucet"
                   and math.dist((o.position[0], o.position[2]), (sink.position[0], sink.position[2])) <= 1.0]
        return min(faucets, key=lambda f: math.dist(f.position, sink.position)) if faucets else None

    def _receptacle_in_room(self, obj: SimObject, room: str) -> SimObject:
        world = self.env.ground_truth()
        table = self._table
        best = None
        for o in table.active():
            if (not ORACLE_ROOM_SURFACE.admits_receptacle(o.type, receptacle=o.affords("receptacle"))
                    or o.is_picked_up or o.id == obj.id or not self._usable(o)):
                continue
            info = world.room_of_point(o.position[0], o.position[2])
            if info is None or (info.id != room if room.startswith("room|") else info.room_type != room):
                continue
            if not table.catalog.accepts(o.type, obj.type) or find_placement(obj, o, table.children(o.id)) is None:
                continue
            d = math.dist(obj.position, o.position)
            if best is None or d < best[0]:
                best = (d, o)
        if best is None:
            raise OracleError(f"no free receptacle in room {room!r} for {obj.id}")
        return best[1]
