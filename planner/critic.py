"""The deterministic critic and the experience pool (HoloMind's critic and episodic "experience").

After every action the critic reads the feedback (success, the backend's error text) and answers
Pass, Refine (a local fix run before retrying: open the receptacle first, free the hand, come
closer, look again) or Replan (back to grounding for another object, or to the goal level). The
diagnosis is rule-based: the backend's typed outcome (``household.outcomes.Failure``, read
from its error text only where a backend sends none) is the situation, each with one fix.

The experience pool remembers situations and fixes by (action, situation, object type). A fix
that made the retried action succeed is *validated* and distilled into a rule the executor
applies BEFORE acting the next time ("PutObject on a Fridge: open it first"), so a recurring
situation costs no failed step. The pool is a JSON file that survives episodes and runs.

"Come closer at once" is the one rule that is about the situation more than the type: an object
out of reach or out of view from where the agent usually stands is a matter of where this one
lies. Applied to every object of a type after one validated fix, it sent the agent to a nearer
pose for every pick-up of 27 common types on the v2 set (a walk each time, and more refusals
from the nearer pose: dev-013-0 with the whole run's pool, 1,342 -> 2,079 navigation steps and
0 -> 4 failed actions). The pool therefore also counts, per (action, type), the tries made from
the usual distance (``attempts``), and the rule holds only where failing from there is the norm
(``CLOSER_FAILURE_SHARE`` of those tries).

Several processes may share one pool file (two runs with one ``--experience``, the shards of one
``eval longact``). ``save`` used to write its in-memory pool over the file, so whatever another
process had saved since this one loaded was lost (issue 32). It now merges under an exclusive
lock on ``<pool>.lock``: it re-reads the file, adds this process's increments of ``seen`` and
``validated`` since its last load or save to what is stored, keeps entries only the file has,
writes the result atomically and adopts it (counts updated in place, so an ``Experience`` the
agent holds stays the pool's own).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from household.atomic_io import atomic_write_text
from household.input_files import MB, check_input_file, unique_keys
from household.locks import acquire_waiting
from household.outcomes import Failure, classify_text, failure_of
from planner.roles import CriticDecision, CriticEvent, PlannerContext, Subgoal

def classify(error: str) -> str:
    """The situation free error text describes: ``household.outcomes.classify_text``'s value, the
    fallback for a backend that sends no typed outcome."""
    return classify_text(error).value


def situation_of(event: CriticEvent) -> str:
    """The typed situation of a critic event: "ok" for a success, else the backend's typed outcome
    (``event.failure``), read from its error text only where it sent none. Every critic's decision
    carries it, so the agent never parses a diagnosis."""
    return "ok" if event.success else failure_of(False, event.failure, event.error).value


# The reach failures "come closer" fixes, and the share of tries from the usual distance that
# must have failed that way before experience sends the agent closer at once: a needless nearer
# approach costs a walk on every success, a failure only the refused action (the critic then
# comes closer all the same), so the rule pays only where failing is the norm.
REACH_SITUATIONS = ("out_of_reach", "not_visible")
CLOSER_FAILURE_SHARE = 0.5


@dataclass
class Experience:
    action: str
    situation: str
    object_type: str
    fix: str  # a skill name the executor can run before the action ("open", "close", ...)
    seen: int = 0
    validated: int = 0  # times the fix made the retried action succeed

    @property
    def key(self) -> str:
        return f"{self.action}|{self.situation}|{self.object_type}"

    @property
    def rule(self) -> str:
        return f"before {self.action} on a {self.object_type}: {self.fix} first ({self.situation})"


def _experience_from(raw: Any, where: str) -> Experience:
    """One stored entry, every field type- and range-checked: a wrongly typed field is an error
    naming the file, entry and field, never a pool that silently misbehaves."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected an object, got {type(raw).__name__}")
    fields = {f.name: f.type for f in dataclasses.fields(Experience)}
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}")
    for name in ("action", "situation", "object_type", "fix"):
        if not isinstance(raw.get(name), str) or not raw[name]:
            raise ValueError(f"{where}.{name}: expected a non-empty string, got {raw.get(name)!r}")
    for name in ("seen", "validated"):
        value = raw.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{where}.{name}: expected a count (integer >= 0), got {value!r}")
    return Experience(**raw)


# A pool holds a few hundred rules (kilobytes); anything this large is not one.
MAX_POOL_BYTES = 64 * MB


