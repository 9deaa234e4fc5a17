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


_ATTR_WORD = {"on or off": "power", "open or closed": "open", "open or shut": "open"}

# Named pieces of the question forms. Entities are ids ("mug_1"); people also write "mug 1" or
# "the mug_1", which ``normalize_question`` turns into the id first.
_E = r"(?P<e>[a-z][a-z0-9]*_\d+)"
_E2 = r"(?P<e2>[a-z][a-z0-9]*_\d+)"
_A = r"(?P<actor>[a-z]+)"
_D = r"(?P<day>\d+)"
_CLOCK = r"(?P<hh>\d{1,2}):(?P<mm>\d{2})"
# How people write a time on a day; a form that holds "<T>" is tried with each (Python's re
# allows one group of a name per pattern, so the alternatives cannot share a pattern).
_TIMES = (rf"day {_D} at {_CLOCK}", rf"{_CLOCK} on day {_D}", rf"day {_D}, {_CLOCK}")
_NOW = r"(?: now)?"
_MOVED = r"(?:moved|put|taken|brought)"

# (pattern, intent) in order; the first match wins. The first form of each intent is the template
# the WorldLines generator writes; the others are the ways people ask the same thing.
_FORMS: list[tuple[str, str]] = [
    (rf"where was {_E} before it was moved to {_E2}", "previous"),
    (rf"where (?:was|had) (?:the )?{_E} (?:been |sat )?(?:before|prior to) (?:it was |being |somebody |someone )?"
     rf"(?:{_MOVED}|went)(?: it)? (?:to|on|onto|in|into) {_E2}", "previous"),
    (rf"before {_E} (?:ended up|went|was {_MOVED}) (?:to|on|onto|in|into) {_E2},? where was it", "previous"),
    (rf"where did {_E} (?:sit|stand|live|go|stay|used to be) before (?:it |being )?(?:went|was {_MOVED}|{_MOVED}) "
     rf"(?:to|on|onto|in|into) {_E2}", "previous"),
    (rf"what was {_E}'s (?:spot|place|location|position) before (?:being|it was) {_MOVED} (?:to|on|onto) {_E2}",
     "previous"),
    (rf"where was {_E} on <T>", "state_at"),
    (rf"(?:on|at) <T>,? where was (?:the )?{_E}", "state_at"),
    (rf"(?:where|what) (?:was|could i have found|would i have found|was the location of) (?:the )?{_E}"
     rf"(?: located)? (?:on |at )?<T>", "state_at"),
    (rf"where is the item that {_A} asked the robot to bring on day {_D}{_NOW}", "requested_item"),
    (rf"(?:where is |where's |what became of )?the (?:item|thing|object)(?: that)? {_A} (?:asked|requested|wanted)"
     rf"(?: the robot| you)?(?: to (?:bring|fetch|get))?(?: for)?(?: brought)? on day {_D}"
     rf"(?:[:,]? where is it{_NOW}|{_NOW})", "requested_item"),
    (rf"which room is {_E} in{_NOW}", "room_of"),
    (rf"(?:which|what) room (?:is|has) {_E}(?: in)?{_NOW}", "room_of"),
    (rf"in (?:which|what) room is {_E}{_NOW}", "room_of"),
    (rf"what room can i find {_E} in{_NOW}", "room_of"),
    (rf"where is {_E} now", "current"),
    (rf"is {_E} (?P<attr>on or off|open or closed) now", "current"),
    (rf"(?:now,? )?is {_E} (?:currently )?(?:switched |turned )?(?P<attr>on or off|open or closed|open or shut){_NOW}",
     "current"),
    (rf"whether {_E} is (?P<attr>on or off|open or closed|open or shut){_NOW}", "current"),
    (rf"(?:where is|where's|where can i find) {_E}{_NOW}", "current"),
    (rf"where {_E} is{_NOW}", "current"),
    (rf"when was {_E} last turned (?P<value>on|off)", "last_time"),
    (rf"(?:when|what time) (?:was|did) (?:someone |somebody |anyone )?(?:last )?(?:turn|switch) {_E}(?: last)? "
     rf"(?P<value>on|off)", "last_time"),
    (rf"(?:when|what time) (?:was|did) {_E} last (?:get )?(?:turned|switched) (?P<value>on|off)", "last_time"),
    (rf"when was the last time {_E} was (?:turned|switched) (?P<value>on|off)", "last_time"),
    (r"when is the (?P<item>[a-z_ ]+) scheduled", "schedule"),
    (r"(?:when|what time) (?:is|was|'s) the (?P<item>[a-z_ ]+?) (?:scheduled|planned|set)(?: for)?", "schedule"),
    (r"when's the (?P<item>[a-z_ ]+?)(?: scheduled| planned| set)?(?: for)?", "schedule"),
    (rf"where does {_A} prefer {_E} to be kept", "preference_place"),
    (rf"where (?:does|would) {_A} (?:prefer|like|want) {_E}(?: to be)? kept", "preference_place"),
    (rf"where (?:does|would) {_A} (?:prefer|like) to keep {_E}", "preference_place"),
    (rf"where should {_E} be kept according to {_A}", "preference_place"),
    (rf"what does {_A} prefer to drink", "preference_drink"),
    (rf"what does {_A} (?:usually |normally )?(?:prefer|like|want) to drink", "preference_drink"),
    (rf"(?:what|which) drink does {_A} (?:prefer|like)", "preference_drink"),
    (rf"what(?:'s| is) {_A}'s (?:preferred|favourite|favorite) drink", "preference_drink"),
    (rf"what does {_A} usually do around {_CLOCK}", "routine"),
    (rf"what (?:does|is) {_A} (?:usually|normally|typically|tend to|tends to) (?:do|doing)"
     rf"(?: do)? (?:around|at about|about|at) {_CLOCK}", "routine"),
    (rf"(?:around|at about|about|at) {_CLOCK},? what does {_A} (?:usually|normally|typically) do", "routine"),
    (rf"who told the robot that {_E} was on {_E2}", "who_said"),
    (rf"(?:who|which person) (?:told the robot|told you|said|reported)(?: that)? {_E} was (?:on|in) {_E2}",
     "who_said"),
    (rf"who asked the robot to bring {_E} on day {_D}", "who_asked"),
    (rf"who (?:asked|wanted)(?: the robot| you)?(?: to (?:bring|fetch|get))?(?: for)? {_E}(?: brought)? on day {_D}",
     "who_asked"),
    (rf"on day {_D},? who (?:asked|wanted)(?: the robot| you)?(?: to (?:bring|fetch|get))?(?: for)? {_E}(?: brought)?",
     "who_asked"),
    (rf"who last moved {_E}", "who_moved"),
    (rf"who moved {_E}(?: last| most recently)?", "who_moved"),
    (rf"who was the last(?: person| one)? to move {_E}", "who_moved"),
    (rf"why did the robot move {_E} on day {_D}", "why"),
    (rf"(?:why|what was the reason) (?:did )?(?:the robot|you) (?:move|moved) {_E} on day {_D}", "why"),
    (rf"on day {_D},? (?:why|what was the reason) (?:did )?(?:the robot|you) (?:move|moved) {_E}", "why"),
    (rf"why was {_E} moved by the robot on day {_D}", "why"),
]
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(f"^{form.replace('<T>', t)}$"), intent)
    for form, intent in _FORMS for t in (_TIMES if "<T>" in form else ("",))]
