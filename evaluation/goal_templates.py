"""Goal templates of the LongAct-style episode generator, per scenario, as data plus one builder
per goal kind.

A goal is one household sub-task ("put a book on the bedroom desk", "turn on the floor lamp",
"make a mug of coffee") that becomes one or two checklist items, a detailed sentence and a
concise fragment. The scenario tables say which object and receptacle types each scenario draws
from; the builders check a house can support a goal (objects present, affordances right, not
already true at the start).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from household.assets import CONTAINER_TYPES, SLICER_TYPES, sliced_type
from sim_bridge.embedded.interactions import ObjectTable, find_placement
from sim_bridge.embedded.objects import SimObject
from household.types import WorldState

SCENARIOS = ("Daily Cleaning & Tidying", "Work & Study Preparation", "Rest & Entertainment", "Dining & Kitchen")
SCENARIO_TITLES = {
    "Daily Cleaning & Tidying": "Tidy-up",
    "Work & Study Preparation": "Study setup",
    "Rest & Entertainment": "Movie night",
    "Dining & Kitchen": "Dinner prep",
}


@dataclass(frozen=True)
class ScenarioPool:
    place_objects: tuple[str, ...]
    place_targets: tuple[str, ...]
    toggle_on: tuple[str, ...] = ()
    toggle_off: tuple[str, ...] = ()
    open_types: tuple[str, ...] = ()
    slice_types: tuple[str, ...] = ()
    cook_types: tuple[str, ...] = ()
    fill: tuple[tuple[str, str], ...] = ()  # (type, liquid)
    bring_to_room: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ("place", "toggle", "open", "slice", "cook", "fill", "room")


POOLS: dict[str, ScenarioPool] = {
    "Daily Cleaning & Tidying": ScenarioPool(
        place_objects=("Book", "CellPhone", "RemoteControl", "KeyChain", "CreditCard", "Watch", "CD", "Newspaper",
                       "Pen", "Pencil", "AlarmClock", "TeddyBear", "BasketBall", "BaseballBat", "SprayBottle",
                       "TissueBox", "Cloth", "Statue", "Candle", "ToiletPaper", "SoapBottle", "Vase"),
        place_targets=("Dresser", "ShelvingUnit", "SideTable", "Box", "Desk", "TVStand", "CoffeeTable", "CounterTop",
                       "ToiletPaperHanger"),
        toggle_off=("FloorLamp", "DeskLamp", "Television", "Laptop", "Faucet", "CoffeeMachine"),
        bring_to_room=("Plate", "Bowl", "Mug", "Cup", "BasketBall", "Book", "Laptop"),
    ),
    "Work & Study Preparation": ScenarioPool(
        place_objects=("Laptop", "Book", "Pen", "Pencil", "CellPhone", "Mug", "AlarmClock", "CreditCard", "KeyChain",
                       "Newspaper", "Watch", "CD"),
        place_targets=("Desk", "DiningTable", "SideTable", "CoffeeTable", "Mug", "Cup", "Dresser"),
        toggle_on=("DeskLamp", "FloorLamp", "Laptop"),
        open_types=("Laptop", "Book"),
        fill=(("Mug", "coffee"), ("Cup", "coffee"), ("Cup", "water"), ("Mug", "water")),
    ),
    "Rest & Entertainment": ScenarioPool(
        place_objects=("RemoteControl", "Book", "Newspaper", "CellPhone", "TeddyBear", "BasketBall", "Laptop",
                       "Watch", "Cup", "Mug", "Bowl", "CD", "WineBottle"),
        place_targets=("Sofa", "ArmChair", "CoffeeTable", "Bed", "SideTable", "TVStand", "DiningTable"),
        toggle_on=("Television", "FloorLamp", "DeskLamp", "Candle"),
        open_types=("Book", "Laptop"),
        fill=(("Cup", "water"), ("Mug", "coffee"), ("WineBottle", "water")),
    ),
    "Dining & Kitchen": ScenarioPool(
        place_objects=("Apple", "Tomato", "Bread", "Potato", "Egg", "Lettuce", "Plate", "Bowl", "Fork", "Spoon",
                       "ButterKnife", "Knife", "Cup", "Mug", "SaltShaker", "PepperShaker", "WineBottle", "Pan",
                       "Pot", "Kettle", "Ladle", "Spatula"),
        place_targets=("DiningTable", "CounterTop", "Fridge", "Plate", "Bowl"),
        toggle_on=("CoffeeMachine",),
        slice_types=("Apple", "Tomato", "Bread", "Lettuce", "Potato"),
        cook_types=("Potato",),
        fill=(("Mug", "coffee"), ("Cup", "water"), ("Bowl", "water"), ("Pot", "water"), ("Kettle", "water")),
    ),
}


@dataclass
class Goal:
    kind: str
    items: list[dict[str, Any]]
    detailed: str
    concise: str
    rooms: set[str] = field(default_factory=set)  # room ids the goal touches
    types: set[str] = field(default_factory=set)  # object types it moves or changes
    targets: set[str] = field(default_factory=set)  # receptacle types it puts things on

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "items": self.items, "detailed": self.detailed, "concise": self.concise,
                "rooms": sorted(self.rooms), "types": sorted(self.types)}


def words(type_name: str) -> str:
    """'RemoteControl' -> 'remote control', 'TVStand' -> 'TV stand'."""
    parts = re.findall(r"[A-Z]{2,}(?=[A-Z][a-z]|$)|[A-Z]?[a-z]+|[A-Z]+", type_name)
    return " ".join(p if p.isupper() and len(p) > 1 else p.lower() for p in parts)


def preposition(receptacle_type: str) -> str:
    return "in" if receptacle_type in CONTAINER_TYPES or receptacle_type in ("Drawer",) else "on"


class HouseIndex:
    """What the goal builders need to know about one house at its start state."""

    def __init__(self, table: ObjectTable, world: WorldState) -> None:
        self.table = table
        self.world = world
        self.by_type: dict[str, list[SimObject]] = {}
        for o in table.active():
            self.by_type.setdefault(o.type, []).append(o)
        self.room_type_count: dict[str, int] = {}
        for r in world.rooms:
            self.room_type_count[r.room_type] = self.room_type_count.get(r.room_type, 0) + 1

    def room_of(self, obj: SimObject):
        return self.world.room_of_point(obj.position[0], obj.position[2])

    def unique_room_type(self, obj: SimObject) -> str | None:
        room = self.room_of(obj)
        return room.room_type if room is not None and self.room_type_count[room.room_type] == 1 else None

    def pickupable(self, type_name: str) -> list[SimObject]:
        return [o for o in self.by_type.get(type_name, []) if o.affords("pickupable")]

    def has(self, type_name: str, pred: Callable[[SimObject], bool] = lambda o: True) -> list[SimObject]:
        return [o for o in self.by_type.get(type_name, []) if pred(o)]


def _room_phrase(room_type: str | None) -> str:
    return f" in the {words(room_type)}" if room_type else ""


def build_place(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    obj_type = rng.choice(pool.place_objects)
    objs = index.pickupable(obj_type)
    targets_types = [t for t in pool.place_targets if t != obj_type and index.has(t, lambda o: o.affords("receptacle"))]
    if not objs or not targets_types:
        return None
    target_type = rng.choice(targets_types)
    if not index.table.catalog.accepts(target_type, obj_type):
        return None
    obj = rng.choice(objs)
    targets = [t for t in index.has(target_type) if t.affords("receptacle") and t.id != obj.parent]
    if not targets:
        return None
    target = rng.choice(targets)
    if find_placement(obj, target, index.table.children(target.id)) is None:
        return None  # does not fit (a laptop in a mug)
    target_room = index.unique_room_type(target)
    src_room = index.room_of(obj)
    if src_room is not None and index.room_of(target) is not None and src_room.id == index.room_of(target).id:
        # LongAct goals move things between rooms; keep same-room moves rare.
        if rng.random() < 0.7:
            return None
    target_sel: dict[str, Any] = {"type": target_type}
    if target_room:
        target_sel["room"] = target_room
    item = {"object": {"type": obj_type}, "predicate": "inReceptacle", "target": target_sel}
    src = f" from the {words(src_room.room_type)}" if src_room is not None else ""
    prep = preposition(target_type)
    return Goal("place", [item],
                f"Take a {words(obj_type)}{src} and put it {prep} the {words(target_type)}{_room_phrase(target_room)}.",
                f"{words(obj_type)} {prep} the {words(target_room) + ' ' if target_room else ''}{words(target_type)}",
                {r.id for r in (src_room, index.room_of(target)) if r is not None}, {obj_type}, {target_type})


def build_toggle(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    options = [(t, True) for t in pool.toggle_on] + [(t, False) for t in pool.toggle_off]
    if not options:
        return None
    t, value = rng.choice(options)
    objs = index.has(t, lambda o: o.affords("toggleable") and o.is_toggled != value)
    if not objs or len(index.has(t)) != len(objs):
        return None  # every instance must need the change, or "turn on the lamp" is ambiguous
    obj = rng.choice(objs)
    room = index.unique_room_type(obj)
    sel: dict[str, Any] = {"type": t}
    if room:
        sel["room"] = room
    verb = "on" if value else "off"
    return Goal("toggle", [{"object": sel, "predicate": "isToggled", "value": value}],
                f"Turn {verb} the {words(t)}{_room_phrase(room)}.", f"{words(t)} {verb}",
                {r.id for r in (index.room_of(obj),) if r is not None}, {t})


def build_open(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    if not pool.open_types:
        return None
    t = rng.choice(pool.open_types)
    objs = index.has(t, lambda o: o.affords("openable") and not o.is_open)
    if not objs:
        return None
    obj = rng.choice(objs)
    return Goal("open", [{"object": {"type": t}, "predicate": "isOpen", "value": True}],
                f"Open a {words(t)}.", f"a {words(t)} open", {r.id for r in (index.room_of(obj),) if r}, {t})


def build_slice(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    if not pool.slice_types or not any(index.pickupable(k) for k in SLICER_TYPES):
        return None
    t = rng.choice(pool.slice_types)
    objs = index.has(t, lambda o: o.affords("sliceable"))
    if not objs:
        return None
    plates = index.has("Plate", lambda o: o.affords("receptacle")) or index.has("DiningTable")
    obj = rng.choice(objs)
    items = [{"object": {"type": t}, "predicate": "isSliced"}]
    targets: set[str] = set()
    detailed = f"Slice a {words(t)} with a knife."
    concise = f"{words(t)} sliced"
    if plates:
        dest = plates[0].type
        items.append({"object": {"type": sliced_type(t)}, "predicate": "inReceptacle", "target": {"type": dest}})
        targets = {dest}
        detailed = f"Slice a {words(t)} with a knife and put a slice {preposition(dest)} a {words(dest)}."
        concise = f"a slice of {words(t)} {preposition(dest)} a {words(dest)}"
    return Goal("slice", items, detailed, concise, {r.id for r in (index.room_of(obj),) if r}, {t, sliced_type(t)},
                targets)


def build_cook(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    if not pool.cook_types or not index.has("Microwave", lambda o: o.affords("receptacle")):
        return None
    t = rng.choice(pool.cook_types)
    objs = [o for o in index.pickupable(t) if o.affords("cookable") and not o.is_cooked]
    if not objs:
        return None
    return Goal("cook", [{"object": {"type": t}, "predicate": "isCooked"}],
                f"Cook a {words(t)} in the microwave.", f"a cooked {words(t)}",
                {r.id for r in (index.room_of(objs[0]),) if r}, {t})


def build_fill(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    if not pool.fill:
        return None
    t, liquid = rng.choice(pool.fill)
    objs = [o for o in index.pickupable(t) if o.affords("fillable") and not o.is_filled]
    if not objs:
        return None
    if liquid == "coffee":
        if t not in ("Mug", "Cup") or not index.has("CoffeeMachine", lambda o: o.affords("receptacle")):
            return None
        detailed, concise = f"Make a {words(t)} of coffee at the coffee machine.", f"a {words(t)} of coffee"
    else:
        if not index.has("Sink") or not index.has("Faucet", lambda o: o.affords("toggleable")):
            return None
        detailed, concise = f"Fill a {words(t)} with water at the sink.", f"a {words(t)} of water"
    items = [{"object": {"type": t}, "predicate": "isFilledWithLiquid", "value": liquid}]
    return Goal("fill", items, detailed, concise, {r.id for r in (index.room_of(objs[0]),) if r}, {t})


def build_room(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    if not pool.bring_to_room:
        return None
    t = rng.choice(pool.bring_to_room)
    objs = index.pickupable(t)
    if not objs:
        return None
    obj = rng.choice(objs)
    here = index.room_of(obj)
    rooms = [r for r in index.world.rooms if index.room_type_count[r.room_type] == 1 and (here is None or r.room_type != here.room_type)]
    if not rooms:
        return None
    room = rng.choice(rooms)
    if any(index.room_of(o) is not None and index.room_of(o).room_type == room.room_type for o in objs):
        return None  # already true for some instance
    return Goal("room", [{"object": {"type": t}, "predicate": "inRoom", "value": room.room_type}],
                f"Bring a {words(t)} to the {words(room.room_type)}.", f"a {words(t)} in the {words(room.room_type)}",
                {room.id} | ({here.id} if here else set()), {t})


BUILDERS: dict[str, Callable[[HouseIndex, ScenarioPool, random.Random], Goal | None]] = {
    "place": build_place, "toggle": build_toggle, "open": build_open, "slice": build_slice,
    "cook": build_cook, "fill": build_fill, "room": build_room,
}
# How often each kind is drawn: placements dominate household tasks, as in LongAct.
KIND_WEIGHTS = {"place": 5, "toggle": 2, "open": 1, "slice": 1, "cook": 1, "fill": 1, "room": 1}
