"""Is a role's answer an answer to this goal? Checks any role filler must pass (issue 34, part 2).

Why: a schema says what shape an answer has, not whether it serves the goal. A recorded run of a
small model in the LLM roles passed every schema and still planned a single ``pick`` for "put the
vase in the box" and pinned a credit card to the vase goal; the deterministic roles hide this
because their answers are usually right. These checks read the goal (its predicate and types)
and the agent's memory (the types of known ids), never ground truth:

- ``binding_problems``: a pinned or bound object has the type the goal's item asks for (or the
  type it is sliced from: the Apple is bound for an AppleSliced item before slicing);
- ``plan_problems``: a non-empty plan contains the interaction the goal's predicate needs, on the
  bound object or receptacle (a ``place`` into the target for inReceptacle, ``toggle_on`` for
  isToggled true, ``slice`` for isSliced, ...). An empty plan is allowed: the goal may already
  hold, and the goal check after it (``planner.goal_check``) says whether it does.

The needed interaction is each predicate's recipe's ``needs`` (``planner.recipes``), derived from
the interaction table for one-interaction predicates, so a new predicate of that kind is checked
without code here.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from household.checklist import PREDICATES, ChecklistItem, sliced_base_type
from planner.recipes import recipe_for

def type_fits(actual: str, wanted: Iterable[str]) -> bool:
    """A bound object fits a selector type, or is what that type is sliced from."""
    wanted = set(wanted)
    return actual in wanted or any(sliced_base_type(w) == actual for w in wanted)


def needed_skills(item: ChecklistItem) -> tuple[tuple[str, ...], str | None]:
    """(skills of which a plan needs one, the binding role it must act on or None) for an item;
    ((), None) when nothing is required (a goal that is an absence, e.g. isDirty true). Read from
    the predicate's recipe (planner.recipes), beside the plan the deterministic role makes."""
    if item.predicate not in PREDICATES:
        return (), None
    return recipe_for(item.predicate).needs(item)


def plan_problems(subgoals: Iterable[Mapping[str, Any]], items: Iterable[ChecklistItem],
                  bindings: Mapping[str, str | None], where: str = "$.subgoals") -> list[str]:
    """What a plan lacks for the goal's items (empty list: it has what each needs)."""
    plan = list(subgoals)
    if not plan:
        return []
    out: list[str] = []
    for item in items:
        skills, role = needed_skills(item)
        if not skills:
            continue
        bound = bindings.get(role) if role else None
        acting = [sg for sg in plan if sg.get("skill") in skills]
        if bound:
            acting = [sg for sg in acting
                      if bound in ((sg.get("args") or {}).get("object_id"), (sg.get("args") or {}).get("receptacle_id"))]
        if not acting:
            on = f" on {bound}" if bound else ""
            out.append(f"at {where}: the goal ({item.describe()}) needs {' or '.join(skills)}{on}; "
                       f"the plan has {[sg.get('skill') for sg in plan]}")
    return out


def binding_problems(pins: Mapping[str, str | None], items: Iterable[ChecklistItem],
                     types_by_id: Mapping[str, str], where: str) -> list[str]:
    """Pinned/bound ids whose remembered type does not fit the role's types in ``items``."""
    items = list(items)
    wanted = {"object": {i.object.type for i in items},
              "target": {i.target.type for i in items if i.target is not None}}
    out: list[str] = []
    for role, object_id in pins.items():
        if not object_id or not wanted.get(role):
            continue
        actual = types_by_id.get(object_id)
        if actual is None:
            out.append(f"at {where}.{role}: {object_id!r} is not an object id in the agent's memory")
        elif not type_fits(actual, wanted[role]):
            out.append(f"at {where}.{role}: {object_id!r} is a {actual}, but the goal's {role} must be one of "
                       f"{sorted(wanted[role])}")
    return out
