"""``belief`` node: the belief tracker (ObsMem) fed from the bus.

Inputs, all turned into ``memory.belief.events.Event``s and ingested in time order:
- ``/worldmind/belief_updates`` (``worldmind/belief_update``): events from anywhere (dialogue, a
  household system, a replayed trace), as ``Event.to_dict()`` records; rejected ones are logged
  one line each (naming the topic and the event's field) and never stored.
- ``/worldmind/perception/objects`` (perception_node): at most every ``observation_period_s``, one
  robot ``observation`` event per frame with what was seen (``type`` and a 0.5 m ``position`` cell
  per object): the robot perceived it, so it passes the observer gate.
- ``/worldmind/skill/request`` + ``/worldmind/skill/result``: one robot ``action`` event per
  answered skill, with the state it changed when it succeeded (held, placed, opened, toggled, sliced).
Queries: ``/worldmind/belief/query`` (``worldmind/memory_query``: ``text`` is the question, ``now``
optional) -> ``/worldmind/belief/answer`` (``worldmind/memory_answer``: ``answer``, ``status``
(fresh/stale/...), ``hits`` = the evidence). ``log_path`` makes the event log durable.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

from std_msgs.msg import String

from memory.belief import effects
from memory.belief.tracker import BeliefTracker
from sim_bridge.ros import payloads
from worldmind_ros.perception_node import OBJECTS_SCHEMA, OBJECTS_TOPIC
from worldmind_ros.runtime import PendingRequests, WorldMindNode, main_for, qos

QUERY_TOPIC = "worldmind/belief/query"
ANSWER_TOPIC = "worldmind/belief/answer"

def action_effects(skill: str, target: str | None, held: str | None, robot: str) -> list[list[str]]:
    """The state a successful atomic skill made true, as [entity, attribute, value] atoms
    (memory.belief.effects: the table every belief writer shares)."""
    return [list(atom) for atom in effects.action_effects(skill, target, held, robot)]


class BeliefNode(WorldMindNode):
    module = "belief_node"

    node_name = "belief"

    def configure(self) -> None:
        p = self.params
        self.robot = p["self_name"]
        self.tracker = BeliefTracker(p["log_path"] or None, self_name=self.robot)
        self.msg_t: float | None = None  # newest message time seen (seconds): the tracker's clock
        self.seq = 0
        self.last_obs_t = -1e9
        self.requests = PendingRequests()
        self.held: str | None = None
        self.query_topic, self.answer_topic = self.local_topic(QUERY_TOPIC), self.local_topic(ANSWER_TOPIC)
        self.subscribe_json("belief_updates", self._on_updates)
        self.subscribe_json("skill_request", self._on_request)
        self.subscribe_json("skill_result", self._on_result)
        self.create_subscription(String, self.local_topic(OBJECTS_TOPIC), self.guarded(OBJECTS_TOPIC, self._on_objects),
                                 qos("reliable"))
        self.create_subscription(String, self.query_topic,
                                 self.guarded(self.query_topic, self._on_query), qos("reliable"))
        self.answer_pub = self.create_publisher(String, self.answer_topic, qos("reliable"))

    def _t(self, stamp_ns: int | None = None) -> float:
        """Event time = message time: a frame's stamp where the event comes from one, else the
        newest message time seen (sim or bag time under use_sim_time, never this host's wall
        clock mixed in), else the node's ROS clock."""
        if stamp_ns:
            self.msg_t = max(self.msg_t or 0.0, stamp_ns / 1e9)
        base = self.msg_t if self.msg_t is not None else self.get_clock().now().nanoseconds / 1e9
        return max(base, self.tracker.last_t)

    def _ingest(self, events: list[dict[str, Any]], topic: str) -> None:
        report = self.tracker.ingest(events)
        for line in report.rejected:
            self.get_logger().error(f"topic {topic}: {line}")

    def _event(self, kind: str, action: str, stamp_ns: int | None = None, **fields: Any) -> dict[str, Any]:
        self.seq += 1
        return {"id": f"{self.robot}-{self.seq}", "t": self._t(stamp_ns), "actor": self.robot, "kind": kind,
                "action": action, "observers": [self.robot], **fields}

    def _on_updates(self, data: dict[str, Any]) -> None:
        self._ingest(data["events"], self.topic("belief_updates"))

    def _on_objects(self, msg: String) -> None:
        topic = OBJECTS_TOPIC
        data = json.loads(msg.data)
        if not isinstance(data, dict) or data.get("schema") != OBJECTS_SCHEMA or not isinstance(data.get("objects"), list):
            raise payloads.PayloadError(topic, "schema", f"expected {OBJECTS_SCHEMA} with an objects list")
        stamp = int(data.get("stamp_ns") or 0)
        now = stamp / 1e9 if stamp else time.monotonic()
        if now - self.last_obs_t < float(self.params["observation_period_s"]):
            return
        self.last_obs_t = now
        effects = []
        for o in data["objects"]:
            cell = ",".join(f"{round(float(v) * 2) / 2:g}" for v in o["centroid"])
            effects += [[o["source_id"], "type", o["label"]], [o["source_id"], "position", cell]]
        if effects:
            self._ingest([self._event("observation", "inspect", stamp or None, effects=effects,
                                      args={"step": data.get("step")})],
                         topic)

    def _on_request(self, data: dict[str, Any]) -> None:
        self.requests.add(data)

    def _on_result(self, data: dict[str, Any]) -> None:
        req = self.requests.take(data["id"])
        if req is None or req["skill"] == "Stop":
            return
        target = req["args"].get("object_id")
        ok = bool(data["success"])
        effects = action_effects(req["skill"], target, self.held, self.robot) if ok else []
        if ok and req["skill"] == "PickupObject":
            self.held = target
        elif ok and req["skill"] == "PutObject":
            self.held = None
        fields: dict[str, Any] = {"effects": effects, "success": ok, "error": str(data.get("error", ""))}
        if target:
            fields["target"] = target
        self._ingest([self._event("action", req["skill"], **fields)], self.topic("skill_result"))

    def _on_query(self, msg: String) -> None:
        data = payloads.decode(msg.data, self.query_topic, "memory_query").data
        answer = self.tracker.answer(data["text"], float(data.get("now", self._t())))
        out = {"id": data["id"], "answer": answer.value, "status": answer.status,
               "hits": [dataclasses.asdict(e) if dataclasses.is_dataclass(e) else {"text": str(e)}
                        for e in answer.evidence]}
        if answer.reason:
            out["error"] = "" if answer.value is not None else answer.reason
        self.answer_pub.publish(String(data=payloads.encode("memory_answer", out, self.answer_topic)))

    def close(self) -> None:
        self.tracker.close()


main = main_for(BeliefNode)

if __name__ == "__main__":
    main()
