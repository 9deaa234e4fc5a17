""""All the X", or a plural with no number (issue 18 part 3, issue 13): one goal for the phrase, then one copy
per further object the agent knows the phrase covers (planner.all_of, planner.goal_dag), strict
about the relation ("from the fridge") where grounding only ranks; and an object joined by "and"
to a source ("the eggs from the fridge and the soap bottle") is an object, not a second source."""

from __future__ import annotations

import dataclasses

import pytest

from household.checklist import ChecklistItem, ObjectSelector
from planner.all_of import next_of_all
from planner.goal_dag import build_goal_dag, copy_for_next_of_all, single_item_goals
from planner.instruction_parser import InstructionParser
from planner.roles import Goal, KnownObject, PlannerContext


def _item(obj: str, predicate: str, value=None, target: str | None = None) -> ChecklistItem:
    return ChecklistItem(ObjectSelector(obj), predicate, ObjectSelector(target) if target else None, value)


def _ctx(objects: list[KnownObject], excluded: list[str] | None = None, held: str | None = None) -> PlannerContext:
    return PlannerContext(step=0, held_object_id=held, held_object_type=None, known_objects=objects, rooms_seen=[],
                          history=[], experience=[], object_types=[], agent_position=(0.0, 0.0, 0.0),
                          excluded_ids=excluded or [])


def _read(text: str) -> list[Goal]:
    return single_item_goals(InstructionParser().decompose(text))


def test_parser_marks_which_object_all_is_about() -> None:
    goals = _read("Move all the eggs from the refrigerator and the soap bottle in the bin.")
    by_type = {g.items[0].object.type: g for g in goals}
    assert set(by_type) == {"Egg", "SoapBottle"}
    assert by_type["Egg"].hints["count_of"] == "1/all" and by_type["Egg"].hints["distinct_group"]
    assert "count_of" not in by_type["SoapBottle"].hints  # "all" is not about the soap bottle
    assert all(g.items[0].target.type == "GarbageCan" for g in goals)
    plain = _read("Put the egg in the bin.")[0]
    assert "count_of" not in plain.hints


@pytest.mark.parametrize("text, every_one", [
    ("Put the mugs on the dining table.", True),  # a plural with no number: every mug found
    ("Turn off all the lamps.", True),
    ("Put two mugs on the dining table.", False),  # a number: exactly that many
    ("Put a couple of mugs on the dining table.", False),
    ("Put the mug on the dining table.", False),
    ("Put the keys on the dining table.", False),  # plural in form, one key chain
    ("Come back holding the books.", False),  # one hand
])
def test_which_phrases_mean_every_one_found(text: str, every_one: bool) -> None:
    goals = _read(text)
    assert any(g.hints.get("count_of") == "1/all" for g in goals) is every_one, [g.hints for g in goals]


@pytest.mark.parametrize("text, objects", [
    ("Put the eggs from the fridge and the soap bottle in a bin.", {"Egg", "SoapBottle"}),
    ("Grab the mug from the kitchen and the pen, and put them on the desk.", {"Mug", "Pen"}),
    # a desk cannot be carried: it is a second source, not a second object
    ("Take the cup from the table and the desk to the sink.", {"Cup"}),
])
def test_an_object_joined_to_a_source_is_an_object(text: str, objects: set[str]) -> None:
    assert {g.items[0].object.type for g in _read(text)} == objects


def test_copy_keeps_the_dag_edges_and_counts_on() -> None:
    goals = _read("Put all the apples from the table in the fridge, then come back holding the remote.")
    dag = build_goal_dag(goals)
    apples = next(g for g in goals if g.items[0].object.type == "Apple")
    held = next(g for g in goals if g.items[0].predicate == "isHeld")
    assert dag.has_edge(apples.id, held.id)
    second = copy_for_next_of_all(dag, apples)
    third = copy_for_next_of_all(dag, second)
    assert [second.hints["count_of"], third.hints["count_of"]] == ["2/all", "3/all"]
    assert third.id == f"{apples.id}+3" and third.hints["distinct_group"] == apples.hints["distinct_group"]
    assert dag.has_edge(second.id, held.id) and dag.has_edge(third.id, held.id)  # holding stays last
    assert dag.nodes[third.id]["order"] == dag.nodes[apples.id]["order"]


