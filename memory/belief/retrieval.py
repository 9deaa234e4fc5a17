"""Query plans, typed evidence records and the selector.

A question becomes a ``QueryPlan`` (intent, entities, attributes, time filter, views). The
default ``RulePlanner`` reads the household question forms with regular expressions, so
structured lookups need no model; an LLM planner or selector plugs in through the
``QueryPlanner`` / ``EvidenceSelector`` protocols when a model is configured (the litellm wiring
lives with the planner's LLM client). Per-view retrievers (in ``answer.py``) produce
``EvidenceRecord``s; ``select`` dedups them by the events they cite and keeps at most k, best
first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

VIEWS = ("state", "beliefs", "events", "commitments", "causal", "routines", "episodes")
_ENTITY = r"([a-z][a-z0-9]*_\d+)"
_TIME = r"day (\d+) at (\d{1,2}):(\d{2})"


def fmt_time(t: float) -> str:
    """Seconds since the trace start -> "day 3 14:05" (the form answers use)."""
    day, rest = divmod(int(t), 86400)
    return f"day {day} {rest // 3600:02d}:{rest % 3600 // 60:02d}"


def parse_time(day: str, hh: str, mm: str) -> float:
    return int(day) * 86400 + int(hh) * 3600 + int(mm) * 60


@dataclass
class QueryPlan:
    intent: str
    entities: list[str] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)
    actor: str | None = None
    value: str | None = None
    time: float | None = None  # "as of" for state_at; a time of day (s) for routines
    day: int | None = None
    views: tuple[str, ...] = ("state", "beliefs")


@dataclass(frozen=True)
class EvidenceRecord:
    """One typed piece of evidence: what it says, which events back it, and how well it fits."""

    kind: str  # state | belief | event | commitment | causal | routine | episode
    text: str
    event_ids: tuple[str, ...]
    session: str = ""
    t: float = 0.0
    score: float = 0.0


class QueryPlanner(Protocol):
    def plan(self, question: str) -> QueryPlan | None: ...


class EvidenceSelector(Protocol):
    def select(self, question: str, plan: QueryPlan, records: list[EvidenceRecord], k: int) -> list[EvidenceRecord]: ...


_ATTR_WORD = {"on or off": "power", "open or closed": "open"}

# (pattern, intent, builder) in order; the first match wins.
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"^where was {_ENTITY} before it was moved to {_ENTITY}\??$"), "previous"),
    (re.compile(rf"^where was {_ENTITY} on {_TIME}\??$"), "state_at"),
    (re.compile(r"^where is the item that (\w+) asked the robot to bring on day (\d+) now\??$"), "requested_item"),
    (re.compile(rf"^which room is {_ENTITY} in now\??$"), "room_of"),
    (re.compile(rf"^where is {_ENTITY} now\??$"), "current"),
    (re.compile(rf"^is {_ENTITY} (on or off|open or closed) now\??$"), "current"),
    (re.compile(rf"^when was {_ENTITY} last turned (on|off)\??$"), "last_time"),
    (re.compile(r"^when is the ([a-z_ ]+) scheduled\??$"), "schedule"),
    (re.compile(rf"^where does (\w+) prefer {_ENTITY} to be kept\??$"), "preference_place"),
    (re.compile(r"^what does (\w+) prefer to drink\??$"), "preference_drink"),
    (re.compile(r"^what does (\w+) usually do around (\d{1,2}):(\d{2})\??$"), "routine"),
    (re.compile(rf"^who told the robot that {_ENTITY} was on {_ENTITY}\??$"), "who_said"),
    (re.compile(rf"^who asked the robot to bring {_ENTITY} on day (\d+)\??$"), "who_asked"),
    (re.compile(rf"^who last moved {_ENTITY}\??$"), "who_moved"),
    (re.compile(rf"^why did the robot move {_ENTITY} on day (\d+)\??$"), "why"),
]


class RulePlanner:
    """Deterministic planner for the household question forms (see ``_RULES``)."""

    def plan(self, question: str) -> QueryPlan | None:
        q = " ".join(question.strip().lower().split())
        for pattern, intent in _RULES:
            m = pattern.match(q)
            if m:
                return _build(intent, m.groups())
        return None


def _build(intent: str, g: tuple[str, ...]) -> QueryPlan:
    if intent == "previous":
        return QueryPlan(intent, [g[0]], ["location"], value=g[1], views=("state", "causal"))
    if intent == "state_at":
        return QueryPlan(intent, [g[0]], ["location"], time=parse_time(g[1], g[2], g[3]), views=("state",))
    if intent == "requested_item":
        return QueryPlan(intent, [], ["location"], actor=g[0], day=int(g[1]), views=("commitments", "state", "beliefs"))
    if intent == "room_of":
        return QueryPlan(intent, [g[0]], ["location"], views=("state", "beliefs"))
    if intent == "current":
        attr = _ATTR_WORD.get(g[1], "location") if len(g) > 1 else "location"
        return QueryPlan(intent, [g[0]], [attr], views=("state", "beliefs", "events"))
    if intent == "last_time":
        return QueryPlan(intent, [g[0]], ["power"], value=g[1], views=("causal", "state"))
    if intent == "schedule":
        return QueryPlan(intent, [], [], value=g[0].strip().replace(" ", "_"), views=("commitments",))
    if intent == "preference_place":
        return QueryPlan(intent, [g[1]], [f"pref:place:{g[1]}"], actor=g[0], views=("state",))
    if intent == "preference_drink":
        return QueryPlan(intent, [], ["pref:drink"], actor=g[0], views=("state",))
    if intent == "routine":
        return QueryPlan(intent, [], [], actor=g[0], time=int(g[1]) * 3600 + int(g[2]) * 60, views=("routines", "episodes"))
    if intent == "who_said":
        return QueryPlan(intent, [g[0]], ["location"], value=g[1], views=("state",))
    if intent == "who_asked":
        return QueryPlan(intent, [g[0]], [], day=int(g[1]), views=("commitments",))
    if intent == "who_moved":
        return QueryPlan(intent, [g[0]], ["location"], views=("causal",))
    if intent == "why":
        return QueryPlan(intent, [g[0]], ["location"], day=int(g[1]), views=("causal", "commitments"))
    raise ValueError(f"no plan builder for intent {intent!r}")


class RuleSelector:
    """Dedup by cited events (first, best record wins), then best score, then most recent."""

    def select(self, question: str, plan: QueryPlan, records: list[EvidenceRecord], k: int) -> list[EvidenceRecord]:
        ranked = sorted(records, key=lambda r: (-r.score, -r.t))
        out: list[EvidenceRecord] = []
        seen: set[tuple[str, ...]] = set()
        for r in ranked:
            key = r.event_ids or (r.kind, r.text)
            if key in seen:
                continue
            seen.add(key)
            out.append(r)
            if len(out) >= k:
                break
        return out
