"""``memory`` node: frames -> ObjectObservations -> ``SpatialMemory``; text queries; RViz map.

- Input: the synchronised sensor frames (``ObservationStream``), perceived in-process with the
  same perception library as ``perception_node`` (why: see perception_node's docstring) and
  integrated by ``memory.pipeline.MemoryPipeline``. A frame the memory refuses is logged and skipped;
  nothing stored is lost.
- After each frame: ``/worldmind/memory/updates`` (String JSON ``worldmind/memory_update``: step,
  the frame's stamp, created/updated/retired object ids, object count, integration ms). The
  latency benchmark measures sensor stamp -> this message.
- Queries on ``/worldmind/memory/query`` (``worldmind/memory_query``): ``kind`` "text" (default:
  ``SpatialMemory.query_text(text, k)``) or "object" (``text`` is an object id: its record).
  Answers on ``/worldmind/memory/answer`` (``worldmind/memory_answer``) with the same ``id``. A
  malformed query or an unknown object id is logged naming the topic and answered with ``error``.
- The map: ``visualization_msgs/MarkerArray`` on ``/worldmind/memory/markers`` (latched): a box
  and a text label per active object, at most every ``marker_period_s``.
- ``save_path``: the memory is saved there on shutdown (``memory.spatial.store.save_memory``).
"""

from __future__ import annotations

import json
import time
from typing import Any

from geometry_msgs.msg import Point, Pose, Quaternion, Vector3
from std_msgs.msg import ColorRGBA, String
from visualization_msgs.msg import Marker, MarkerArray

from memory.pipeline import MemoryPipeline
from memory.spatial.memory import MemoryConfig, SpatialMemory
from memory.spatial.sensor_settings import SensorErrors, memory_config_for
from memory.spatial.store import save_memory
from sim_bridge.ros.convert import MessageClasses, ns_to_time
from household.types import Observation
from worldmind_ros.observation_stream import ObservationStream, pose_options
from worldmind_ros.runtime import WorldMindNode, main_for, qos, topic_qos

UPDATES_TOPIC = "worldmind/memory/updates"


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


OBJECTS_TOPIC = "worldmind/memory/objects"  # worldmind_interfaces/MemoryObjectArray (latched)


def objects_msg(memory: SpatialMemory, frame_id: str, stamp: Any) -> Any:
    """Every active object as a typed ``MemoryObjectArray`` (header: the map frame, the last frame's
    stamp): what message_filters, RViz plugins and Foxglove can use without parsing JSON."""
    from worldmind_interfaces.msg import MemoryObject, MemoryObjectArray

    out = MemoryObjectArray()
    out.header.frame_id, out.header.stamp = frame_id, stamp
    for rec in memory.objects():
        lo, hi = rec.aabb_min, rec.aabb_max
        o = MemoryObject()
        o.header.frame_id, o.header.stamp = frame_id, stamp
        o.id, o.object_type = str(rec.object_id), str(rec.label)
        o.position = Point(x=float(rec.center[0]), y=float(rec.center[1]), z=float(rec.center[2]))
        o.size = Vector3(x=float(hi[0] - lo[0]), y=float(hi[1] - lo[1]), z=float(hi[2] - lo[2]))
        votes = getattr(rec, "label_votes", None) or {}
        total = float(sum(votes.values()))
        o.confidence = float(votes.get(rec.label, 0.0) / total) if total > 0 else 1.0
        o.observations, o.voxels = int(rec.n_observations), int(rec.n_voxels)
        out.objects.append(o)
    return out


