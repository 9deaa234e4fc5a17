"""Collective nouns ("wash the dishes", "open the gadgets"): every member type the action applies
to, each read as "all of them"; none left is an unparsed clause that says why."""

from __future__ import annotations

import pytest

from household.assets import default_catalog
from planner import vocabulary as V
from planner.instruction_parser import InstructionParser, goal_items


@pytest.fixture(scope="module")
def parser() -> InstructionParser:
    return InstructionParser(default_catalog())


def _items(parser: InstructionParser, text: str) -> list[tuple[str, str, object]]:
    return [(i.object.type, i.predicate, i.expected) for i in goal_items(parser.decompose(text, None))]


def test_wash_the_dishes_is_every_dish_type_each_read_as_all(parser: InstructionParser) -> None:
    goals = parser.decompose("Wash the dishes.", None)
    assert [(i.object.type, i.predicate, i.expected) for i in goal_items(goals)] == [
        (t, "isDirty", False) for t in V.CATEGORIES["dishes"]]
    assert goals[0].hints["quantifier"] == "all" and goals[0].hints["all_of"] == ",".join(V.CATEGORIES["dishes"])
    assert goals[0].hints["category"] == "dishes"


def test_members_the_action_cannot_apply_to_are_left_out(parser: InstructionParser) -> None:
    assert _items(parser, "Gadgets open.") == [("Laptop", "isOpen", True)]  # a phone cannot be opened
    moved = {t for t, p, _ in _items(parser, "Put the electronics on the bed.")}
    assert "Television" not in moved and {"CellPhone", "Laptop"} <= moved  # a television is not carried


def test_a_category_nothing_in_can_take_the_action_is_reported(parser: InstructionParser) -> None:
    assert parser.decompose("Open the toys.", None) == []
    assert "toys (BasketBall, TeddyBear): none of them can be isOpen" in [u.reason for u in parser.unparsed]


def test_an_adjective_on_a_category_is_not_a_goal_of_its_own(parser: InstructionParser) -> None:
    assert _items(parser, "Put the dirty dishes in the sink.") == [
        (t, "inReceptacle", True) for t in V.CATEGORIES["dishes"]]


def test_the_lights_stay_the_light_switch_and_named_objects_are_unchanged(parser: InstructionParser) -> None:
    assert _items(parser, "Turn off the lights.") == [("LightSwitch", "isToggled", False)]
    assert _items(parser, "Put the mug in the sink.") == [("Mug", "inReceptacle", True)]


def test_every_category_member_is_an_asset_type() -> None:
    types = set(default_catalog().object_types)
    for phrase, members in V.CATEGORIES.items():
        assert members and set(members) <= types, phrase
