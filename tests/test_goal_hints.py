"""planner.goal_hints: a goal's text hints read once into typed fields, by one table of keys."""

from __future__ import annotations

import json
from dataclasses import fields, replace

from household.checklist import ChecklistItem, ObjectSelector
from planner.goal_hints import HINT_KEYS, CountOf, GoalHints
from planner.roles import Goal

MUG = (ChecklistItem(ObjectSelector("Mug"), "inRoom", value="Kitchen"),)


def test_every_typed_field_is_a_key_with_a_meaning_and_a_reader() -> None:
    assert {k.name for k in HINT_KEYS} == {f.name for f in fields(GoalHints)} - {"counted"}
    assert all(k.meaning and callable(k.parse) for k in HINT_KEYS)
    # the keys the instruction parser and the goal DAG write are known
    assert {"object_room", "object_source", "object_near", "target_near", "target_location", "quantifier",
            "all_of", "distinct_group", "count_of", "other_goal_types"} <= {k.name for k in HINT_KEYS}


def test_hints_are_read_once_typed_and_travel_as_text() -> None:
    text = {"object_room": "Kitchen", "object_near": "Sofa", "all_of": "Cup,,Plate", "count_of": "2/all",
            "distinct_group": "g1:0", "other_goal_types": "Book", "llm_note": "anything"}
    goal = Goal("g1", MUG, "take the cups", dict(text))
    h = goal.typed_hints
    assert (h.object_room, h.object_near, h.object_source) == ("Kitchen", "Sofa", None)
    assert h.all_of == ("Cup", "Plate") and h.other_goal_types == ("Book",)
    assert h.count_of == goal.count_of == CountOf(2, None) and h.counted
    assert h.relations("object") == (("object_near", "Sofa"),) and h.relations("target") == ()
    # the text is what reports and LLM prompts get: unchanged, the unknown key included
    assert json.loads(json.dumps(goal.to_dict()))["hints"] == text
    # a goal made anew with other hints reads them anew
    assert replace(goal, hints={"target_location": "Desk"}).typed_hints.relations("target") == (
        ("object_source", "Desk"),)


def test_an_unreadable_hint_is_ignored_but_still_counts_the_goal() -> None:
    """An LLM's 'count_of': 'lots' is no number (ignored, as before), but it still says the goal
    is counted: the description is meant to fit several."""
    h = GoalHints.parse({"count_of": "lots"})
    assert h.count_of is None and h.counted
    assert not GoalHints.parse({}).counted and GoalHints.parse({}) == GoalHints()
    # a key given with no text is given (a note lists it), but names no furniture to relate to
    empty = GoalHints.parse({"object_source": ""})
    assert empty.object_source == "" and empty.relations("object") == ()
