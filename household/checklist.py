"""Final-state checklists: what an episode must leave true, and how that is checked.

A checklist item picks objects with an ``ObjectSelector`` and names a predicate that must hold
for them in the ground-truth ``WorldState`` when the episode ends. Predicates live in one
declarative table (``PREDICATES``), as PARTNR keeps its evaluation propositions: each entry says
what kind of ``value`` it takes, whether it needs a ``target`` selector, which asset-database
property the object must have for the item to be achievable at all, how to phrase it, and how to
test one object. Schema checks, house validation (``evaluation.episodes.validate_episode``),
evaluation and report descriptions all read that table, so a new predicate is one registration.

Evaluation is pure and deterministic: it reads THOR field names only, never mutates the world,
and reports object ids sorted.

Counting (deliberately simple): an item with ``count`` n is worth n units of credit and earns
min(n, number of distinct objects that match its selector and satisfy its predicate). Items are
scored independently; one object may satisfy several items (two items "a Mug in the Sink" both
count the same mug), so a checklist that wants distinct objects says so with ``count``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence

from household.types import WorldState

ValueKind = Literal["bool", "liquid", "room"]

# THOR's liquids (FillObjectWithLiquid's fillLiquid).
LIQUIDS = ("water", "coffee", "wine")

# What slicing turns a type into, as THOR names it: eggs crack, everything else is "<Type>Sliced".
_SLICED_EXCEPTIONS = {"EggCracked": "Egg"}


def sliced_base_type(object_type: str) -> str | None:
    """The type a sliced-piece type comes from ("AppleSliced" -> "Apple"), else None."""
    if object_type in _SLICED_EXCEPTIONS:
        return _SLICED_EXCEPTIONS[object_type]
    if object_type.endswith("Sliced") and len(object_type) > len("Sliced"):
        return object_type[: -len("Sliced")]
    return None


class ChecklistSchemaError(ValueError):
    """A checklist item that breaks the schema; ``field`` is the path inside the item."""

    def __init__(self, field_path: str, message: str) -> None:
        super().__init__(f"{field_path}: {message}" if field_path else message)
        self.field = field_path
        self.message = message


@dataclass(frozen=True)
class ObjectSelector:
    """Which objects an item is about: a type, optionally narrowed to a room (type, or id when it
    looks like "room|..."), to one object id, or to a set of ids (``ids``: "all the forks from the
    table" names those forks, not any forks); ``count`` asks for that many distinct objects."""

    type: str
    room: str | None = None
    id: str | None = None
    count: int | None = None
    ids: tuple[str, ...] | None = None

    @property
    def units(self) -> int:
        return self.count if self.count is not None else 1

    @classmethod
    def from_dict(cls, data: Any, where: str) -> "ObjectSelector":
        if not isinstance(data, dict):
            raise ChecklistSchemaError(where, f"expected an object selector {{type, room?, id?, count?}}, got {data!r}")
        unknown = sorted(set(data) - {"type", "room", "id", "count", "ids"})
        if unknown:
            raise ChecklistSchemaError(f"{where}.{unknown[0]}",
                                       "unknown selector field (known: type, room, id, ids, count)")
        if "type" not in data:
            raise ChecklistSchemaError(where, "missing field 'type'")
        for key in ("type", "room", "id"):
            if key in data and (not isinstance(data[key], str) or not data[key]):
                raise ChecklistSchemaError(f"{where}.{key}", f"expected a non-empty string, got {data[key]!r}")
        count = data.get("count")
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
            raise ChecklistSchemaError(f"{where}.count", f"expected a positive integer, got {count!r}")
        ids = data.get("ids")
        if ids is not None:
            if (not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids)
                    or len(set(ids)) != len(ids)):
                raise ChecklistSchemaError(f"{where}.ids", f"expected a non-empty list of distinct object ids, got {ids!r}")
            if "id" in data:
                raise ChecklistSchemaError(f"{where}.ids", "give either id or ids, not both")
            if count is not None and count > len(ids):
                raise ChecklistSchemaError(f"{where}.count", f"count {count} exceeds the {len(ids)} ids listed")
        return cls(data["type"], data.get("room"), data.get("id"), count, tuple(ids) if ids is not None else None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        for key in ("room", "id", "count"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.ids is not None:
            out["ids"] = list(self.ids)
        return out

    def describe(self) -> str:
        text = self.type if self.id is None else f"{self.type} {self.id}"
        if self.ids is not None:
            text += f" (one of {', '.join(self.ids)})"
        if self.room is not None:
            text += f" ({self.room})"
        return f"{self.count} x {text}" if self.count is not None else text

    def matches(self, obj: dict[str, Any], world: WorldState) -> bool:
        if obj.get("objectType") != self.type:
            return False
        if self.id is not None and obj.get("objectId") != self.id:
            return False
        if self.ids is not None and obj.get("objectId") not in self.ids:
            return False
        return self.room is None or in_room(world, obj, self.room)

    def select(self, world: WorldState) -> list[dict[str, Any]]:
        """Matching objects, ordered by objectId so every consumer sees the same order."""
        return sorted((o for o in world.objects if self.matches(o, world)), key=lambda o: str(o["objectId"]))


def in_room(world: WorldState, obj: dict[str, Any], room: str) -> bool:
    """Does obj's position lie in a room of that type (or that room id, for "room|...")?"""
    info = world.room_of(obj)
    if info is None:
        return False
    return info.id == room if room.startswith("room|") else info.room_type == room


@dataclass(frozen=True)
class EvalContext:
    """What a predicate test may read besides the object: the world and the ids of the objects
    the item's target selector matches (empty when the predicate takes no target)."""

    world: WorldState
    target_ids: frozenset[str]


PredicateTest = Callable[[dict[str, Any], Any, EvalContext], bool]


@dataclass(frozen=True)
class Predicate:
    """One checklist predicate. ``test(obj, value, ctx)`` gets the item's effective value (True
    when omitted). ``requires``/``target_requires`` name the asset-database property (a
    secondaryProperty, or the primaryProperty "CanPickup") that makes the item achievable;
    ``phrase`` is (when value holds, when negated), with "{target}" and "{value}" filled in.

    What kind of change it asks for, read by the planner instead of its own lists of names:
    ``moves`` (the object ends up somewhere: placements, holding), ``in_place`` (done where the
    object stands: switching, opening, breaking; a room in scope narrows the object itself),
    ``before_moves`` (a state change made to an object before it is carried: "slice the bread and
    put it on a plate" slices first). A predicate that does not move its object is a state
    predicate: "turn off all the lamps" skips those already off. ``by_position``: the test reads
    where the object stands (not a state or a parent link), so carrying it about can change it.
    """

    name: str
    value_kind: ValueKind
    test: PredicateTest
    phrase: tuple[str, str]
    needs_target: bool = False
    requires: str | None = None
    target_requires: str | None = None
    moves: bool = False
    in_place: bool = False
    before_moves: bool = False
    by_position: bool = False


PREDICATES: dict[str, Predicate] = {}


def register(predicate: Predicate) -> Predicate:
    if predicate.name in PREDICATES:
        raise ValueError(f"predicate {predicate.name!r} is registered twice")
    PREDICATES[predicate.name] = predicate
    return predicate


def _flag(field_name: str) -> PredicateTest:
    """Test for a THOR boolean state field: the value says whether it must be true or false."""
    return lambda obj, value, ctx: bool(obj.get(field_name)) == value


def _in_receptacle(obj: dict[str, Any], value: Any, ctx: EvalContext) -> bool:
    parents = set(obj.get("parentReceptacles") or ())
    return bool(parents & ctx.target_ids) == value


def _filled(obj: dict[str, Any], value: Any, ctx: EvalContext) -> bool:
    filled = bool(obj.get("isFilledWithLiquid"))
    if isinstance(value, str):
        return filled and str(obj.get("fillLiquid") or "").lower() == value.lower()
    return filled == value


def _held(obj: dict[str, Any], value: Any, ctx: EvalContext) -> bool:
    held_id = ctx.world.held_object_id
    held = bool(obj.get("isPickedUp")) or (held_id is not None and held_id == obj.get("objectId"))
    return held == value


def _room(obj: dict[str, Any], value: Any, ctx: EvalContext) -> bool:
    return in_room(ctx.world, obj, value)


register(Predicate("inReceptacle", "bool", _in_receptacle, ("in {target}", "not in {target}"), needs_target=True,
                   target_requires="Receptacle", moves=True))
register(Predicate("isOpen", "bool", _flag("isOpen"), ("is open", "is closed"), requires="CanOpen", in_place=True))
register(Predicate("isToggled", "bool", _flag("isToggled"), ("is on", "is off"), requires="CanToggleOnOff",
                   in_place=True))
register(Predicate("isSliced", "bool", _flag("isSliced"), ("is sliced", "is not sliced"), requires="CanBeSliced",
                   before_moves=True))
register(Predicate("isCooked", "bool", _flag("isCooked"), ("is cooked", "is not cooked"), requires="CanBeCooked",
                   before_moves=True))
register(Predicate("isFilledWithLiquid", "liquid", _filled, ("is filled with {value}", "is empty"),
                   requires="CanBeFilled", before_moves=True))
register(Predicate("isDirty", "bool", _flag("isDirty"), ("is dirty", "is clean"), requires="CanBeDirty",
                   before_moves=True))
register(Predicate("isBroken", "bool", _flag("isBroken"), ("is broken", "is not broken"), requires="CanBreak",
                   in_place=True, before_moves=True))
register(Predicate("inRoom", "room", _room, ("is in the {value}", "is in the {value}"), moves=True, by_position=True))
register(Predicate("isHeld", "bool", _held, ("is held", "is not held"), requires="CanPickup", moves=True))


def depends_on_position(items: Sequence["ChecklistItem"]) -> bool:
    """Can moving an object about (carrying it, nothing else) change these items' truth? Only
    through a predicate that reads the object's position (``by_position``: inRoom) or a selector
    that names a room ("the mug in the kitchen"). An unknown predicate counts as yes. The runner
    skips scoring a navigation step when the answer is no (the score cannot have changed)."""
    for item in items:
        pred = PREDICATES.get(item.predicate)
        if pred is None or pred.by_position or item.object.room is not None:
            return True
        if item.target is not None and item.target.room is not None:
            return True
    return False


def predicates_where(**flags: bool) -> frozenset[str]:
    """Names of the registered predicates with these category flags, e.g. ``in_place=True``."""
    return frozenset(name for name, p in PREDICATES.items()
                     if all(getattr(p, flag) == want for flag, want in flags.items()))


@dataclass(frozen=True)
class ChecklistItem:
    """``object`` must satisfy ``predicate`` (against ``target`` for inReceptacle). ``value`` is
    None when the episode omitted it, which means True for boolean predicates."""

    object: ObjectSelector
    predicate: str
    target: ObjectSelector | None = None
    value: bool | str | None = None

    @property
    def units(self) -> int:
        return self.object.units

    @property
    def expected(self) -> bool | str | None:
        """The value the predicate test receives: True where a boolean value was omitted."""
        return True if self.value is None else self.value

    @classmethod
    def from_dict(cls, data: Any) -> "ChecklistItem":
        """Parse one item; raises ChecklistSchemaError naming the field inside the item."""
        if not isinstance(data, dict):
            raise ChecklistSchemaError("", f"expected a checklist item object, got {data!r}")
        unknown = sorted(set(data) - {"object", "predicate", "target", "value"})
        if unknown:
            raise ChecklistSchemaError(unknown[0], "unknown field (known: object, predicate, target, value)")
        for key in ("object", "predicate"):
            if key not in data:
                raise ChecklistSchemaError(key, f"missing field {key!r}")
        if not isinstance(data["predicate"], str):
            raise ChecklistSchemaError("predicate", f"expected a predicate name, got {data['predicate']!r}")
        target = ObjectSelector.from_dict(data["target"], "target") if data.get("target") is not None else None
        item = cls(ObjectSelector.from_dict(data["object"], "object"), data["predicate"], target, data.get("value"))
        problems = item.problems()
        if problems:
            raise ChecklistSchemaError(*problems[0])
        return item

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"object": self.object.to_dict(), "predicate": self.predicate}
        if self.target is not None:
            out["target"] = self.target.to_dict()
        if self.value is not None:
            out["value"] = self.value
        return out

    def problems(self) -> list[tuple[str, str]]:
        """Schema problems as (field inside the item, message); empty when the item is well formed.
        Checks what needs no house: known predicate, value kind, target presence, id vs count."""
        out: list[tuple[str, str]] = []
        pred = PREDICATES.get(self.predicate)
        if pred is None:
            out.append(("predicate", f"unknown predicate {self.predicate!r} (known: {', '.join(sorted(PREDICATES))})"))
            return out
        if pred.needs_target and self.target is None:
            out.append(("target", f"predicate {pred.name!r} needs a target selector"))
        if not pred.needs_target and self.target is not None:
            out.append(("target", f"predicate {pred.name!r} takes no target"))
        if self.target is not None and self.target.count is not None:
            out.append(("target.count", "a target selector takes no count"))
        if self.object.id is not None and self.object.units > 1:
            out.append(("object.count", "a selector with an id names one object; count must be 1 or absent"))
        value = self.value
        if pred.value_kind == "bool" and value is not None and not isinstance(value, bool):
            out.append(("value", f"predicate {pred.name!r} takes true or false, got {value!r}"))
        elif pred.value_kind == "liquid" and value is not None and not isinstance(value, bool) and value not in LIQUIDS:
            out.append(("value", f"expected true, false or a liquid ({', '.join(LIQUIDS)}), got {value!r}"))
        elif pred.value_kind == "room" and (not isinstance(value, str) or not value):
            out.append(("value", f"predicate {pred.name!r} needs a room type (e.g. 'Kitchen') or room id, "
                                 f"got {value!r}"))
        return out

    def describe(self) -> str:
        """A short human sentence ("2 x Mug (Kitchen) is filled with coffee")."""
        pred = PREDICATES[self.predicate]
        value = self.expected
        phrase = pred.phrase[0] if value is not False else pred.phrase[1]
        target = self.target.describe() if self.target is not None else ""
        shown = "liquid" if value is True else str(value)
        return f"{self.object.describe()} {phrase.format(target=target, value=shown)}"


@dataclass(frozen=True)
class ItemResult:
    """How one item fared. ``object_ids`` are all objects satisfying it (possibly more than
    ``units``), ``candidate_ids`` all objects its selector matched, ``target_ids`` the objects the
    target selector matched; all sorted."""

    index: int
    description: str
    predicate: str
    units: int
    satisfied_units: int
    object_ids: tuple[str, ...]
    candidate_ids: tuple[str, ...]
    target_ids: tuple[str, ...] = ()
    object_type: str = ""  # the item's object and target types: reports trace unmet items by them
    target_type: str = ""

    @property
    def satisfied(self) -> bool:
        return self.satisfied_units >= self.units

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "description": self.description,
            "predicate": self.predicate,
            "satisfied": self.satisfied,
            "units": self.units,
            "satisfied_units": self.satisfied_units,
            "object_ids": list(self.object_ids),
            "candidate_ids": list(self.candidate_ids),
            "target_ids": list(self.target_ids),
            "object_type": self.object_type,
            "target_type": self.target_type,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ItemResult":
        return cls(int(data["index"]), str(data["description"]), str(data["predicate"]), int(data["units"]),
                   int(data["satisfied_units"]), tuple(data["object_ids"]), tuple(data.get("candidate_ids", ())),
                   tuple(data.get("target_ids", ())), str(data.get("object_type", "")), str(data.get("target_type", "")))


@dataclass(frozen=True)
class ChecklistResult:
    """All item results of one evaluation, with the unit totals GC and SR are computed from."""

    items: tuple[ItemResult, ...] = field(default_factory=tuple)

    @property
    def units(self) -> int:
        return sum(i.units for i in self.items)

    @property
    def satisfied_units(self) -> int:
        return sum(i.satisfied_units for i in self.items)

    @property
    def gc(self) -> float:
        """Goal-condition success: satisfied units over all units."""
        return self.satisfied_units / self.units if self.units else 0.0

    @property
    def sr(self) -> float:
        """Success rate of this episode: 1.0 when every unit is satisfied, else 0.0."""
        return 1.0 if self.units and self.satisfied_units == self.units else 0.0

    def to_list(self) -> list[dict[str, Any]]:
        return [i.to_dict() for i in self.items]

    @classmethod
    def from_list(cls, data: list[dict[str, Any]]) -> "ChecklistResult":
        return cls(tuple(ItemResult.from_dict(d) for d in data))


def evaluate_item(item: ChecklistItem, world: WorldState, index: int = 0) -> ItemResult:
    pred = PREDICATES.get(item.predicate)
    if pred is None:
        raise ValueError(f"checklist[{index}].predicate: unknown predicate {item.predicate!r}")
    candidates = item.object.select(world)
    target_ids = tuple(str(o["objectId"]) for o in item.target.select(world)) if item.target is not None else ()
    ctx = EvalContext(world, frozenset(target_ids))
    satisfying = tuple(str(o["objectId"]) for o in candidates if pred.test(o, item.expected, ctx))
    return ItemResult(index, item.describe(), item.predicate, item.units, min(item.units, len(satisfying)), satisfying,
                      tuple(str(o["objectId"]) for o in candidates), target_ids, item.object.type,
                      item.target.type if item.target is not None else "")


def evaluate_checklist(checklist: Sequence[ChecklistItem], world: WorldState) -> ChecklistResult:
    """Score every item against the ground truth; an empty checklist is an error, not GC 0."""
    if not checklist:
        raise ValueError("cannot evaluate an empty checklist")
    return ChecklistResult(tuple(evaluate_item(item, world, i) for i, item in enumerate(checklist)))