def _attempts_from(raw: Any, where: str) -> dict[str, int]:
    """The stored tries per "Action|ObjectType", each a count; ValueError naming the key."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected an object of counts per \"Action|ObjectType\", got {type(raw).__name__}")
    attempts: dict[str, int] = {}
    for key, value in raw.items():
        action, bar, object_type = key.partition("|")
        if not (action and bar and object_type) or "|" in object_type:
            raise ValueError(f"{where}: key {key!r} is not \"Action|ObjectType\"")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{where}[{key!r}]: expected a count (integer >= 0), got {value!r}")
        attempts[key] = value
    return attempts


def add_tries(into: dict[str, int], now: dict[str, int], base: dict[str, int]) -> None:
    """Add to ``into`` the tries counted since ``base`` (``now`` minus ``base`` per key, where it
    grew): how a pool's save merges its own counts into the file's, and how ``eval longact``
    merges an episode's into the run's pool after a wave."""
    for key, n in now.items():
        grown = n - base.get(key, 0)
        if grown > 0:
            into[key] = into.get(key, 0) + grown


def _read_pool(path: Path) -> tuple[dict[str, Experience], dict[str, int]]:
    """The entries and the tries per (action, type) of the pool file at ``path`` (none when it
    does not exist; a file written before tries were counted has none); ValueError naming the
    file, entry and field for anything else."""
    entries: dict[str, Experience] = {}
    if not path.exists():
        return entries, {}
    check_input_file(path, "an experience pool", MAX_POOL_BYTES)
    try:
        data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=unique_keys)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{path}: not an experience pool file ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries", []), list):
        raise ValueError(f"{path}: not an experience pool file (expected an object with a list 'entries')")
    for i, raw in enumerate(data.get("entries", [])):
        exp = _experience_from(raw, f"{path}: entries[{i}]")
        entries[exp.key] = exp
    return entries, _attempts_from(data.get("attempts", {}), f"{path}: attempts")


@dataclass
class ExperiencePool:
    """Failures and their fixes, persisted as JSON (written atomically after each change)."""

    path: Path | None = None
    entries: dict[str, Experience] = field(default_factory=dict)
    reused: int = 0  # times a validated rule was applied proactively (this episode)
    # tries per "Action|ObjectType" from the usual distance (not sent closer by experience)
    attempts: dict[str, int] = field(default_factory=dict)

    # (seen, validated) per key, and the tries, as last read from or written to the file: save
    # adds only what this process counted since then, so another process's counts are never
    # overwritten.
    _base: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)
    _attempts_base: dict[str, int] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None) -> "ExperiencePool":
        pool = cls(Path(path) if path else None)
        if pool.path is not None:
            pool.entries, pool.attempts = _read_pool(pool.path)
            pool._base = {k: (e.seen, e.validated) for k, e in pool.entries.items()}
            pool._attempts_base = dict(pool.attempts)
        return pool

    def save(self) -> None:
        """Merge this pool into the file under its lock (see the module docstring) and write it."""
        if self.path is None:
            return
        # A pool given as a symbolic link (shared between runs) is written through the link, with the
        # lock beside the file it points to: an atomic replace of the link itself would leave a private
        # copy here and the shared pool without this run's entries (issue 32).
        target = self.path.resolve() if self.path.is_symlink() else self.path
        lock = acquire_waiting(target.with_name(target.name + ".lock"), f"experience pool {self.path}")
        try:
            stored, stored_attempts = _read_pool(target)
            for key, exp in self.entries.items():
                seen0, validated0 = self._base.get(key, (0, 0))
                disk = stored.get(key)
                if disk is None:
                    continue
                exp.seen = disk.seen + max(0, exp.seen - seen0)
                exp.validated = disk.validated + max(0, exp.validated - validated0)
            for key, disk in stored.items():
                self.entries.setdefault(key, disk)
            merged = dict(stored_attempts)
            add_tries(merged, self.attempts, self._attempts_base)
            self.attempts.clear()
            self.attempts.update(merged)
            payload = {"schema": "worldmind/experience_pool", "version": 1,
                       "entries": [asdict(e) for e in sorted(self.entries.values(), key=lambda e: e.key)],
                       "attempts": dict(sorted(self.attempts.items()))}
            atomic_write_text(target, json.dumps(payload, indent=1))
            self._base = {k: (e.seen, e.validated) for k, e in self.entries.items()}
            self._attempts_base = dict(self.attempts)
        finally:
            lock.release()

    def record(self, action: str, situation: str, object_type: str, fix: str) -> Experience:
        key = f"{action}|{situation}|{object_type}"
        exp = self.entries.get(key)
        if exp is None:
            exp = self.entries[key] = Experience(action, situation, object_type, fix)
        exp.seen += 1
        return exp

    def validate(self, exp: Experience) -> None:
        exp.validated += 1
        self.save()

    def attempted(self, action: str, object_type: str) -> None:
        """One try of ``action`` on this type from the usual distance (counted whatever its outcome)."""
        key = f"{action}|{object_type}"
        self.attempts[key] = self.attempts.get(key, 0) + 1

    def proactive_fix(self, action: str, object_type: str) -> str | None:
        """A validated fix to run before ``action`` on this type, if experience has one."""
        for situation in ("closed", "is_open_device", "running"):
            exp = self.entries.get(f"{action}|{situation}|{object_type}")
            if exp is not None and exp.validated > 0:
                return exp.fix
        return None

    def approach_closer(self, action: str, object_type: str) -> bool:
        """Experience says this action on this type fails from the usual distance or pitch (out
        of reach / not visible) in at least ``CLOSER_FAILURE_SHARE`` of the tries counted from
        there, and has worked after coming closer: come closer at once. Without counted tries
        (a pool written before they were counted) there is no rate, and no rule."""
        found = [e for s in REACH_SITUATIONS if (e := self.entries.get(f"{action}|{s}|{object_type}")) is not None]
        if not any(e.validated > 0 for e in found):
            return False
        tries = self.attempts.get(f"{action}|{object_type}", 0)
        return tries > 0 and sum(e.seen for e in found) >= CLOSER_FAILURE_SHARE * tries

    def avoid(self, action: str, object_type: str, target_type: str) -> bool:
        """Experience says this object type does not go on/in this receptacle type."""
        for situation in ("no_room", "wrong_receptacle"):
            exp = self.entries.get(f"{action}|{situation}|{object_type}>{target_type}")
            if exp is not None and exp.seen > 0:
                return True
        return False

    def rules(self) -> list[str]:
        """The rules in force (what the roles are told): validated fixes, the "come closer" ones
        only where ``approach_closer`` holds."""
        return [e.rule for e in self.entries.values() if e.validated > 0
                and (e.situation not in REACH_SITUATIONS or self.approach_closer(e.action, e.object_type))]


class ExperienceStore(Protocol):
    """What the agent and its refusal store use of an experience pool: ``ExperiencePool`` (the
    default), or ``planner.ablations.NoExperience`` under the ``episodic`` ablation."""

    reused: int

    def record(self, action: str, situation: str, object_type: str, fix: str) -> Experience: ...
    def validate(self, exp: Experience) -> None: ...
    def proactive_fix(self, action: str, object_type: str) -> str | None: ...
    def approach_closer(self, action: str, object_type: str) -> bool: ...
    def attempted(self, action: str, object_type: str) -> None: ...
    def avoid(self, action: str, object_type: str, target_type: str) -> bool: ...
    def rules(self) -> list[str]: ...
    def save(self) -> None: ...


class RuleCritic:
    """Pass / Refine / Replan from the action feedback; implements ``planner.roles.Critic``."""

    def critique(self, event: CriticEvent, context: PlannerContext) -> CriticDecision:
        return dataclasses.replace(self._decide(event, context), situation=situation_of(event))

    def _decide(self, event: CriticEvent, context: PlannerContext) -> CriticDecision:
        if event.success:
            return CriticDecision("pass", "the action succeeded")
        situation = situation_of(event)
        target = (event.subgoal.args.get("object_id") or event.subgoal.args.get("receptacle_id")) if event.subgoal else None
        held = context.held_object_id
        if situation == "already_state":
            return CriticDecision("pass", f"{event.action}: the object was already in the wanted state")
        if situation == "closed":
            opener = _closed_container(event.error) or target
            return CriticDecision("refine", f"{event.action} failed because {opener} is closed: open it first",
                                  (Subgoal("open", {"object_id": opener}),))
        if situation == "hand_full":
            return CriticDecision("refine", f"{event.action} failed with {held} in hand: put it down first",
                                  (Subgoal("put_down", {}),))
        if situation in ("out_of_reach", "not_visible"):
            return CriticDecision("refine", f"{event.action} on {target}: {situation.replace('_', ' ')}; "
                                  "come closer and look again", (Subgoal("navigate_to", {"object_id": target,
                                                                                          "closer": True}),))
        if situation == "running":
            return CriticDecision("refine", f"{target} is running: turn it off first",
                                  (Subgoal("toggle_off", {"object_id": target}),))
        if situation == "is_open_device":
            return CriticDecision("refine", f"{target} is open: close it first", (Subgoal("close", {"object_id": target}),))
        if situation == Failure.NEEDS_TOOL.value:
            return CriticDecision("replan", f"{event.action} needs a tool in hand (a knife to slice, a vessel to "
                                  "pour from): ground one", replan_level="low")
        if situation in ("no_room", "wrong_receptacle"):
            return CriticDecision("replan", f"{target} cannot take the object ({situation}): choose another receptacle",
                                  replan_level="low")
        if situation == "not_capable":
            return CriticDecision("replan", f"{target} cannot do {event.action}: ground another object of the type",
                                  replan_level="low")
        if situation == "not_holding":
            return CriticDecision("replan", "nothing in hand: fetch the object again", replan_level="low")
        if situation == "blocked":
            return CriticDecision("replan", "the path is blocked: mark it and plan around", replan_level="low")
        if situation == "unknown_object":
            return CriticDecision("replan", f"{target} is not an object any more: ground another", replan_level="low")
        return CriticDecision("replan", f"unexpected failure ({event.error[:80]}): try another way", replan_level="low")


def _closed_container(error: str) -> str | None:
    """The id of the closed receptacle an error names ("X is inside Y, which is closed")."""
    m = re.search(r"inside (\S+), which is closed", error)
    if m:
        return m.group(1)
    m = re.search(r"^(?:\w+: )?(\S+) \([A-Za-z]+\) is closed", error)
    return m.group(1) if m else None


def to_dict(decision: CriticDecision) -> dict[str, Any]:
    return {"verdict": decision.verdict, "diagnosis": decision.diagnosis,
            "fix": [s.to_dict() for s in decision.fix], "replan_level": decision.replan_level,
            "situation": decision.situation}