_FILLERS = re.compile(r"^(?:(?:do you know|can you tell me|could you tell me|tell me|please|hey|so|robot),? )+")
_SPACED_ID = re.compile(r"\b(?!day\b)([a-z][a-z0-9]*) (\d+)\b(?!:)")


def normalize_question(question: str) -> str:
    """Lower case, single spaces, no closing punctuation or leading filler; "mug 1" and
    "the mug_1" become the id "mug_1"; "right now" / "at the moment" / "currently" mean now."""
    q = " ".join(question.strip().lower().split())
    q = re.sub(r"[?.!]+$", "", q).strip()
    q = _FILLERS.sub("", q)
    q = re.sub(r"\b(?:right now|at the moment|at present)\b", "now", q)
    q = _SPACED_ID.sub(r"\1_\2", q)
    q = re.sub(r"\bthe ([a-z][a-z0-9]*_\d+)", r"\1", q)
    return " ".join(q.split())


class RulePlanner:
    """Deterministic planner for the household question forms (see ``_FORMS``): the template
    wording and the everyday ones, so structured lookups need no model."""

    def plan(self, question: str) -> QueryPlan | None:
        q = normalize_question(question)
        for pattern, intent in _RULES:
            m = pattern.match(q)
            if m:
                return _build(intent, {k: v for k, v in m.groupdict().items() if v is not None})
        return None


def _build(intent: str, g: dict[str, str]) -> QueryPlan:
    if intent == "previous":
        return QueryPlan(intent, [g["e"]], ["location"], value=g["e2"], views=("state", "causal"))
    if intent == "state_at":
        return QueryPlan(intent, [g["e"]], ["location"], time=parse_time(g["day"], g["hh"], g["mm"]), views=("state",))
    if intent == "requested_item":
        return QueryPlan(intent, [], ["location"], actor=g["actor"], day=int(g["day"]),
                         views=("commitments", "state", "beliefs"))
    if intent == "room_of":
        return QueryPlan(intent, [g["e"]], ["location"], views=("state", "beliefs"))
    if intent == "current":
        attr = _ATTR_WORD[g["attr"]] if "attr" in g else "location"
        return QueryPlan(intent, [g["e"]], [attr], views=("state", "beliefs", "events"))
    if intent == "last_time":
        return QueryPlan(intent, [g["e"]], ["power"], value=g["value"], views=("causal", "state"))
    if intent == "schedule":
        return QueryPlan(intent, [], [], value=g["item"].strip().replace(" ", "_"), views=("commitments",))
    if intent == "preference_place":
        return QueryPlan(intent, [g["e"]], [f"pref:place:{g['e']}"], actor=g["actor"], views=("state",))
    if intent == "preference_drink":
        return QueryPlan(intent, [], ["pref:drink"], actor=g["actor"], views=("state",))
    if intent == "routine":
        return QueryPlan(intent, [], [], actor=g["actor"], time=int(g["hh"]) * 3600 + int(g["mm"]) * 60,
                         views=("routines", "episodes"))
    if intent == "who_said":
        return QueryPlan(intent, [g["e"]], ["location"], value=g["e2"], views=("state",))
    if intent == "who_asked":
        return QueryPlan(intent, [g["e"]], [], day=int(g["day"]), views=("commitments",))
    if intent == "who_moved":
        return QueryPlan(intent, [g["e"]], ["location"], views=("causal",))
    if intent == "why":
        return QueryPlan(intent, [g["e"]], ["location"], day=int(g["day"]), views=("causal", "commitments"))
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
