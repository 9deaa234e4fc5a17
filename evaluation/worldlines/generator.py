"""Project-driven, multi-day household traces over ProcTHOR houses (seeded, reproducible).

Each day: a morning routine, three sessions (morning, afternoon, evening), each running one
household *project*, members moving about between sessions (acting where the robot may not be),
and an evening routine. The world carries over from day to day, and so do open projects (a lost
item is searched for in the next session). The eight project types and the WorldLines memory
targets they exercise:

- tidy_up (object_location, preference): a stated place preference, then a request to move an item.
- fetch (planning_dependency, object_location): bring an item, often from the closed fridge; handoff.
- device_care (device_state, social_context): someone leaves a device on, reports it, asks for it off.
- lost_item (hidden_state): an item is moved while the robot is elsewhere; later it searches.
- house_check (object_location, device_state): the robot looks around every room.
- guest_visit (temporal_state, preference, social_context): a visit is scheduled (maybe rescheduled),
  a drink preference is stated (maybe changed).
- reminders (temporal_state, social_context): a reminder and a promise, the reminder delivered.
- storage (hidden_state, social_context): an item goes into a container, then is reported.
Routines (routine target) are the members' daily device habits near the robot's dock.
"""

from __future__ import annotations

import random
from typing import Any, Callable, cast

from evaluation.worldlines.trace import ROBOT, Trace, TraceBuilder, TraceMeta
from evaluation.worldlines.world import OFF, ON, HouseWorld, build_world
from memory.belief.events import Commitment
from household.house_data import load_house

MEMBERS = ("alice", "bob", "carol")
PROJECT_TYPES = ("tidy_up", "fetch", "device_care", "lost_item", "house_check", "guest_visit", "reminders", "storage")
MEMORY_TARGETS = ("object_location", "temporal_state", "device_state", "preference", "routine",
                  "planning_dependency", "hidden_state", "social_context")
SLOTS = (("morning", 8 * 3600), ("afternoon", 13 * 3600), ("evening", 18 * 3600))
DRINKS = ("coffee", "tea", "juice", "water", "cocoa")


def hhmm(t: float) -> str:
    return f"{int(t) % 86400 // 3600:02d}:{int(t) % 3600 // 60:02d}"


