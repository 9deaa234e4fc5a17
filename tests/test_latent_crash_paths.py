"""Three paths mypy showed could crash, each reached with the input that triggers it (issue 28):
a schedule commitment with no due time (WorldLines samples), "toast the bread" where Bread is
not sliceable (the parser), and a recipe role with no object type (grounding's required roles)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from household.checklist import ChecklistItem, ObjectSelector
from memory.belief.events import Commitment
from planner.roles import Goal


def _schedule_sampler(commitments: list[Commitment]) -> object:
    """The WorldLines sample generator, its replay reduced to the perceived schedule events."""
    from evaluation.worldlines.samples import _Gen

    gen = _Gen.__new__(_Gen)
    events = [SimpleNamespace(id=f"e{i}", session="s1", commitment=c) for i, c in enumerate(commitments)]
    gen.r = SimpleNamespace(perceived_events=lambda c: events, by_id={e.id: e for e in events})
    gen.m = SimpleNamespace(house_id="h", devices=[], mobiles=[])
    gen.rng = SimpleNamespace(choice=lambda options: "schedule")
    return gen


def test_a_schedule_with_no_due_time_asks_no_question() -> None:
    """The latest schedule has no time: no "when" question (it used to format None as a time)."""
    dated = Commitment("schedule", "robot", "guest visit", due=90000.0)
    undated = Commitment("schedule", "robot", "guest visit, time to be agreed")
    assert _schedule_sampler([dated, undated]).temporal(100000.0) is None
    sample = _schedule_sampler([undated, dated]).temporal(100000.0)
    assert sample is not None and sample.evidence == ["e1"] and sample.answer


def test_toast_where_bread_is_not_sliceable_toasts_the_bread(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a catalog where Bread has no slices, "toast the bread" is the bread itself cooked; it
    used to give the goal no type, and the clause was reported as an unrecognised object. That
    catalog does not make bread cookable either, so the clause is reported with the database's
    reason and no goal is made (since 2026-11-30: a state the object cannot take is no goal)."""
    import planner.language.parser as parser_module

    real = parser_module._affordances

    def no_bread_slices(asset_db: object) -> dict[str, frozenset[str]]:
        flags = dict(real(asset_db))
        flags["Bread"] = flags["Bread"] - {"sliceable"}
        return flags

    monkeypatch.setattr(parser_module, "_affordances", no_bread_slices)
    parser = parser_module.InstructionParser()
    assert "Bread" not in parser.sliced
    goals = parser.decompose("Toast the bread.")
    assert goals == []
    assert [u.reason for u in parser.unparsed] == ["the asset database says Bread is not cookable"]

    def bread_cooks_whole(asset_db: object) -> dict[str, frozenset[str]]:
        flags = no_bread_slices(asset_db)
        flags["Bread"] = flags["Bread"] | {"cookable"}
        return flags

    monkeypatch.setattr(parser_module, "_affordances", bread_cooks_whole)
    parser = parser_module.InstructionParser()
    goals = parser.decompose("Toast the bread.")
    assert parser.unparsed == []
    assert [[(i.object.type, i.predicate, i.expected) for i in g.items] for g in goals] == [[("Bread", "isCooked", True)]]


def test_toast_where_bread_is_sliceable_is_unchanged() -> None:
    from planner.instruction_parser import InstructionParser

    goals = InstructionParser().decompose("Toast the bread.")
    assert [(i.object.type, i.predicate) for g in goals for i in g.items] == [("Bread", "isSliced"),
                                                                                ("BreadSliced", "isCooked")]


def test_a_recipe_role_with_no_type_needs_no_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    """A recipe role of type None ("no station") is not searched for: the goal loop's "could not
    find" reason used to join a None type and raise a TypeError."""
    import dataclasses

    import planner.recipes as recipes
    from planner.deterministic import required_roles

    cooked = recipes.RECIPES["isCooked"]
    monkeypatch.setitem(recipes.RECIPES, "isCooked", dataclasses.replace(
        cooked, roles=lambda item: [("target", None, None), ("tool", "Knife", None)]))
    goal = Goal("g1", (ChecklistItem(ObjectSelector("Potato"), "isCooked", None, True),), "cook the potato")
    roles = required_roles(goal)
    assert roles == [("object", "Potato", None), ("tool", "Knife", None)]
    assert ", ".join(t for _, t, _ in roles)  # what the not-found reason joins
