"""HoloMind's decision time per step: everything the agent does between receiving a frame and
returning its action (integrating the frame into its occupancy map, rooms and object tracker,
grounding, planning, navigation), without rendering or scoring (figures only; no test asserts on
timing).

Run: ``python benchmarks/bench_agent_decision.py [--every 40] [--width 320 --height 240]
[--sensors realistic] [--profile 12]``. The process is pinned to one core and numpy/BLAS to one
thread. Episodes run in closed loop on the embedded simulator exactly as ``worldmind eval
longact`` runs them; a wrapper times each ``agent.act(observation)`` (and ``reset``, reported
apart: it reads the instruction and builds the goal DAG). Prints per episode and overall: steps, median, p95, p99 and
max milliseconds per step, the share of steps over 50 ms, and (``--profile N``) the N functions
with the most cumulative time under ``act`` (cProfile), to say where the time goes.

``--slowest N`` (issue 27: which steps make the tail, and why) profiles every ``act`` on its own
and prints, per episode, its N slowest steps: the step index, the milliseconds (under the
profiler, so somewhat more than unprofiled), the agent's latest note, how many whole lattice
searches and how many slices of searches made in slices (``planning_budget``) ran in the step
and the functions with the most cumulative time in it. Not with ``--profile``.

``--split`` (issue 27) also times, per action, what the evaluation does around the agent: the
simulator's step (and inside it the render), and the ground-truth reads that score GC; and inside
``act`` the frame's integration (occupancy, rooms, tracker) apart from the decision. It prints the
per-action means and HoloMind's whole cost per action (render + integrate + decide + score, with
the simulator's own state update) over the simulator's rendered step alone.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import cProfile  # noqa: E402
import heapq  # noqa: E402
import io  # noqa: E402
import pstats  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.closed_loop import pinned_episodes_and_env  # noqa: E402
from evaluation.runner import run_episode  # noqa: E402
from planner.agent_config import OBJECT_MEMORIES  # noqa: E402
from planner.factory import make_agent  # noqa: E402
from sim_bridge.sensors import SensorNoise  # noqa: E402

DEV = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev"


class Timer:
    """Accumulates milliseconds per label from wrapped callables."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    def wrap(self, label: str, fn: Any) -> Any:
        if getattr(fn, "timed_as", None) == label:
            return fn

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.ms[label] = self.ms.get(label, 0.0) + (time.perf_counter() - t0) * 1e3
        timed.timed_as = label  # type: ignore[attr-defined]
        return timed


class TimedAgent:
    """Times ``act`` (and ``reset``) of the wrapped agent; optionally profiles ``act``; with a
    timer, also the frame integration inside ``act``."""

    def __init__(self, agent: Any, profiler: cProfile.Profile | None, timer: Timer | None = None,
                 env: Any = None, slowest: int = 0) -> None:
        self.agent, self.name, self.profiler, self.timer, self.env = agent, agent.name, profiler, timer, env
        self.act_ms: list[float] = []
        self.reset_ms = 0.0
        self.slowest = slowest
        # the N slowest steps so far: (ms, step, note, profile), a min-heap on ms
        self.slow: list[tuple[float, int, str, cProfile.Profile]] = []

    def reset(self, episode: Any, observation: Any) -> None:
        t0 = time.perf_counter()
        self.agent.reset(episode, observation)
        self.reset_ms = (time.perf_counter() - t0) * 1e3
        if self.timer is not None and hasattr(self.agent, "_integrate"):
            self.agent._integrate = self.timer.wrap("integrate", self.agent._integrate)
        renderer = getattr(self.env, "renderer", None)  # made by the simulator's reset, per house
        if self.timer is not None and renderer is not None:
            renderer.render = self.timer.wrap("render", renderer.render)

    def act(self, observation: Any) -> Any:
        profiler = cProfile.Profile() if self.slowest else self.profiler
        if profiler is not None:
            profiler.enable()
        t0 = time.perf_counter()
        action = self.agent.act(observation)
        ms = (time.perf_counter() - t0) * 1e3
        self.act_ms.append(ms)
        if profiler is not None:
            profiler.disable()
        if self.slowest and profiler is not None:
            notes = getattr(self.agent, "notes_log", None) or [""]
            entry = (ms, int(getattr(observation, "step", len(self.act_ms) - 1)), notes[-1], profiler)
            if len(self.slow) < self.slowest:
                heapq.heappush(self.slow, entry)
            elif ms > self.slow[0][0]:
                heapq.heapreplace(self.slow, entry)
        return action

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)