class MemoryNode(WorldMindNode):
    module = "memory_node"

    node_name = "memory"

    def configure(self) -> None:
        p = self.params
        learned = bool(p["learned_segmenter"])
        errors = SensorErrors(depth_noise_k=float(p["depth_noise_k"]), pose_tolerance_m=float(p["pose_tolerance"]),
                              yaw_tolerance_deg=float(p["yaw_tolerance_deg"]), false_detections=learned,
                              imperfect_masks=learned, label_confusion=learned)
        config = memory_config_for(errors, MemoryConfig(voxel_size=p["voxel_size"],
                                                        min_observations=p["min_observations"]))
        self.pipeline = MemoryPipeline.build(memory_config=config, min_pixels=p["min_pixels"],
                                             mask_edge_check=learned)
        self.memory = self.pipeline.memory
        self.classes = MessageClasses.from_modules()
        self.updates_pub = self.create_publisher(String, self.local_topic(UPDATES_TOPIC), qos("reliable"))
        self.marker_pub = self.publisher("memory_markers")
        try:
            from worldmind_interfaces.msg import MemoryObjectArray

            self.objects_pub = self.create_publisher(MemoryObjectArray, self.local_topic(OBJECTS_TOPIC),
                                                     topic_qos("memory_markers"))
        except ImportError:  # interfaces not built: markers and JSON answers still work
            self.get_logger().warning("worldmind_interfaces not built (make setup): no typed memory objects")
            self.objects_pub = None
        self.answer_pub = self.publisher("memory_answer")
        self.subscribe_json("memory_query", self._on_query)
        self.stream = ObservationStream(self, self.names, self._on_observation, with_status=False,
                                        **pose_options(self.params))
        self.dirty = False
        self.last_stamp = 0
        self.timer = self.create_timer(max(float(p["marker_period_s"]), 0.05), self._publish_markers)

    def _on_observation(self, obs: Observation, stamp_ns: int) -> None:
        t0 = time.perf_counter()
        report = self.pipeline.process(obs).report
        ms = (time.perf_counter() - t0) * 1e3
        if report.skipped:
            self.get_logger().error(f"frame {obs.step} skipped: {'; '.join(report.warnings)}")
        self.dirty = True
        self.last_stamp = stamp_ns
        self.updates_pub.publish(String(data=json.dumps({
            "schema": "worldmind/memory_update", "version": 1, "step": int(obs.step), "stamp_ns": int(stamp_ns),
            "created": report.created, "updated": report.updated, "retired": report.retired,
            "skipped": report.skipped, "objects": len(self.memory), "integrate_ms": round(ms, 3)},
            separators=(",", ":"))))

    def _publish_markers(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        stamp = ns_to_time(self.last_stamp, self.classes)
        self.marker_pub.publish(markers_for(self.memory, self.params["map_frame"], stamp))
        if self.objects_pub is not None:
            self.objects_pub.publish(objects_msg(self.memory, self.params["map_frame"], stamp))

    def _on_query(self, data: dict[str, Any]) -> None:
        topic = self.topic("memory_query")
        qid, text = data["id"], data["text"]
        kind = data.get("kind", "text")
        k = int(data.get("k", self.params["default_k"]))
        answer: dict[str, Any] = {"id": qid, "hits": []}
        if kind == "text":
            hits = self.memory.query_text(text, k=max(k, 1))
            answer["hits"] = [{"object_id": h.object_id, "label": h.label, "score": round(float(h.score), 6),
                               "center": [round(float(v), 4) for v in h.center], "region": h.region} for h in hits]
            answer["status"] = "ok"
        elif kind == "object":
            try:
                oid = int(text)
                rec = self.memory.record(oid)
            except (ValueError, KeyError, IndexError):
                msg = f"topic {topic}: query {qid}: unknown object id {text!r} (the memory holds {len(self.memory)})"
                self.get_logger().error(msg)
                answer.update(status="error", error=msg)
            else:
                answer["hits"] = [{"object_id": rec.object_id, "label": rec.label, "status": rec.status,
                                   "center": [round(float(v), 4) for v in rec.center],
                                   "aabb_min": [float(v) for v in rec.aabb_min],
                                   "aabb_max": [float(v) for v in rec.aabb_max],
                                   "n_observations": rec.n_observations, "last_step": rec.last_step}]
                answer["status"] = "ok"
        else:
            msg = f"topic {topic}: query {qid}: field 'kind': unknown kind {kind!r} (text | object)"
            self.get_logger().error(msg)
            answer.update(status="error", error=msg)
        self.publish_json(self.answer_pub, "memory_answer", answer)

    def close(self) -> None:
        if self.params["save_path"]:
            path = save_memory(self.memory, self.params["save_path"])
            self.get_logger().info(f"memory saved to {path}")


main = main_for(MemoryNode)

if __name__ == "__main__":
    main()
