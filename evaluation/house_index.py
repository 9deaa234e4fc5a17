"""What the generator's goal builders know about one house at its start state, and how they
point at one object among several: by what it stands on ("the apple on the dining table"), the
room it is in ("the mug in the bedroom") or the furniture it is next to ("the lamp by the sofa"),
or as a group ("both mugs", "all the forks from the table").
"""

from __future__ import annotations

import math
import random
from typing import Any, Callable

from evaluation.instruction_text import Mention, noun_options, room_word
from household.assets import CONTAINER_TYPES
from sim_bridge.embedded.interactions import ObjectTable
from sim_bridge.embedded.objects import SimObject
from household.types import WorldState

# Furniture a person points things out by ("the lamp by the sofa").
LANDMARKS = ("Sofa", "Bed", "ArmChair", "TVStand", "Desk", "DiningTable", "Dresser", "Fridge", "Television",
             "CoffeeTable", "ShelvingUnit", "Toilet", "Sink", "Bathtub", "Window")
_NEAR_M = 1.0
_FAUCET_REACH_M = 1.0  # the oracle's (and THOR's) faucet-to-sink distance


class HouseIndex:
    """What the goal builders need to know about one house at its start state."""

    def __init__(self, table: ObjectTable, world: WorldState) -> None:
        self.table = table
        self.world = world
        self.by_type: dict[str, list[SimObject]] = {}
        for o in table.active():
            self.by_type.setdefault(o.type, []).append(o)
        self.types = set(self.by_type)
        self.room_type_count: dict[str, int] = {}
        for r in world.rooms:
            self.room_type_count[r.room_type] = self.room_type_count.get(r.room_type, 0) + 1

    def room_of(self, obj: SimObject):
        return self.world.room_of_point(obj.position[0], obj.position[2])

    def room_ids(self, *objs: SimObject) -> set[str]:
        return {r.id for r in (self.room_of(o) for o in objs) if r is not None}

    def unique_room_type(self, obj: SimObject) -> str | None:
        room = self.room_of(obj)
        return room.room_type if room is not None and self.room_type_count[room.room_type] == 1 else None

    def pickupable(self, type_name: str) -> list[SimObject]:
        return [o for o in self.by_type.get(type_name, []) if o.affords("pickupable")]

    def has(self, type_name: str, pred: Callable[[SimObject], bool] = lambda o: True) -> list[SimObject]:
        return [o for o in self.by_type.get(type_name, []) if pred(o)]

    def sink_with_faucet(self) -> bool:
        """A sink a faucet runs into (the oracle fills and washes there)."""
        return any(math.dist((s.position[0], s.position[2]), (f.position[0], f.position[2])) <= _FAUCET_REACH_M
                   for s in self.by_type.get("Sink", ()) for f in self.by_type.get("Faucet", ())
                   if f.affords("toggleable"))

    def noun(self, type_name: str, rng: random.Random) -> str:
        return rng.choice(noun_options(type_name, self.types))

    def parent(self, obj: SimObject) -> SimObject | None:
        return self.table.objects.get(obj.parent) if obj.parent else None

    def _landmark(self, obj: SimObject) -> SimObject | None:
        best = None
        for t in LANDMARKS:
            for o in self.by_type.get(t, ()):
                if o.id == obj.id or o.id == obj.parent:
                    continue
                d = _xz_gap(obj, o)
                if d <= _NEAR_M and (best is None or d < best[0]):
                    best = (d, o)
        return best[1] if best else None

    def reference(self, obj: SimObject, rng: random.Random, moving: bool) -> tuple[str, dict[str, Any]] | None:
        """(qualifier, selector) saying which of several same-type objects ``obj`` is, or None when
        nothing short picks it out. A moving object is pinned by id (its room changes); one that
        stays is pinned by room where the room says it, else by id."""
        others = [o for o in self.by_type.get(obj.type, []) if o.id != obj.id]
        options: list[tuple[str, dict[str, Any]]] = []
        pin_id = {"type": obj.type, "id": obj.id}
        parent = self.parent(obj)
        if parent is not None and not any((self.parent(o) or obj).type == parent.type for o in others if o.parent):
            prep = "in" if parent.type in CONTAINER_TYPES or parent.type in ("Drawer", "Cabinet") else "on"
            if moving and rng.random() < 0.4:
                prep = "from"  # "put the remote from the dresser on the table"
            options.append((f"{prep} the {self.noun(parent.type, rng)}", pin_id))
        room = self.room_of(obj)
        if room is not None and self.room_type_count[room.room_type] == 1 and not any(
                (r := self.room_of(o)) is not None and r.room_type == room.room_type for o in others):
            options.append((f"in the {room_word(room.room_type, rng)}",
                            pin_id if moving else {"type": obj.type, "room": room.room_type}))
        mark = self._landmark(obj)
        if mark is not None and not any((m := self._landmark(o)) is not None and m.type == mark.type for o in others):
            options.append((f"{rng.choice(('by', 'next to', 'near'))} the {self.noun(mark.type, rng)}", pin_id))
        return rng.choice(options) if options else None

    def mention(self, obj: SimObject, rng: random.Random, moving: bool,
                prefer_reference: float = 0.8) -> tuple[Mention, dict[str, Any], bool]:
        """How a goal names one object: (mention, selector, referenced). A unique object is "the
        X"; one of several gets a qualifier and a pin (usually), else "a X" and any will do."""
        noun = self.noun(obj.type, rng)
        if len(self.by_type.get(obj.type, [])) < 2:
            definite = not obj.affords("pickupable") or rng.random() < 0.7
            return Mention(obj.type, noun, definite=definite), {"type": obj.type}, False
        ref = self.reference(obj, rng, moving) if rng.random() < prefer_reference else None
        if ref is None:
            return Mention(obj.type, noun), {"type": obj.type}, False
        return Mention(obj.type, noun, qualifier=ref[0], definite=True), ref[1], True

    def group(self, type_name: str, rng: random.Random, objs: list[SimObject]) -> tuple[Mention, dict[str, Any]] | None:
        """A count mention over two or three of ``objs``: "both", "two", "a couple of", "all the
        ... from the table" (pinned to exactly those ids)."""
        if len(objs) < 2:
            return None
        noun = self.noun(type_name, rng)
        if noun in ("keys", "lettuce", "bread", "toilet paper", "salt", "pepper"):
            return None
        total = len(self.by_type.get(type_name, []))
        by_parent: dict[str, list[SimObject]] = {}
        for o in objs:
            if o.parent:
                by_parent.setdefault(o.parent, []).append(o)
        forms: list[tuple[Mention, dict[str, Any]]] = []
        if total == len(objs) and total in (2, 3):
            forms.append((Mention(type_name, noun, total, "both" if total == 2 else "all three"),
                          {"type": type_name, "count": total}))
        for pid, group in by_parent.items():
            parent = self.table.objects[pid]
            same_kind = [o for o in self.by_type.get(type_name, []) if o.parent == pid]
            if 2 <= len(group) <= 3 and len(same_kind) == len(group):
                prep = "in" if parent.type in CONTAINER_TYPES else "on"
                src = rng.choice(("from", prep))
                forms.append((Mention(type_name, noun, len(group), "all the",
                                      qualifier=f"{src} the {self.noun(parent.type, rng)}"),
                               {"type": type_name, "ids": sorted(o.id for o in group), "count": len(group)}))
        n = rng.choice((2, 2, 3)) if len(objs) >= 3 else 2
        quant = {2: rng.choice(("two", "a couple of")), 3: "three"}[n]
        forms.append((Mention(type_name, noun, n, quant), {"type": type_name, "count": n}))
        return rng.choice(forms)


def _xz_gap(a: SimObject, b: SimObject) -> float:
    """Horizontal gap between two boxes (0 when they overlap), ignoring rotation."""
    dx = max(abs(a.position[0] - b.position[0]) - (a.size[0] + b.size[0]) / 2.0, 0.0)
    dz = max(abs(a.position[2] - b.position[2]) - (a.size[2] + b.size[2]) / 2.0, 0.0)
    return math.hypot(dx, dz)
