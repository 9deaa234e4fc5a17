"""The spatial memory's ROS face, served by whichever node holds the graph's one memory.

Why apart from ``memory_node``: a graph holds ONE object memory (issue 31, item 3). With the
planner's ``object_memory`` on ``tracker`` the memory node holds it and perceives every frame
itself; with ``spatial`` the planner grounds through an in-process ``SpatialMemory``
(``planner/spatial_object_memory.py``), the graph starts no memory node (``graph.graph``, the
launch files' ``object_memory`` argument), and the planner node serves the same names from its
agent's memory. RViz, query clients and bag tools then see the memory the planner acts on, not a
second map built beside it from the same frames.

What is served (relative names: under the node's namespace and ``topic_namespace``):
- ``worldmind/memory/updates`` (String JSON ``worldmind/memory_update``): after each frame
  integrated: step, the frame's stamp, created/updated/retired object ids, object count,
  integration ms. The latency benchmark and the bag player's pacing read it.
- ``worldmind/memory/markers`` (``visualization_msgs/MarkerArray``, latched) and
  ``worldmind/memory/objects`` (``worldmind_interfaces/MemoryObjectArray``, latched): at most every
  ``marker_period_s``, when the memory changed.
- ``worldmind/memory/query`` -> ``worldmind/memory/answer`` (JSON ``memory_query`` /
  ``memory_answer``): ``kind`` "text" (``SpatialMemory.query_text``) or "object" (a record by id).
- Services ``worldmind/memory/query_objects`` (``QueryObjects``: a text query, a category, or
  both) and ``worldmind/memory/get_object`` (``GetObject``: one object by id).

Bad input is answered, never raised: an unknown or malformed id, an empty query, a query before
the memory exists (the planner's is made with its first task) or while the node is inactive gets
``found``/``success`` false and a message naming the field; the error is logged with the topic or
service name. Memory object ids are the memory's own (its object rows), in every answer alike.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from geometry_msgs.msg import Point, Pose, Quaternion, Vector3
from std_msgs.msg import ColorRGBA, String
from visualization_msgs.msg import Marker, MarkerArray

from memory.spatial.memory import IntegrationReport, SpatialMemory
from memory.spatial.object_table import ObjectRecord
from perception.encoders import normalize_phrase
from sim_bridge.ros.convert import MessageClasses, ns_to_time
from worldmind_ros.runtime import WorldMindNode, qos, topic_qos

UPDATES_TOPIC = "worldmind/memory/updates"
OBJECTS_TOPIC = "worldmind/memory/objects"  # worldmind_interfaces/MemoryObjectArray (latched)
QUERY_SERVICE = "worldmind/memory/query_objects"  # worldmind_interfaces/srv/QueryObjects
GET_SERVICE = "worldmind/memory/get_object"  # worldmind_interfaces/srv/GetObject

__all__ = ["GET_SERVICE", "MemoryServer", "OBJECTS_TOPIC", "QUERY_SERVICE", "UPDATES_TOPIC", "markers_for",
           "object_msg", "objects_msg"]


def _color(label: str) -> ColorRGBA:
    h = 0
    for ch in label:
        h = (h * 131 + ord(ch)) & 0xFFFFFF
    return ColorRGBA(r=0.3 + 0.7 * ((h >> 16) & 255) / 255, g=0.3 + 0.7 * ((h >> 8) & 255) / 255,
                     b=0.3 + 0.7 * (h & 255) / 255, a=0.6)


def markers_for(memory: SpatialMemory, frame_id: str, stamp: Any) -> MarkerArray:
    """A DELETEALL, then a CUBE (the box) and a TEXT_VIEW_FACING (the label) per active object."""
    out = MarkerArray()
    clear = Marker()
    clear.action = Marker.DELETEALL
    out.markers.append(clear)
    for rec in memory.objects():
        lo, hi = rec.aabb_min, rec.aabb_max
        centre = (lo + hi) / 2.0
        size = [max(float(v), 0.02) for v in (hi - lo)]
        box = Marker()
        box.header.frame_id, box.header.stamp = frame_id, stamp
        box.ns, box.id, box.type, box.action = "objects", int(rec.object_id), Marker.CUBE, Marker.ADD
        box.pose = Pose(position=Point(x=float(centre[0]), y=float(centre[1]), z=float(centre[2])),
                        orientation=Quaternion(w=1.0))
        box.scale = Vector3(x=size[0], y=size[1], z=size[2])
        box.color = _color(rec.label)
        text = Marker()
        text.header = box.header
        text.ns, text.id, text.type, text.action = "labels", int(rec.object_id), Marker.TEXT_VIEW_FACING, Marker.ADD
        text.pose = Pose(position=Point(x=float(centre[0]), y=float(centre[1]), z=float(hi[2]) + 0.1),
                         orientation=Quaternion(w=1.0))
        text.scale = Vector3(z=0.12)
        text.color = ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0)
        text.text = f"{rec.label} #{rec.object_id}"
        out.markers.extend((box, text))
    return out


def object_msg(rec: ObjectRecord, frame_id: str, stamp: Any, room: str | None = None) -> Any:
    """One memory record as a typed ``MemoryObject`` (REP 103 metres in ``frame_id``)."""
    from worldmind_interfaces.msg import MemoryObject

    lo, hi = rec.aabb_min, rec.aabb_max
    o = MemoryObject()
    o.header.frame_id, o.header.stamp = frame_id, stamp
    o.id, o.object_type = str(rec.object_id), str(rec.label)
    o.position = Point(x=float(rec.center[0]), y=float(rec.center[1]), z=float(rec.center[2]))
    o.size = Vector3(x=float(hi[0] - lo[0]), y=float(hi[1] - lo[1]), z=float(hi[2] - lo[2]))
    votes = rec.label_votes or {}
    total = float(sum(votes.values()))
    o.confidence = float(votes.get(rec.label, 0.0) / total) if total > 0 else 1.0
    o.observations, o.voxels = int(rec.n_observations), int(rec.n_voxels)
    o.room = room or ""
    return o


def objects_msg(memory: SpatialMemory, frame_id: str, stamp: Any) -> Any:
    """Every active object as a typed ``MemoryObjectArray`` (header: the map frame, the last frame's
    stamp): what message_filters, RViz plugins and Foxglove can use without parsing JSON."""
    from worldmind_interfaces.msg import MemoryObjectArray

    out = MemoryObjectArray()
    out.header.frame_id, out.header.stamp = frame_id, stamp
    out.objects = [object_msg(rec, frame_id, stamp) for rec in memory.objects()]
    return out


class MemoryServer:
    """The topics and services above for the memory ``memory_of()`` returns (None: none yet).

    ``owner`` says, in an answer made before there is a memory, why there is none. Create it in
    the node's ``configure`` (what it creates is then destroyed on cleanup with the node's own)."""

    def __init__(self, node: WorldMindNode, memory_of: Callable[[], SpatialMemory | None], *, map_frame: str,
                 marker_period_s: float, default_k: int, owner: str) -> None:
        self.node, self.memory_of, self.map_frame = node, memory_of, str(map_frame)
        self.default_k = max(int(default_k), 1)
        self.owner = owner
        self.classes = MessageClasses.from_modules()
        self.updates_pub = node.create_publisher(String, node.local_topic(UPDATES_TOPIC), qos("reliable"))
        self.marker_pub = node.publisher("memory_markers")
        self.answer_pub = node.publisher("memory_answer")
        node.subscribe_json("memory_query", self._on_query)
        self.objects_pub: Any = None
        self.services: list[Any] = []
        try:
            from worldmind_interfaces.msg import MemoryObjectArray
            from worldmind_interfaces.srv import GetObject, QueryObjects
        except ImportError:  # interfaces not built: markers and JSON answers still work
            node.get_logger().warning("worldmind_interfaces not built (make setup): no typed memory objects, "
                                      "no memory services")
        else:
            self.objects_pub = node.create_publisher(MemoryObjectArray, node.local_topic(OBJECTS_TOPIC),
                                                     topic_qos("memory_markers"))
            self.query_name = node.local_topic(QUERY_SERVICE)
            self.get_name = node.local_topic(GET_SERVICE)
            self.services = [node.create_service(QueryObjects, self.query_name, self._query_objects),
                             node.create_service(GetObject, self.get_name, self._get_object)]
        self.dirty = False
        self.last_stamp = 0
        node.create_timer(max(float(marker_period_s), 0.05), self._publish_markers)

    # ---- frames --------------------------------------------------------------------------------
    def frame_integrated(self, step: int, stamp_ns: int, report: IntegrationReport, ms: float) -> None:
        """Say what a frame did to the memory (``worldmind/memory/updates``); the map is re-sent
        on the next marker tick."""
        memory = self.memory_of()
        self.dirty = True
        self.last_stamp = int(stamp_ns)
        self.updates_pub.publish(String(data=json.dumps({
            "schema": "worldmind/memory_update", "version": 1, "step": int(step), "stamp_ns": int(stamp_ns),
            "created": report.created, "updated": report.updated, "retired": report.retired,
            "skipped": report.skipped, "objects": len(memory) if memory is not None else 0,
            "integrate_ms": round(float(ms), 3)}, separators=(",", ":"))))

    def _publish_markers(self) -> None:
        memory = self.memory_of()
        if not self.dirty or memory is None:
            return
        self.dirty = False
        stamp = ns_to_time(self.last_stamp, self.classes)
        self.marker_pub.publish(markers_for(memory, self.map_frame, stamp))
        if self.objects_pub is not None:
            self.objects_pub.publish(objects_msg(memory, self.map_frame, stamp))

    # ---- answers ---------------------------------------------------------------------------------
    def _memory_to_answer(self) -> tuple[SpatialMemory | None, str | None]:
        """The memory a service answers from, asked once per request (the owner may swap it
        between two asks), or why there is none to answer from."""
        if not self.node.active:
            return None, f"{self.node.get_name()} is {self.node.lifecycle_state}: activate it first"
        memory = self.memory_of()
        return memory, None if memory is not None else f"no memory yet: {self.owner}"

    def _error(self, where: str, message: str) -> str:
        text = f"{where}: {message}"
        self.node.get_logger().error(text)
        return text

    def _on_query(self, data: dict[str, Any]) -> None:
        topic = self.node.topic("memory_query")
        qid, text = data["id"], data["text"]
        kind = data.get("kind", "text")
        k = int(data.get("k", self.default_k))
        answer: dict[str, Any] = {"id": qid, "hits": []}
        memory = self.memory_of()
        if memory is None:
            answer.update(status="error", error=self._error(f"topic {topic}: query {qid}", f"no memory yet: {self.owner}"))
        elif kind == "text":
            hits = memory.query_text(text, k=max(k, 1))
            answer["hits"] = [{"object_id": h.object_id, "label": h.label, "score": round(float(h.score), 6),
                               "center": [round(float(v), 4) for v in h.center], "region": h.region} for h in hits]
            answer["status"] = "ok"
        elif kind == "object":
            try:
                rec = memory.record(int(text))
            except (ValueError, KeyError, IndexError):
                answer.update(status="error", error=self._error(
                    f"topic {topic}: query {qid}", f"unknown object id {text!r} (the memory holds {len(memory)})"))
            else:
                answer["hits"] = [{"object_id": rec.object_id, "label": rec.label, "status": rec.status,
                                   "center": [round(float(v), 4) for v in rec.center],
                                   "aabb_min": [float(v) for v in rec.aabb_min],
                                   "aabb_max": [float(v) for v in rec.aabb_max],
                                   "n_observations": rec.n_observations, "last_step": rec.last_step}]
                answer["status"] = "ok"
        else:
            answer.update(status="error", error=self._error(
                f"topic {topic}: query {qid}", f"field 'kind': unknown kind {kind!r} (text | object)"))
        self.node.publish_json(self.answer_pub, "memory_answer", answer)

    def _query_objects(self, request: Any, response: Any) -> Any:
        """``QueryObjects``: ``text`` ranks by the memory's text (and CLIP) index, rooms and
        anchors in it filtering ("the mug on the table"); ``object_type`` keeps that category (with
        no text: every object of it, most often seen first); ``k`` caps the hits."""
        memory, problem = self._memory_to_answer()
        text, kind = str(request.text).strip(), str(request.object_type).strip()
        if problem is None and not text and not kind:
            problem = "fields 'text' and 'object_type' are both empty: give a description, a category or both"
        if problem is not None or memory is None:
            response.success, response.message = False, self._error(f"service {self.query_name}", problem or "no memory")
            return response
        k = int(request.k) or self.default_k
        want = normalize_phrase(kind) if kind else ""
        if text:
            # Wide enough that a category filter still leaves k.
            hits = memory.query_text(text, k=k if not want else max(20 * k, 200))
            ranked = [(memory.record(h.object_id), float(h.score), h.region) for h in hits
                      if not want or normalize_phrase(h.label) == want][:k]
        else:
            recs = sorted(memory.objects_of_type(kind), key=lambda r: (-r.n_observations, r.object_id))[:k]
            ranked = [(r, 1.0, None) for r in recs]
        stamp = ns_to_time(self.last_stamp, self.classes)
        response.objects = [object_msg(rec, self.map_frame, stamp, region) for rec, _, region in ranked]
        response.scores = [float(score) for _, score, _ in ranked]
        response.success, response.message = True, ""
        return response

    def _get_object(self, request: Any, response: Any) -> Any:
        """``GetObject``: the record of one memory object id, whatever its status (the message
        says it: ``active``, ``retired`` once seen gone, ``merged`` into another)."""
        memory, problem = self._memory_to_answer()
        if memory is not None:
            try:
                rec = memory.record(int(str(request.id).strip()))
            except ValueError:
                problem = f"field 'id': {request.id!r} is not a memory object id (an integer)"
            except (KeyError, IndexError):
                problem = f"field 'id': unknown object id {request.id!r} (the memory holds {len(memory)})"
            else:
                response.found = True
                response.object = object_msg(rec, self.map_frame, ns_to_time(self.last_stamp, self.classes))
                response.message = f"status {rec.status}" + (f" (merged into {rec.merged_into})"
                                                             if rec.merged_into is not None else "")
                return response
        response.found = False
        response.message = self._error(f"service {self.get_name}", problem or "no memory")
        return response
