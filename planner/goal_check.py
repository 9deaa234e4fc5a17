"""Did the goal's condition hold, as the agent itself saw it? (issue 34, first part)

A goal whose subgoals all ran is not thereby achieved: a receptacle may have taken the object
somewhere else than the agent believes, a weaker role (an LLM, a new recipe) may have planned the
wrong thing, a backend may report success loosely. After a goal's subgoals, the agent checks its
condition against what it perceives and remembers (never ground truth), with the checklist's own
predicate names:

- ``isHeld``: the agent's own status says what is in hand (proprioception: verified or not);
- ``inReceptacle``: the object seen in a frame since it was placed, its box standing on or in the
  target's box; seen elsewhere contradicts; not seen since (inside a container it closed, hidden
  behind something) leaves it unverified, and says so;
- ``inRoom``: the object seen since it was placed, in a region the agent's map names that room
  by a clear margin (``ROOM_NAME_SURE``; named by less, unverified);
- ``isSliced``: slices of the type seen since the goal started;
- ``isOpen``, ``isToggled``, ``isCooked``, ``isFilledWithLiquid``, ``isDirty``: what a close look
  (the segmenter's state classifier, household.visible_states) showed of the object after the
  goal's last action: the expected value verifies, another contradicts; no close look since (or a
  backend with no classifier) leaves the goal done but unverified, with that reason.

After the goal, a verified check is read again: after the agent's own later actions
(``recheck_after_own_actions``: a later goal may undo an earlier one), with the room names of the
map at the end (``recheck_rooms``), and against what the instruction's description names of the
instance taken (``qualify_choice`` with ``planner.deterministic.unobserved_description`` and
``ambiguous_description``).

The result is one of ``verified``, ``unverified`` (with why) or ``contradicted`` (with what was
seen instead). It is reported per goal, so a goal the report calls done and a checklist item that
is unmet never disagree without a stated reason.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any, Callable, Literal, Protocol

import numpy as np

from planner.object_memory import ObjectMemory
from planner.roles import Goal
from planner.support import stands_in

Status = Literal["verified", "unverified", "contradicted"]
# Flags only a close look (household.visible_states) shows, and how a reason names them.
FLAGS_BY_LOOK = {
    "isOpen": "whether it is open",
    "isToggled": "whether it is on",
    "isCooked": "whether it is cooked",
    "isFilledWithLiquid": "what it holds",
    "isDirty": "whether it is clean",
}


_WORDS = {"isOpen": ("open", "closed"), "isToggled": ("on", "off"), "isCooked": ("cooked", "not cooked"),
          "isDirty": ("dirty", "clean"), "isFilledWithLiquid": ("filled", "empty")}


def _word(pred: str, value: Any) -> str:
    if pred == "isFilledWithLiquid" and isinstance(value, str):
        return f"holding {value}"
    yes, no = _WORDS.get(pred, ("true", "false"))
    return yes if value else no


@dataclass(frozen=True)
class GoalCheck:
    status: Status
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"status": self.status, "reason": self.reason}


# How much likelier (log posterior, the room namer's own naive Bayes: planner.rooms) the room the
# agent's map names at a place must be than the next room type before that name decides a goal:
# about 20 times. The map names a region once the margin passes 1.0 (planner.rooms), so a name may
# rest on one or two objects; a kitchen annex renamed Bedroom by a margin of 1.3 (dev-072-0) is not
# evidence the ball left the kitchen, and a sofa region named LivingRoom by a small margin may be a
# bedroom's (dev-083-0).
ROOM_NAME_SURE = 3.0


class RoomNamer(Protocol):
    def room_type_at(self, x: float, z: float) -> str | None: ...
    def room_scores_at(self, x: float, z: float) -> dict[str, float]: ...


def room_margin(rooms: RoomNamer, x: float, z: float, room: str) -> float:
    """How much likelier ``room`` is at (x, z) than the likeliest other room type, in the agent's
    map (log posterior; negative where another is likelier); +inf where the map gives no scores
    (nothing to weigh the name against)."""
    scores = rooms.room_scores_at(x, z)
    if room not in scores:
        return math.inf
    others = [v for r, v in scores.items() if r != room]
    return scores[room] - max(others) if others else math.inf


def _shows(value: Any, expected: Any) -> bool:
    """Whether a looked-at flag value is what the goal asks (a liquid by name, or any with True)."""
    if isinstance(expected, str):
        return value == expected
    return bool(value) == bool(expected)


def check_goal(goal: Goal, bindings: dict[str, str | None], since_step: int, held_id: str | None,
               tracker: ObjectMemory, rooms: RoomNamer, acted_at: int | None = None) -> GoalCheck:
    """The goal's condition against the agent's own observations since ``since_step``; a flag
    counts only from a look at or after ``acted_at`` (the goal's last successful action: what
    was seen before it is the state the goal changed)."""
    item = goal.items[0]
    pred, expected = item.predicate, item.expected
    oid = bindings.get("object")
    obj = tracker.get(oid) if oid else None
    if pred in FLAGS_BY_LOOK and oid:
        seen, value = tracker.seen_state(oid, pred, max(since_step, acted_at or since_step))
        if seen:
            if _shows(value, expected):
                return GoalCheck("verified", f"{oid} seen {_word(pred, value)}")
            return GoalCheck("contradicted", f"{oid} seen {_word(pred, value)}")
    if pred == "isHeld":
        holds = held_id is not None and (oid is None or held_id == oid)
        if bool(expected) == holds:
            return GoalCheck("verified", "in hand" if holds else "the hand is empty")
        return GoalCheck("contradicted", f"holding {held_id}" if held_id else "nothing in hand")
    if pred in FLAGS_BY_LOOK:
        return GoalCheck("unverified", f"no close look showed {FLAGS_BY_LOOK[pred]} since the action; "
                                       "the action reported success")
    if pred == "isSliced":
        sliced = [o for o in tracker.objects.values() if o.object_type == f"{item.object.type}Sliced"
                  and o.first_seen >= since_step]
        return GoalCheck("verified", f"{len(sliced)} slice(s) seen") if sliced else \
            GoalCheck("unverified", "no slice seen since")
    if obj is None:
        return GoalCheck("unverified", f"{oid or 'the object'} is not in the agent's memory")
    if obj.moved or obj.last_seen < since_step:
        return GoalCheck("unverified", f"{obj.object_id} not seen since it was put there")
    if pred == "inReceptacle":
        tid = bindings.get("target")
        target = tracker.get(tid) if tid else None
        if target is None:
            return GoalCheck("unverified", f"the receptacle {tid or '?'} is not in the agent's memory")
        if stands_in(obj, target):
            return GoalCheck("verified", f"{obj.object_id} seen on/in {target.object_id}")
        where = np.round(obj.centroid, 2).tolist()
        return GoalCheck("contradicted", f"{obj.object_id} seen at {where}, not on/in {target.object_id}")
    if pred == "inRoom":
        x, z = float(obj.centroid[0]), float(obj.centroid[2])
        seen_in = rooms.room_type_at(x, z)
        if seen_in == expected:
            margin = room_margin(rooms, x, z, str(expected))
            if margin < ROOM_NAME_SURE:
                return GoalCheck("unverified", f"{obj.object_id} seen in a region the agent names {seen_in}, "
                                               f"but barely (log odds {margin:.1f} over the next room type)")
            return GoalCheck("verified", f"{obj.object_id} seen in a region the agent names {seen_in}")
        if seen_in is None:
            return GoalCheck("unverified", f"the agent's map names no room where {obj.object_id} is")
        return GoalCheck("contradicted", f"{obj.object_id} seen in a region the agent names {seen_in}")
    return GoalCheck("unverified", f"no observation check for {pred}")


def qualify_choice(check: GoalCheck, goal: Goal, relaxed_rooms: bool, relaxed_relations: bool,
                   ambiguity: str | None = None) -> GoalCheck:
    """A condition seen to hold on an object the agent chose by a guess is not the goal verified:
    after exploring without finding what the instruction describes ("the mug from the dining
    table", "the table in the lounge"), the agent took the likeliest region's or the nearest one,
    which may not be the one meant; or the description fitted several instances it saw
    (``ambiguity``, from ``planner.deterministic.ambiguous_description``). The check says so
    (unverified, with why) instead of claiming the goal, so a report never shows a verified goal
    whose choice the agent itself doubted."""
    if check.status != "verified" or not (relaxed_rooms or relaxed_relations or ambiguity):
        return check
    if ambiguity and not (relaxed_rooms or relaxed_relations):
        return GoalCheck("unverified", f"{check.reason}, but which one was meant is a guess: {ambiguity}")
    hints = goal.typed_hints
    if relaxed_rooms:
        room = next((r for r in (goal.items[0].object.room, hints.object_room,
                                 getattr(goal.items[0].target, "room", None),
                                 goal.items[0].expected if goal.items[0].predicate == "inRoom" else None) if r),
                    "named room")
        why = f"nothing fitting was seen where the agent's map puts the {room}; the likeliest region's was taken"
    else:
        anchors = " or ".join(dict.fromkeys(a for a in (hints.object_source, hints.object_near, hints.target_near,
                                                         hints.target_location) if a)) or "furniture"
        why = f"none was seen by the {anchors} the instruction names; the one closest to it was taken"
    return GoalCheck("unverified", f"{check.reason}, but a guess: {why}")


def recheck_descriptions(goals: list[Goal], checks: dict[str, GoalCheck], context: Any,
                         ambiguity_of: Callable[[Goal, Any], str | None]) -> dict[str, GoalCheck]:
    """At the end of an episode, with everything the agent saw: a goal verified on an instance
    the instruction described ("the plant near the chest of drawers") whose description now fits
    several it saw (the second was seen after the goal was done) becomes unverified with that
    reason: the agent cannot tell which one was meant, so it does not claim the goal. Returns the
    checks that change (``ambiguity_of`` is ``planner.deterministic.ambiguous_description``)."""
    out = {}
    for goal in goals:
        check = checks.get(goal.id)
        if check is None or check.status != "verified":
            continue
        ambiguity = ambiguity_of(goal, context)
        if ambiguity:
            out[goal.id] = qualify_choice(check, goal, False, False, f"by the end, {ambiguity}")
    return out


# Predicates whose condition is where the object is: a later pick-up of it (or of the receptacle
# it is in) may undo it; the flags are undone only by what changes the flag itself.
_WHERE = ("inReceptacle", "inRoom")


def recheck_after_own_actions(goal: Goal, check: GoalCheck, bindings: dict[str, str | None], done_at: int,
                              touched: dict[str, tuple[int, str]], held_id: str | None,
                              tracker: ObjectMemory, rooms: RoomNamer) -> GoalCheck | None:
    """A goal verified when it was done, checked again after the agent's own later actions: a
    later goal may undo it (the coffee maker switched on, then off again by the goal that made the
    coffee; the pen put on the bed, then picked up again). ``touched``: object id -> (step, action)
    of the agent's latest successful interaction with it. The check is the goal's own, from what
    the agent saw since that action; a flag not looked at since is what the agent's own action
    left it (its episodic status: ``tracker`` state). Returns the new check where it changes."""
    if check.status != "verified":
        return None
    item = goal.items[0]
    pred, expected = item.predicate, item.expected
    oid = bindings.get("object")
    if pred == "isHeld":
        holds = held_id is not None and (oid is None or held_id == oid)
        if bool(expected) == holds:
            return None
        return GoalCheck("contradicted", "by the end, " + (f"holding {held_id}" if held_id else "nothing in hand"))
    roles = ("object", "target") if pred == "inReceptacle" else ("object",)
    later = [(touched[b][0], touched[b][1], b) for r in roles if (b := bindings.get(r)) and b in touched
             and touched[b][0] > done_at]
    if not later:
        return None
    step, action, what = max(later)
    after = f"after its own later {action} of {what} (step {step})"
    if pred in FLAGS_BY_LOOK and oid:
        seen, value = tracker.seen_state(oid, pred, step)
        obj = tracker.get(oid)
        if not seen and obj is not None and pred in obj.state:
            seen, value = True, obj.state[pred]  # what its own action left it, not looked at since
        if not seen or _shows(value, expected):
            return None  # nothing says the action changed it
        return GoalCheck("contradicted", f"{after}, {oid} is {_word(pred, value)}")
    if pred not in _WHERE:
        return None
    again = check_goal(goal, bindings, step, held_id, tracker, rooms)
    if again.status == "verified":
        return None
    return GoalCheck(again.status, f"{after}: {again.reason}")


def recheck_rooms(goal: Goal, check: GoalCheck, bindings: dict[str, str | None], tracker: ObjectMemory,
                  rooms: RoomNamer) -> GoalCheck | None:
    """A goal verified on the agent's room names, checked again with the map it has at the end:
    the names of regions change as more of the house is seen (a region seen from its doorway,
    named Bathroom at step 58, is a Bedroom once seen whole). ``inRoom``: the object where the map
    now names another room, by at least ``ROOM_NAME_SURE``, contradicts (it can be carried again);
    renamed by less, or unnamed, or still named the room but by less, the goal is unverified (the
    object did not move: a weak renaming is no reason to carry it off); a receptacle (or, for a goal
    that leaves the object where it stands, the object) chosen for the room the instruction names
    that now stands in a region named otherwise leaves the goal unverified. Returns the new check
    where it changes."""
    if check.status != "verified":
        return None
    item = goal.items[0]
    pred = item.predicate
    wanted: list[tuple[str, str]] = []  # (role, room)
    if pred == "inRoom":
        wanted.append(("object", str(item.expected)))
    elif pred == "inReceptacle" and item.target is not None and item.target.room:
        wanted.append(("target", item.target.room))
    if pred in FLAGS_BY_LOOK and (item.object.room or goal.typed_hints.object_room):
        wanted.append(("object", str(item.object.room or goal.typed_hints.object_room)))
    for role, room in wanted:
        oid = bindings.get(role)
        obj = tracker.get(oid) if oid else None
        if obj is None:
            continue
        x, z = float(obj.centroid[0]), float(obj.centroid[2])
        seen_in = rooms.room_type_at(x, z)
        if seen_in == room and pred == "inRoom" and (margin := room_margin(rooms, x, z, room)) < ROOM_NAME_SURE:
            # named so when it was checked, by a clear margin; by the end the evidence is thin
            return GoalCheck("unverified", f"by the end, the agent's map names the region where {oid} stands "
                                           f"{room} only barely (log odds {margin:.1f} over the next room type)")
        if seen_in == room:
            continue
        where = f"by the end, the agent's map names the region where {oid} stands {seen_in or 'no room'}, not {room}"
        if pred == "inRoom" and seen_in and room_margin(rooms, x, z, room) <= -ROOM_NAME_SURE:
            return GoalCheck("contradicted", where)
        if pred == "inRoom":
            # the object stands where it was seen in the named room: only the name changed, and
            # not by enough to say it is elsewhere; doing the goal again would act on a guess
            return GoalCheck("unverified", where + (" (renamed by a small margin)" if seen_in else ""))
        return GoalCheck("unverified", f"{check.reason}, but {where}")
    return None


def check_report(status: str, check: dict[str, Any] | None) -> str:
    """One line for a goal's report: "done (verified: ...)", "done, unverified: ...", ..."""
    if status != "done" or not check:
        return status
    if check["status"] == "verified":
        return f"done (verified: {check['reason']})"
    return f"done, {check['status']}: {check['reason']}"
