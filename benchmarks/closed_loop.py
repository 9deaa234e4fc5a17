"""What the closed-loop benchmarks share: one core, the chosen episodes, the rendered embedded
simulator behind the chosen sensor profile (``bench_agent_decision.py``, ``bench_object_memory.py``)."""

from __future__ import annotations

import os
import sys
from typing import Any

from evaluation.episodes import load_episodes
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.sensors import SensorNoise, sensor_profile


def pinned_episodes_and_env(folder: str, every: int, width: int, height: int, sensors: str) -> tuple[list[Any], Any]:
    """Pin this process to its first core, load every ``every``-th episode of ``folder`` (problems
    printed to stderr) and make the simulator they run on (``SensorNoise`` unless ``ideal``)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    loaded, problems = load_episodes(folder)
    for line in problems:
        print(f"skipped: {line}", file=sys.stderr)
    env: Any = EmbeddedEnvironment(EmbeddedConfig(width=width, height=height, render=True))
    if sensors != "ideal":
        env = SensorNoise(env, sensor_profile(sensors))
    return loaded[::max(every, 1)], env
