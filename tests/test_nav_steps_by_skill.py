"""benchmarks/nav_steps_by_skill.py: the skill chain of a suspended generator stack, and the
groups the chains fall in (a move sent by a frontier walk inside an approach is a frontier walk)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Generator

from benchmarks.nav_steps_by_skill import group_of, skill_chain


def walk() -> Generator[str, None, None]:
    yield "MoveAhead"


def explore_once() -> Generator[str, None, None]:
    yield from walk()


def navigate_to() -> Generator[str, None, None]:
    yield from explore_once()


def interact() -> Generator[str, None, None]:
    yield from navigate_to()


def test_the_chain_is_read_from_the_suspended_generators() -> None:
    script = interact()
    assert next(script) == "MoveAhead"
    assert skill_chain(SimpleNamespace(_script=script)) == ("interact", "navigate_to", "explore_once", "walk")
    assert skill_chain(SimpleNamespace()) == ()


def test_groups() -> None:
    assert group_of(("_run", "_do_goal", "run", "interact", "navigate_to", "_approach", "walk")) == "walk to act"
    assert group_of(("_run", "run", "interact", "navigate_to", "_approach", "explore_once", "walk")) == "frontier walk"
    assert group_of(("_run", "search", "explore_once", "turn_to")) == "turn after frontier"
    assert group_of(("_run", "search", "navigate_to", "_approach", "walk")) == "search: receptacle visits"
    assert group_of(("_run", "search", "explore_once", "look_at_the_floor_around")) == "recovery"
    assert group_of(("_run", "look_around")) == "look round at start"
    assert group_of(("_run", "_do_goal", "step")) == "other"
