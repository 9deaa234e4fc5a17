"""Episode consolidation (episode cards) and routine induction.

A session (one project step of a day: "d03-morning") ends when an event of another session
arrives; its card keeps who was there, where, what changed and pointers to the events, so a
question about "that afternoon" needs one record, not every event. Routines are induced from
perceived acts of other actors: the same (actor, action, target, value) on at least
``min_days`` different days within ``window_min`` minutes of the same time of day.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from memory.belief.events import Event


@dataclass
class EpisodeCard:
    session: str
    start: float
    end: float
    actors: set[str] = field(default_factory=set)
    rooms: set[str] = field(default_factory=set)
    changes: list[str] = field(default_factory=list)  # "mug_2.location=diningtable_1"
    event_ids: list[str] = field(default_factory=list)

    def summary(self) -> str:
        ch = ", ".join(self.changes[:12]) + (" ..." if len(self.changes) > 12 else "")
        return (f"session {self.session} (t {self.start:.0f}-{self.end:.0f}): {', '.join(sorted(self.actors))} "
                f"in {', '.join(sorted(self.rooms))}; {len(self.event_ids)} events; changes: {ch}")


@dataclass(frozen=True)
class Routine:
    actor: str
    action: str
    target: str
    value: str
    minute_of_day: int
    days: tuple[int, ...]
    event_ids: tuple[str, ...]

    def describe(self) -> str:
        return " ".join(p for p in (self.action, self.target, self.value) if p)


class Consolidator:
    def __init__(self, min_days: int = 3, window_min: int = 60, self_name: str = "robot") -> None:
        self.min_days = min_days
        self.window_min = window_min
        self.self_name = self_name
        self.cards: list[EpisodeCard] = []
        self._open: EpisodeCard | None = None
        self._acts: dict[tuple[str, str, str, str], list[tuple[int, int, str]]] = {}

    def add(self, event: Event) -> None:
        if self._open is None or event.session != self._open.session:
            self._open = EpisodeCard(event.session, event.t, event.t)
            self.cards.append(self._open)
        card = self._open
        card.end = event.t
        card.actors.add(event.actor)
        if event.room:
            card.rooms.add(event.room)
        card.event_ids.append(event.id)
        card.changes.extend(f"{a.entity}.{a.attribute}={a.value}" for a in event.effects)
        if event.kind == "action" and event.success and event.actor != self.self_name and event.target \
                and event.action not in ("navigate_to", "inspect"):
            value = str(event.args.get("value", event.args.get("receptacle", "")))
            minute = int(event.t % 86400 // 60)
            self._acts.setdefault((event.actor, event.action, event.target, value), []).append(
                (event.day, minute, event.id))

    def routines(self, before: float) -> list[Routine]:
        """Routines evident from acts at or before ``before``."""
        out = []
        last_day = int(before // 86400)
        for (actor, action, target, value), acts in self._acts.items():
            acts = [a for a in acts if a[0] * 86400 + a[1] * 60 <= before and a[0] <= last_day]
            if len({d for d, _, _ in acts}) < self.min_days:
                continue
            # The densest time of day: the act whose window holds the most distinct days.
            best = max(acts, key=lambda a: (len({d for d, m, _ in acts if abs(m - a[1]) <= self.window_min}), -a[1]))
            cluster = [a for a in acts if abs(a[1] - best[1]) <= self.window_min]
            med = statistics.median(m for _, m, _ in cluster)
            near = [a for a in acts if abs(a[1] - med) <= self.window_min]
            days = sorted({d for d, _, _ in near})
            if len(days) >= self.min_days:
                out.append(Routine(actor, action, target, value, int(med), tuple(days), tuple(e for _, _, e in near)))
        return out

    def cards_for_day(self, day: int) -> list[EpisodeCard]:
        return [c for c in self.cards if int(c.start // 86400) == day]
