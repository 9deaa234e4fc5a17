"""Which object, if any, an "all the X" goal should be done with next.

"Put all the eggs from the fridge in the bin" names no number: the agent cannot know how many
eggs are in the fridge until it has looked. The parser makes one goal of it (``count_of``
"1/all", ``planner.goal_dag.single_item_goals``); each time a copy is done, the agent asks here
whether it knows of another object the phrase covers, and if so adds the next copy
(``planner.goal_dag.copy_for_next_of_all``). The check is strict where grounding is lenient:
grounding only ranks objects by a relation ("from the fridge": near a fridge first), but "all"
must not sweep up every egg in the house, so here an object counts only when it satisfies every
relation the phrase gives, as far as the agent's own memory can tell.
"""

from __future__ import annotations

import math
from typing import Iterable

from household.checklist import predicates_where
from planner.deterministic import near_anchor
from planner.roles import Goal, KnownObject, PlannerContext

# Copies of one "all" goal at most: a bound on a misread house (a cluttered shelf), not a count.
MAX_COPIES = 8

_STATE_PREDICATES = predicates_where(moves=False)  # household.checklist: what does not move its object


def next_of_all(goal: Goal, context: PlannerContext, done: Iterable[str]) -> KnownObject | None:
    """The nearest known object that the "all" phrase of ``goal`` covers and no copy has used
    (``done``: the objects of the goal's group), or None when the agent knows of none."""
    item = goal.items[0]
    skip = set(context.excluded_ids) | set(done)
    if context.held_object_id:
        skip.add(context.held_object_id)
    cands = [o for o in context.known_objects if o.object_type == item.object.type and o.object_id not in skip]
    hints = goal.typed_hints
    for room in (item.object.room, hints.object_room):
        if room:  # an object in a region the agent has not named yet may be in that room
            cands = [o for o in cands if o.room in (room, None)]
    for anchor_type in (hints.object_source, hints.object_near):
        if anchor_type:  # the grounder's own radius test, here as a filter rather than a ranking
            cands = near_anchor(cands, anchor_type, context)
    if item.predicate in _STATE_PREDICATES:  # "turn off all the lamps": not those already off
        cands = [o for o in cands if o.state.get(item.predicate) != item.expected]
    if not cands:
        return None
    agent = context.agent_position
    return min(cands, key=lambda o: math.dist(o.position[:2], agent[:2]) if agent else 0.0)
