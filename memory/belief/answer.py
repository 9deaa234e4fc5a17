"""Answering from the tracks: one handler per query intent, each a structured lookup.

Every handler returns the value (or None), a belief status and the evidence records that back it
(the selector then keeps at most k). Values use the trace's canonical forms: entity ids
("diningtable_1", "held:alice"), "on"/"off", "open"/"closed", room ids, person names and times
as "day 3 14:05". An entity the robot never perceived is answered "unknown", never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, cast

from memory.belief.beliefs import UNKNOWN, Belief
from memory.belief.causal import CausalGraph
from memory.belief.commitments import CommitmentTrack
from memory.belief.episodes import Consolidator
from memory.belief.events import Event
from memory.belief.retrieval import EvidenceRecord, EvidenceSelector, QueryPlan, QueryPlanner, fmt_time
from memory.belief.state import ABSENT, StateEntry, StateTrack

KNOWN = "known"
Result = tuple[str | None, str, list[EvidenceRecord], str]


@dataclass
class Answer:
    value: str | None
    status: str
    evidence: list = field(default_factory=list)  # EvidenceRecord, at most k
    plan: QueryPlan | None = None
    reason: str = ""


class BeliefTracker(Protocol):
    """What answering reads of the tracker (memory.belief.tracker.BeliefTracker): its tracks and
    lookups, nothing it could change. Named here so this module need not import the tracker."""

    self_name: str
    room_of: dict[str, str]
    planner: QueryPlanner
    selector: EvidenceSelector
    k: int
    state: StateTrack
    commitments: CommitmentTrack
    causal: CausalGraph
    episodes: Consolidator

    def belief(self, entity: str, attribute: str, now: float) -> Belief: ...
    def event_by_id(self, event_id: str) -> Event | None: ...
    def session_of(self, event_id: str) -> str: ...
    def events_about(self, entity: str, before: float, limit: int = 5) -> list[Event]: ...
    def knows_entity(self, entity: str) -> bool: ...


def answer_question(tr: BeliefTracker, question: str, now: float) -> Answer:
    plan = tr.planner.plan(question)
    if plan is None:
        return Answer(None, UNKNOWN, [], None, "question not understood by the planner")
    for ent in plan.entities + ([plan.actor] if plan.actor else []):
        if ent != tr.self_name and not tr.knows_entity(ent):
            return Answer(None, UNKNOWN, [], plan, f"{ent!r} was never perceived")
    value, status, records, reason = _HANDLERS[plan.intent](tr, plan, now)
    if "events" in plan.views:
        for ent in plan.entities:
            for i, ev in enumerate(tr.events_about(ent, now, limit=3)):
                records.append(EvidenceRecord("event", ev.text, (ev.id,), ev.session, ev.t, 0.2 - 0.01 * i))
    return Answer(value, status, tr.selector.select(question, plan, records, tr.k), plan, reason)


def _entry_record(e: StateEntry, kind: str = "state", score: float = 1.0) -> EvidenceRecord:
    how = "seen absent from" if e.provenance == ABSENT else f"{e.provenance} ({e.source}):"
    return EvidenceRecord(kind, f"{e.entity}.{e.attribute} {how} {e.value} at {fmt_time(e.t)}", (e.event_id,),
                          e.session, e.t, score)


def _event_record(tr: BeliefTracker, event_id: str, score: float = 1.0) -> EvidenceRecord:
    ev = tr.event_by_id(event_id)
    if ev is None:
        return EvidenceRecord("event", event_id, (event_id,), "", 0.0, score)
    return EvidenceRecord("event", ev.text, (ev.id,), ev.session, ev.t, score)


def _current(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    b = tr.belief(plan.entities[0], plan.attributes[0], now)
    recs = []
    if b.entry is not None:
        recs.append(_entry_record(b.entry, "belief"))
    latest = tr.state.as_of(plan.entities[0], plan.attributes[0], now)
    if latest is not None and latest is not b.entry:
        recs.append(_entry_record(latest, "state", 0.9))
    if b.cue is not None:
        recs.append(_event_record(tr, b.cue, 0.9))
    return b.value, b.status, recs, b.reason


def _room_of(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    value, status, recs, reason = _current(tr, plan, now)
    room = tr.room_of.get(value) if value else None
    return room, status if room else UNKNOWN, recs, reason if room else f"no room known for {value!r}"


def _previous(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    # Resting places only: "before it was moved to V" means where it lay, not who carried it.
    moved_in: StateEntry | None = None
    for e in tr.state.iter_back(plan.entities[0], "location", now):
        if e.provenance == ABSENT or e.value.startswith("held:"):
            continue
        if e.value == plan.value:
            moved_in = e
        elif moved_in is not None:
            return e.value, KNOWN, [_entry_record(e), _entry_record(moved_in, score=0.95)], "value before the move"
    return None, UNKNOWN, [], f"no perceived move of {plan.entities[0]} to {plan.value}"


def _state_at(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    e = tr.state.last_value(plan.entities[0], "location", min(plan.time or now, now))
    if e is None:
        return None, UNKNOWN, [], "nothing perceived before that time"
    return e.value, KNOWN, [_entry_record(e)], "point-in-time lookup"


def _requested_item(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    reqs = [r for r in tr.commitments.find(made_by=plan.actor, kind="request", day=plan.day, before=now)
            if r.commitment.target]
    if not reqs:
        return None, UNKNOWN, [], f"no request by {plan.actor} on day {plan.day}"
    req = reqs[-1]
    b = tr.belief(cast(str, req.commitment.target), "location", now)  # reqs keeps only set targets
    recs = [_event_record(tr, req.event_id)]
    if b.entry is not None:
        recs.append(_entry_record(b.entry, "belief"))
    return b.value, b.status, recs, f"{req.commitment.target}: {b.reason}"


def _last_time(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    changes = [c for c in tr.causal.changes(plan.entities[0], "power", now) if c.value == plan.value]
    if not changes:
        return None, UNKNOWN, [], "no perceived change"
    c = changes[-1]
    return fmt_time(c.t), KNOWN, [_event_record(tr, c.event_id)], f"{c.actor} {c.action}"


def _schedule(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    recs = [r for r in tr.commitments.find(kind="schedule", before=now) if r.commitment.target == plan.value]
    due = recs[-1].commitment.due if recs else None
    if due is None:
        return None, UNKNOWN, [], f"nothing scheduled as {plan.value!r}"
    r = recs[-1]
    return fmt_time(due), KNOWN, [_event_record(tr, r.event_id)], f"told by {r.made_by}"


def _preference(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    e = tr.state.last_value(plan.actor or "", plan.attributes[0], now)
    if e is None:
        return None, UNKNOWN, [], "no preference heard"
    return e.value, KNOWN, [_entry_record(e)], f"said by {e.source}"


def _routine(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    cands = [r for r in tr.episodes.routines(now) if r.actor == plan.actor
             and abs(r.minute_of_day * 60 - (plan.time or 0)) <= tr.episodes.window_min * 60]
    if not cands:
        return None, UNKNOWN, [], "no routine perceived"
    best = max(cands, key=lambda r: (len(r.days), -abs(r.minute_of_day * 60 - (plan.time or 0))))
    rec = EvidenceRecord("routine", f"{best.actor} usually {best.describe()} around {best.minute_of_day // 60:02d}:"
                         f"{best.minute_of_day % 60:02d} (days {list(best.days)})", best.event_ids[-5:],
                         tr.session_of(best.event_ids[-1]), now, 1.0)
    return best.describe(), KNOWN, [rec], f"seen on {len(best.days)} days"


def _who_said(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    for e in tr.state.iter_back(plan.entities[0], "location", now):
        if e.provenance == "reported" and e.value == plan.value:
            return e.source, KNOWN, [_entry_record(e)], "reported atom"
    return None, UNKNOWN, [], "nobody reported that"


def _who_asked(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    reqs = [r for r in tr.commitments.find(kind="request", day=plan.day, before=now)
            if r.commitment.target == plan.entities[0]]
    if not reqs:
        return None, UNKNOWN, [], "no such request"
    return reqs[-1].made_by, KNOWN, [_event_record(tr, reqs[-1].event_id)], "request"


def _who_moved(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    c = tr.causal.last_change(plan.entities[0], "location", now)
    if c is None:
        return None, UNKNOWN, [], "no perceived move"
    return c.actor, KNOWN, [_event_record(tr, c.event_id)], f"{c.action} at {fmt_time(c.t)}"


def _why(tr: BeliefTracker, plan: QueryPlan, now: float) -> Result:
    moves = [c for c in tr.causal.changes(plan.entities[0], "location", now)
             if c.actor == tr.self_name and int(c.t // 86400) == plan.day]
    for c in reversed(moves):
        chain = tr.causal.why(c.event_id)
        if chain:
            reason = tr.event_by_id(chain[0])
            who = reason.actor if reason is not None else None
            return who, KNOWN, [_event_record(tr, chain[0]), _event_record(tr, c.event_id, 0.95)], "request chain"
    return None, UNKNOWN, [], "no reason recorded for that move"


_HANDLERS: dict[str, Callable[["BeliefTracker", QueryPlan, float], Result]] = {
    "current": _current, "room_of": _room_of, "previous": _previous, "state_at": _state_at,
    "requested_item": _requested_item, "last_time": _last_time, "schedule": _schedule,
    "preference_place": _preference, "preference_drink": _preference, "routine": _routine,
    "who_said": _who_said, "who_asked": _who_asked, "who_moved": _who_moved, "why": _why,
}
