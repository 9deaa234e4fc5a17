"""Cutoff-controlled, evidence-linked Memory QA and planning samples, computed from a trace.

Every sample has a cutoff: the memory under test sees only events up to it, and the answer and
the gold evidence are computed from the trace as of that cutoff (nothing later can leak: the
harness feeds events up to the cutoff only). Answers come from the truth, and a question is only
asked when the robot's perceived view supports it, except in the hidden family, whose point is
that it does not: there the right answer is "unknown" (never perceived) or the last perceived
value flagged as not fresh (changed out of view, with a perceived cue that someone was there).

Families: current_state, overwritten_state, multi_hop, temporal, preference, routine,
source (who said / who asked) and hidden_state; ``n_per_family`` each, balanced.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Callable, cast

from evaluation.worldlines.replay import Replay
from evaluation.worldlines.trace import ROBOT, Trace
from memory.belief.retrieval import fmt_time

if TYPE_CHECKING:
    from memory.belief.events import Commitment

FAMILIES = ("current_state", "overwritten_state", "multi_hop", "temporal", "preference", "routine", "source",
            "hidden_state")
NOT_FRESH = ["uncertain", "stale", "contradicted"]


@dataclass
class QASample:
    id: str
    house: str
    family: str
    target: str  # the WorldLines memory target it probes
    question: str
    cutoff: float
    answer: str | None
    evidence: list[str] = field(default_factory=list)  # gold event ids
    sessions: list[str] = field(default_factory=list)  # sessions of the gold events
    accept_status: list[str] | None = None  # hidden family: the statuses that count as right

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class PlanSample:
    id: str
    house: str
    cutoff: float
    instruction: str
    object: str
    destination: str
    reference_plan: list[list[str]]  # [action, target, (object)]
    constraints: list[list[str]]  # remembered state the plan depends on: [entity, attribute, value]
    evidence: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


class _Gen:
    def __init__(self, trace: Trace, seed: int) -> None:
        self.r = Replay(trace)
        self.m = trace.meta
        self.rng = random.Random(f"samples:{self.m.house_id}:{seed}")
        self.cutoffs = [s["end"] + 1 for s in self.m.sessions if s["end"] >= 86400]

    def sample(self, family: str, target: str, question: str, cutoff: float, answer: str | None,
               evidence: list[str], accept: list[str] | None = None) -> QASample:
        sessions = sorted({self.r.by_id[e].session for e in evidence})
        return QASample("", self.m.house_id, family, target, question, cutoff, answer, evidence, sessions, accept)

    def known(self, ent: str, attr: str, c: float):
        """The perceived fact for a key when it agrees with the truth at c (else None)."""
        last = self.r.latest_perceived(ent, attr, c)
        f = self.r.perceived_value(ent, attr, c)
        if f is None or last is None or last.provenance == "absent" or f.value != self.r.truth_at(ent, attr, c):
            return None
        return f

    # ---- families -----------------------------------------------------------------------------
    def current_state(self, c: float) -> QASample | None:
        attr = self.rng.choice(["location", "location", "power", "open"])
        pool = {"location": self.m.mobiles, "power": self.m.devices, "open": self.m.containers}[attr]
        ent = self.rng.choice(pool) if pool else None
        f = self.known(ent, attr, c) if ent else None
        if f is None:
            return None
        q = {"location": f"Where is {ent} now?", "power": f"Is {ent} on or off now?",
             "open": f"Is {ent} open or closed now?"}[attr]
        return self.sample("current_state", "object_location" if attr == "location" else "device_state", q, c,
                           f.value, [f.event_id])

    def overwritten_state(self, c: float) -> QASample | None:
        ent = self.rng.choice(self.m.mobiles)
        hist = [h for h in self.r.perceived_history(ent, "location", c) if not h.value.startswith("held:")]
        moves = [i for i in range(1, len(hist)) if hist[i].value != hist[i - 1].value]
        if not moves:
            return None
        i = moves[-1]
        v = hist[i].value
        truth = [f for f in self.r.truth.get((ent, "location"), []) if f.t <= c and not f.value.startswith("held:")]
        tmoves = [j for j in range(1, len(truth)) if truth[j].value == v and truth[j - 1].value != v]
        before_truth = truth[tmoves[-1] - 1].value if tmoves else None
        if before_truth != hist[i - 1].value or any(h.value == v for h in hist[:i - 1]):
            return None
        return self.sample("overwritten_state", "object_location", f"Where was {ent} before it was moved to {v}?",
                           c, hist[i - 1].value, [hist[i - 1].event_id, hist[i].event_id])

    def _requests(self, c: float) -> list:
        return [e for e in self.r.perceived_events(c) if e.commitment and e.commitment.kind == "request"
                and e.commitment.target]

    def multi_hop(self, c: float) -> QASample | None:
        kind = self.rng.choice(["requested", "room", "why", "who_moved"])
        if kind == "requested":
            reqs = self._requests(c)
            if not reqs:
                return None
            req = self.rng.choice(reqs)
            same = [e for e in reqs if e.actor == req.actor and e.day == req.day]
            f = self.known(same[-1].commitment.target, "location", c)
            if f is None or same[-1] is not req:
                return None
            return self.sample("multi_hop", "social_context", f"Where is the item that {req.actor} asked the robot "
                               f"to bring on day {req.day} now?", c, f.value, [req.id, f.event_id])
        if kind == "room":
            ent = self.rng.choice(self.m.mobiles)
            f = self.known(ent, "location", c)
            if f is None or f.value not in self.m.room_of:
                return None
            return self.sample("multi_hop", "object_location", f"Which room is {ent} in now?", c,
                               self.m.room_of[f.value], [f.event_id])
        if kind == "why":
            moves = [e for e in self.r.perceived_events(c) if e.actor == ROBOT and e.action == "place"
                     and e.args.get("reason")]
            if not moves:
                return None
            ev = self.rng.choice(moves)
            obj = ev.args["object"]
            later = [e for e in moves if e.args["object"] == obj and e.day == ev.day]
            if later[-1] is not ev or any(e.actor == ROBOT and e.day == ev.day and e.t > ev.t and e.args.get("reason")
                                          and any(a.entity == obj and a.attribute == "location" for a in e.effects)
                                          for e in self.r.perceived_events(c)):
                return None
            req = self.r.by_id[ev.args["reason"]]
            return self.sample("multi_hop", "social_context", f"Why did the robot move {obj} on day {ev.day}?", c,
                               req.actor, [req.id, ev.id])
        ent = self.rng.choice(self.m.mobiles)
        ch = self.r.truth_changes(ent, "location", c)
        if not ch or ch[-1].event_id not in self.r.perceived_ids:
            return None
        return self.sample("multi_hop", "object_location", f"Who last moved {ent}?", c, ch[-1].source, [ch[-1].event_id])

    def temporal(self, c: float) -> QASample | None:
        kind = self.rng.choice(["state_at", "last_time", "schedule"])
        if kind == "state_at":
            ent = self.rng.choice(self.m.mobiles)
            tau = (self.rng.uniform(0, c) // 60) * 60
            f = self.known(ent, "location", tau)
            if f is None:
                return None
            day, clock = fmt_time(tau).rsplit(" ", 1)
            return self.sample("temporal", "temporal_state", f"Where was {ent} on {day} at {clock}?", c, f.value,
                               [f.event_id])
        if kind == "last_time":
            if not self.m.devices:
                return None
            dev = self.rng.choice(self.m.devices)
            ons = [f for f in self.r.truth_changes(dev, "power", c) if f.value == "on"]
            if not ons or ons[-1].event_id not in self.r.perceived_ids:
                return None
            return self.sample("temporal", "temporal_state", f"When was {dev} last turned on?", c, fmt_time(ons[-1].t),
                               [ons[-1].event_id])
        sched = [e for e in self.r.perceived_events(c) if e.commitment and e.commitment.kind == "schedule"]
        if not sched:
            return None
        latest = cast("Commitment", sched[-1].commitment)  # sched keeps events with a commitment only
        if latest.due is None:
            # The generator gives every schedule a due time, but a trace need not: a schedule with
            # no time cannot answer "when" (and an earlier one's time may be what it replaced).
            return None
        return self.sample("temporal", "temporal_state", "When is the guest visit scheduled?", c,
                           fmt_time(latest.due), [sched[-1].id])

    def preference(self, c: float) -> QASample | None:
        said = [(e, a) for e in self.r.events if e.t <= c and e.speech_act == "preference" for a in e.claims]
        if not said:
            return None
        e, a = self.rng.choice(said)
        latest = [(x, b) for x, b in said if b.entity == a.entity and b.attribute == a.attribute][-1]
        if ROBOT not in latest[0].observers:
            return None
        e, a = latest
        if a.attribute == "pref:drink":
            q = f"What does {a.entity} prefer to drink?"
        else:
            q = f"Where does {a.entity} prefer {a.attribute.split(':', 2)[2]} to be kept?"
        return self.sample("preference", "preference", q, c, a.value, [e.id])

    def routine(self, c: float) -> QASample | None:
        if not self.m.routines:
            return None
        r = self.rng.choice(self.m.routines)
        seen = [e for e in self.r.perceived_events(c) if e.actor == r["actor"] and e.target == r["target"]
                and e.args.get("value") == r["value"] and abs(e.t % 86400 / 60 - r["minute"]) <= 30]
        if len({e.day for e in seen}) < 3:
            return None
        hh, mm = divmod(r["minute"], 60)
        return self.sample("routine", "routine", f"What does {r['actor']} usually do around {hh:02d}:{mm:02d}?", c,
                           f"{r['action']} {r['target']} {r['value']}", [e.id for e in seen[-3:]])

    def source(self, c: float) -> QASample | None:
        if self.rng.random() < 0.5:
            claims = [(e, a) for e in self.r.perceived_events(c) if e.kind == "utterance" and e.actor != ROBOT
                      for a in e.claims if a.attribute == "location"]
            if not claims:
                return None
            e, a = self.rng.choice(claims)
            e = [x for x, b in claims if b.entity == a.entity and b.value == a.value][-1]
            return self.sample("source", "social_context", f"Who told the robot that {a.entity} was on {a.value}?", c,
                               e.actor, [e.id])
        reqs = self._requests(c)
        if not reqs:
            return None
        req = self.rng.choice(reqs)
        req = [e for e in reqs if e.commitment.target == req.commitment.target and e.day == req.day][-1]
        return self.sample("source", "social_context",
                           f"Who asked the robot to bring {req.commitment.target} on day {req.day}?", c, req.actor, [req.id])

    def hidden_state(self, c: float) -> QASample | None:
        if self.rng.random() < 0.35:
            ent = self.rng.choice(self.m.mobiles)
            if ent in self.r.mentioned and self.r.mentioned[ent] <= c or self.r.truth_at(ent, "location", c) is None:
                return None
            return self.sample("hidden_state", "hidden_state", f"Where is {ent} now?", c, None, [], ["unknown"])
        for ent in self.rng.sample(self.m.mobiles, min(12, len(self.m.mobiles))):
            f = self.r.perceived_value(ent, "location", c)
            last = self.r.latest_perceived(ent, "location", c)
            if f is None or last is not f or f.value == self.r.truth_at(ent, "location", c) or f.value not in self.m.room_of:
                continue
            cue = self.r.first_cue(self.m.room_of[f.value], f.t, c, {ROBOT, f.source})
            if cue is not None:
                return self.sample("hidden_state", "hidden_state", f"Where is {ent} now?", c, f.value,
                                   [f.event_id, cue[2]], NOT_FRESH)
        return None

    def plan(self, c: float) -> PlanSample | None:
        hidden = [o for o in self.m.mobiles if self.r.truth_at(o, "location", c) in self.m.containers]
        obj = self.rng.choice(hidden) if hidden and self.rng.random() < 0.5 else self.rng.choice(self.m.mobiles)
        f = self.known(obj, "location", c)
        if f is None or f.value not in self.m.room_of:
            return None
        world = self.r.world_at(c)
        dest = self.rng.choice([r for r in self.m.receptacles if r not in self.m.containers
                                and self.m.room_of.get(r) != self.m.room_of[f.value]] or self.m.receptacles)
        constraints = [[obj, "location", f.value]]
        evidence = [f.event_id]
        steps = [["navigate_to", self.m.room_of[f.value]]]
        if f.value in self.m.containers:
            g = self.known(f.value, "open", c)
            if g is None:
                return None
            constraints.append([f.value, "open", g.value])
            evidence.append(g.event_id)
            if g.value == "closed":
                steps += [["open", f.value], ["pick", obj], ["close", f.value]]
            else:
                steps += [["pick", obj]]
        else:
            steps += [["pick", obj]]
        steps += [["navigate_to", self.m.room_of[dest]], ["place", dest, obj]]
        if world.location.get(obj, "").startswith("held:"):
            return None
        return PlanSample("", self.m.house_id, c, f"Bring {obj} to {dest}.", obj, dest, steps, constraints, evidence)


def generate_samples(trace: Trace, *, n_per_family: int = 20, n_plans: int = 10, seed: int = 0,
                     max_tries: int = 400) -> tuple[list[QASample], list[PlanSample]]:
    """Balanced QA samples (up to ``n_per_family`` per family) and planning samples for one trace."""
    g = _Gen(trace, seed)
    qa: list[QASample] = []
    if not g.cutoffs:
        return [], []
    for fam in FAMILIES:
        make: Callable[[float], QASample | None] = getattr(g, fam)
        got: list[QASample] = []
        seen: set[tuple[str, float]] = set()
        for _ in range(max_tries):
            if len(got) >= n_per_family:
                break
            s = make(g.rng.choice(g.cutoffs))
            if s is not None and (s.question, s.cutoff) not in seen:
                seen.add((s.question, s.cutoff))
                got.append(s)
        qa.extend(got)
    plans: list[PlanSample] = []
    for _ in range(max_tries):
        if len(plans) >= n_plans:
            break
        p = g.plan(g.rng.choice(g.cutoffs))
        if p is not None:
            plans.append(p)
    tag = f"h{trace.meta.house_index}"
    for i, s in enumerate(qa):
        s.id = f"{tag}-qa{i:04d}"
    for i, p in enumerate(plans):
        p.id = f"{tag}-plan{i:03d}"
    return qa, plans
