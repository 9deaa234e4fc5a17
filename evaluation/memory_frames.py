"""One frame into the memory under evaluation, whichever explorer took it (the privileged one in
``evaluation.memory_eval`` or the agent's own walk in ``evaluation.memory_agent_explorer``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from household.types import Observation
from memory.pipeline import MemoryPipeline
from perception.observations import PerceptionError


@dataclass
class Exploration:
    """Frames fed and where their time went."""

    frames: int = 0
    skipped: int = 0
    perception_s: float = 0.0
    memory_s: float = 0.0
    render_s: float = 0.0


def feed_frame(pipeline: MemoryPipeline, obs: Observation, clean: Observation, noisy: bool,
               visible: set[str], log: Exploration) -> None:
    """``obs`` (``clean`` degraded by a sensor profile, or ``clean`` itself) into the memory; what
    counts as seen is decided on the perfect frame (what perception would have found with a
    perfect sensor), so recall is measured against the same objects under every profile. A frame
    perception refuses is counted as skipped and said on stderr."""
    result = pipeline.process(obs)
    log.perception_s += result.perception_s
    log.memory_s += result.memory_s
    if result.skipped:
        log.skipped += 1
        print(f"memory-eval: skipped frame {obs.step}: {'; '.join(result.report.warnings)}", file=sys.stderr)
        return
    if not noisy:
        visible.update(result.seen)
    else:
        try:
            visible.update(o.source_id for o in pipeline.perception.process(clean).objects)
        except PerceptionError:
            pass
    log.frames += 1