class _Household:
    """The scripted people and robot of one trace."""

    def __init__(self, world: HouseWorld, rng: random.Random, tag: str, members: list[str]) -> None:
        self.w, self.rng, self.members = world, rng, members
        self.b = TraceBuilder(world, rng, tag)
        devices = sorted(world.devices)
        by_room: dict[str, int] = {}
        for d in devices:
            by_room[world.room_of[d]] = by_room.get(world.room_of[d], 0) + 1
        self.dock = max(sorted(by_room), key=lambda r: by_room[r]) if by_room else sorted(world.rooms)[0]
        dock_devices = [d for d in devices if world.room_of[d] == self.dock]
        self.routines: list[dict[str, Any]] = [{"actor": m, "action": "set_device_state", "target": dock_devices[i % len(dock_devices)],
                          "value": ON, "minute": minute}
                         for i, (m, minute) in enumerate(zip(members, (6 * 60 + 50, 21 * 60 + 30)))] if dock_devices else []
        self.pending_search: list[tuple[str, str]] = []  # (member, item)
        for a in [ROBOT, *members]:
            world.actor_room[a] = self.dock if a == ROBOT else rng.choice(sorted(world.rooms))

    # ---- small skills -------------------------------------------------------------------
    def go(self, actor: str, room: str) -> None:
        if self.w.actor_room[actor] != room:
            self.b.act(actor, "navigate_to", room)

    def visible_items(self, room: str | None = None) -> list[str]:
        return sorted(o for o in self.w.mobiles if not self.w.hidden(o) and not self.w.location[o].startswith("held:")
                      and (room is None or self.w.room_of_entity(o) == room))

    def surfaces(self, room: str | None = None) -> list[str]:
        return sorted(r for r in self.w.receptacles if r not in self.w.containers
                      and (room is None or self.w.room_of[r] == room))

    def fetch(self, actor: str, obj: str, reason: str | None = None) -> bool:
        """Go to the item, open what hides it, pick it up, close again."""
        extra = {"reason": reason} if reason else {}
        room = self.w.room_of_entity(obj)
        if room is None:
            return False
        self.go(actor, room)
        if actor == ROBOT:
            self.b.look()
        box = self.w.location[obj] if self.w.hidden(obj) else None
        if box:
            self.b.act(actor, "open", box, **extra)
        ok = self.b.act(actor, "pick", obj, **extra).success
        if box:
            self.b.act(actor, "close", box, **extra)
        return ok

    def put(self, actor: str, obj: str, rec: str, reason: str | None = None) -> None:
        extra = {"reason": reason} if reason else {}
        self.go(actor, self.w.room_of[rec])
        closed = rec in self.w.containers and not self.w.open[rec]
        if closed:
            self.b.act(actor, "open", rec, **extra)
        self.b.act(actor, "place", rec, object=obj, **extra)
        if closed:
            self.b.act(actor, "close", rec, **extra)

    def free_hands(self, actor: str) -> None:
        """Put down whatever ``actor`` still holds (a failed handoff must not jam later projects)."""
        obj = self.w.held_by(actor)
        if obj is not None:
            spots = self.surfaces(self.w.actor_room[actor]) or self.surfaces()
            self.put(actor, obj, spots[0])

    def come_and_say(self, member: str, text: str, act: str, **kw) -> str:
        self.go(member, self.w.actor_room[ROBOT])
        return self.b.say(member, text, act, **kw).id

    # ---- projects -----------------------------------------------------------------------
    def tidy_up(self, m: str) -> None:
        items, spots = self.visible_items(), self.surfaces()
        obj = self.rng.choice(items)
        rec = self.rng.choice([s for s in spots if s != self.w.location[obj]])
        if self.rng.random() < 0.6:
            self.come_and_say(m, f"I like {obj} kept on {rec}", "preference", claims=((m, f"pref:place:{obj}", rec),))
        rid = self.come_and_say(m, f"Please put {obj} on {rec}", "request",
                                commitment=Commitment("request", ROBOT, f"put {obj} on {rec}", None, obj))
        if self.fetch(ROBOT, obj, rid):
            self.put(ROBOT, obj, rec, rid)

    def fetch_project(self, m: str) -> None:
        cold = [o for o in self.w.mobiles if self.w.hidden(o) and self.w.location[o] in self.w.containers]
        obj = self.rng.choice(sorted(cold)) if cold and self.rng.random() < 0.5 else self.rng.choice(self.visible_items())
        rid = self.come_and_say(m, f"Please bring me {obj}", "request",
                                commitment=Commitment("request", ROBOT, f"bring {obj}", None, obj))
        target_room = self.rng.choice(sorted(self.w.rooms))
        self.b.say(m, f"I'll be in {target_room}", "report")
        self.go(m, target_room)
        if self.fetch(ROBOT, obj, rid):
            self.go(ROBOT, target_room)
            self.b.act(ROBOT, "handoff", m, object=obj, reason=rid)
            spots = self.surfaces(target_room) or self.surfaces()
            self.put(m, obj, self.rng.choice(spots))

    def device_care(self, m: str) -> None:
        if not self.w.devices:
            return self.house_check(m)
        dev = self.rng.choice(sorted(self.w.devices))
        self.go(m, self.w.room_of[dev])
        if not self.w.power[dev]:
            self.b.act(m, "set_device_state", dev, value=ON)
        rid = self.come_and_say(m, f"I left {dev} on, please turn it off", "request", claims=((dev, "power", ON),),
                                commitment=Commitment("request", ROBOT, f"turn off {dev}", None, dev))
        self.go(ROBOT, self.w.room_of[dev])
        self.b.look()
        if self.w.power[dev]:
            self.b.act(ROBOT, "set_device_state", dev, value=OFF, reason=rid)

    def lost_item(self, m: str) -> None:
        obj = self.rng.choice(self.visible_items())
        here = self.w.room_of_entity(obj)
        away = [r for r in sorted(self.w.rooms) if r != here]
        self.go(ROBOT, self.rng.choice(away))  # busy elsewhere
        self.b.look()
        self.fetch(m, obj)
        room = self.rng.choice(sorted(r for r in self.w.rooms if r != self.w.actor_room[ROBOT]))
        spots = [r for r in self.w.receptacles if self.w.room_of[r] == room]
        if spots:
            self.put(m, obj, self.rng.choice(sorted(spots)))
        else:
            self.put(m, obj, self.rng.choice(self.surfaces()))
        self.pending_search.append((m, obj))

    def search(self, m: str, obj: str) -> None:
        rid = self.come_and_say(m, f"I can't find {obj}, please look for it", "request",
                                commitment=Commitment("request", ROBOT, f"find {obj}", None, obj))
        for room in sorted(self.w.rooms, key=lambda r: (r != self.w.room_of_entity(obj), self.rng.random())):
            self.go(ROBOT, room)
            self.b.look()
            box = self.w.location.get(obj)
            if self.w.room_of_entity(obj) == room:
                if self.w.hidden(obj):  # so obj is in a container: box is that container
                    self.b.act(ROBOT, "open", cast(str, box), reason=rid)
                    self.b.look()
                    self.b.act(ROBOT, "close", cast(str, box), reason=rid)
                break

    def house_check(self, m: str | None = None) -> None:
        for room in sorted(self.w.rooms):
            self.go(ROBOT, room)
            self.b.look()

    def guest_visit(self, m: str) -> None:
        day = int(self.b.t // 86400) + self.rng.randint(1, 3)
        due = day * 86400 + self.rng.choice((17, 18, 19)) * 3600 + self.rng.choice((0, 30)) * 60
        self.come_and_say(m, f"Our guest visit is scheduled for day {day} at {hhmm(due)}", "schedule",
                          commitment=Commitment("schedule", m, "guest visit", due, "guest_visit"))
        drink = self.rng.choice(DRINKS)
        self.come_and_say(m, f"I prefer to drink {drink}", "preference", claims=((m, "pref:drink", drink),))

    def reminders(self, m: str) -> None:
        due = self.b.t + 3600
        self.come_and_say(m, f"Remind me to water the plants at {hhmm(due)}", "reminder",
                          commitment=Commitment("reminder", ROBOT, "remind to water the plants", due, None))
        obj = self.rng.choice(self.visible_items())
        self.come_and_say(m, f"I'll put {obj} back tomorrow", "promise",
                          commitment=Commitment("promise", m, f"put back {obj}", self.b.t + 86400, obj))
        self.b.wait_until(due)
        self.go(ROBOT, self.w.actor_room[m])
        self.b.say(ROBOT, f"{m}, time to water the plants", "reminder")

    def storage(self, m: str) -> None:
        boxes = sorted(c for c in self.w.containers if self.w.room_of[c] in self.w.rooms)
        if not boxes:
            return self.tidy_up(m)
        box = self.rng.choice(boxes)
        room = self.w.room_of[box]
        if self.rng.random() < 0.5:
            self.go(ROBOT, room)
        items = self.visible_items(room) or self.visible_items()
        obj = self.rng.choice(items)
        self.fetch(m, obj)
        self.put(m, obj, box)
        self.come_and_say(m, f"I put {obj} in {box}", "report", claims=((obj, "location", box),))

    def wander(self) -> None:
        """Members move about and rearrange things, mostly out of the robot's sight."""
        for m in self.members:
            if self.rng.random() < 0.6:
                room = self.rng.choice(sorted(self.w.rooms))
                self.go(m, room)
                items, spots = self.visible_items(room), self.surfaces(room)
                if items and len(spots) > 1 and self.rng.random() < 0.7:
                    obj = self.rng.choice(items)
                    if self.b.act(m, "pick", obj).success:
                        self.b.act(m, "place", self.rng.choice([s for s in spots if s != self.w.location.get(obj)] or spots),
                                   object=obj)
                dev = [d for d in self.w.devices if self.w.room_of[d] == room]
                if dev and self.rng.random() < 0.3:
                    d = self.rng.choice(sorted(dev))
                    self.b.act(m, "set_device_state", d, value=OFF if self.w.power[d] else ON)

    def routine(self, day: int, which: int) -> None:
        if which >= len(self.routines) or self.rng.random() < 0.1:  # people skip a day now and then
            return
        r = self.routines[which]
        self.b.wait_until(day * 86400 + r["minute"] * 60 + self.rng.randint(-8, 8) * 60)
        self.go(r["actor"], self.dock)
        if self.w.power[r["target"]]:
            self.b.act(r["actor"], "set_device_state", r["target"], value=OFF)
        self.b.act(r["actor"], "set_device_state", r["target"], value=ON)
        self.b.wait_until(self.b.t + 45 * 60)
        self.b.act(r["actor"], "set_device_state", r["target"], value=OFF)


def generate_trace(house: dict, *, days: int, seed: int, house_file: str = "", house_index: int = -1,
                   n_members: int = 2) -> Trace:
    """A ``days``-long trace of one house; the same (house, days, seed) gives the same trace."""
    world = build_world(house)
    rng = random.Random(f"worldlines:{house.get('id')}:{seed}")
    members = list(MEMBERS[:n_members])
    tag = f"h{house_index}" if house_index >= 0 else "h"
    hh = _Household(world, rng, tag, members)
    initial = [list(a) for e in sorted(world.location) + sorted(world.open) + sorted(world.power)
               for a in world.state_atoms(e)]
    initial = [list(x) for x in dict.fromkeys(tuple(a) for a in initial)]
    sessions = []
    projects: dict[str, Callable[[str], None]] = {
        "tidy_up": hh.tidy_up, "fetch": hh.fetch_project, "device_care": hh.device_care, "lost_item": hh.lost_item,
        "house_check": hh.house_check, "guest_visit": hh.guest_visit, "reminders": hh.reminders, "storage": hh.storage}
    order = list(PROJECT_TYPES)
    for day in range(days):
        hh.b.session = f"d{day:02d}-early"
        hh.routine(day, 0)
        for slot, start in SLOTS:
            hh.b.wait_until(day * 86400 + start)
            hh.b.session = f"d{day:02d}-{slot}"
            begin = hh.b.t
            if day == 0 and slot == "morning":
                project = "house_check"
            else:
                project = order[(day * len(SLOTS) + SLOTS.index((slot, start))) % len(order)]
                if rng.random() < 0.3:
                    project = rng.choice(order)
            member = rng.choice(members)
            while hh.pending_search:
                hh.search(*hh.pending_search.pop(0))
            projects[project](member)
            for actor in (ROBOT, *members):
                hh.free_hands(actor)
            hh.go(ROBOT, hh.dock)
            sessions.append({"id": hh.b.session, "project": project, "start": begin, "end": hh.b.t})
            hh.b.session = f"d{day:02d}-{slot}-after"
            hh.wander()
        hh.b.session = f"d{day:02d}-late"
        hh.routine(day, 1)
    meta = TraceMeta(house_file, house_index, str(house.get("id", "")), seed, days, members, dict(world.rooms),
                     dict(world.room_of), sorted(set(world.types)), initial, hh.routines, hh.dock, sessions,
                     sorted(world.receptacles), sorted(world.containers), sorted(world.devices), sorted(world.mobiles))
    return Trace(meta, hh.b.events)


def generate_house_trace(houses_file: str, index: int, *, days: int, seed: int, data_dir: str | None = None) -> Trace:
    return generate_trace(load_house(houses_file, index, data_dir), days=days, seed=seed,
                          house_file=houses_file, house_index=index)


__all__ = ["MEMORY_TARGETS", "PROJECT_TYPES", "generate_house_trace", "generate_trace", "hhmm"]
