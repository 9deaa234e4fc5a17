"""The end of an episode: the agent's own account of each goal, read again once every goal has
run, and the goal as the report shows it.

Why a module: the goal loop (``planner.holomind``) checks a goal when it is done; by the end a
later goal may have undone it, the map may name its room otherwise, and more instances of what
the instruction described may have been seen. These checks read the agent's state, never act
(except that a goal found undone is done again, once, and its object put back where the goal had
put it when doing it again fails: ``redo_undone``; and a goal done in place on an instance its
description named less well than one seen since is done on that one too: ``redo_on_better_fit``),
and run once each per episode: the
own-action recheck when every goal has run (``redo_undone``) and again for the report only if a
goal was redone since (``final_checks``); the description recheck once, for the report. Run
twice on an unchanged state they would say nothing new, so the report's notes hold each once.
"""

from __future__ import annotations

from typing import Any, Callable, Generator, Protocol

from household.types import Action, Observation
from planner.deterministic import ambiguous_description, better_fit, unexplored_description, unobserved_description
from planner.episode_state import EpisodeState
from planner.goal_check import GoalCheck, RoomNamer, recheck_after_own_actions, recheck_descriptions, recheck_rooms
from planner.object_memory import ObjectMemory
from planner.occupancy import OccupancyMap
from planner.roles import Goal, PlannerContext, Subgoal
from planner.skills import Replan, Skills


class EndCheckAgent(Protocol):
    """What the end checks read and call on the agent (``planner.holomind.HoloMindAgent``)."""

    state: EpisodeState
    goals: list[Goal]
    history: list[str]
    tracker: ObjectMemory
    skills: Skills
    obs: Observation
    occupancy: OccupancyMap

    @property
    def rooms(self) -> RoomNamer: ...
    @property
    def held_id(self) -> str | None: ...
    def context(self, relax_rooms: bool = False, relax_relations: bool = False) -> PlannerContext: ...
    def note(self, text: str) -> None: ...
    def _recheck_own_actions(self) -> list[str]: ...
    def _do_goal(self, goal: Goal) -> Generator[Action, Observation, bool]: ...
    def _emit_plan(self) -> None: ...
    def frontier_failed(self, x: float, z: float) -> bool: ...


def recheck_own_actions(agent: EndCheckAgent) -> list[str]:
    """Done goals checked again after the agent's own later actions
    (``planner.goal_check.recheck_after_own_actions``) and with the room names of its map as it
    is now (``recheck_rooms``); returns the ids now contradicted."""
    agent.context()  # brings the room names up to date with everything seen
    state = agent.state
    out = []
    for g in agent.goals:
        check = state.goal_checks.get(g.id)
        outcome = state.goal_outcome.get(g.id, {})
        if state.goal_status.get(g.id) != "done" or check is None or outcome.get("reason") != "done":
            continue
        bindings = dict(outcome.get("bindings", {}))
        again = (recheck_after_own_actions(g, check, bindings, int(outcome.get("at_step", 0)),
                                           state.touched, agent.held_id, agent.tracker, agent.rooms)
                 or recheck_rooms(g, check, bindings, agent.tracker, agent.rooms))
        if again is not None:
            state.goal_checks[g.id] = again
            agent.note(f"{g.id}: checked again at the end: {again.status}: {again.reason}")
            if again.status == "contradicted":
                out.append(g.id)
    state.end_recheck_due = False
    return out


def redo_undone(agent: EndCheckAgent) -> Generator[Action, Observation, None]:
    """Once every goal has run: a goal that a later goal undid (the agent's own check says so:
    ``recheck_own_actions``: undone by a later goal, or put where the map no longer names the
    room) is done again, once."""
    state = agent.state
    for gid in agent._recheck_own_actions():
        goal = next((g for g in agent.goals if g.id == gid), None)
        if goal is None or gid in state.redone:
            continue
        state.redone.add(gid)
        state.end_recheck_due = True  # the redo may undo another: the report checks again
        agent.note(f"{gid}: its check at the end says it no longer holds; doing it again")
        own = state.goal_outcome.get(gid, {}).get("bindings", {}).get("object")
        if own:
            state.used_ids.discard(own)  # its own object is not "used by another goal"
        state.rechecked.discard(gid)
        before, doubt_at_end, redo_from = dict(state.goal_outcome.get(gid, {})), state.goal_checks.get(gid), agent.obs.step
        ok = yield from agent._do_goal(goal)
        state.goal_status[gid] = "done" if ok else "failed"
        if not ok:
            yield from _put_back(agent, goal, before, doubt_at_end, int(redo_from))
        agent._emit_plan()
        agent.history.append(f"{goal.text} (again) -> {state.goal_status[gid]}")


def redo_on_better_fit(agent: EndCheckAgent) -> Generator[Action, Observation, None]:
    """Once every goal has run: a goal done on the first instance its relation seemed to name
    ("water the plant by the dresser") is done again, once, on another instance seen since that
    the relation names better (``planner.deterministic.better_fit``: the plant against the
    dresser, where the first stands nearer the bed). Only goals that change their object in
    place, so the first stays as it was; a redo that fails leaves the goal as it was. Not while
    something is in hand: a goal may want it held to the end, and watering a plant needs the hand
    for the vessel (dev-056-1: the book to hold was put down to water the other plant)."""
    state = agent.state
    if agent.held_id is not None:
        return
    for goal in list(agent.goals):
        gid = goal.id
        outcome = state.goal_outcome.get(gid, {})
        if state.goal_status.get(gid) != "done" or outcome.get("reason") != "done" or gid in state.redone:
            continue
        chosen = outcome.get("bindings", {}).get("object")
        alt = better_fit(goal, chosen, agent.context())
        if alt is None:
            continue
        state.redone.add(gid)
        state.end_recheck_due = True
        agent.note(f"{gid}: {alt}, seen since, fits its description better than {chosen}; doing it on {alt} too")
        before, check_before = dict(outcome), state.goal_checks.get(gid)
        state.rechecked.discard(gid)
        ok = yield from agent._do_goal(goal)
        state.goal_status[gid] = "done"  # on the first instance still, if not on this one
        if not ok:
            state.goal_outcome[gid] = before
            if check_before is not None:
                state.goal_checks[gid] = check_before
            agent.note(f"{gid}: doing it on {alt} failed; it stays done on {chosen}")
        agent._emit_plan()
        agent.history.append(f"{goal.text} (on {alt}) -> {'done' if ok else 'failed'}")


