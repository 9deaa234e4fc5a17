"""The memories the harness compares, behind one interface: the belief tracker and flat baselines.

All memories get the same stream (events up to the cutoff) through the same observer gate, so
the comparison measures memory organisation, not access to ground truth. The flat baselines
keep perceived events as text and retrieve the top 5 for a question, by BM25 or by cosine over
an embedding (a deterministic hashed bag-of-words unless a real ``TextEncoder`` is passed), or
keep the full history. With no LLM configured they answer with ``read_events``, a deterministic
extractive reader that applies the question's plan to the retrieved events only (latest matching
atom wins; no belief status, so a found value is "known").
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np

from memory.belief.events import Commitment, Event, perceived_by
from memory.belief.retrieval import QueryPlan, RulePlanner, fmt_time
from memory.belief.tracker import BeliefTracker

ROBOT = "robot"
_TOKEN = re.compile(r"[a-z]+_\d+|[a-z]+|\d+")


def tokens(text: str) -> list[str]:
    out = []
    for tok in _TOKEN.findall(text.lower()):
        out.append(tok)
        if "_" in tok:
            out.append(tok.split("_")[0])
    return out


@dataclass
class MemoryAnswer:
    value: str | None
    status: str
    # (event ids, session) per record, best first; None when the memory has no retrieval step
    records: list[tuple[tuple[str, ...], str]] | None = field(default_factory=list)


class Memory(Protocol):
    name: str

    def ingest(self, events: list[Event]) -> None: ...

    def answer(self, question: str, now: float) -> MemoryAnswer: ...


class BeliefMemory:
    """The ObsMem-style tracker (in memory; the durable log is exercised by its own tests)."""

    name = "belief"

    def __init__(self, room_of: dict[str, str], entities: list[str], actors: list[str]) -> None:
        self.tracker = BeliefTracker(None, actors=actors, entities=entities, room_of=room_of)

    def ingest(self, events: list[Event]) -> None:
        self.tracker.ingest(events)

    def answer(self, question: str, now: float) -> MemoryAnswer:
        a = self.tracker.answer(question, now)
        return MemoryAnswer(a.value, a.status, [(r.event_ids, r.session) for r in a.evidence])


class TextEncoder(Protocol):
    def encode(self, texts: list[str]) -> np.ndarray: ...


class HashedBowEncoder:
    """Deterministic feature-hashed bag of words (crc32, signed, log tf, L2-normalised)."""

    def __init__(self, dim: int = 1024) -> None:
        self.dim = dim

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok, n in Counter(tokens(text)).items():
                h = zlib.crc32(tok.encode())
                out[i, h % self.dim] += (1.0 if h & 0x80000000 else -1.0) * (1.0 + math.log(n))
            norm = float(np.linalg.norm(out[i]))
            if norm > 0:
                out[i] /= norm
        return out


class FlatMemory:
    """Perceived events as flat text; ``kind`` is "bm25", "embedding" or "full-context"."""

    def __init__(self, kind: str, room_of: dict[str, str], encoder: TextEncoder | None = None, k: int = 5,
                 k1: float = 1.5, b: float = 0.75) -> None:
        if kind not in ("bm25", "embedding", "full-context"):
            raise ValueError(f"unknown flat memory {kind!r}")
        self.name, self.room_of, self.k, self.k1, self.b = kind, room_of, k, k1, b
        self.events: list[Event] = []
        self.encoder = encoder or HashedBowEncoder()
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._lengths: list[int] = []
        self._vecs: list[np.ndarray] = []
        self.planner = RulePlanner()

    def ingest(self, events: list[Event]) -> None:
        new = [e for e in events if perceived_by(e, ROBOT)]
        for e in new:
            doc = len(self.events)
            self.events.append(e)
            if self.name == "bm25":
                toks = tokens(e.text)
                self._lengths.append(len(toks))
                for tok, n in Counter(toks).items():
                    self._postings.setdefault(tok, []).append((doc, n))
        if self.name == "embedding" and new:
            self._vecs.append(self.encoder.encode([e.text for e in new]))

    def retrieve(self, question: str) -> list[Event]:
        if self.name == "full-context" or not self.events:
            return list(self.events)
        if self.name == "embedding":
            mat = np.concatenate(self._vecs) if len(self._vecs) > 1 else self._vecs[0]
            self._vecs = [mat]
            sims = mat @ self.encoder.encode([question])[0]
            nearest = np.argsort(-sims, kind="stable")[: self.k]
            return [self.events[i] for i in sorted(nearest)]
        n = len(self.events)
        avg = sum(self._lengths) / n
        scores: dict[int, float] = {}
        for tok in set(tokens(question)):
            posting = self._postings.get(tok, [])
            if not posting:
                continue
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for doc, tf in posting:
                norm = tf + self.k1 * (1 - self.b + self.b * self._lengths[doc] / avg)
                scores[doc] = scores.get(doc, 0.0) + idf * tf * (self.k1 + 1) / norm
        top = sorted(scores, key=lambda d: (-scores[d], -d))[: self.k]
        return [self.events[i] for i in sorted(top)]

    def answer(self, question: str, now: float) -> MemoryAnswer:
        got = self.retrieve(question)
        value = read_events(self.planner.plan(question), got, self.room_of)
        records: list[tuple[tuple[str, ...], str]] | None = None if self.name == "full-context" else [((e.id,), e.session) for e in got]
        return MemoryAnswer(value, "known" if value is not None else "unknown", records)


def _atoms(events: list[Event], ent: str, attr: str) -> list[tuple[Event, str]]:
    out = []
    for e in events:
        atoms = list(e.effects) + (list(e.claims) if e.kind == "utterance" and e.actor != ROBOT else [])
        out += [(e, a.value) for a in atoms if a.entity == ent and a.attribute == attr]
    return out


def read_events(plan: QueryPlan | None, events: list[Event], room_of: dict[str, str]) -> str | None:
    """Answer a planned question from the given events only (the baselines' reader)."""
    if plan is None:
        return None
    ent = plan.entities[0] if plan.entities else ""
    attr = plan.attributes[0] if plan.attributes else ""
    if plan.intent in ("current", "room_of"):
        found_atoms = _atoms(events, ent, attr)
        value = found_atoms[-1][1] if found_atoms else None
        return room_of.get(value) if plan.intent == "room_of" and value else value
    if plan.intent == "previous":
        vals = [v for _, v in _atoms(events, ent, "location") if not v.startswith("held:")]
        for i in range(len(vals) - 1, 0, -1):
            if vals[i] == plan.value and vals[i - 1] != plan.value:
                return vals[i - 1]
        return None
    if plan.intent == "state_at":
        locations = [v for e, v in _atoms(events, ent, "location") if e.t <= (plan.time or 0)]
        return locations[-1] if locations else None
    if plan.intent in ("requested_item", "who_asked"):
        reqs = [e for e in events if e.commitment and e.commitment.kind == "request" and e.day == plan.day
                and (e.actor == plan.actor if plan.intent == "requested_item" else e.commitment.target == ent)]
        if not reqs:
            return None
        if plan.intent == "who_asked":
            return reqs[-1].actor
        # reqs keeps only events with a commitment
        found_atoms = _atoms(events, cast(Commitment, reqs[-1].commitment).target or "", "location")
        return found_atoms[-1][1] if found_atoms else None
    if plan.intent == "last_time":
        found = [e for e, v in _atoms(events, ent, "power") if v == plan.value and e.kind == "action"]
        return fmt_time(found[-1].t) if found else None
    if plan.intent == "schedule":
        found = [e for e in events if e.commitment and e.commitment.kind == "schedule" and e.commitment.target == plan.value]
        due = cast(Commitment, found[-1].commitment).due if found else None  # found: events with a commitment
        return fmt_time(due) if due is not None else None
    if plan.intent in ("preference_place", "preference_drink"):
        found_atoms = _atoms([e for e in events if e.actor == plan.actor], plan.actor or "", attr)
        return found_atoms[-1][1] if found_atoms else None
    if plan.intent == "routine":
        acts: Counter[tuple[str, str | None, Any]] = Counter()
        for e in events:
            if e.actor == plan.actor and e.kind == "action" and e.action == "set_device_state" \
                    and abs(e.t % 86400 - (plan.time or 0)) <= 1800:
                acts[(e.action, e.target, e.args.get("value"))] += 1
        best = [k for k, n in acts.most_common(1) if n >= 3]
        return " ".join(str(p) for p in best[0]) if best else None
    if plan.intent == "who_said":
        found = [e for e in events if e.kind == "utterance" and e.actor != ROBOT
                 and any(a.entity == ent and a.value == plan.value for a in e.claims)]
        return found[-1].actor if found else None
    if plan.intent == "who_moved":
        found = [e for e, _ in _atoms(events, ent, "location") if e.kind == "action"]
        return found[-1].actor if found else None
    if plan.intent == "why":
        moves = [e for e, _ in _atoms(events, ent, "location") if e.actor == ROBOT and e.day == plan.day
                 and e.args.get("reason")]
        reasons = {e.id: e for e in events}
        for m in reversed(moves):
            if m.args["reason"] in reasons:
                return reasons[m.args["reason"]].actor
        return None
    return None
