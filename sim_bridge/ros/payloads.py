"""Versioned JSON payloads carried in ``std_msgs/String`` (docs/ARCHITECTURE.md "ROS 2": structured payloads
as versioned JSON with a schema).

ROS 2 wheels here cannot build project-defined .msg interfaces (no rosidl build; docs/PLATFORM.md), so
goal DAGs, critic directives, belief updates, memory queries/answers, skill calls, label tables,
agent status and (evaluation-only) ground truth travel as JSON text. Every payload is an object::

    {"schema": "worldmind/<kind>", "version": 1, ...fields of that kind...}

A reader checks the schema, the version and the required fields *before* anything acts on a
payload, and a malformed one is refused with ``PayloadError`` naming the topic and the field, so a
node can log one line, count it and carry on instead of crashing or acting on half a message.

Public API
----------
- ``VERSION`` (1), ``KINDS`` (the kind names), ``SCHEMA_PREFIX`` ("worldmind/").
- ``encode(kind, data, topic="") -> str``: validate and serialise (sorted keys, no NaN; numpy
  scalars/arrays are converted). ``data`` must not carry its own "schema"/"version".
- ``decode(text, topic, kind=None) -> Payload``: parse and validate; ``kind`` (optional) is the
  kind the topic must carry (``topics.TOPICS[key].payload_kind``). ``Payload.data`` holds the
  fields without "schema"/"version".
- ``PayloadError(ValueError)`` with ``.topic`` and ``.field`` (None for whole-message problems).
- Typed helpers for the kinds the bridge itself produces: ``labels_to_payload`` /
  ``labels_from_payload`` (``dict[int, InstanceLabel]``), ``agent_status_to_payload`` /
  ``agent_status_from_payload`` (``AgentStatus`` + step + ``ActionFeedback``),
  ``world_state_to_payload`` / ``world_state_from_payload`` (``WorldState``).

Required fields per kind (optional ones in ``OPTIONAL``)::

    label_table       labels: [{"id": int, "object_id": str, "object_type": str, "states"?: {flag: value}}, ...]
    goal_dag          goals: [{"id": str, ...Goal.to_dict()}, ...]      (edges: [[from, to], ...])
    critic_directive  verdict: "pass" | "refine" | "replan"            (diagnosis, fix, goal_id, level, step)
    belief_update     events: [Event.to_dict(), ...]                    (step)
    memory_query      id: str, text: str                                (k, kind, now)
    memory_answer     id: str, hits: [...]                              (answer, status, error)
    skill_request     id: str, skill: str, args: {}                     (goal_id, step)
    skill_result      id: str, success: bool                            (error, actions, step)
    agent_status      step: int, position: [x, y, z], yaw_deg, horizon_deg
                                            (held_object_id, held_object_type, feedback, world_from_camera)

``agent_status.world_from_camera`` (16 numbers, row-major) is an exact copy of the camera pose the
PoseStamped on /camera/pose carries: a quaternion loses the last bits of a rotation matrix, and a
replayed bag must rebuild the same memory as the live run, bit for bit.
    ground_truth      step: int, objects: [...], agent: {}              (rooms, held_object_id, house_id)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from household.types import ActionFeedback, AgentStatus, InstanceLabel, RoomInfo, WorldState
from household.visible_states import LIQUIDS, STATE_FLAGS

SCHEMA_PREFIX = "worldmind/"
VERSION = 1
VERDICTS = ("pass", "refine", "replan")

_INT = "int"
_NUM = "number"
_STR = "str"
_BOOL = "bool"
_LIST = "list"
_DICT = "dict"
_OPT_STR = "str|null"

REQUIRED: dict[str, dict[str, str]] = {
    "label_table": {"labels": _LIST},
    "goal_dag": {"goals": _LIST},
    "critic_directive": {"verdict": _STR},
    "belief_update": {"events": _LIST},
    "memory_query": {"id": _STR, "text": _STR},
    "memory_answer": {"id": _STR, "hits": _LIST},
    "skill_request": {"id": _STR, "skill": _STR, "args": _DICT},
    "skill_result": {"id": _STR, "success": _BOOL},
    "agent_status": {"step": _INT, "position": _LIST, "yaw_deg": _NUM, "horizon_deg": _NUM},
    "ground_truth": {"step": _INT, "objects": _LIST, "agent": _DICT},
}
OPTIONAL: dict[str, dict[str, str]] = {
    "label_table": {"stamp_ns": _INT, "step": _INT},
    "goal_dag": {"edges": _LIST, "instruction": _STR, "step": _INT},
    "critic_directive": {"diagnosis": _STR, "fix": _LIST, "goal_id": _STR, "level": _STR, "step": _INT},
    "belief_update": {"step": _INT},
    "memory_query": {"k": _INT, "kind": _STR, "now": _NUM},
    "memory_answer": {"answer": _OPT_STR, "status": _STR, "error": _STR},
    "skill_request": {"goal_id": _STR, "step": _INT, "record": _BOOL},
    "skill_result": {"error": _STR, "failure": _STR, "actions": _INT, "step": _INT},
    "agent_status": {"held_object_id": _OPT_STR, "held_object_type": _OPT_STR, "feedback": _DICT,
                     "world_from_camera": _LIST},
    "ground_truth": {"rooms": _LIST, "held_object_id": _OPT_STR, "house_id": _STR},
}
KINDS = tuple(REQUIRED)


class PayloadError(ValueError):
    """A payload that cannot be used; the message names the topic and the field."""

    def __init__(self, topic: str, field: str | None, problem: str) -> None:
        self.topic = topic
        self.field = field
        where = f"topic {topic}" if topic else "payload"
        super().__init__(f"{where}: " + (f"field {field!r}: " if field else "") + problem)


@dataclass(frozen=True)
class Payload:
    kind: str
    version: int
    data: dict[str, Any]


def _type_ok(value: Any, want: str) -> bool:
    if want == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if want == _NUM:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if want == _STR:
        return isinstance(value, str)
    if want == _OPT_STR:
        return value is None or isinstance(value, str)
    if want == _BOOL:
        return isinstance(value, bool)
    if want == _LIST:
        return isinstance(value, list)
    if want == _DICT:
        return isinstance(value, dict)
    raise AssertionError(want)


def _validate(kind: str, data: Mapping[str, Any], topic: str) -> None:
    for name, want in REQUIRED[kind].items():
        if name not in data:
            raise PayloadError(topic, name, f"missing (required for worldmind/{kind})")
        if not _type_ok(data[name], want):
            raise PayloadError(topic, name, f"must be {want}, got {type(data[name]).__name__}")
    for name, want in OPTIONAL[kind].items():
        if name in data and not _type_ok(data[name], want):
            raise PayloadError(topic, name, f"must be {want}, got {type(data[name]).__name__}")
    _CHECKS.get(kind, lambda d, t: None)(data, topic)


def _check_labels(data: Mapping[str, Any], topic: str) -> None:
    seen: set[int] = set()
    for i, lab in enumerate(data["labels"]):
        where = f"labels[{i}]"
        if not isinstance(lab, dict):
            raise PayloadError(topic, where, "must be an object {id, object_id, object_type}")
        for name, want in (("id", _INT), ("object_id", _STR), ("object_type", _STR)):
            if not _type_ok(lab.get(name), want):
                raise PayloadError(topic, f"{where}.{name}", f"must be {want}, got {lab.get(name)!r}")
        if lab["id"] <= 0:
            raise PayloadError(topic, f"{where}.id", f"instance ids are positive (0 = no object), got {lab['id']}")
        if lab["id"] in seen:
            raise PayloadError(topic, f"{where}.id", f"duplicate instance id {lab['id']}")
        seen.add(lab["id"])
        states = lab.get("states", {})
        if not isinstance(states, dict):
            raise PayloadError(topic, f"{where}.states", f"must be an object {{flag: value}}, got {states!r}")
        for flag, value in states.items():
            if flag not in STATE_FLAGS:
                raise PayloadError(topic, f"{where}.states.{flag}", f"not a state flag (one of {', '.join(STATE_FLAGS)})")
            ok = value is False or value in LIQUIDS if flag == "isFilledWithLiquid" else isinstance(value, bool)
            if not ok:
                raise PayloadError(topic, f"{where}.states.{flag}", f"not a value this flag takes: {value!r}")


def _check_goals(data: Mapping[str, Any], topic: str) -> None:
    ids = set()
    for i, g in enumerate(data["goals"]):
        if not isinstance(g, dict) or not isinstance(g.get("id"), str):
            raise PayloadError(topic, f"goals[{i}].id", "each goal must be an object with a string id")
        ids.add(g["id"])
    for i, e in enumerate(data.get("edges", [])):
        if not (isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) for x in e)):
            raise PayloadError(topic, f"edges[{i}]", f"must be [from_goal_id, to_goal_id], got {e!r}")
        missing = [x for x in e if x not in ids]
        if missing:
            raise PayloadError(topic, f"edges[{i}]", f"names unknown goal(s) {missing}")


def _check_verdict(data: Mapping[str, Any], topic: str) -> None:
    if data["verdict"].lower() not in VERDICTS:
        raise PayloadError(topic, "verdict", f"must be one of {VERDICTS}, got {data['verdict']!r}")


def _check_events(data: Mapping[str, Any], topic: str) -> None:
    for i, e in enumerate(data["events"]):
        if not isinstance(e, dict):
            raise PayloadError(topic, f"events[{i}]", "each event must be a JSON object (Event.to_dict())")


def _check_status(data: Mapping[str, Any], topic: str) -> None:
    pos = data["position"]
    if len(pos) != 3 or not all(_type_ok(v, _NUM) for v in pos):
        raise PayloadError(topic, "position", f"must be [x, y, z] finite numbers, got {pos!r}")
    pose = data.get("world_from_camera")
    if pose is not None and (len(pose) != 16 or not all(_type_ok(v, _NUM) for v in pose)):
        raise PayloadError(topic, "world_from_camera", "must be 16 finite numbers (4x4 row-major)")
    fb = data.get("feedback")
    if fb is not None:
        if not _type_ok(fb.get("action"), _OPT_STR) or not _type_ok(fb.get("success", True), _BOOL) \
                or not _type_ok(fb.get("error", ""), _STR) or not _type_ok(fb.get("failure", ""), _STR):
            raise PayloadError(topic, "feedback",
                               "must be {action: str|null, success: bool, error: str, failure: str}")


_CHECKS = {"label_table": _check_labels, "goal_dag": _check_goals, "critic_directive": _check_verdict,
           "belief_update": _check_events, "agent_status": _check_status}


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _plain(data: Mapping[str, Any]) -> dict[str, Any]:
    """Round-trip through JSON so tuples/numpy become what a reader will see (and validate)."""
    return json.loads(json.dumps(dict(data), default=_jsonable, allow_nan=False))


def encode(kind: str, data: Mapping[str, Any], topic: str = "") -> str:
    """``data`` as a ``worldmind/<kind>`` v1 JSON text; raises PayloadError if it would not decode."""
    if kind not in REQUIRED:
        raise PayloadError(topic, "schema", f"unknown payload kind {kind!r} (known: {', '.join(KINDS)})")
    for reserved in ("schema", "version"):
        if reserved in data:
            raise PayloadError(topic, reserved, "is set by encode(); do not pass it in data")
    try:
        plain = _plain(data)
    except (TypeError, ValueError) as exc:
        raise PayloadError(topic, None, f"not JSON serialisable: {exc}") from None
    _validate(kind, plain, topic)
    body = {"schema": SCHEMA_PREFIX + kind, "version": VERSION, **plain}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)


def decode(text: str | bytes, topic: str, kind: str | None = None) -> Payload:
    """Parse and validate one payload from ``topic``. ``kind``: the kind this topic must carry."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PayloadError(topic, None, f"not UTF-8 text: {exc}") from None
    if not isinstance(text, str):
        raise PayloadError(topic, None, f"expected JSON text, got {type(text).__name__}")
    try:
        body = json.loads(text, parse_constant=_reject_constant)
    except (json.JSONDecodeError, ValueError) as exc:
        raise PayloadError(topic, None, f"malformed JSON: {exc}") from None
    if not isinstance(body, dict):
        raise PayloadError(topic, None, f"must be a JSON object, got {type(body).__name__}")
    schema = body.get("schema")
    if not isinstance(schema, str) or not schema.startswith(SCHEMA_PREFIX):
        raise PayloadError(topic, "schema", f"must be 'worldmind/<kind>', got {schema!r}")
    got = schema[len(SCHEMA_PREFIX):]
    if got not in REQUIRED:
        raise PayloadError(topic, "schema", f"unknown kind {got!r} (known: {', '.join(KINDS)})")
    if kind is not None and got != kind:
        raise PayloadError(topic, "schema", f"this topic carries worldmind/{kind}, got {schema!r}")
    version = body.get("version")
    if not _type_ok(version, _INT):
        raise PayloadError(topic, "version", f"must be an integer, got {version!r}")
    if version != VERSION:
        raise PayloadError(topic, "version", f"version {version} is not supported (this reader speaks {VERSION})")
    data = {k: v for k, v in body.items() if k not in ("schema", "version")}
    _validate(got, data, topic)
    return Payload(got, version, data)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# ---- typed helpers -----------------------------------------------------------------------------

