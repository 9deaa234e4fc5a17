"""``perception`` node: each synchronised frame -> ``ObjectObservation``s, published as JSON.

Output: ``/worldmind/perception/objects`` (std_msgs/String, reliable): ``{"schema":
"worldmind/object_observations", "version": 1, "step", "stamp_ns", "objects": [{instance_id,
label, source_id, centroid, aabb_min, aabb_max, n_pixels, surface_area, bbox_2d,
touches_border, mean_depth}]}``. The belief node turns these into observation events; tools and
dashboards read them.

Why the voxel-level frame does not travel on this topic: the spatial memory's free-space pass
needs the frame's depth and per-pixel instance map as well as each object's voxels, i.e. more
bytes than the sensor frame itself. ``memory_node`` therefore links the same (stateless)
perception library and runs it on the frames it receives; this node publishes the compact,
per-object summary for everyone else. Both use ``PerceptionConfig`` from the same parameters.
"""

from __future__ import annotations

import json
from typing import Any

from std_msgs.msg import String

from perception.perceive import Perception, PerceptionConfig
from household.types import Observation
from worldmind_ros.observation_stream import ObservationStream, pose_options
from worldmind_ros.runtime import WorldMindNode, main_for, qos

OBJECTS_TOPIC = "worldmind/perception/objects"
OBJECTS_SCHEMA = "worldmind/object_observations"


def objects_payload(frame: Any, stamp_ns: int) -> dict[str, Any]:
    return {"schema": OBJECTS_SCHEMA, "version": 1, "step": int(frame.step), "stamp_ns": int(stamp_ns),
            "objects": [{"instance_id": int(o.instance_id), "label": o.label, "source_id": o.source_id,
                         "centroid": [round(float(v), 4) for v in o.centroid],
                         "aabb_min": [round(float(v), 4) for v in o.aabb_min],
                         "aabb_max": [round(float(v), 4) for v in o.aabb_max],
                         "n_pixels": int(o.n_pixels), "surface_area": round(float(o.surface_area), 6),
                         "bbox_2d": [int(v) for v in o.bbox_2d], "touches_border": bool(o.touches_border),
                         "mean_depth": round(float(o.mean_depth), 4)} for o in frame.objects]}


class PerceptionNode(WorldMindNode):
    module = "perception_node"

    node_name = "perception"

    def configure(self) -> None:
        p = self.params
        self.perception = Perception(PerceptionConfig(voxel_size=p["voxel_size"], min_pixels=p["min_pixels"],
                                                      max_depth=p["max_depth"],
                                                      mask_edge_check=bool(p["mask_edge_check"])))
        self.pub = self.create_publisher(String, self.local_topic(OBJECTS_TOPIC), qos("reliable"))
        self.stream = ObservationStream(self, self.names, self._on_observation, with_status=False,
                                        **pose_options(self.params))

    def _on_observation(self, obs: Observation, stamp_ns: int) -> None:
        frame = self.perception.process(obs)
        for w in frame.warnings:
            self.get_logger().warning(w)
        self.pub.publish(String(data=json.dumps(objects_payload(frame, stamp_ns), separators=(",", ":"))))


main = main_for(PerceptionNode)

if __name__ == "__main__":
    main()
