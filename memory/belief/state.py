"""State track: per (entity, attribute) history and current snapshot, with provenance.

Every atom the robot perceives (an effect of an event it saw: *observed*) or is told (a claim in
an utterance it heard: *reported*) becomes a ``StateEntry``. Entries arrive in time order (the
tracker rejects out-of-order events), so a key's history is a sorted list and "as of t" is a
binary search. Nothing is overwritten: the previous value of a key stays answerable.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Iterator

OBSERVED, REPORTED, ABSENT = "observed", "reported", "absent"


@dataclass(frozen=True, slots=True)
class StateEntry:
    entity: str
    attribute: str
    value: str
    t: float
    provenance: str  # observed | reported | absent (seen not to be there)
    source: str  # who acted (observed) or who said it (reported)
    event_id: str
    session: str = ""


@dataclass
class _History:
    times: list[float] = field(default_factory=list)
    entries: list[StateEntry] = field(default_factory=list)


class StateTrack:
    def __init__(self) -> None:
        self._keys: dict[tuple[str, str], _History] = {}
        self._by_entity: dict[str, set[str]] = {}
        self._by_value: dict[tuple[str, str], set[str]] = {}  # (attribute, value) -> entities ever holding it

    def add(self, entry: StateEntry) -> None:
        h = self._keys.get((entry.entity, entry.attribute))
        if h is None:
            h = self._keys[(entry.entity, entry.attribute)] = _History()
            self._by_entity.setdefault(entry.entity, set()).add(entry.attribute)
        h.times.append(entry.t)
        h.entries.append(entry)
        if entry.provenance != ABSENT:
            self._by_value.setdefault((entry.attribute, entry.value), set()).add(entry.entity)

    def history(self, entity: str, attribute: str) -> list[StateEntry]:
        h = self._keys.get((entity, attribute))
        return list(h.entries) if h else []

    def current(self, entity: str, attribute: str) -> StateEntry | None:
        h = self._keys.get((entity, attribute))
        return h.entries[-1] if h else None

    def as_of(self, entity: str, attribute: str, t: float) -> StateEntry | None:
        """The latest entry at or before ``t`` (point-in-time lookup)."""
        h = self._keys.get((entity, attribute))
        if not h:
            return None
        i = bisect.bisect_right(h.times, t)
        return h.entries[i - 1] if i else None

    def iter_back(self, entity: str, attribute: str, t: float | None = None) -> Iterator[StateEntry]:
        """Entries at or before ``t``, newest first, without copying the history."""
        h = self._keys.get((entity, attribute))
        if not h:
            return
        i = bisect.bisect_right(h.times, t) if t is not None else len(h.entries)
        for k in range(i - 1, -1, -1):
            yield h.entries[k]

    def last_value(self, entity: str, attribute: str, t: float | None = None) -> StateEntry | None:
        """The latest entry that asserts a value (skipping 'seen absent' entries)."""
        return next((e for e in self.iter_back(entity, attribute, t) if e.provenance != ABSENT), None)

    def previous_value(self, entity: str, attribute: str, t: float | None = None) -> StateEntry | None:
        """The value held before the current one changed (the overwritten state)."""
        cur = None
        for e in self.iter_back(entity, attribute, t):
            if e.provenance == ABSENT:
                continue
            if cur is None:
                cur = e
            elif e.value != cur.value:
                return e
        return None

    def attributes(self, entity: str) -> set[str]:
        return set(self._by_entity.get(entity, ()))

    def entities_with(self, attribute: str, value: str) -> set[str]:
        """Entities that ever held ``attribute = value`` (check ``current`` for now)."""
        return set(self._by_value.get((attribute, value), ()))

    def knows(self, entity: str) -> bool:
        return entity in self._by_entity

    def __len__(self) -> int:
        return sum(len(h.entries) for h in self._keys.values())
