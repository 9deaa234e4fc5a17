"""Event records: the only input the belief tracker ever gets.

An event is something that happened in the household at time ``t`` (seconds since the trace
start): an action by an actor (the robot or a household member), an utterance, or a robot
observation (an ``inspect`` that reports what the robot saw). ``observers`` names who perceived
it; the observer gate (``perceived_by``) is what keeps ground truth out of the robot's memory:
an event the robot did not perceive never reaches its tracks.

``effects`` are the state atoms the event made true (observed by those who perceived it);
``claims`` are atoms an utterance asserts (they become *reported* atoms, attributed to the
speaker); ``commitment`` carries a request, reminder, promise or schedule. Records serialise to
plain JSON dicts so traces and the durable log are data, not code.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

EVENT_KINDS = ("action", "utterance", "observation")
COMMITMENT_KINDS = ("request", "reminder", "promise", "schedule")


class EventError(ValueError):
    """A malformed or inconsistent event; the message names the event id and the field."""


@dataclass(frozen=True, slots=True)
class StateAtom:
    """``entity.attribute = value``: e.g. ("mug_2", "location", "diningtable_1")."""

    entity: str
    attribute: str
    value: str

    def to_list(self) -> list[str]:
        return [self.entity, self.attribute, self.value]


@dataclass(frozen=True, slots=True)
class Commitment:
    """Something someone asked for or promised, due at ``due`` (seconds) if it has a time."""

    kind: str
    owner: str  # who must do it (the robot for requests and reminders)
    text: str
    due: float | None = None
    target: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "owner": self.owner, "text": self.text, "due": self.due, "target": self.target}


@dataclass(frozen=True, slots=True)
class Event:
    id: str
    t: float
    actor: str
    kind: str
    action: str
    observers: tuple[str, ...]
    target: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    room: str | None = None
    effects: tuple[StateAtom, ...] = ()
    claims: tuple[StateAtom, ...] = ()
    success: bool = True
    error: str = ""
    text: str = ""
    session: str = ""
    speech_act: str | None = None
    commitment: Commitment | None = None

    @property
    def day(self) -> int:
        return int(self.t // 86400)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "t": self.t, "actor": self.actor, "kind": self.kind,
                               "action": self.action, "observers": list(self.observers)}
        if self.target is not None:
            out["target"] = self.target
        if self.args:
            out["args"] = self.args
        if self.room is not None:
            out["room"] = self.room
        if self.effects:
            out["effects"] = [a.to_list() for a in self.effects]
        if self.claims:
            out["claims"] = [a.to_list() for a in self.claims]
        if not self.success:
            out["success"] = False
            out["error"] = self.error
        if self.text:
            out["text"] = self.text
        if self.session:
            out["session"] = self.session
        if self.speech_act:
            out["speech_act"] = self.speech_act
        if self.commitment is not None:
            out["commitment"] = self.commitment.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: Any) -> "Event":
        """Parse and validate; errors name the event id and the field."""
        if not isinstance(d, dict):
            raise EventError(f"event must be a JSON object, got {type(d).__name__}")
        eid = d.get("id")
        if not isinstance(eid, str) or not eid:
            raise EventError(f"event {eid!r}: field 'id' must be a non-empty string")
        try:
            t = float(d["t"])
        except (KeyError, TypeError, ValueError, OverflowError):
            raise EventError(f"event {eid}: field 't' must be a number of seconds") from None
        if not math.isfinite(t) or t < 0:
            raise EventError(f"event {eid}: field 't' must be finite and >= 0, got {d.get('t')!r}")
        for key in ("actor", "kind", "action"):
            if not isinstance(d.get(key), str) or not d[key]:
                raise EventError(f"event {eid}: field {key!r} must be a non-empty string")
        if d["kind"] not in EVENT_KINDS:
            raise EventError(f"event {eid}: field 'kind' must be one of {EVENT_KINDS}, got {d['kind']!r}")
        observers = d.get("observers", [])
        if not isinstance(observers, list) or not all(isinstance(o, str) for o in observers):
            raise EventError(f"event {eid}: field 'observers' must be a list of actor names")
        for key in ("target", "room", "speech_act"):
            if d.get(key) is not None and not isinstance(d[key], str):
                raise EventError(f"event {eid}: field {key!r} must be a string or null")
        for key in ("error", "text", "session"):
            if d.get(key) is not None and not isinstance(d[key], (str, int, float)):
                raise EventError(f"event {eid}: field {key!r} must be a string")
        if not isinstance(d.get("success", True), bool):
            raise EventError(f"event {eid}: field 'success' must be true or false")
        args = d.get("args") or {}
        if not isinstance(args, dict):
            raise EventError(f"event {eid}: field 'args' must be a JSON object")
        try:  # args are stored verbatim: they must be strict JSON (no NaN/Infinity, not too deep)
            json.dumps(args, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            raise EventError(f"event {eid}: field 'args' must hold finite JSON values only") from None
        com = d.get("commitment")
        commitment = None
        if com is not None:
            if not isinstance(com, dict) or com.get("kind") not in COMMITMENT_KINDS or not isinstance(com.get("owner"), str):
                raise EventError(f"event {eid}: field 'commitment' needs kind in {COMMITMENT_KINDS} and an owner")
            due = com.get("due")
            if due is not None and (isinstance(due, bool) or not isinstance(due, (int, float)) or not math.isfinite(due)):
                raise EventError(f"event {eid}: field 'commitment.due' must be a finite number of seconds or null")
            if com.get("target") is not None and not isinstance(com["target"], str):
                raise EventError(f"event {eid}: field 'commitment.target' must be a string or null")
            commitment = Commitment(com["kind"], com["owner"], str(com.get("text", "")),
                                    float(due) if due is not None else None, com.get("target"))
        return cls(
            id=eid, t=t, actor=d["actor"], kind=d["kind"], action=d["action"], observers=tuple(observers),
            target=d.get("target"), args=dict(args), room=d.get("room"),
            effects=_atoms(d.get("effects"), eid, "effects"), claims=_atoms(d.get("claims"), eid, "claims"),
            success=bool(d.get("success", True)), error=str(d.get("error", "")), text=str(d.get("text", "")),
            session=str(d.get("session", "")), speech_act=d.get("speech_act"), commitment=commitment,
        )

    def entities(self) -> set[str]:
        """Every entity the event mentions (target, effects, claims, entity-valued args)."""
        out = {a.entity for a in self.effects} | {a.entity for a in self.claims}
        if self.target:
            out.add(self.target)
        for key in ("object", "to"):
            v = self.args.get(key)
            if isinstance(v, str):
                out.add(v)
        return out


def _atoms(raw: Any, eid: str, name: str) -> tuple[StateAtom, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise EventError(f"event {eid}: field {name!r} must be a list of [entity, attribute, value]")
    out = []
    for i, a in enumerate(raw):
        if not (isinstance(a, (list, tuple)) and len(a) == 3 and all(isinstance(x, str) for x in a)):
            raise EventError(f"event {eid}: {name}[{i}] must be [entity, attribute, value] strings, got {a!r}")
        out.append(StateAtom(a[0], a[1], a[2]))
    return tuple(out)


def perceived_by(event: Event, observer: str) -> bool:
    """The observer gate: did ``observer`` perceive the event (its own acts included)?"""
    return observer in event.observers or event.actor == observer
