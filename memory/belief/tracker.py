"""The belief tracker: observer gate, durable Event track and the derived tracks.

``ingest`` takes events (``Event`` or their JSON dicts), in time order. Each one passes the
observer gate: an event the robot did not perceive is dropped (counted, not stored), because
the robot cannot know it. A perceived event is validated (known actors and entities when a
registry is given, time order, unique id), appended to the durable log and applied to the
tracks: State (effects as *observed*, an utterance's claims as *reported* by the speaker, and
"seen absent" when an inspection does not find what was believed there), room presence for the
Belief rules, Commitments, the causal graph, episode cards and routines.

``ingest`` returns only after the batch is durable (one fsync per batch: group commit); bad
events are reported in ``IngestReport.rejected``, one line each naming the event and the field,
and never stop the batch or reach the log. ``BeliefTracker.open(path)`` replays the log and
restores every track. ``answer(question, now)`` plans, retrieves at most k evidence records and
answers with a value and a belief status (see ``answer.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from memory.belief.answer import Answer, answer_question
from memory.belief.beliefs import Belief, BeliefConfig, RoomPresence, assess
from memory.belief.causal import CausalGraph
from memory.belief.commitments import CommitmentTrack
from memory.belief.episodes import Consolidator
from memory.belief.events import Event, EventError, perceived_by
from memory.belief.log import DurableLog, LogFormatError
from memory.belief.retrieval import EvidenceSelector, QueryPlanner, RulePlanner, RuleSelector
from memory.belief.state import ABSENT, OBSERVED, REPORTED, StateEntry, StateTrack


@dataclass
class IngestReport:
    acknowledged: list[str] = field(default_factory=list)  # durable when ingest returns
    not_perceived: int = 0  # dropped by the observer gate
    duplicates: int = 0  # same id and payload as a stored event: idempotent re-send
    rejected: list[str] = field(default_factory=list)


class BeliefTracker:
    def __init__(self, path: str | os.PathLike[str] | None = None, *, self_name: str = "robot",
                 actors: Iterable[str] | None = None, entities: Iterable[str] | None = None,
                 room_of: dict[str, str] | None = None, config: BeliefConfig | None = None,
                 planner: QueryPlanner | None = None, selector: EvidenceSelector | None = None,
                 k: int = 5, read_only: bool = False) -> None:
        self.self_name = self_name
        self.config = config or BeliefConfig(self_name=self_name)
        self.actors = set(actors) | {self_name} if actors is not None else None
        self.room_of = dict(room_of or {})
        self.known = (set(entities) | set(self.room_of.values()) | (self.actors or set())) if entities is not None else None
        self.planner = planner or RulePlanner()
        self.selector = selector or RuleSelector()
        self.k = k
        self.state = StateTrack()
        self.presence = RoomPresence()
        self.commitments = CommitmentTrack()
        self.causal = CausalGraph()
        self.episodes = Consolidator(self_name=self_name)
        self._ids: dict[str, int] = {}
        self._where: list[int] = []  # seq -> log offset (or index into _mem)
        self._times: list[float] = []
        self._sessions: list[str] = []
        self._by_entity: dict[str, list[int]] = {}
        self._mem: list[Event] = []
        self._actors_seen: set[str] = set()
        self.last_t = 0.0
        self.robot_room: str | None = None
        # A writer holds the log's lock until close(); a second writer is refused (LockHeld).
        self.log = DurableLog(path, writable=not read_only) if path is not None else None
        if self.log is not None:
            for offset, rec in self.log.scan():
                try:
                    event = Event.from_dict(rec)
                except EventError as exc:
                    self.log.problems.append(f"{self.log.path}: byte {offset}: skipped stored event: {exc}")
                    continue
                if event.id in self._ids:  # an edited or concatenated log: the first copy wins
                    self.log.problems.append(f"{self.log.path}: byte {offset}: skipped stored event {event.id}: "
                                             f"duplicate event id {event.id!r} (first stored at byte "
                                             f"{self._where[self._ids[event.id]]})")
                    continue
                self._store(event, offset)

    @classmethod
    def open(cls, path: str | os.PathLike[str], **kwargs: Any) -> "BeliefTracker":
        """Reopen a tracker from its log: every track is rebuilt from the stored events.

        ``read_only=True`` reads a log another process is writing (no lock, nothing cut; ingest
        then rejects every event, naming the log as read-only)."""
        return cls(path, **kwargs)

    # ---- ingestion ------------------------------------------------------------------------
    def ingest(self, events: Iterable[Event | dict]) -> IngestReport:
        report = IngestReport()
        for raw in events:
            try:
                event = raw if isinstance(raw, Event) else Event.from_dict(raw)
            except EventError as exc:
                report.rejected.append(str(exc))
                continue
            if not perceived_by(event, self.self_name):
                report.not_perceived += 1
                continue
            problem = self._check(event)
            if problem == "duplicate":
                report.duplicates += 1
            elif problem:
                report.rejected.append(problem)
            else:
                try:
                    offset = self.log.append(event.to_dict()) if self.log is not None else len(self._mem)
                except LogFormatError as exc:
                    report.rejected.append(f"event {event.id}: {exc.reason}")
                    continue
                if self.log is None:
                    self._mem.append(event)
                self._store(event, offset)
                report.acknowledged.append(event.id)
        if self.log is not None:
            self.log.commit()
        return report

    def _check(self, event: Event) -> str:
        seq = self._ids.get(event.id)
        if seq is not None:
            return "duplicate" if self.event(seq).to_dict() == event.to_dict() else \
                f"event {event.id}: duplicate id with a different payload (already stored at t={self._times[seq]:.0f})"
        if event.t < self.last_t:
            return (f"event {event.id}: t={event.t:.0f} is before the last stored event (t={self.last_t:.0f}); "
                    "events must arrive in time order")
        if self.actors is not None and event.actor not in self.actors:
            return f"event {event.id}: field 'actor': unknown actor {event.actor!r}"
        if self.known is not None:
            unknown = sorted(e for e in event.entities() if e not in self.known)
            if unknown:
                return f"event {event.id}: unknown entities {unknown} (not in the house's registry)"
        return ""

    def _store(self, event: Event, where: int) -> None:
        seq = len(self._where)
        self._ids[event.id] = seq
        self._where.append(where)
        self._times.append(event.t)
        self._sessions.append(event.session)
        self.last_t = max(self.last_t, event.t)
        self._actors_seen.add(event.actor)
        for ent in event.entities():
            self._by_entity.setdefault(ent, []).append(seq)
        self._apply(event)

    def _apply(self, event: Event) -> None:
        me = self.self_name
        for a in event.effects:
            self.state.add(StateEntry(a.entity, a.attribute, a.value, event.t, OBSERVED, event.actor, event.id, event.session))
        if event.kind == "utterance" and event.actor != me:
            for a in event.claims:
                self.state.add(StateEntry(a.entity, a.attribute, a.value, event.t, REPORTED, event.actor, event.id, event.session))
        scope = event.args.get("scope") if event.kind == "observation" else None
        if isinstance(scope, list):
            seen = {a.entity for a in event.effects if a.attribute == "location"}
            for rec in scope:
                for ent in self.state.entities_with("location", rec):
                    cur = self.state.current(ent, "location")
                    if ent not in seen and cur is not None and cur.value == rec and cur.provenance != ABSENT:
                        self.state.add(StateEntry(ent, "location", rec, event.t, ABSENT, me, event.id, event.session))
        # Presence out of the robot's view: someone else in a room the robot is not in (what
        # happens where the robot is, it sees; elsewhere, things may change unseen).
        if event.actor == me and event.action == "navigate_to" and event.success:
            self.robot_room = event.args.get("to", self.robot_room)
        elif event.actor != me:
            rooms = {event.room, event.args.get("to") if event.action == "navigate_to" else None}
            for room in sorted(r for r in rooms if isinstance(r, str) and r != self.robot_room):
                self.presence.add(room, event.t, event.actor, event.id)
        self.commitments.add(event)
        self.commitments.settle(event)
        self.causal.add(event)
        self.episodes.add(event)

    # ---- reading --------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._where)

    def event(self, seq: int) -> Event:
        if self.log is None:
            return self._mem[self._where[seq]]
        return Event.from_dict(self.log.read_at(self._where[seq]))

    def event_by_id(self, event_id: str) -> Event | None:
        seq = self._ids.get(event_id)
        return self.event(seq) if seq is not None else None

    def session_of(self, event_id: str) -> str:
        seq = self._ids.get(event_id)
        return self._sessions[seq] if seq is not None else ""

    def events_about(self, entity: str, before: float, limit: int = 5) -> list[Event]:
        """The latest ``limit`` stored events mentioning ``entity`` at or before ``before``."""
        out = []
        for seq in reversed(self._by_entity.get(entity, ())):
            if self._times[seq] <= before:
                out.append(self.event(seq))
                if len(out) >= limit:
                    break
        return out

    def knows_entity(self, entity: str) -> bool:
        return (entity in self._by_entity or self.state.knows(entity) or entity in self.room_of
                or entity in self._actors_seen)

    def belief(self, entity: str, attribute: str, now: float) -> Belief:
        return assess(self.state, entity, attribute, now, self.room_of, self.presence, self.config)

    def answer(self, question: str, now: float) -> Answer:
        return answer_question(self, question, now)

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