def labels_to_payload(id_to_label: Mapping[int, InstanceLabel], *, step: int | None = None,
                      stamp_ns: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"labels": [{"id": int(k), "object_id": v.object_id, "object_type": v.object_type,
                                       **({"states": dict(v.states)} if v.states else {})}
                                      for k, v in sorted(id_to_label.items())]}
    if step is not None:
        out["step"] = int(step)
    if stamp_ns is not None:
        out["stamp_ns"] = int(stamp_ns)
    return out


def labels_from_payload(data: Mapping[str, Any]) -> dict[int, InstanceLabel]:
    return {int(d["id"]): InstanceLabel(d["object_id"], d["object_type"], tuple(sorted((d.get("states") or {}).items())))
            for d in data["labels"]}


def agent_status_to_payload(agent: AgentStatus, step: int, feedback: ActionFeedback | None = None,
                            world_from_camera: np.ndarray | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"step": int(step), "position": [float(v) for v in agent.position],
                           "yaw_deg": float(agent.yaw_deg), "horizon_deg": float(agent.horizon_deg),
                           "held_object_id": agent.held_object_id, "held_object_type": agent.held_object_type}
    if feedback is not None:
        out["feedback"] = {"action": feedback.action, "success": bool(feedback.success), "error": feedback.error,
                           "failure": feedback.failure}
    if world_from_camera is not None:
        out["world_from_camera"] = [float(v) for v in np.asarray(world_from_camera, dtype=np.float64).reshape(16)]
    return out


