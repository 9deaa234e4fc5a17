"""Belief track: how far the robot should trust what its State track says.

Deterministic rules, checked in this order, over what the robot itself perceived:

- ``unknown``: no evidence at all (never observed, never told): the answer is "I don't know".
- ``contradicted``: the robot looked where it believed the thing was and did not see it there,
  or two pieces of evidence from different provenance (observed vs reported) disagree within
  ``contradiction_window_s``.
- ``uncertain``: since the last evidence another actor was perceived in the room where the
  thing is (``intervening`` attributes only: things people can change unseen), so it may have
  changed out of view.
- ``stale``: the last evidence is older than the attribute's ``stale_after_s``.
- ``fresh``: otherwise.

The robot's static map (which room each piece of furniture and each device is in) is knowledge
it is given, like its floor plan; it is how a location value maps to a room.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from memory.belief.state import ABSENT, StateEntry, StateTrack

FRESH, STALE, UNCERTAIN, CONTRADICTED, UNKNOWN = "fresh", "stale", "uncertain", "contradicted", "unknown"
STATUSES = (FRESH, STALE, UNCERTAIN, CONTRADICTED, UNKNOWN)
ROBOT = "robot"


@dataclass
class BeliefConfig:
    """Thresholds for the rules above (seconds)."""

    stale_after_s: dict[str, float] = field(default_factory=lambda: {"location": 3 * 86400.0, "power": 86400.0,
                                                                      "open": 86400.0})
    default_stale_after_s: float = 7 * 86400.0
    contradiction_window_s: float = 1800.0
    intervening: frozenset[str] = frozenset({"location", "power", "open"})
    self_name: str = ROBOT


@dataclass(frozen=True, slots=True)
class Belief:
    entity: str
    attribute: str
    value: str | None
    status: str
    reason: str
    entry: StateEntry | None = None
    cue: str | None = None  # the event that made it uncertain (another actor in the room)


class RoomPresence:
    """When the robot perceived which actor in which room (from navigate and in-room acts)."""

    def __init__(self) -> None:
        self._times: dict[str, list[float]] = {}
        self._who: dict[str, list[tuple[str, str]]] = {}

    def add(self, room: str, t: float, actor: str, event_id: str) -> None:
        self._times.setdefault(room, []).append(t)
        self._who.setdefault(room, []).append((actor, event_id))

    def others_after(self, room: str, t: float, until: float, exclude: set[str]) -> list[tuple[float, str, str]]:
        times = self._times.get(room)
        if not times:
            return []
        i = bisect.bisect_right(times, t)
        j = bisect.bisect_right(times, until)
        who = self._who[room]
        return [(times[k], who[k][0], who[k][1]) for k in range(i, j) if who[k][0] not in exclude]


def assess(track: StateTrack, entity: str, attribute: str, now: float, room_of: dict[str, str],
           presence: RoomPresence, config: BeliefConfig) -> Belief:
    """The belief about ``entity.attribute`` at time ``now`` (evidence after ``now`` is ignored)."""
    latest = track.as_of(entity, attribute, now)
    value_entry = track.last_value(entity, attribute, now)
    if latest is None or value_entry is None:
        if latest is not None:
            return Belief(entity, attribute, None, CONTRADICTED, f"seen absent ({latest.event_id}), no earlier value", latest)
        return Belief(entity, attribute, None, UNKNOWN, "never observed or reported")
    value = value_entry.value
    if latest.provenance == ABSENT:
        return Belief(entity, attribute, value, CONTRADICTED,
                      f"not seen at {latest.value} when looked for ({latest.event_id})", value_entry)
    prev = track.previous_value(entity, attribute, now)
    if (prev is not None and prev.provenance != value_entry.provenance
            and value_entry.t - prev.t <= config.contradiction_window_s):
        return Belief(entity, attribute, value, CONTRADICTED,
                      f"{prev.provenance} {prev.value} ({prev.event_id}) vs {value_entry.provenance} {value}", value_entry)
    if attribute in config.intervening:
        room = room_of.get(value) if attribute == "location" else room_of.get(entity)
        if room is not None:
            others = presence.others_after(room, value_entry.t, now, {config.self_name, value_entry.source})
            if others:
                t, who, eid = others[0]
                return Belief(entity, attribute, value, UNCERTAIN,
                              f"{who} was in {room} after the last evidence ({eid})", value_entry, eid)
    limit = config.stale_after_s.get(attribute, config.default_stale_after_s)
    if now - value_entry.t > limit:
        return Belief(entity, attribute, value, STALE, f"last evidence {now - value_entry.t:.0f} s old", value_entry)
    return Belief(entity, attribute, value, FRESH, f"{value_entry.provenance} by {value_entry.source}", value_entry)
