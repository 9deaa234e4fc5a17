"""Roles checked against the goal, whoever fills them (planner.plan_checks; issue 34 part 2):
a plan must contain the interaction the goal's predicate needs, a pinned or bound object must
have the type the goal asks for, and the grounder's schema lists only fitting ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from household.checklist import ChecklistItem
from planner.deterministic import RecipeTranslator
from planner.llm import schemas
from planner.plan_checks import needed_skills, plan_problems
from planner.roles import Goal, Grounding, KnownObject, PlannerContext

EPISODES = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev_v2"


def _ctx() -> PlannerContext:
    known = [KnownObject("Vase|1", "Vase", "LivingRoom", (1.0, 1.0, 0.5), {}, 3),
             KnownObject("Box|2", "Box", "LivingRoom", (2.0, 1.0, 0.5), {}, 3),
             KnownObject("CreditCard|3", "CreditCard", "LivingRoom", (3.0, 1.0, 0.5), {}, 3)]
    return PlannerContext(step=5, held_object_id=None, held_object_type=None, known_objects=known,
                          rooms_seen=["LivingRoom"], history=[], experience=[],
                          object_types=["Box", "CreditCard", "Vase"])


def _goal() -> Goal:
    item = ChecklistItem.from_dict({"object": {"type": "Vase"}, "predicate": "inReceptacle", "target": {"type": "Box"}})
    return Goal("g1", (item,), "put the vase in the box")


BOUND = Grounding("g1", {"object": "Vase|1", "target": "Box|2"})


def test_a_place_less_plan_for_a_placement_is_refused_with_the_reason() -> None:
    pick_only = {"subgoals": [{"skill": "pick", "args": {"object_id": "Vase|1"}}]}
    problems = schemas.validate_translate(pick_only, _goal(), BOUND, _ctx())
    assert problems and "needs place on Box|2" in problems[0] and "['pick']" in problems[0]
    wrong_target = {"subgoals": [{"skill": "pick", "args": {"object_id": "Vase|1"}},
                                 {"skill": "place", "args": {"receptacle_id": "CreditCard|3"}}]}
    assert "needs place on Box|2" in schemas.validate_translate(wrong_target, _goal(), BOUND, _ctx())[0]
    whole = {"subgoals": [{"skill": "pick", "args": {"object_id": "Vase|1"}},
                          {"skill": "place", "args": {"receptacle_id": "Box|2"}}]}
    assert schemas.validate_translate(whole, _goal(), BOUND, _ctx()) == []
    assert schemas.validate_translate({"subgoals": []}, _goal(), BOUND, _ctx()) == []  # may already hold


def test_a_refiner_that_pins_the_wrong_type_or_another_goal_is_refused() -> None:
    pinned_card = {"id": "g1", "text": "x", "items": [
        {"object": {"type": "Vase", "id": "CreditCard|3"}, "predicate": "inReceptacle", "target": {"type": "Box"}}]}
    problems = schemas.validate_refine(pinned_card, _goal(), _ctx())
    assert problems and "'CreditCard|3' is a CreditCard" in problems[0] and "$.items[0].object" in problems[0]
    other_goal = {"id": "g1", "text": "x", "items": [{"object": {"type": "Vase"}, "predicate": "isHeld"}]}
    assert "refine this goal" in schemas.validate_refine(other_goal, _goal(), _ctx())[0]
    fine = {"id": "g1", "text": "x", "items": [
        {"object": {"type": "Vase", "id": "Vase|1"}, "predicate": "inReceptacle", "target": {"type": "Box", "id": "Box|2"}}]}
    assert schemas.validate_refine(fine, _goal(), _ctx()) == []


def test_the_grounders_schema_lists_only_fitting_ids_per_role() -> None:
    props = schemas.ground_schema(_ctx(), _goal())["properties"]["bindings"]["properties"]
    assert props["object"]["anyOf"][0]["enum"] == ["Vase|1"]
    assert props["target"]["anyOf"][0]["enum"] == ["Box|2"]
    assert set(props["tool"]["anyOf"][0]["enum"]) == {"Vase|1", "Box|2", "CreditCard|3"}  # no type asked
    assert props["object"]["anyOf"][1] == {"type": "null"}  # "not seen yet"


@pytest.mark.parametrize("item, skills", [
    ({"object": {"type": "Lamp"}, "predicate": "isToggled", "value": True}, ("toggle_on",)),
    ({"object": {"type": "Fridge"}, "predicate": "isOpen", "value": False}, ("close",)),
    ({"object": {"type": "Vase"}, "predicate": "isBroken", "value": True}, ("break",)),
    ({"object": {"type": "Apple"}, "predicate": "isSliced"}, ("slice",)),
    ({"object": {"type": "Mug"}, "predicate": "isHeld"}, ("pick",)),
])
def test_each_predicate_names_the_interaction_it_needs(item: dict, skills: tuple[str, ...]) -> None:
    assert needed_skills(ChecklistItem.from_dict(item))[0] == skills


def test_the_deterministic_recipes_pass_the_same_checks_on_every_v2_goal() -> None:
    """The check is what every recipe already does: no deterministic plan would be refused."""
    translator = RecipeTranslator()
    checked = 0
    for path in sorted(EPISODES.glob("*.json")):
        for raw in json.loads(path.read_text())["checklist"]:
            item = ChecklistItem.from_dict(raw)
            goal = Goal("g", (item,), "x")
            bindings = {"object": "O|1", "target": "T|2" if item.target is not None or item.predicate in (
                "inRoom", "isCooked", "isFilledWithLiquid", "isDirty") else None, "tool": "K|3", "switch": "S|4"}
            plan = [sg.to_dict() for sg in translator.translate(goal, Grounding("g", bindings), _ctx())]
            assert plan_problems(plan, goal.items, bindings) == [], (path.name, raw, plan)
            checked += 1
    assert checked > 1000


def test_the_recipe_registry_raises_on_unregistered_predicates_and_derives_the_simple_ones() -> None:
    from planner.recipes import RECIPES, Plan, recipe_for

    with pytest.raises(ValueError, match="unknown predicate 'isLevitating'"):
        recipe_for("isLevitating")
    item = ChecklistItem.from_dict({"object": {"type": "Vase"}, "predicate": "isBroken", "value": True})
    assert "isBroken" not in RECIPES  # derived from the interaction table
    plan = recipe_for("isBroken").plan(Plan("g", item, True, {"object": "Vase|1"}))
    assert [(s.skill, s.args) for s in plan] == [("break", {"object_id": "Vase|1"})]
    assert recipe_for("isSliced").tools(ChecklistItem.from_dict({"object": {"type": "Apple"},
                                                                 "predicate": "isSliced"})) == ("Knife", "ButterKnife")