def _objs() -> list[KnownObject]:
    return [KnownObject("Egg|fridge-a", "Egg", "Kitchen", (5.0, 5.0, 1.0)),
            KnownObject("Egg|fridge-b", "Egg", "Kitchen", (5.2, 5.1, 1.2)),
            KnownObject("Egg|counter", "Egg", "Kitchen", (1.0, 1.0, 0.9)),
            KnownObject("Fridge|1", "Fridge", "Kitchen", (5.1, 5.0, 0.9))]


def test_next_of_all_keeps_to_the_named_source() -> None:
    goal = Goal("g1.1", (_item("Egg", "inReceptacle", target="GarbageCan"),), "all the eggs from the fridge",
                {"object_source": "Fridge", "count_of": "1/all", "distinct_group": "g1:0"})
    ctx = _ctx(_objs(), excluded=["Egg|fridge-a"])  # placed by the first copy
    assert next_of_all(goal, ctx, {"Egg|fridge-a"}).object_id == "Egg|fridge-b"
    # the egg on the counter is nearer the agent but not "from the fridge"
    assert next_of_all(goal, ctx, {"Egg|fridge-a", "Egg|fridge-b"}) is None
    assert next_of_all(goal, _ctx(_objs(), held="Egg|fridge-b"), {"Egg|fridge-a"}) is None  # in hand: being done
    no_fridge = [o for o in _objs() if o.object_type != "Fridge"]
    assert next_of_all(goal, _ctx(no_fridge), set()) is None  # the source is unknown: nothing counts as from it


def test_next_of_all_without_relation_and_with_state() -> None:
    every = Goal("g1.1", (_item("Egg", "inReceptacle", target="GarbageCan"),), "all the eggs", {"count_of": "1/all"})
    assert next_of_all(every, _ctx(_objs()), {"Egg|fridge-a", "Egg|fridge-b"}).object_id == "Egg|counter"
    in_room = Goal("g1.1", (_item("Egg", "inReceptacle", target="GarbageCan"),), "all the eggs in the bathroom",
                   {"count_of": "1/all", "object_room": "Bathroom"})
    assert next_of_all(in_room, _ctx(_objs()), set()) is None
    unnamed = _objs() + [KnownObject("Egg|unnamed-region", "Egg", None, (3.0, 3.0, 0.9))]
    assert next_of_all(in_room, _ctx(unnamed), set()).object_id == "Egg|unnamed-region"
    lamps = [KnownObject("FloorLamp|on", "FloorLamp", None, (2.0, 0.0, 0.0), {"isToggled": True}),
             KnownObject("FloorLamp|off", "FloorLamp", None, (1.0, 0.0, 0.0), {"isToggled": False})]
    off = Goal("g1.1", (_item("FloorLamp", "isToggled", False),), "turn off all the lamps", {"count_of": "1/all"})
    assert next_of_all(off, _ctx(lamps), set()).object_id == "FloorLamp|on"
    assert next_of_all(off, _ctx(lamps), {"FloorLamp|on"}) is None


def test_agent_moves_all_the_cups_it_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dev house 0 has two cups on the kitchen counter: "all the cups" with no number is both
    (one would score GC 0.5 on the count-2 item), as two goals, the second added by the agent."""
    from tests.test_holomind_agent import cup_in_fridge, run_guarded

    episode = dataclasses.replace(
        cup_in_fridge(300), id="test-all-cups",
        instructions={"detailed": "Put all the cups from the counter in the fridge."},
        checklist=[ChecklistItem(ObjectSelector("Cup", None, None, 2), "inReceptacle", ObjectSelector("Fridge"))])
    result, guard, agent = run_guarded(episode, monkeypatch)
    assert guard.violations == []
    assert result.extra["goals_parsed"] == 1
    assert result.gc == 1.0, result.extra.get("agent_notes")
    assert len(result.extra["goals"]) == 2 and all(g["status"] == "done" for g in result.extra["goals"].values())
    assert any("'all' covers" in n for n in result.extra["agent_notes"])