def _row(label: str, ms: list[float]) -> str:
    a = np.asarray(ms)
    return (f"{label:<14} steps {a.size:>5}  median {np.median(a):6.2f} ms  p95 {np.percentile(a, 95):7.2f} ms  "
            f"p99 {np.percentile(a, 99):7.2f} ms  max {a.max():8.1f} ms  over 50 ms {100 * (a > 50).mean():5.1f}%")


def _slow_step(episode: str, ms: float, step: int, note: str, prof: cProfile.Profile, top: int = 8) -> str:
    """One slow step: where the episode was, what the agent last noted, the lattice searches run
    and the project's functions with the most cumulative time in it (the wrapper's own frames and
    the goal loop's generators, which hold everything, left out)."""
    stats = pstats.Stats(prof)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    searches = sum(v[1] for (f, _, name), v in raw.items() if name == "plan_lattice")
    # a paused search's generator: each resume is a call (the slices it ran in this step)
    slices = sum(v[1] for (f, _, name), v in raw.items() if name == "plan_lattice_in_slices")
    skip = {"act", "_run", "_do_goal", "_search", "<genexpr>", "<listcomp>", "<lambda>"}
    rows = sorted(((v[3], v[1], f"{Path(f).parent.name}/{Path(f).name}:{name}") for (f, _, name), v in raw.items()
                   if ("planner" in f or "memory" in f or "household" in f) and name not in skip), reverse=True)
    lines = [f"  slow {episode} step {step}: {ms:8.1f} ms, {searches} whole lattice search(es), "
             f"{slices} slice(s) of searches in slices; last note: {note[:120]}"]
    lines += [f"      {cum * 1e3:8.1f} ms cum  {calls:>7} calls  {where}" for cum, calls, where in rows[:top]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", default=str(DEV), help="episode folder (default: the committed dev set)")
    ap.add_argument("--every", type=int, default=40, help="every K-th episode of the folder (default 40)")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--planner", default="deterministic")
    ap.add_argument("--sensors", default="ideal", choices=("ideal", "realistic", "odom-only", "harsh"),
                    help="sensor profile the agent sees (degrading a frame is not timed; with noisy depth the "
                         "agent's map and tracker take their noise-aware paths, which are)")
    ap.add_argument("--object-memory", default="tracker", choices=tuple(OBJECT_MEMORIES),
                    help="what the agent grounds objects through (AgentConfig.object_memory; default tracker)")
    ap.add_argument("--profile", type=int, default=0, help="print the N functions with most cumulative time")
    ap.add_argument("--slowest", type=int, default=0,
                    help="profile each step and print the N slowest steps of every episode (see above)")
    ap.add_argument("--split", action="store_true",
                    help="also time the simulator step, its render and the scoring per action (see above)")
    args = ap.parse_args(argv)
    if args.slowest and args.profile:
        ap.error("--slowest profiles each step on its own: not with --profile")
    episodes, env = pinned_episodes_and_env(args.episodes, args.every, args.width, args.height, args.sensors)
    profiler = cProfile.Profile() if args.profile else None
    every: list[float] = []
    timer = Timer() if args.split else None
    if timer is not None:
        env.step = timer.wrap("step", env.step)
        env.ground_truth = timer.wrap("score", env.ground_truth)
    print(f"{args.planner} at {args.width}x{args.height}, {len(episodes)} episode(s) from {args.episodes} "
          f"(every {args.every}th), {args.sensors} sensors, {args.object_memory} object memory, one core")
    actions = 0
    for ep in episodes:
        agent = TimedAgent(make_agent(args.planner, env, object_memory=args.object_memory), profiler, timer,
                           env.env if isinstance(env, SensorNoise) else env, args.slowest)
        result, _ = run_episode(env, agent, ep)
        every.extend(agent.act_ms)
        actions += len(agent.act_ms)
        print(_row(ep.id, agent.act_ms) + f"  reset {agent.reset_ms:6.1f} ms  GC {result.gc:.3f}")
        for ms, step, note, prof in sorted(agent.slow, key=lambda e: -e[0]):
            print(_slow_step(ep.id, ms, step, note, prof))
    print(_row("all", every))
    if timer is not None and actions:
        ms = {k: v / actions for k, v in timer.ms.items()}
        act = sum(every) / actions
        step, render = ms.get("step", 0.0), ms.get("render", 0.0)
        integrate = ms.get("integrate", 0.0)
        whole = step + act + ms.get("score", 0.0)
        print(f"per action (mean over {actions}): simulator step {step:.2f} ms (render {render:.2f}, "
              f"state {step - render:.2f}); agent {act:.2f} ms (integrate {integrate:.2f}, decide "
              f"{act - integrate:.2f}); scoring {ms.get('score', 0.0):.2f} ms")
        print(f"whole cost per action {whole:.2f} ms = {whole / step:.2f}x the simulator's rendered step")
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(args.profile)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
