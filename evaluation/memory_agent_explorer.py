"""The memory evaluation's own-navigation explorer: the HoloMind agent walks the house.

``evaluation.memory_eval.explore`` teleports to a grid of viewpoints and turns round at each: it
measures the memory under the best views a house allows. A robot builds its memory from its own
walk instead: frontiers of its own map, reached by its own planner, with the pose the sensor
profile reports (under ``realistic`` a localised pose a few centimetres off; under ``odom-only``
drift). Here the agent (``planner.holomind.HoloMindAgent.explore_house``, the same navigation
the LongAct runs use, its map built from the same degraded frames) chooses every action; the
simulator only executes them. Each frame the agent sees also goes to the memory pipeline. What
counts as seen is decided on the perfect frame, as for the oracle explorer, so recall is
measured against the objects the walk showed.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from evaluation.memory_frames import Exploration, feed_frame
from household.types import Observation
from memory.pipeline import MemoryPipeline
from sim_bridge.embedded.env import EmbeddedEnvironment
from sim_bridge.sensors import SensorNoise

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ExploreOnly:
    """The episode an exploring agent is reset with: an id (the sensor noise's seed key) and no
    instruction (the agent's goal loop is replaced by ``explore_house``)."""

    id: str

    def instruction(self, kind: str) -> str:
        return ""


@dataclass
class AgentWalk(Exploration):
    """What the agent's walk cost and how it ended."""

    steps: int = 0
    failed_actions: int = 0
    stop_reason: str = ""  # "surfaces surveyed", "no frontier left", "step cap", "agent error ..."
    agent_s: float = 0.0
    path_m: float = 0.0
    surfaces: int = 0  # open surfaces walked up to and looked at (survey)


class NoGoals:
    """The decomposer role of an agent that only explores: an instruction gives no goals."""

    def decompose(self, instruction: str, context: Any) -> list[Any]:
        return []


def make_explorer_agent(env: Any) -> Any:
    """The deterministic HoloMind agent with the settings ``env``'s sensor profile calls for
    (``planner.factory.make_agent`` reads them off a ``SensorNoise`` wrapper), given no goals."""
    from planner.factory import make_agent

    agent = make_agent("deterministic", env)
    agent.decomposer = NoGoals()
    return agent


def explore_by_agent(env: EmbeddedEnvironment, pipeline: MemoryPipeline, first: Observation, step_cap: int,
                     visible: set[str], *, survey: bool = True, noise: SensorNoise | None = None,
                     episode_id: str = "explore", progress: Progress | None = None) -> AgentWalk:
    """Let the agent explore from where ``env`` stands (``first``: the clean frame there) until its
    map has no frontier left (then, with ``survey``, look from close by at the open surfaces it
    saw) or ``step_cap`` steps are spent; every frame (degraded by ``noise``) goes to the agent
    and to ``pipeline``. ``visible`` gets what perception finds on the clean frames. The agent is
    a new one each call (a new map), the memory the pipeline's."""
    agent = make_explorer_agent(noise if noise is not None else env)
    episode = ExploreOnly(episode_id)
    if noise is not None:
        noise.begin(episode)
    walk = AgentWalk()
    obs = noise.degrade(first) if noise is not None else first
    t0 = time.perf_counter()
    agent.reset(episode, obs)
    agent.explore_house(step_cap, survey=survey)
    walk.agent_s += time.perf_counter() - t0
    # The memory gets each frame as the agent localised it (on a robot without a localiser the
    # agent corrects the odometry pose: AgentConfig.pose_correction), after the agent has taken it.
    feed_frame(pipeline, agent.obs, first, noise is not None, visible, walk)
    clean: Observation | None = None  # the newest frame, until the agent has taken it
    last = time.monotonic()
    prev = env.pose.x, env.pose.z
    error = ""
    while walk.steps < step_cap + 64:  # the cap is the agent's; this bounds a walk that would overrun it
        t0 = time.perf_counter()
        try:
            action = agent.act(obs)
        except Exception as exc:  # noqa: BLE001 (an agent bug ends the walk; the memory built so far is scored)
            error = f"agent error at step {walk.steps}: {type(exc).__name__}: {exc}"
            print(f"memory-eval: {episode_id}: {error}", file=sys.stderr)
            break
        walk.agent_s += time.perf_counter() - t0
        if clean is not None:
            feed_frame(pipeline, agent.obs, clean, noise is not None, visible, walk)
            clean = None
        if action.name == "Stop":
            break
        t0 = time.perf_counter()
        result = env.step(action)
        clean = result.observation
        obs = noise.degrade(clean) if noise is not None else clean
        walk.render_s += time.perf_counter() - t0
        walk.steps += 1
        walk.failed_actions += int(not result.success)
        here = env.pose.x, env.pose.z
        walk.path_m += ((here[0] - prev[0]) ** 2 + (here[1] - prev[1]) ** 2) ** 0.5
        prev = here
        if progress and time.monotonic() - last > 5.0:
            last = time.monotonic()
            progress(f"agent step {walk.steps}: {walk.frames} frames, {len(pipeline.memory)} objects")
    if clean is not None:  # the walk ended before the agent took the last frame: as the sensors gave it
        feed_frame(pipeline, obs, clean, noise is not None, visible, walk)
    walk.surfaces = int(agent.stats["surfaces_surveyed"])
    walk.stop_reason = error or agent.exploration_end or "agent stopped"
    if progress:
        progress(f"agent explored: {walk.steps} steps, {walk.path_m:.1f} m, {walk.stop_reason}")
    return walk


def walk_timing(walk: AgentWalk) -> dict[str, Any]:
    f = max(walk.frames, 1)
    return {"frames": walk.frames, "skipped_frames": walk.skipped, "agent_steps": walk.steps,
            "failed_actions": walk.failed_actions, "path_m": round(walk.path_m, 2), "stop_reason": walk.stop_reason,
            "surfaces_surveyed": walk.surfaces,
            "render_ms_per_frame": 1e3 * walk.render_s / f, "perception_ms_per_frame": 1e3 * walk.perception_s / f,
            "memory_ms_per_frame": 1e3 * walk.memory_s / f, "agent_ms_per_step": 1e3 * walk.agent_s / max(walk.steps, 1)}
