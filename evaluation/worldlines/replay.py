"""Two views of a trace, for sample generation and scoring: the truth and what the robot perceived.

``truth`` replays every event's effects over the initial state; ``perceived`` keeps only what
passed the observer gate (effects of events the robot perceived, claims of utterances it heard,
"seen absent" when a look did not show what it last saw there), which is what any memory could
know. A question is only asked when its answer is knowable from the perceived view, and its
gold evidence is the perceived events that establish it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from evaluation.worldlines.trace import ROBOT, Trace
from evaluation.worldlines.world import HouseWorld
from memory.belief.events import Event, perceived_by


@dataclass(frozen=True)
class Fact:
    t: float
    value: str
    event_id: str  # "" for the initial state
    provenance: str = "observed"  # observed | reported | absent
    source: str = ""


class Replay:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.events = trace.events
        self.by_id = {e.id: e for e in trace.events}
        self.truth: dict[tuple[str, str], list[Fact]] = {}
        self.perceived: dict[tuple[str, str], list[Fact]] = {}
        self.cues: dict[str, list[tuple[float, str, str]]] = {}  # room -> (t, actor, event id) out of view
        self.mentioned: dict[str, float] = {}  # entity -> first time a perceived event mentions it
        for ent, attr, val in trace.meta.initial:
            self.truth[(ent, attr)] = [Fact(0.0, val, "")]
        self._seen = [e for e in trace.events if perceived_by(e, ROBOT)]
        self._seen_t = [e.t for e in self._seen]
        self.perceived_ids = {e.id for e in self._seen}
        robot_room: str | None = None
        for ev in trace.events:
            for a in ev.effects:
                if ev.kind == "action":
                    self.truth.setdefault((a.entity, a.attribute), []).append(Fact(ev.t, a.value, ev.id, "observed", ev.actor))
            if not perceived_by(ev, ROBOT):
                continue
            for ent in ev.entities():
                self.mentioned.setdefault(ent, ev.t)
            for a in ev.effects:
                self._perceive(a.entity, a.attribute, Fact(ev.t, a.value, ev.id, "observed", ev.actor))
            if ev.kind == "utterance" and ev.actor != ROBOT:
                for a in ev.claims:
                    self._perceive(a.entity, a.attribute, Fact(ev.t, a.value, ev.id, "reported", ev.actor))
            self._absences(ev)
            if ev.actor == ROBOT and ev.action == "navigate_to":
                robot_room = ev.args.get("to")
            elif ev.actor != ROBOT:
                rooms = {ev.room, ev.args.get("to") if ev.action == "navigate_to" else None}
                for room in rooms:
                    if isinstance(room, str) and room != robot_room:
                        self.cues.setdefault(room, []).append((ev.t, ev.actor, ev.id))

    def _perceive(self, ent: str, attr: str, fact: Fact) -> None:
        self.perceived.setdefault((ent, attr), []).append(fact)

    def _absences(self, ev: Event) -> None:
        scope = ev.args.get("scope") if ev.kind == "observation" else None
        if not isinstance(scope, list):
            return
        seen = {a.entity for a in ev.effects if a.attribute == "location"}
        for (ent, attr), facts in self.perceived.items():
            if attr == "location" and ent not in seen and facts[-1].provenance != "absent" and facts[-1].value in scope:
                facts.append(Fact(ev.t, facts[-1].value, ev.id, "absent", ROBOT))

    # ---- lookups ---------------------------------------------------------------------------
    @staticmethod
    def _at(facts: list[Fact] | None, t: float) -> Fact | None:
        if not facts:
            return None
        i = bisect.bisect_right([f.t for f in facts], t)
        return facts[i - 1] if i else None

    def truth_at(self, ent: str, attr: str, t: float) -> str | None:
        f = self._at(self.truth.get((ent, attr)), t)
        return f.value if f else None

    def latest_perceived(self, ent: str, attr: str, t: float) -> Fact | None:
        """The latest perceived fact (a 'seen absent' included) at or before t."""
        return self._at(self.perceived.get((ent, attr)), t)

    def perceived_value(self, ent: str, attr: str, t: float) -> Fact | None:
        """The latest perceived fact asserting a value at or before t."""
        for f in reversed([f for f in self.perceived.get((ent, attr), []) if f.t <= t]):
            if f.provenance != "absent":
                return f
        return None

    def perceived_history(self, ent: str, attr: str, t: float) -> list[Fact]:
        return [f for f in self.perceived.get((ent, attr), []) if f.t <= t and f.provenance != "absent"]

    def truth_changes(self, ent: str, attr: str, t: float) -> list[Fact]:
        return [f for f in self.truth.get((ent, attr), []) if f.t <= t and f.event_id]

    def first_cue(self, room: str, after: float, until: float, exclude: set[str]) -> tuple[float, str, str] | None:
        for c in self.cues.get(room, []):
            if after < c[0] <= until and c[1] not in exclude:
                return c
        return None

    def perceived_events(self, until: float) -> list[Event]:
        return self._seen[: bisect.bisect_right(self._seen_t, until)]

    def world_at(self, t: float) -> HouseWorld:
        """The true symbolic world at time t (for executing plans against the truth)."""
        m = self.trace.meta
        w = HouseWorld(m.house_id, dict(m.rooms), dict(m.room_of), {}, {}, set(m.receptacles), set(m.containers),
                       set(m.devices), set(m.mobiles))
        for (ent, attr), facts in self.truth.items():
            f = self._at(facts, t)
            if f is None:
                continue
            if attr == "location":
                w.location[ent] = f.value
            elif attr == "open":
                w.open[ent] = f.value == "open"
            elif attr == "power":
                w.power[ent] = f.value == "on"
        w.actor_room[ROBOT] = m.dock
        for ev in self.events:
            if ev.t > t:
                break
            if ev.action == "navigate_to" and ev.success:
                w.actor_room[ev.actor] = ev.args["to"]
        return w