def agent_status_from_payload(data: Mapping[str, Any]) -> tuple[AgentStatus, int, ActionFeedback]:
    fb = data.get("feedback") or {}
    agent = AgentStatus(tuple(float(v) for v in data["position"]), float(data["yaw_deg"]),  # type: ignore[arg-type]
                        float(data["horizon_deg"]), data.get("held_object_id"), data.get("held_object_type"))
    return agent, int(data["step"]), ActionFeedback(fb.get("action"), bool(fb.get("success", True)),
                                                    str(fb.get("error", "")), str(fb.get("failure", "")))


def world_state_to_payload(world: WorldState, step: int) -> dict[str, Any]:
    return {"step": int(step), "objects": world.objects, "agent": world.agent,
            "rooms": [{"id": r.id, "room_type": r.room_type, "polygon": [list(p) for p in r.polygon]}
                      for r in world.rooms],
            "held_object_id": world.held_object_id, "house_id": world.house_id}


def world_state_from_payload(data: Mapping[str, Any]) -> WorldState:
    rooms = [RoomInfo(r["id"], r["room_type"], [tuple(p) for p in r["polygon"]]) for r in data.get("rooms", [])]
    return WorldState(list(data["objects"]), dict(data["agent"]), rooms, data.get("held_object_id"),
                      str(data.get("house_id", "")))
