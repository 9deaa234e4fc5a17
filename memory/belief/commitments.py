"""Commitment track: requests, reminders, promises and schedules the robot heard.

A commitment is open until an event by its owner acts on its target after it was made (a
request to bring the mug is done once the robot places the mug). Queries answer "what is due",
"what did X ask for on day d" and "when is Y scheduled"; multi-hop questions resolve "the item
Alice asked for" through here.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.belief.events import Commitment, Event


@dataclass
class CommitmentRecord:
    commitment: Commitment
    made_by: str
    t: float
    event_id: str
    session: str
    done_by_event: str | None = None

    def is_open(self, now: float) -> bool:
        return self.done_by_event is None and self.t <= now


class CommitmentTrack:
    def __init__(self) -> None:
        self.records: list[CommitmentRecord] = []
        self._by_day: dict[int, list[CommitmentRecord]] = {}
        self._by_kind: dict[str, list[CommitmentRecord]] = {}
        self._open_by_target: dict[tuple[str, str], list[CommitmentRecord]] = {}

    def add(self, event: Event) -> None:
        if event.commitment is None:
            return
        rec = CommitmentRecord(event.commitment, event.actor, event.t, event.id, event.session)
        self.records.append(rec)
        self._by_day.setdefault(int(event.t // 86400), []).append(rec)
        self._by_kind.setdefault(event.commitment.kind, []).append(rec)
        if event.commitment.target:
            self._open_by_target.setdefault((event.commitment.owner, event.commitment.target), []).append(rec)

    def settle(self, event: Event) -> None:
        """Close the owner's open commitments on the entity this event acted on."""
        if event.kind != "action" or not event.success or not event.target:
            return
        for actor, target in ((event.actor, event.target), (event.actor, event.args.get("object"))):
            pending = self._open_by_target.pop((actor, target), None) if target else None
            for rec in pending or ():
                rec.done_by_event = event.id

    def find(self, *, made_by: str | None = None, kind: str | None = None, day: int | None = None,
             owner: str | None = None, before: float | None = None) -> list[CommitmentRecord]:
        out = []
        pool = self.records
        if day is not None:
            pool = self._by_day.get(day, [])
        elif kind is not None:
            pool = self._by_kind.get(kind, [])
        for r in pool:
            if before is not None and r.t > before:
                continue
            if made_by and r.made_by != made_by or kind and r.commitment.kind != kind:
                continue
            if owner and r.commitment.owner != owner or day is not None and int(r.t // 86400) != day:
                continue
            out.append(r)
        return out

    def open_at(self, now: float) -> list[CommitmentRecord]:
        return [r for r in self.records if r.t <= now and (r.done_by_event is None)]
