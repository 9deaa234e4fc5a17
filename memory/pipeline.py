"""Frames into memory: perception, then the spatial semantic memory, in one object.

Every consumer of a frame stream (bag replay, memory-eval, the ROS memory node, the memory
benchmark) used to wire Perception -> SpatialMemory itself, each with its own error handling
and timing. ``MemoryPipeline`` is that wiring once: a bad frame (NaN pose, mismatched sizes, a
label table that does not match the image) is skipped with a warning and nothing already in
memory is touched; every frame reports what it created, updated and retired, which source ids
it saw, and how long perception and integration took.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Collection, Sequence

from household.types import Observation
from memory.spatial.memory import IntegrationReport, MemoryConfig, MemoryInputError, SpatialMemory
from memory.spatial.query import Region
from perception.encoders import Encoders
from perception.observations import FrameObservations, PerceptionError
from perception.perceive import Perception, PerceptionConfig

log = logging.getLogger(__name__)


@dataclass
class FrameResult:
    """What one frame did to memory."""

    step: int
    report: IntegrationReport
    frame: FrameObservations | None = None  # what perception made of it (None: skipped there)
    perception_s: float = 0.0
    memory_s: float = 0.0

    @property
    def skipped(self) -> bool:
        return self.report.skipped

    @property
    def seen(self) -> list[str]:
        """Source ids of the instances perceived and integrated (none for a skipped frame)."""
        return [] if self.skipped or self.frame is None else [o.source_id for o in self.frame.objects]


class MemoryPipeline:
    """Perception -> SpatialMemory for a stream of observations (one voxel size for both)."""

    def __init__(self, memory: SpatialMemory, perception: Perception) -> None:
        if abs(perception.config.voxel_size - memory.config.voxel_size) > 1e-12:
            raise ValueError(f"perception voxel size {perception.config.voxel_size} differs from the memory's "
                             f"{memory.config.voxel_size}")
        self.memory = memory
        self.perception = perception

    @classmethod
    def build(cls, encoders: Encoders | None = None, memory_config: MemoryConfig | None = None,
              regions: Sequence[Region] = (), min_pixels: int | None = None,
              mask_edge_check: bool = False) -> "MemoryPipeline":
        """A memory and a perception that agree on voxel size and share the encoders
        (``mask_edge_check``: the frames come from a learned segmenter, see PerceptionConfig)."""
        memory = SpatialMemory(encoders, memory_config, regions)
        config = PerceptionConfig(voxel_size=memory.config.voxel_size, mask_edge_check=mask_edge_check)
        if min_pixels is not None:
            config.min_pixels = int(min_pixels)
        return cls(memory, Perception(config, memory.encoders))

    def process(self, obs: Observation, ignore_ids: Collection[str] = ()) -> FrameResult:
        """Perceive and integrate one observation; a bad one is skipped with a warning. The
        object the robot holds (``obs.agent.held_object_id``) and any ``ignore_ids`` are left out
        of the frame (``Perception.process``): in the gripper it moves with the camera, and mapped
        it would smear along the path and leave its old place looking occupied."""
        held = obs.agent.held_object_id if obs.agent is not None else None
        ignore = set(ignore_ids) | ({held} if held else set())
        t0 = time.perf_counter()
        try:
            frame = self.perception.process(obs, ignore)
        except PerceptionError as exc:
            log.warning("skipped frame %s: %s", obs.step, exc)
            return FrameResult(obs.step, IntegrationReport(obs.step, skipped=True, warnings=[str(exc)]),
                               perception_s=time.perf_counter() - t0)
        t1 = time.perf_counter()
        try:
            report = self.memory.integrate(frame)
        except MemoryInputError as exc:
            log.warning("skipped frame %s: %s", obs.step, exc)
            report = IntegrationReport(obs.step, skipped=True, warnings=[str(exc)])
        t2 = time.perf_counter()
        return FrameResult(obs.step, report, frame, t1 - t0, t2 - t1)