def _put_back(agent: EndCheckAgent, goal: Goal, before: dict[str, Any], doubt_at_end: GoalCheck | None,
              redo_from: int) -> Generator[Action, Observation, None]:
    """A redo that failed must not leave things worse than before it: its object, picked up
    again and then refused everywhere else (dev-072-0: the ball carried out of a kitchen the final
    map had renamed, then no room on any counter), goes back where the goal had put it; a redo
    that never moved it left it there. Either way the goal is as it was before the redo (done,
    with the end check that sent it back, and that doing it again failed). The object put down
    somewhere else by the redo, or putting it back failed: the goal stays failed."""
    state = agent.state
    own = before.get("bindings", {}).get("object")
    where = before.get("bindings", {}).get("target")
    if not own or before.get("reason") != "done":
        return
    failed = state.goal_outcome.get(goal.id, {})
    why = f"{failed.get('reason', 'failed')}: {failed.get('detail', '')}".rstrip(": ")
    if agent.held_id == own and where:
        try:
            yield from agent.skills.run(Subgoal("place", {"receptacle_id": where}, goal.id))
        except Replan as exc:
            agent.note(f"{goal.id}: could not put {own} back on {where}: {exc.diagnosis}")
        if agent.held_id == own:
            return
        how = f"put back on {where}, where the goal had put it"
    elif state.touched.get(own, (-1, ""))[0] >= redo_from:
        return  # moved by the redo and not in hand: somewhere else now
    else:
        how = f"{own} was not moved by it"
    state.goal_status[goal.id] = "done"
    state.goal_outcome[goal.id] = before
    doubt = doubt_at_end or GoalCheck("unverified", "its check at the end doubted it")
    state.goal_checks[goal.id] = GoalCheck(doubt.status, f"{doubt.reason}; doing it again failed ({why}), {how}")
    agent.note(f"{goal.id}: doing it again failed; {how}")


def final_checks(agent: EndCheckAgent) -> None:
    """What the report needs checked: the own-action recheck where it has not run since the last
    action (the episode ended before every goal ran, or a goal was redone after it), then the
    description recheck, once."""
    if agent.state.end_recheck_due:
        agent._recheck_own_actions()
    if not agent.state.descriptions_rechecked:
        agent.state.descriptions_rechecked = True
        _recheck_descriptions(agent)


def _recheck_descriptions(agent: EndCheckAgent) -> None:
    """At the end, with everything the agent saw (``planner.goal_check.recheck_descriptions``)."""
    state = agent.state
    done = [g for g in agent.goals if state.goal_status.get(g.id) == "done"
            and getattr(state.goal_checks.get(g.id), "status", None) == "verified"]
    if done:
        seen_all: list[bool] = []  # the frontiers, computed once and only when a goal asks

        def house_explored() -> bool:
            if not seen_all:
                seen_all.append(explored(agent))
            return seen_all[0]

        state.goal_checks.update(recheck_descriptions(done, state.goal_checks, agent.context(),
                                                      lambda goal, context: doubt(state, goal, context, house_explored)))


def doubt(state: EpisodeState, goal: Goal, context: PlannerContext,
          explored: Callable[[], bool] = lambda: True) -> str | None:
    """Why the instance a done goal took may not be the one its description names: the
    description fits several the agent saw (``ambiguous_description``), the relation it
    names was not seen to hold for the receptacle taken (``unobserved_description``), or it told
    apart several of the type while part of the house was never explored
    (``unexplored_description``; ``explored``: whether the agent's map has no frontier left)."""
    bindings = state.goal_outcome.get(goal.id, {}).get("bindings", {})
    # the object may have moved since (put where the goal wanted it): only the target's relation
    return (ambiguous_description(goal, context) or unobserved_description(goal, bindings, context, ("target",))
            or unexplored_description(goal, bindings, context, explored))


def explored(agent: EndCheckAgent) -> bool:
    """Whether the agent's map has no frontier left that it has not given up on (the search's
    own test, ``planner.skills.Skills.explore_once``): every reachable part of the house seen."""
    return not any(not agent.frontier_failed(f[0], f[1]) for f in agent.occupancy.frontier())


def goal_report(goal: Goal, state: EpisodeState) -> dict[str, Any]:
    """A goal as the report shows it: what it asked for (so an unmet checklist item can be
    traced to the goal that served it), its status, and why it ended so."""
    item = goal.items[0]
    out: dict[str, Any] = {"text": goal.text, "status": state.goal_status.get(goal.id, "not reached"),
                           "predicate": item.predicate, "object_type": item.object.type}
    if item.target is not None:
        out["target_type"] = item.target.type
    out.update(state.goal_outcome.get(goal.id, {}))
    out["steps_spent"] = int(state.goal_steps.get(goal.id, 0))
    if goal.id in state.goal_checks and out["status"] == "done":
        out["check"] = state.goal_checks[goal.id].to_dict()
    return out
