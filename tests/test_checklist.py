"""Checklist evaluation against hand-built ground truth."""

from __future__ import annotations

import copy
import random

import pytest

from household.checklist import (
    depends_on_position,
    PREDICATES,
    ChecklistItem,
    ChecklistSchemaError,
    ObjectSelector,
    Predicate,
    evaluate_checklist,
    evaluate_item,
    register,
    sliced_base_type,
)
from household.types import RoomInfo, WorldState

KITCHEN = RoomInfo("room|1", "Kitchen", [(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (0.0, 4.0)])
LIVING = RoomInfo("room|2", "LivingRoom", [(4.0, 0.0), (8.0, 0.0), (8.0, 4.0), (4.0, 4.0)])


def obj(oid: str, otype: str, x: float, z: float, **state) -> dict:
    base = {"objectId": oid, "objectType": otype, "position": {"x": x, "y": 0.9, "z": z}, "parentReceptacles": None}
    base.update(state)
    return base


@pytest.fixture
def world() -> WorldState:
    objects = [
        obj("fridge", "Fridge", 0.5, 0.5, isOpen=False, receptacleObjectIds=["apple1"]),
        obj("counter", "CounterTop", 2.0, 0.5),
        obj("apple1", "Apple", 0.5, 0.5, parentReceptacles=["fridge"]),
        obj("apple2", "Apple", 2.0, 0.5, parentReceptacles=["counter"]),
        obj("mug1", "Mug", 1.0, 1.0, isFilledWithLiquid=True, fillLiquid="coffee", isDirty=False),
        obj("mug2", "Mug", 5.0, 1.0, isFilledWithLiquid=True, fillLiquid="water", isDirty=True),
        obj("mug3", "Mug", 1.5, 1.0, isFilledWithLiquid=False, fillLiquid=None, isDirty=False),
        obj("tomato|TomatoSliced_1", "TomatoSliced", 2.1, 0.5, parentReceptacles=["counter"]),
        obj("tomato|TomatoSliced_0", "TomatoSliced", 2.2, 0.5, parentReceptacles=["counter"]),
        obj("tomato", "Tomato", 2.2, 0.5, isSliced=True),
        obj("laptop", "Laptop", 6.0, 2.0, isToggled=True, isOpen=True),
        obj("potato", "Potato", 1.0, 2.0, isCooked=True),
        obj("cup", "Cup", 6.5, 2.0, isPickedUp=False),
        obj("book", "Book", 6.6, 2.0, isPickedUp=True),
    ]
    return WorldState(objects=objects, agent={}, rooms=[KITCHEN, LIVING], held_object_id="cup", house_id="fixture")


def item(data: dict) -> ChecklistItem:
    return ChecklistItem.from_dict(data)


@pytest.mark.parametrize(
    "data, satisfied_ids",
    [
        ({"object": {"type": "Apple"}, "predicate": "inReceptacle", "target": {"type": "Fridge"}}, ("apple1",)),
        ({"object": {"type": "Apple"}, "predicate": "inReceptacle", "target": {"type": "Fridge"}, "value": False},
         ("apple2",)),
        ({"object": {"type": "Fridge"}, "predicate": "isOpen"}, ()),
        ({"object": {"type": "Fridge"}, "predicate": "isOpen", "value": False}, ("fridge",)),
        ({"object": {"type": "Laptop"}, "predicate": "isToggled"}, ("laptop",)),
        ({"object": {"type": "Tomato"}, "predicate": "isSliced"}, ("tomato",)),
        ({"object": {"type": "Potato"}, "predicate": "isCooked"}, ("potato",)),
        ({"object": {"type": "Mug"}, "predicate": "isFilledWithLiquid"}, ("mug1", "mug2")),
        ({"object": {"type": "Mug"}, "predicate": "isFilledWithLiquid", "value": "coffee"}, ("mug1",)),
        ({"object": {"type": "Mug"}, "predicate": "isFilledWithLiquid", "value": False}, ("mug3",)),
        ({"object": {"type": "Mug"}, "predicate": "isDirty"}, ("mug2",)),
        ({"object": {"type": "Mug"}, "predicate": "isDirty", "value": False}, ("mug1", "mug3")),
        ({"object": {"type": "Mug"}, "predicate": "inRoom", "value": "LivingRoom"}, ("mug2",)),
        ({"object": {"type": "Mug"}, "predicate": "inRoom", "value": "room|1"}, ("mug1", "mug3")),
        # held either through the world's held object or the object's isPickedUp flag
        ({"object": {"type": "Cup"}, "predicate": "isHeld"}, ("cup",)),
        ({"object": {"type": "Book"}, "predicate": "isHeld"}, ("book",)),
        ({"object": {"type": "Book"}, "predicate": "isHeld", "value": False}, ()),
    ],
)
def test_each_predicate_and_its_negation(world: WorldState, data: dict, satisfied_ids: tuple) -> None:
    result = evaluate_item(item(data), world)
    assert result.object_ids == satisfied_ids
    assert result.satisfied_units == min(1, len(satisfied_ids))
    assert result.satisfied is bool(satisfied_ids)


def test_predicate_table_is_exactly_the_specified_vocabulary() -> None:
    assert set(PREDICATES) == {"inReceptacle", "isOpen", "isToggled", "isSliced", "isCooked", "isFilledWithLiquid",
                               "isDirty", "inRoom", "isHeld", "isBroken"}
    with pytest.raises(ValueError, match="registered twice"):
        register(PREDICATES["isOpen"])


def test_a_registered_predicate_is_usable_without_touching_the_evaluator(world: WorldState) -> None:
    register(Predicate("isUsedUp", "bool", lambda o, v, ctx: bool(o.get("isUsedUp")) == v, ("is used up", "is left")))
    try:
        world.objects.append(obj("roll", "ToiletPaper", 1.0, 3.0, isUsedUp=True))
        result = evaluate_item(item({"object": {"type": "ToiletPaper"}, "predicate": "isUsedUp"}), world)
        assert result.object_ids == ("roll",) and result.description == "ToiletPaper is used up"
    finally:
        del PREDICATES["isUsedUp"]


def test_count_gives_partial_credit_for_distinct_objects(world: WorldState) -> None:
    it = item({"object": {"type": "Mug", "count": 3}, "predicate": "isFilledWithLiquid"})
    result = evaluate_item(it, world)
    assert (result.units, result.satisfied_units, result.satisfied) == (3, 2, False)
    capped = evaluate_item(item({"object": {"type": "Mug", "count": 1}, "predicate": "isFilledWithLiquid"}), world)
    assert (capped.units, capped.satisfied_units) == (1, 1)
    assert capped.object_ids == ("mug1", "mug2")  # all satisfying objects are reported, credit is capped


def test_room_and_id_narrow_the_selector(world: WorldState) -> None:
    in_kitchen = evaluate_item(item({"object": {"type": "Mug", "room": "Kitchen"}, "predicate": "isDirty",
                                     "value": False}), world)
    assert in_kitchen.candidate_ids == ("mug1", "mug3")
    by_room_id = evaluate_item(item({"object": {"type": "Mug", "room": "room|2"}, "predicate": "isDirty"}), world)
    assert by_room_id.object_ids == ("mug2",)
    by_id = evaluate_item(item({"object": {"type": "Mug", "id": "mug3"}, "predicate": "isFilledWithLiquid"}), world)
    assert by_id.candidate_ids == ("mug3",) and by_id.satisfied_units == 0
    wrong_type = evaluate_item(item({"object": {"type": "Cup", "id": "mug1"}, "predicate": "isDirty",
                                     "value": False}), world)
    assert wrong_type.candidate_ids == ()


def test_sliced_type_matches_the_pieces_not_the_whole(world: WorldState) -> None:
    pieces = evaluate_item(item({"object": {"type": "TomatoSliced", "count": 2}, "predicate": "inReceptacle",
                                 "target": {"type": "CounterTop"}}), world)
    assert pieces.object_ids == ("tomato|TomatoSliced_0", "tomato|TomatoSliced_1")
    assert pieces.satisfied_units == 2
    assert sliced_base_type("AppleSliced") == "Apple" and sliced_base_type("EggCracked") == "Egg"
    assert sliced_base_type("Apple") is None and sliced_base_type("Sliced") is None


def test_in_receptacle_target_can_be_narrowed_by_room(world: WorldState) -> None:
    world.objects.append(obj("fridge2", "Fridge", 6.0, 3.0, isOpen=False))
    world.object("apple2")["parentReceptacles"] = ["fridge2"]
    kitchen_fridge = evaluate_item(item({"object": {"type": "Apple", "count": 2}, "predicate": "inReceptacle",
                                         "target": {"type": "Fridge", "room": "Kitchen"}}), world)
    assert kitchen_fridge.target_ids == ("fridge",) and kitchen_fridge.object_ids == ("apple1",)
    any_fridge = evaluate_item(item({"object": {"type": "Apple", "count": 2}, "predicate": "inReceptacle",
                                     "target": {"type": "Fridge"}}), world)
    assert any_fridge.satisfied_units == 2


def test_gc_and_sr_over_units(world: WorldState) -> None:
    checklist = [
        item({"object": {"type": "Apple"}, "predicate": "inReceptacle", "target": {"type": "Fridge"}}),  # 1/1
        item({"object": {"type": "Mug", "count": 3}, "predicate": "isFilledWithLiquid"}),  # 2/3
        item({"object": {"type": "Fridge"}, "predicate": "isOpen"}),  # 0/1
    ]
    result = evaluate_checklist(checklist, world)
    assert (result.units, result.satisfied_units) == (5, 3)
    assert result.gc == pytest.approx(0.6) and result.sr == 0.0
    assert [r.index for r in result.items] == [0, 1, 2]
    done = evaluate_checklist(checklist[:1], world)
    assert done.gc == 1.0 and done.sr == 1.0
    with pytest.raises(ValueError, match="empty checklist"):
        evaluate_checklist([], world)


def test_evaluation_is_pure_and_order_independent(world: WorldState) -> None:
    checklist = [item({"object": {"type": "Mug", "count": 2}, "predicate": "isDirty", "value": False}),
                 item({"object": {"type": "TomatoSliced"}, "predicate": "inRoom", "value": "Kitchen"})]
    before = copy.deepcopy(world)
    first = evaluate_checklist(checklist, world)
    assert world == before
    shuffled = copy.deepcopy(world)
    random.Random(3).shuffle(shuffled.objects)
    assert evaluate_checklist(checklist, shuffled) == first


@pytest.mark.parametrize(
    "data, field, fragment",
    [
        ({"object": {"type": "Mug"}, "predicate": "isLevitating"}, "predicate", "unknown predicate 'isLevitating'"),
        ({"object": {"type": "Mug"}, "predicate": "isDirty", "value": "yes"}, "value", "takes true or false"),
        ({"object": {"type": "Mug"}, "predicate": "isFilledWithLiquid", "value": "milk"}, "value", "a liquid"),
        ({"object": {"type": "Mug"}, "predicate": "inRoom"}, "value", "needs a room type"),
        ({"object": {"type": "Mug"}, "predicate": "inReceptacle"}, "target", "needs a target"),
        ({"object": {"type": "Mug"}, "predicate": "isDirty", "target": {"type": "Sink"}}, "target", "takes no target"),
        ({"object": {"type": "Mug", "rooom": "Kitchen"}, "predicate": "isDirty"}, "object.rooom", "unknown selector"),
        ({"object": {"type": "Mug", "count": 0}, "predicate": "isDirty"}, "object.count", "positive integer"),
        ({"object": {"type": "Mug", "id": "m", "count": 2}, "predicate": "isDirty"}, "object.count", "one object"),
        ({"object": {"room": "Kitchen"}, "predicate": "isDirty"}, "object", "missing field 'type'"),
        ({"predicate": "isDirty"}, "object", "missing field 'object'"),
    ],
)
def test_schema_errors_name_the_field(data: dict, field: str, fragment: str) -> None:
    with pytest.raises(ChecklistSchemaError) as info:
        ChecklistItem.from_dict(data)
    assert info.value.field == field
    assert fragment in info.value.message


def test_round_trip_and_descriptions() -> None:
    data = {"object": {"type": "Mug", "room": "Kitchen", "count": 2}, "predicate": "isFilledWithLiquid",
            "value": "coffee"}
    it = item(data)
    assert it.to_dict() == data and ChecklistItem.from_dict(it.to_dict()) == it
    assert it.describe() == "2 x Mug (Kitchen) is filled with coffee"
    assert item({"object": {"type": "Apple"}, "predicate": "inReceptacle", "target": {"type": "Fridge"},
                 "value": False}).describe() == "Apple not in Fridge"
    assert item({"object": {"type": "Fridge"}, "predicate": "isOpen", "value": False}).describe() == "Fridge is closed"
    assert item({"object": {"type": "Mug"}, "predicate": "isFilledWithLiquid"}).describe() == \
        "Mug is filled with liquid"
    assert ObjectSelector("Mug", id="small|1").describe() == "Mug small|1"


@pytest.mark.parametrize("items, moves_matter", [
    ([{"object": {"type": "Mug"}, "predicate": "isDirty", "value": False}], False),
    ([{"object": {"type": "Mug"}, "predicate": "inReceptacle", "target": {"type": "Sink"}}], False),
    ([{"object": {"type": "Mug"}, "predicate": "isHeld"}], False),
    ([{"object": {"type": "Mug"}, "predicate": "inRoom", "value": "Kitchen"}], True),
    ([{"object": {"type": "Mug", "room": "Kitchen"}, "predicate": "isDirty", "value": False}], True),
    ([{"object": {"type": "Mug"}, "predicate": "inReceptacle", "target": {"type": "Table", "room": "Kitchen"}}], True),
])
def test_only_positions_and_rooms_make_carrying_change_the_score(items: list, moves_matter: bool) -> None:
    """The runner skips scoring a navigation step unless carrying can change an item's truth."""
    assert depends_on_position([ChecklistItem.from_dict(i) for i in items]) is moves_matter
