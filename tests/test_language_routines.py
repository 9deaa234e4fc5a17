"""Routine expansion (planner.language.routines): intent words become goals from typical
placements only when asked, always marked inferred, and never from nothing."""

from __future__ import annotations

import json

import pytest

from planner.instruction_parser import InstructionParser, goal_items
from planner.language.routines import routines_in


@pytest.fixture(scope="module")
def plain() -> InstructionParser:
    return InstructionParser()


@pytest.fixture(scope="module")
def expanding(plain: InstructionParser) -> InstructionParser:
    return plain.with_routines()


def test_routine_words_found_as_words() -> None:
    assert routines_in("Quick tidy-up: the mug to the kitchen") == ["tidy"]
    assert routines_in("Could you lay the table?") == ["set the table"]
    assert routines_in("Desk setup, then a coffee") == ["desk setup"]
    assert routines_in("Put the mug in the sink") == []
    assert routines_in("the tidyness") == []  # whole words only


def test_off_by_default(plain: InstructionParser) -> None:
    goals = plain.decompose("Set the table and make me a coffee.")
    assert [i.describe() for i in goal_items(goals)] == ["Mug is filled with coffee"]
    assert not any("inferred" in g.hints for g in goals)


def test_set_the_table_adds_inferred_tableware_not_stated(expanding: InstructionParser) -> None:
    goals = expanding.decompose("Set the table and put the bowl on the counter.")
    stated = [g for g in goals if "inferred" not in g.hints]
    inferred = [g for g in goals if g.hints.get("inferred") == "set the table"]
    assert [i.describe() for g in stated for i in g.items] == ["Bowl in CounterTop"]
    assert inferred and all(i.target.type == "DiningTable" for g in inferred for i in g.items)
    types = {i.object.type for g in inferred for i in g.items}
    assert "Plate" in types and "Bowl" not in types  # the bowl's place was stated
    assert "receptacles.json" in inferred[0].hints["basis"]


def test_tidy_places_room_moves_where_things_usually_go(expanding: InstructionParser) -> None:
    goals = expanding.decompose("Tidy up: the book and the pen to the bedroom.")
    items = goal_items(goals)
    assert all(i.predicate == "inReceptacle" and i.target.room == "Bedroom" for i in items)
    assert {i.object.type for i in items} == {"Book", "Pen"}
    assert {i.target.type for i in items} == {"Desk"}  # their most frequent furniture
    assert all(g.hints.get("inferred") == "tidy" for g in goals)


def test_intent_only_request_invents_nothing(expanding: InstructionParser) -> None:
    assert goal_items(expanding.decompose("Do a general tidy, please.")) == []
    assert any("names no objects" in u.reason for u in expanding.unparsed)


def test_cli_marks_inferred_items(capsys) -> None:
    from worldmind.cli import main

    assert main(["parse", "Desk setup: laptop open.", "--json", "--routines"]) == 0
    report = json.loads(capsys.readouterr().out)
    stated = [i for i in report["items"] if not i.get("inferred")]
    inferred = [i for i in report["items"] if i.get("inferred")]
    assert [(i["object"]["type"], i["predicate"]) for i in stated] == [("Laptop", "isOpen")]
    assert inferred and all(i["routine"] == "desk setup" for i in inferred)
    assert main(["parse", "Desk setup: laptop open.", "--json"]) == 0
    assert not any(i.get("inferred") for i in json.loads(capsys.readouterr().out)["items"])
