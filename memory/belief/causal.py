"""Causal links (AMA-Agent's causality graph): which action caused which state change, and why.

Nodes are event ids. An edge ``action -> (entity, attribute, t)`` records that a perceived action
made a state atom true; an edge ``reason -> action`` records why the robot acted (its own actions
carry the request they fulfil in ``args["reason"]``: the robot knows its own intentions). That is
enough for "who moved X", "what led to X being Y" and "why did the robot do Z" without search.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from memory.belief.events import Event


@dataclass(frozen=True, slots=True)
class Change:
    entity: str
    attribute: str
    value: str
    t: float
    event_id: str
    actor: str
    action: str


class CausalGraph:
    def __init__(self) -> None:
        self._changes: dict[tuple[str, str], list[Change]] = {}
        self._times: dict[tuple[str, str], list[float]] = {}
        self._reason: dict[str, str] = {}  # action event id -> event id of what it was done for
        self._actor_of: dict[str, tuple[str, str, float]] = {}

    def add(self, event: Event) -> None:
        if event.kind != "action" or not event.success:
            return
        self._actor_of[event.id] = (event.actor, event.action, event.t)
        reason = event.args.get("reason")
        if isinstance(reason, str):
            self._reason[event.id] = reason
        for atom in event.effects:
            key = (atom.entity, atom.attribute)
            self._changes.setdefault(key, []).append(
                Change(atom.entity, atom.attribute, atom.value, event.t, event.id, event.actor, event.action))
            self._times.setdefault(key, []).append(event.t)

    def last_change(self, entity: str, attribute: str, before: float) -> Change | None:
        """The latest perceived action that set ``entity.attribute`` at or before ``before``."""
        times = self._times.get((entity, attribute))
        if not times:
            return None
        i = bisect.bisect_right(times, before)
        return self._changes[(entity, attribute)][i - 1] if i else None

    def changes(self, entity: str, attribute: str, before: float) -> list[Change]:
        times = self._times.get((entity, attribute), [])
        return self._changes.get((entity, attribute), [])[: bisect.bisect_right(times, before)]

    def why(self, event_id: str) -> list[str]:
        """The chain of reasons behind an action, nearest first (event ids)."""
        chain, seen = [], {event_id}
        cur = self._reason.get(event_id)
        while cur is not None and cur not in seen:
            chain.append(cur)
            seen.add(cur)
            cur = self._reason.get(cur)
        return chain
