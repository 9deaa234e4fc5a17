"""``memory`` node: frames -> ObjectObservations -> ``SpatialMemory``; text queries; RViz map.

- Input: the synchronised sensor frames (``ObservationStream``), perceived in-process with the
  same perception library as ``perception_node`` (why: see perception_node's docstring) and
  integrated by ``memory.pipeline.MemoryPipeline``. A frame the memory refuses is logged and skipped;
  nothing stored is lost.
- What it serves (``memory_server.MemoryServer``, shared with the planner node, which serves the
  same from its own memory when the graph runs with ``object_memory:=spatial`` and starts no
  memory node): ``/worldmind/memory/updates`` after each frame (String JSON: step, the frame's
  stamp, created/updated/retired ids, object count, integration ms; the latency benchmark measures
  sensor stamp -> this message), the map as ``MarkerArray`` and ``MemoryObjectArray`` (latched), JSON
  queries on ``/worldmind/memory/query`` answered on ``/worldmind/memory/answer``, and the services
  ``worldmind/memory/query_objects`` (``QueryObjects``) and ``worldmind/memory/get_object``
  (``GetObject``). A malformed query or an unknown object id is logged naming the topic or service
  and answered with the reason.
- ``save_path``: the memory is saved there on shutdown (``memory.spatial.store.save_memory``).
"""

from __future__ import annotations

import time

from memory.pipeline import MemoryPipeline
from memory.spatial.memory import MemoryConfig
from memory.spatial.sensor_settings import SensorErrors, memory_config_for
from memory.spatial.store import save_memory
from household.types import Observation
from worldmind_ros.memory_server import MemoryServer
from worldmind_ros.observation_stream import ObservationStream, pose_options
from worldmind_ros.runtime import WorldMindNode, main_for


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
        self.server = MemoryServer(self, lambda: self.memory, map_frame=p["map_frame"],
                                   marker_period_s=p["marker_period_s"], default_k=p["default_k"],
                                   owner="the memory node makes it when configured")
        self.stream = ObservationStream(self, self.names, self._on_observation, with_status=False,
                                        **pose_options(self.params))

    def _on_observation(self, obs: Observation, stamp_ns: int) -> None:
        t0 = time.perf_counter()
        report = self.pipeline.process(obs).report
        ms = (time.perf_counter() - t0) * 1e3
        if report.skipped:
            self.get_logger().error(f"frame {obs.step} skipped: {'; '.join(report.warnings)}")
        self.server.frame_integrated(obs.step, stamp_ns, report, ms)

    def close(self) -> None:
        if self.params["save_path"]:
            path = save_memory(self.memory, self.params["save_path"])
            self.get_logger().info(f"memory saved to {path}")


main = main_for(MemoryNode)

if __name__ == "__main__":
    main()
