"""Goal builders of the LongAct-style episode generator (v2), per scenario, as data plus one
builder per goal kind.

A goal is one household sub-task ("put both mugs in the sink", "turn off the lamp by the sofa",
"make a mug of coffee and bring it to the desk", "wash the dirty plate") that becomes one to
three checklist items and a ``Phrase`` (its words, see ``evaluation.instruction_text``). The
builders cover every predicate LongAct's checklists monitor: placement (inReceptacle), inRoom,
open, toggle, slice, cook (toaster or microwave, where the house has one), fill (water at a
sink, coffee at a coffee machine, wine poured from a wine bottle), clean (isDirty false: the
episode marks the object dirty at the start, via ``object_states``) and held.

Pins: where the house has several objects of a type, the goal says which one ("the apple on the
dining table", "the mug in the bedroom", "the lamp by the sofa") and its item pins it, by id (an
object that moves) or by room (one that stays). Counts: groups of two or three ("both mugs",
"two books", "a couple of apples", "all the forks from the table") are one item with ``count``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable

from evaluation.house_index import HouseIndex
from evaluation.instruction_text import CATEGORIES, Mention, Phrase, article, plural, room_word, words
from household.assets import CONTAINER_TYPES, SLICER_TYPES, sliced_type
from sim_bridge.embedded.interactions import find_placement
from sim_bridge.embedded.objects import SimObject

__all__ = ["SCENARIOS", "SCENARIO_TITLES", "POOLS", "BUILDERS", "KIND_WEIGHTS", "Goal", "HouseIndex", "words"]

SCENARIOS = ("Daily Cleaning & Tidying", "Work & Study Preparation", "Rest & Entertainment", "Dining & Kitchen")
SCENARIO_TITLES = {
    "Daily Cleaning & Tidying": ("Tidy-up", "Quick clean-up", "Chores"),
    "Work & Study Preparation": ("Study setup", "Work prep", "Desk time"),
    "Rest & Entertainment": ("Movie night", "Evening in", "Chill time"),
    "Dining & Kitchen": ("Dinner prep", "Breakfast", "Kitchen help"),
}
KINDS = ("place", "room", "toggle", "open", "slice", "cook", "fill", "clean", "held")


@dataclass(frozen=True)
class ScenarioPool:
    place_objects: tuple[str, ...]
    place_targets: tuple[str, ...]
    toggle_on: tuple[str, ...] = ()
    toggle_off: tuple[str, ...] = ()
    open_types: tuple[str, ...] = ()
    slice_types: tuple[str, ...] = ()
    fill: tuple[tuple[str, str], ...] = ()  # (type, liquid)
    clean_types: tuple[str, ...] = ("Plate", "Bowl", "Mug", "Cup", "Pan", "Pot", "Cloth")
    bring_to_room: tuple[str, ...] = ()
    held_types: tuple[str, ...] = ()
    # How often each kind is drawn; placements dominate household tasks, as in LongAct, and the
    # state changes are weighted so each reaches its share where the house allows it.
    weights: tuple[tuple[str, float], ...] = (("place", 4), ("room", 1), ("toggle", 1.5), ("open", 0.7),
                                              ("slice", 1.2), ("cook", 3), ("fill", 2.2), ("clean", 1.2),
                                              ("held", 0.4))


_DISHES = ("Plate", "Bowl", "Mug", "Cup")
POOLS: dict[str, ScenarioPool] = {
    "Daily Cleaning & Tidying": ScenarioPool(
        place_objects=("Book", "CellPhone", "RemoteControl", "KeyChain", "CreditCard", "Watch", "CD", "Newspaper",
                       "Pen", "Pencil", "AlarmClock", "TeddyBear", "BasketBall", "BaseballBat", "SprayBottle",
                       "TissueBox", "Cloth", "Statue", "Candle", "ToiletPaper", "SoapBottle", "Vase", *_DISHES),
        place_targets=("Dresser", "ShelvingUnit", "SideTable", "Box", "Desk", "TVStand", "CoffeeTable", "CounterTop",
                       "ToiletPaperHanger", "Sink", "GarbageCan"),
        toggle_off=("FloorLamp", "DeskLamp", "Television", "Laptop", "Faucet", "CoffeeMachine", "Candle"),
        open_types=("Box", "Laptop"),
        fill=(("HousePlant", "water"), ("HousePlant", "water"), ("Bowl", "water"), ("Pot", "water")),
        bring_to_room=("Plate", "Bowl", "Mug", "Cup", "BasketBall", "Book", "Laptop", "TeddyBear", "Newspaper"),
        held_types=("SprayBottle", "Cloth", "TissueBox"),
    ),
    "Work & Study Preparation": ScenarioPool(
        place_objects=("Laptop", "Book", "Pen", "Pencil", "CellPhone", "Mug", "AlarmClock", "CreditCard", "KeyChain",
                       "Newspaper", "Watch", "CD", "Cup"),
        place_targets=("Desk", "DiningTable", "SideTable", "CoffeeTable", "Mug", "Cup", "Dresser", "Bed"),
        toggle_on=("DeskLamp", "FloorLamp", "Laptop"),
        toggle_off=("Television",),
        open_types=("Laptop", "Book"),
        fill=(("Mug", "coffee"), ("Cup", "coffee"), ("Cup", "water"), ("Mug", "water"), ("Bottle", "water"),
              ("HousePlant", "water")),
        bring_to_room=("Book", "Laptop", "Mug", "CellPhone", "AlarmClock"),
        held_types=("CellPhone", "Book", "Pen", "Pencil"),
    ),
    "Rest & Entertainment": ScenarioPool(
        place_objects=("RemoteControl", "Book", "Newspaper", "CellPhone", "TeddyBear", "BasketBall", "Laptop",
                       "Watch", "Cup", "Mug", "Bowl", "CD", "WineBottle", "Plate"),
        place_targets=("Sofa", "ArmChair", "CoffeeTable", "Bed", "SideTable", "TVStand", "DiningTable"),
        toggle_on=("Television", "FloorLamp", "DeskLamp", "Candle"),
        toggle_off=("Laptop",),
        open_types=("Book", "Laptop"),
        slice_types=("Apple", "Tomato", "Bread"),
        fill=(("Cup", "wine"), ("Mug", "wine"), ("Cup", "water"), ("Mug", "coffee"), ("Bowl", "water"),
              ("HousePlant", "water")),
        bring_to_room=("Book", "TeddyBear", "Laptop", "Bowl", "Cup", "WineBottle", "Plate"),
        held_types=("RemoteControl", "Book", "CellPhone", "Newspaper"),
    ),
    "Dining & Kitchen": ScenarioPool(
        place_objects=("Apple", "Tomato", "Bread", "Potato", "Egg", "Lettuce", "Plate", "Bowl", "Fork", "Spoon",
                       "ButterKnife", "Knife", "Cup", "Mug", "SaltShaker", "PepperShaker", "WineBottle", "Pan",
                       "Pot", "Kettle", "Ladle", "Spatula", "DishSponge", "PaperTowelRoll", "Bottle", "SoapBottle"),
        place_targets=("DiningTable", "CounterTop", "Fridge", "Plate", "Bowl", "Sink", "ShelvingUnit", "GarbageCan"),
        toggle_on=("CoffeeMachine",),
        toggle_off=("Faucet", "Television"),
        open_types=("Fridge", "Kettle"),
        slice_types=("Apple", "Tomato", "Bread", "Lettuce", "Potato"),
        fill=(("Mug", "coffee"), ("Cup", "water"), ("Bowl", "water"), ("Pot", "water"), ("Kettle", "water"),
              ("Cup", "wine")),
        bring_to_room=("Plate", "Bowl", "Cup", "Mug", "WineBottle"),
        held_types=("Apple", "Cup", "Mug"),
        weights=(("place", 4), ("room", 0.7), ("toggle", 0.7), ("open", 0.5), ("slice", 2), ("cook", 4),
                 ("fill", 2.5), ("clean", 1.5), ("held", 0.3)),
    ),
}
KIND_WEIGHTS = {k: w for k, w in POOLS["Daily Cleaning & Tidying"].weights}

# Receptacles one does not put tableware "on" for a slice or a toast.
_SERVING = ("Plate", "Bowl", "DiningTable", "CounterTop")
# Small vessels take only what people put in them (pens in a mug, fruit in a bowl), not
# whatever happens to fit.
VESSEL_CONTENTS = {
    "Mug": frozenset({"Pen", "Pencil"}), "Cup": frozenset({"Pen", "Pencil"}),
    "Bowl": frozenset({"Apple", "Tomato", "Potato", "Egg", "KeyChain", "Watch", "CreditCard", "AppleSliced",
                       "TomatoSliced", "BreadSliced", "LettuceSliced", "PotatoSliced"}),
    "Plate": frozenset({"Apple", "Tomato", "Potato", "Bread", "Egg", "Fork", "ButterKnife", "Knife", "Spoon",
                        "AppleSliced", "TomatoSliced", "BreadSliced", "LettuceSliced", "PotatoSliced"}),
}


@dataclass
class Goal:
    kind: str
    items: list[dict[str, Any]]
    phrase: Phrase
    rooms: set[str] = field(default_factory=set)  # room ids the goal touches
    types: set[str] = field(default_factory=set)  # object types it moves or changes
    targets: set[str] = field(default_factory=set)  # receptacle types it puts things on
    states: list[dict[str, Any]] = field(default_factory=list)  # start states it needs (a dirty plate)
    referenced: bool = False  # says which of several objects it means, and pins it
    count: int = 1

    @property
    def detailed(self) -> str:
        return self.phrase.clauses[0]

    @property
    def concise(self) -> str:
        return f"{self.phrase.concise_obj} {self.phrase.concise_tail}".strip()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "items": self.items, "detailed": self.detailed, "concise": self.concise,
                "rooms": sorted(self.rooms), "types": sorted(self.types), "referenced": self.referenced,
                "count": self.count}


def _prep(receptacle_type: str) -> str:
    return "in" if receptacle_type in CONTAINER_TYPES or receptacle_type in ("Drawer", "Cabinet") else "on"


def _category(type_name: str, noun: str, count: int) -> str:
    return CATEGORIES.get(type_name, plural(noun) if count > 1 else noun)


def _target(index: HouseIndex, target: SimObject, rng: random.Random) -> tuple[str, dict[str, Any], bool]:
    """How a goal names its receptacle: (text, selector, referenced)."""
    m, sel, ref = index.mention(target, rng, moving=False, prefer_reference=0.9)
    if not ref and len(index.by_type.get(target.type, [])) > 1:
        return f"{article(m.noun)} {m.noun}", sel, False
    m.definite = True
    return m.text(), sel, ref


def _fits(obj: SimObject, target: SimObject, index: HouseIndex) -> bool:
    return find_placement(obj, target, index.table.children(target.id)) is not None


# ---- builders ------------------------------------------------------------------------------------

def build_place(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    obj_type = rng.choice(pool.place_objects)
    objs = index.pickupable(obj_type)
    target_types = [t for t in pool.place_targets if t != obj_type and index.has(t, lambda o: o.affords("receptacle"))]
    if not objs or not target_types:
        return None
    target_type = rng.choice(target_types)
    if not index.table.catalog.accepts(target_type, obj_type) or obj_type not in VESSEL_CONTENTS.get(target_type, {obj_type}):
        return None
    grouped = index.group(obj_type, rng, objs) if len(objs) >= 2 and rng.random() < 0.4 else None
    if grouped is not None:
        mention, sel = grouped
        chosen = [o for o in objs if "ids" not in sel or o.id in sel["ids"]][: mention.count]
        referenced = "ids" in sel
    else:
        obj = rng.choice(objs)
        mention, sel, referenced = index.mention(obj, rng, moving=True)
        chosen = [obj]
    moved_from = {o.parent for o in chosen}
    targets = [t for t in index.has(target_type) if t.affords("receptacle") and t.id not in moved_from
               and all(_fits(o, t, index) for o in chosen)]
    if not targets:
        return None  # does not fit (a laptop in a mug), or it is already there
    target = rng.choice(targets)
    if index.room_ids(*chosen) == index.room_ids(target) and rng.random() < 0.6:
        return None  # LongAct goals mostly move things between rooms
    t_text, t_sel, t_ref = _target(index, target, rng)
    if grouped is not None:
        sel = dict(sel)
    item = {"object": sel, "predicate": "inReceptacle", "target": t_sel}
    o_text, prep, it = mention.text(), _prep(target_type), mention.pronoun
    src = index.room_of(chosen[0])
    src_text = f" from the {room_word(src.room_type, rng)}" if src is not None and not mention.qualifier else ""
    clauses = [f"put {o_text} {prep} {t_text}", f"take {o_text}{src_text} and put {it} {prep} {t_text}",
               f"move {o_text} over to {t_text}", f"grab {o_text} and leave {it} {prep} {t_text}",
               f"place {o_text} {prep} {t_text}"]
    phrase = Phrase(clauses, mention.short(), f"{prep} the {index.noun(target_type, rng)}",
                    merge_key=("place", repr(t_sel), prep), merge_head="put ", merge_tail=f" {prep} {t_text}",
                    mention=o_text, category=_category(obj_type, mention.noun, mention.count))
    return Goal("place", [item], phrase, index.room_ids(*chosen, target), {obj_type}, {target_type},
                referenced=referenced or t_ref, count=mention.count)


def build_room(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    if not pool.bring_to_room:
        return None
    t = rng.choice(pool.bring_to_room)
    objs = index.pickupable(t)
    if not objs:
        return None
    rooms = [r for r in index.world.rooms if index.room_type_count[r.room_type] == 1]
    if not rooms:
        return None
    room = rng.choice(rooms)
    away = [o for o in objs if (r := index.room_of(o)) is None or r.room_type != room.room_type]
    grouped = index.group(t, rng, away) if len(away) >= 2 and rng.random() < 0.4 else None
    if grouped is not None:
        mention, sel = grouped
        referenced = "ids" in sel
        if "ids" not in sel and len(away) < len(objs):
            return None  # "two mugs" would count the ones already there
        chosen = [o for o in away if "ids" not in sel or o.id in sel["ids"]]
    else:
        if not away:
            return None
        obj = rng.choice(away)
        mention, sel, referenced = index.mention(obj, rng, moving=True)
        if "id" not in sel and len(away) < len(objs):
            return None  # "a mug" is already in that room
        chosen = [obj]
    r_text = room_word(room.room_type, rng)
    o_text, it = mention.text(), mention.pronoun
    item = {"object": sel, "predicate": "inRoom", "value": room.room_type}
    clauses = [f"bring {o_text} to the {r_text}", f"take {o_text} into the {r_text}",
               f"carry {o_text} over to the {r_text}", f"pick up {o_text} and drop {it} off in the {r_text}"]
    phrase = Phrase(clauses, mention.short(), f"to the {r_text}", merge_key=("room", room.room_type),
                    merge_head="bring ", merge_tail=f" to the {r_text}", mention=o_text,
                    category=_category(t, mention.noun, mention.count))
    return Goal("room", [item], phrase, {room.id} | index.room_ids(*chosen), {t}, referenced=referenced,
                count=mention.count)


def build_toggle(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    options = [(t, True) for t in pool.toggle_on] + [(t, False) for t in pool.toggle_off]
    if not options:
        return None
    t, value = rng.choice(options)
    objs = index.has(t, lambda o: o.affords("toggleable") and o.is_toggled != value)
    if not objs:
        return None
    obj = rng.choice(objs)
    mention, sel, referenced = index.mention(obj, rng, moving=False, prefer_reference=1.0)
    if len(index.by_type[t]) > 1 and not referenced:
        return None  # "turn on the lamp" with three lamps says too little
    mention.definite = True
    verb = "on" if value else "off"
    o_text = mention.text()
    clauses = [f"turn {verb} {o_text}", f"switch {verb} {o_text}", f"turn {o_text} {verb}",
               f"make sure {o_text} is {verb}"]
    phrase = Phrase(clauses, mention.short(), verb, merge_key=("toggle", value), merge_head=f"turn {verb} ",
                    mention=o_text, category=_category(t, mention.noun, 1))
    return Goal("toggle", [{"object": sel, "predicate": "isToggled", "value": value}], phrase,
                index.room_ids(obj), {t}, referenced=referenced)


def build_open(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    if not pool.open_types:
        return None
    t = rng.choice(pool.open_types)
    objs = index.has(t, lambda o: o.affords("openable") and not o.is_open)
    if not objs:
        return None
    obj = rng.choice(objs)
    mention, sel, referenced = index.mention(obj, rng, moving=False)
    o_text = mention.text()
    clauses = [f"open {o_text}", f"open up {o_text}", f"leave {o_text} open"]
    phrase = Phrase(clauses, mention.short(), "open", merge_key=("open",), merge_head="open ", mention=o_text,
                    category=_category(t, mention.noun, 1))
    return Goal("open", [{"object": sel, "predicate": "isOpen", "value": True}], phrase, index.room_ids(obj), {t},
                referenced=referenced)


def _serving(index: HouseIndex, rng: random.Random, piece: SimObject | None = None) -> SimObject | None:
    plates = [o for t in _SERVING for o in index.has(t, lambda o: o.affords("receptacle"))]
    if piece is not None:
        plates = [p for p in plates if p.id != piece.parent]
    return rng.choice(plates) if plates else None


def _knife(index: HouseIndex) -> bool:
    return any(index.pickupable(k) for k in SLICER_TYPES)


def build_slice(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    if not pool.slice_types or not _knife(index):
        return None
    t = rng.choice(pool.slice_types)
    objs = index.has(t, lambda o: o.affords("sliceable") and not o.is_sliced)
    if not objs:
        return None
    obj = rng.choice(objs)
    mention, sel, referenced = index.mention(obj, rng, moving=False)
    o_text = mention.text()
    items: list[dict[str, Any]] = [{"object": sel, "predicate": "isSliced"}]
    clauses = [f"slice {o_text}", f"cut {o_text} into slices", f"cut up {o_text} with a knife"]
    targets: set[str] = set()
    plate = _serving(index, rng) if rng.random() < 0.6 else None
    if plate is not None:
        p_text, p_sel, _ = _target(index, plate, rng)
        prep = _prep(plate.type)
        items.append({"object": {"type": sliced_type(t)}, "predicate": "inReceptacle", "target": p_sel})
        clauses = [f"slice {o_text} and put a slice {prep} {p_text}",
                   f"cut {o_text} up and put a piece {prep} {p_text}"]
        targets = {plate.type}
    phrase = Phrase(clauses, mention.short(), "sliced", category=_category(t, mention.noun, 1))
    return Goal("slice", items, phrase, index.room_ids(obj), {t, sliced_type(t)}, targets, referenced=referenced)


def build_cook(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    """Toast (bread slices in a toaster) or microwave (a potato, or slices), where the house has
    the appliance; the data holds no stove."""
    toaster = index.has("Toaster", lambda o: o.affords("receptacle") and o.affords("toggleable"))
    microwave = index.has("Microwave", lambda o: o.affords("receptacle"))
    options = []
    if toaster and _knife(index) and index.has("Bread", lambda o: o.affords("sliceable")):
        options.append("toast")
    if microwave:
        if [o for o in index.pickupable("Potato") if o.affords("cookable") and not o.is_cooked]:
            options.append("potato")
        if _knife(index) and any(index.has(t, lambda o: o.affords("sliceable")) for t in ("Potato", "Tomato", "Apple")):
            options.append("slices")
    if not options:
        return None
    how = rng.choice(options)
    items: list[dict[str, Any]]
    if how == "toast":
        bread = rng.choice(index.has("Bread", lambda o: o.affords("sliceable")))
        mention, sel, referenced = index.mention(bread, rng, moving=False)
        n = rng.choice((1, 1, 2))
        piece = {"type": "BreadSliced", **({"count": n} if n > 1 else {})}
        items = [{"object": sel, "predicate": "isSliced"}, {"object": piece, "predicate": "isCooked"}]
        what = "a slice" if n == 1 else rng.choice(("two slices", "a couple of slices"))
        clauses = [f"toast {what} of {mention.text() if referenced else 'bread'}",
                   f"make some toast ({'one slice' if n == 1 else 'two slices'})",
                   f"slice {mention.text()} and toast {what} in the toaster"]
        objs, types, concise_obj, tail = [bread], {"Bread", "BreadSliced"}, "bread", "toasted"
    elif how == "potato":
        potato = rng.choice([o for o in index.pickupable("Potato") if o.affords("cookable") and not o.is_cooked])
        mention, sel, referenced = index.mention(potato, rng, moving=True)
        items = [{"object": sel, "predicate": "isCooked"}]
        o_text = mention.text()
        clauses = [f"cook {o_text} in the microwave", f"heat up {o_text} in the microwave", f"microwave {o_text}"]
        objs, types, concise_obj, tail = [potato], {"Potato"}, mention.noun, "cooked"
    else:
        t = rng.choice([t for t in ("Potato", "Tomato", "Apple") if index.has(t, lambda o: o.affords("sliceable"))])
        obj = rng.choice(index.has(t, lambda o: o.affords("sliceable")))
        mention, sel, referenced = index.mention(obj, rng, moving=False)
        items = [{"object": sel, "predicate": "isSliced"}, {"object": {"type": sliced_type(t)}, "predicate": "isCooked"}]
        o_text = mention.text()
        clauses = [f"slice {o_text} and cook a slice in the microwave", f"cut up {o_text} and microwave a piece"]
        objs, types, concise_obj, tail = [obj], {t, sliced_type(t)}, f"{mention.noun} slice", "cooked"
    targets: set[str] = set()
    if rng.random() < 0.4:
        cooked = items[-1]["object"]
        plate = _serving(index, rng, objs[0] if "id" in cooked else None)
        if plate is not None and "count" not in cooked:
            p_text, p_sel, _ = _target(index, plate, rng)
            items.append({"object": dict(cooked), "predicate": "inReceptacle", "target": p_sel})
            clauses = [f"{c} and then put it {_prep(plate.type)} {p_text}" for c in clauses]
            targets = {plate.type}
    phrase = Phrase(clauses, concise_obj, tail, category=concise_obj)
    return Goal("cook", items, phrase, index.room_ids(*objs, *(microwave or toaster)), types, targets,
                referenced=referenced)


def build_fill(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    if not pool.fill:
        return None
    t, liquid = rng.choice(pool.fill)
    objs = [o for o in index.by_type.get(t, []) if o.affords("fillable") and not o.is_filled]
    if not objs:
        return None
    movable = objs[0].affords("pickupable")
    if liquid == "coffee":
        if t not in ("Mug", "Cup") or not index.has("CoffeeMachine", lambda o: o.affords("receptacle")):
            return None
    elif liquid == "wine":
        if not movable or not index.pickupable("WineBottle"):
            return None
    else:
        if not index.sink_with_faucet():
            return None
        if not movable and not any(o.affords("fillable") and o.affords("pickupable") for o in index.table.active()):
            return None  # a plant is watered by pouring from a vessel filled at the sink
    obj = rng.choice(objs)
    mention, sel, referenced = index.mention(obj, rng, moving=movable)
    o_text, noun = mention.text(), mention.noun
    if liquid == "coffee":
        clauses = [f"make {o_text} of coffee" if not referenced else f"fill {o_text} with coffee",
                   f"pour some coffee into {o_text}", f"get {o_text} of coffee from the coffee machine"
                   if not referenced else f"make coffee in {o_text}"]
    elif liquid == "wine":
        clauses = [f"pour {o_text} of wine" if not referenced else f"pour some wine into {o_text}",
                   f"fill {o_text} with wine"]
    elif not movable:
        clauses = [f"water {o_text}", f"give {o_text} some water", f"pour some water on {o_text}"]
    else:
        clauses = [f"fill {o_text} with water", f"get {o_text} of water" if not referenced
                   else f"put some water in {o_text}", f"fill {o_text} up at the sink"]
    items: list[dict[str, Any]] = [{"object": sel, "predicate": "isFilledWithLiquid", "value": liquid}]
    targets: set[str] = set()
    rooms = index.room_ids(obj)
    if movable and rng.random() < 0.35:
        dests = [d for d in index.has(rng.choice(("Desk", "DiningTable", "CoffeeTable", "SideTable")),
                                      lambda o: o.affords("receptacle")) if _fits(obj, d, index)]
        if dests:
            # Both items must be about the same vessel; the checklist has no "same object" binding,
            # so it pins the one chosen. Only then: "fill a bowl with water" alone means any bowl.
            pin = sel if "id" in sel else {"type": t, "id": obj.id}
            items[0]["object"] = pin
            dest = rng.choice(dests)
            d_text, d_sel, _ = _target(index, dest, rng)
            items.append({"object": pin, "predicate": "inReceptacle", "target": d_sel})
            clauses = [f"{c} and bring it to {d_text}" for c in clauses]
            targets, rooms = {dest.type}, rooms | index.room_ids(dest)
    if movable:
        phrase = Phrase(clauses, noun, f"of {liquid}", category=noun)
    else:
        phrase = Phrase(clauses, noun, "watered", merge_key=("water",),
                        merge_head="water ", mention=o_text, category="plants")
    return Goal("fill", items, phrase, rooms, {t}, targets, referenced=referenced)


def build_clean(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    """Wash something the episode makes dirty at the start (``object_states``): the house files
    carry no dirt, and THOR's house format sets it per object."""
    if not pool.clean_types or not index.sink_with_faucet():
        return None
    t = rng.choice(pool.clean_types)
    objs = [o for o in index.pickupable(t) if o.affords("dirtyable")]
    if not objs:
        return None
    if len(objs) >= 2 and rng.random() < 0.25:
        chosen = rng.sample(objs, 2)
        noun = index.noun(t, rng)
        mention = Mention(t, f"dirty {noun}", 2, "both" if len(objs) == 2 else "the two")
        sel = {"type": t, "ids": sorted(o.id for o in chosen), "count": 2}
        o_text = f"{'both' if len(objs) == 2 else 'the two'} dirty {plural(noun)}"
    else:
        chosen = [rng.choice(objs)]
        m, _, _ = index.mention(chosen[0], rng, moving=True)
        mention = Mention(t, f"dirty {m.noun}", qualifier=m.qualifier, definite=True)
        sel = {"type": t, "id": chosen[0].id}
        o_text = mention.text()
    it = mention.pronoun
    clauses = [f"wash {o_text}", f"rinse {o_text} in the sink", f"clean {o_text}", f"give {o_text} a wash"]
    items: list[dict[str, Any]] = [{"object": sel, "predicate": "isDirty", "value": False}]
    targets: set[str] = set()
    if rng.random() < 0.3 and len(chosen) == 1:
        shelf = [d for d in index.has(rng.choice(("DiningTable", "CounterTop", "ShelvingUnit")),
                                      lambda o: o.affords("receptacle")) if _fits(chosen[0], d, index)]
        if shelf:
            dest = rng.choice(shelf)
            d_text, d_sel, _ = _target(index, dest, rng)
            items.append({"object": sel, "predicate": "inReceptacle", "target": d_sel})
            clauses = [f"{c} and put {it} {_prep(dest.type)} {d_text}" for c in clauses[:3]]
            targets = {dest.type}
    states = [{"id": o.id, "isDirty": True} for o in chosen]
    phrase = Phrase(clauses, plural(mention.noun.split(" ", 1)[1]) if len(chosen) > 1 else mention.noun.split(" ", 1)[1],
                    "washed", merge_key=None, category=_category(t, t.lower(), len(chosen)))
    # Several of the type: "the dirty mug" says which (only it is dirty), and the item pins it.
    referenced = len(index.by_type.get(t, [])) > len(chosen)
    return Goal("clean", items, phrase, index.room_ids(*chosen), {t}, targets, states, referenced, len(chosen))


def build_held(index: HouseIndex, pool: ScenarioPool, rng: random.Random) -> Goal | None:
    if not pool.held_types:
        return None
    t = rng.choice(pool.held_types)
    objs = index.pickupable(t)
    if not objs:
        return None
    obj = rng.choice(objs)
    mention, sel, referenced = index.mention(obj, rng, moving=True)
    o_text = mention.text()
    clauses = [f"finally, bring me {o_text} and keep it in your hand", f"at the end, come back holding {o_text}",
               f"last of all, grab {o_text} and hold on to it"]
    phrase = Phrase(clauses, mention.noun, "in hand", category=mention.noun, last=True)
    return Goal("held", [{"object": sel, "predicate": "isHeld", "value": True}], phrase, index.room_ids(obj), {t},
                referenced=referenced)


BUILDERS: dict[str, Callable[[HouseIndex, ScenarioPool, random.Random], Goal | None]] = {
    "place": build_place, "room": build_room, "toggle": build_toggle, "open": build_open, "slice": build_slice,
    "cook": build_cook, "fill": build_fill, "clean": build_clean, "held": build_held,
}
