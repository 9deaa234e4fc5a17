"""Scoring a decomposition against a checklist: the matching rule the benchmark and tests use."""

from __future__ import annotations

from typing import Sequence

from household.checklist import ChecklistItem
from planner.roles import Goal


# ---------------------------------------------------------------------------- measuring a parse
def items_match(parsed: ChecklistItem, expected: ChecklistItem) -> bool:
    """The matching rule used to score a decomposition against an episode checklist.

    Same object type, predicate, effective value (omitted boolean = True), object count and
    target type; rooms (object's and target's) must agree only when both sides name one, because
    a checklist omits a room the sentence never said (and a concise instruction drops rooms the
    detailed one gives), and a parse can not invent one.
    """
    if parsed.predicate != expected.predicate or parsed.object.type != expected.object.type:
        return False
    if parsed.expected != expected.expected or parsed.object.units != expected.object.units:
        return False
    if (parsed.target is None) != (expected.target is None):
        return False
    if parsed.target is not None and expected.target is not None:
        if parsed.target.type != expected.target.type:
            return False
        if parsed.target.room and expected.target.room and parsed.target.room != expected.target.room:
            return False
    if parsed.object.room and expected.object.room and parsed.object.room != expected.object.room:
        return False
    return True


def match_count(parsed: Sequence[ChecklistItem], expected: Sequence[ChecklistItem]) -> int:
    """How many items pair up one-to-one under ``items_match`` (greedy, exact matches first)."""
    left = list(expected)
    matched = 0
    order = sorted(range(len(parsed)), key=lambda i: parsed[i] not in left)
    for i in order:
        for j, e in enumerate(left):
            if items_match(parsed[i], e):
                del left[j]
                matched += 1
                break
    return matched


def goal_items(goals: Sequence[Goal]) -> list[ChecklistItem]:
    return [item for g in goals for item in g.items]
