"""A ProcTHOR house as a symbolic household world, and the deterministic WorldLines executor.

The trace generator does not need poses or rendering, only what the memory questions are about:
which receptacle each small object rests on (or who holds it), which containers are open, which
devices are on, and which room everyone is in. Entities get readable, stable names
("mug_2", "countertop_1"): the type in lower case and a 1-based index in sim-id order, so the
same house always yields the same names.

The action space is WorldLines': navigate_to, inspect, pick, place, open, close,
set_device_state, handoff. ``execute`` checks preconditions (same room, free hand, reachable
because not shut in a closed container, ...) and returns the effects as state atoms; a failed
precondition is an unsuccessful step with a message (execution feedback), never an exception.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from household.assets import default_catalog
from sim_bridge.embedded.house_geometry import parse_layout
from sim_bridge.embedded.objects import build_objects
from household.types import point_in_polygon
from memory.belief.effects import CLOSED, HELD_PREFIX, OFF, ON, OPEN, held_location

ACTIONS = ("navigate_to", "inspect", "pick", "place", "open", "close", "set_device_state", "handoff")


@dataclass
class Outcome:
    success: bool
    error: str = ""
    effects: list[tuple[str, str, str]] = field(default_factory=list)
    room: str | None = None
    observers_rooms: tuple[str, ...] = ()


@dataclass
class HouseWorld:
    house_id: str
    rooms: dict[str, str]  # room name -> THOR room type
    room_of: dict[str, str]  # static entity (furniture, device) -> room name
    types: dict[str, str]
    sim_ids: dict[str, str]
    receptacles: set[str]
    containers: set[str]  # openable receptacles: contents hidden while closed
    devices: set[str]
    mobiles: set[str]
    location: dict[str, str] = field(default_factory=dict)  # mobile -> receptacle | "held:<actor>"
    open: dict[str, bool] = field(default_factory=dict)
    power: dict[str, bool] = field(default_factory=dict)
    actor_room: dict[str, str] = field(default_factory=dict)

    def copy(self) -> "HouseWorld":
        return copy.deepcopy(self)

    def room_of_entity(self, entity: str) -> str | None:
        """Where an entity is now: furniture from the map, a small object via its receptacle or holder."""
        if entity in self.room_of:
            return self.room_of[entity]
        loc = self.location.get(entity)
        if loc is None:
            return None
        if loc.startswith(HELD_PREFIX):
            return self.actor_room.get(loc[5:])
        return self.room_of.get(loc)

    def hidden(self, entity: str) -> bool:
        """Inside a closed container (not visible until someone opens it)."""
        loc = self.location.get(entity, "")
        return loc in self.containers and not self.open.get(loc, False)

    def held_by(self, actor: str) -> str | None:
        for obj, loc in self.location.items():
            if loc == held_location(actor):
                return obj
        return None

    def state_atoms(self, entity: str) -> list[tuple[str, str, str]]:
        out = []
        if entity in self.location:
            out.append((entity, "location", self.location[entity]))
        if entity in self.open:
            out.append((entity, "open", OPEN if self.open[entity] else CLOSED))
        if entity in self.power:
            out.append((entity, "power", ON if self.power[entity] else OFF))
        return out

    def visible_in(self, room: str) -> tuple[list[str], list[tuple[str, str, str]]]:
        """What someone looking around ``room`` sees: receptacles in view and the atoms they show."""
        scope = sorted(r for r in self.receptacles if self.room_of.get(r) == room
                       and not (r in self.containers and not self.open.get(r, False)))
        atoms = [(o, "location", self.location[o]) for o in sorted(self.mobiles) if self.location.get(o) in scope]
        for ent in sorted(e for e, r in self.room_of.items() if r == room):
            if ent in self.open:
                atoms.append((ent, "open", OPEN if self.open[ent] else CLOSED))
            if ent in self.power:
                atoms.append((ent, "power", ON if self.power[ent] else OFF))
        return scope, atoms

    # ---- the executor ---------------------------------------------------------------------
    def execute(self, actor: str, action: str, target: str, args: dict | None = None) -> Outcome:
        args = args or {}
        here = self.actor_room.get(actor)
        if action not in ACTIONS:
            return Outcome(False, f"unknown action {action!r}", room=here)
        if action == "navigate_to":
            if target not in self.rooms:
                return Outcome(False, f"navigate_to: no room {target!r}", room=here)
            self.actor_room[actor] = target
            return Outcome(True, room=target, observers_rooms=(here or target, target))
        if action == "handoff":
            return self._handoff(actor, target, here)
        where = self.room_of_entity(target)
        if where is None:
            return Outcome(False, f"{action}: unknown entity {target!r}", room=here)
        if where != here:
            return Outcome(False, f"{action}: {target} is in {where}, {actor} is in {here}", room=here)
        if action == "inspect":
            return Outcome(True, room=here)
        if action == "pick":
            if target not in self.mobiles:
                return Outcome(False, f"pick: {target} cannot be picked up", room=here)
            if self.held_by(actor):
                return Outcome(False, f"pick: {actor} already holds {self.held_by(actor)}", room=here)
            if self.hidden(target) or self.location[target].startswith(HELD_PREFIX):
                return Outcome(False, f"pick: {target} is not reachable (closed container or held)", room=here)
            self.location[target] = held_location(actor)
            return Outcome(True, effects=[(target, "location", held_location(actor))], room=here)
        if action == "place":
            obj = args.get("object") or self.held_by(actor)
            if obj is None or self.location.get(obj) != held_location(actor):
                return Outcome(False, f"place: {actor} holds nothing to place", room=here)
            if target not in self.receptacles:
                return Outcome(False, f"place: {target} is not a receptacle", room=here)
            if target in self.containers and not self.open.get(target, False):
                return Outcome(False, f"place: {target} is closed", room=here)
            self.location[obj] = target
            return Outcome(True, effects=[(obj, "location", target)], room=here)
        if action in ("open", "close"):
            if target not in self.open:
                return Outcome(False, f"{action}: {target} cannot be opened", room=here)
            want = action == "open"
            if self.open[target] == want:
                return Outcome(False, f"{action}: {target} is already {OPEN if want else CLOSED}", room=here)
            self.open[target] = want
            return Outcome(True, effects=[(target, "open", OPEN if want else CLOSED)], room=here)
        if action == "set_device_state":
            value = args.get("value")
            if target not in self.power or value not in (ON, OFF):
                return Outcome(False, f"set_device_state: {target} is not a device or value {value!r} is not on/off", room=here)
            self.power[target] = value == ON
            return Outcome(True, effects=[(target, "power", value)], room=here)
        return Outcome(False, f"{action}: not handled", room=here)

    def _handoff(self, actor: str, target: str, here: str | None) -> Outcome:
        """Give the held object to another actor in the same room."""
        obj = self.held_by(actor)
        if obj is None or target not in self.actor_room or self.actor_room[target] != here:
            return Outcome(False, f"handoff: {actor} holds nothing or {target} is not in {here}", room=here)
        if self.held_by(target):
            return Outcome(False, f"handoff: {target}'s hands are full", room=here)
        self.location[obj] = held_location(target)
        return Outcome(True, effects=[(obj, "location", held_location(target))], room=here)


def build_world(house: dict) -> HouseWorld:
    """The symbolic world of a ProcTHOR house (entity names are stable for a given house)."""
    layout = parse_layout(house)
    built = build_objects(house, default_catalog())
    # The symbolic world keeps the house file's containment: what the embedded simulator puts in
    # a dresser's derived drawers (sim_bridge/embedded/levels.py) is in the dresser here, and the
    # drawers are no entities of their own.
    objs = {sid: o for sid, o in built.items() if o.part_of is None}
    for o in objs.values():
        if o.parent is not None and built[o.parent].part_of is not None:
            o.parent = built[o.parent].part_of
    counts: dict[str, int] = {}
    rooms: dict[str, str] = {}
    room_name: dict[str, str] = {}
    for r in sorted(layout.rooms, key=lambda r: r.id):
        base = r.room_type.lower()
        counts[base] = counts.get(base, 0) + 1
        room_name[r.id] = f"{base}_{counts[base]}"
        rooms[room_name[r.id]] = r.room_type

    def room_at(x: float, z: float) -> str | None:
        for r in layout.rooms:
            if point_in_polygon(x, z, list(r.polygon)):
                return room_name[r.id]
        return None

    names: dict[str, str] = {}
    counts = {}
    for sid in sorted(objs):
        t = objs[sid].type.lower()
        counts[t] = counts.get(t, 0) + 1
        names[sid] = f"{t}_{counts[t]}"
    w = HouseWorld(str(house.get("id", "")), rooms, {}, {}, {}, set(), set(), set(), set())
    for sid, o in objs.items():
        n = names[sid]
        w.types[n], w.sim_ids[n] = o.type, sid
        room = room_at(float(o.position[0]), float(o.position[2]))
        if o.affords("pickupable"):
            continue
        if room is None:
            continue
        if o.affords("receptacle"):
            w.receptacles.add(n)
            w.room_of[n] = room
        if o.affords("openable"):
            w.open[n] = bool(o.is_open)
            w.room_of[n] = room
            if o.affords("receptacle"):
                w.containers.add(n)
        if o.affords("toggleable"):
            w.power[n] = bool(o.is_toggled)
            w.devices.add(n)
            w.room_of[n] = room
    for sid, o in objs.items():
        if o.affords("pickupable") and o.parent in names and names[o.parent] in w.receptacles:
            w.mobiles.add(names[sid])
            w.location[names[sid]] = names[o.parent]
    return w
