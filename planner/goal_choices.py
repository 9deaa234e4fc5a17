"""Which object a goal may use, learnt while doing it: what a failed attempt teaches about the
objects it grounded, what the agent's experience says about receptacle types, what a close look
at the object shows, and saying which object a counted or described goal was done with.

Why a module: these rules decide the agent's exclusions (``EpisodeState.excluded_now``,
``rejected_ids``, ``unreachable``) and nothing else; the goal loop in ``planner.holomind`` calls
them at fixed points of an attempt. They act on typed situations (``household.outcomes``), not on
message text, so they work the same whichever critic or backend reported the failure.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from household.outcomes import Failure
from planner.episode_state import EpisodeState
from planner.object_memory import ObjectMemory
from planner.refusals import REFUSED_SITUATIONS, ReceptacleRefusals
from planner.roles import Goal, PlannerContext
from planner.skills import NOT_AS_DESCRIBED, UNREACHABLE, Replan

# Replan situations (household.outcomes.Failure values) after which the grounded object will not do: the
# receptacle refused the held type (planner.refusals.REFUSED_SITUATIONS, remembered in the agent's
# ``refusals``), or the object is not one / cannot act (below).
UNUSABLE_SITUATIONS = frozenset({Failure.UNKNOWN_OBJECT.value, Failure.NOT_CAPABLE.value})


class ChoosingAgent(Protocol):
    """What these rules read and call on the agent (``planner.holomind.HoloMindAgent``)."""

    state: EpisodeState
    tracker: ObjectMemory
    refusals: ReceptacleRefusals
    stats: Any
    ground_role: Any

    def context(self, relax_rooms: bool = False, relax_relations: bool = False) -> PlannerContext: ...
    def note(self, text: str) -> None: ...


def check_as_described(agent: ChoosingAgent, goal: Goal, sub: Any, since: int) -> None:
    """Walking up to pick it, the agent looks at the object closely: "wash the dirty cup" with
    a cup seen clean (since this attempt began, before anything was washed) is the wrong cup
    (washing it leaves the dirty one dirty), so ground another (unless the house is explored
    and no cup was seen dirty: then the guess stands)."""
    item = goal.items[0]
    if sub.skill != "pick" or item.predicate != "isDirty" or item.expected is not False \
            or goal.id in agent.state.relaxed_relations:
        return
    oid = sub.args.get("object_id")
    seen, dirty = agent.tracker.seen_state(oid, "isDirty", since) if oid else (False, None)
    if seen and dirty is False:
        raise Replan("low", f"{oid} is clean already: the dirty one is another", NOT_AS_DESCRIBED, (oid,))


def on_replan(state: EpisodeState, exc: Replan, bindings: dict[str, str | None], attempt: int) -> None:
    """What a Replan teaches about the grounded objects. It acts on the typed situation and
    targets only, so it works the same whichever critic decided (rules, or an LLM writing
    free text); the diagnosis is for the notes."""
    named = [b for b in bindings.values() if b and b in exc.target_ids]
    if named and exc.situation == UNREACHABLE:
        state.unreachable.update(named)  # navigation tried hard already: ground another
        state.excluded_now.update(named)
    # (a refusal was recorded in agent.refusals where it happened, in the skill: it also
    # keeps the receptacle from later goals and retries for this type)
    refused = exc.situation in REFUSED_SITUATIONS or exc.situation == NOT_AS_DESCRIBED
    unusable = exc.situation in UNUSABLE_SITUATIONS
    if named and (refused or unusable or attempt >= 1):
        state.excluded_now.update(named)  # this object will not do: ground another
        if unusable:
            state.rejected_ids.update(named)
    elif attempt >= 1 and bindings.get("object"):
        state.excluded_now.add(cast(str, bindings["object"]))  # set: the get() above


def note_choice(agent: ChoosingAgent, goal: Goal, ground: Any) -> None:
    """Say which object a counted, "one of" or relation-qualified goal was done with."""
    chosen = ground.bindings.get("object")
    hints = goal.typed_hints
    if hints.distinct_group and chosen:
        before = sorted(agent.state.group_used.get(hints.distinct_group, set()))
        agent.state.group_used.setdefault(hints.distinct_group, set()).add(chosen)
        agent.note(f"{goal.id}: {hints.count_of} of {goal.items[0].object.type} -> {chosen}"
                   + (f" (distinct from {', '.join(before)})" if before else ""))
    relation = [f"{k}={v}" for k, v in (("object_source", hints.object_source), ("object_near", hints.object_near),
                                        ("object_room", hints.object_room), ("quantifier", hints.quantifier))
                if v is not None]
    if relation and chosen:
        agent.note(f"{goal.id}: chose {chosen} for {goal.items[0].object.type} ({'; '.join(relation)})")


def avoid_known_misfits(agent: ChoosingAgent, goal: Goal, ground: Any) -> Any:
    """Experience says this object type found no room on (or was refused by) that receptacle
    type before: exclude such receptacles and ground again (at most a few times)."""
    if goal.items[0].predicate != "inRoom":
        return ground  # only where the receptacle is the agent's choice, not the instruction's
    obj_type = goal.items[0].object.type
    for _ in range(4):
        target = ground.bindings.get("target")
        rec = agent.tracker.get(target) if target else None
        if rec is None or not agent.refusals.refuses_type(rec.object_type, obj_type):
            return ground
        agent.state.excluded_now.add(target)
        agent.stats["experience_reused"] += 1
        agent.note(f"experience: {obj_type} does not go on {rec.object_type}; not {target}")
        ground = agent.ground_role.ground(goal, agent.context())
    return ground
