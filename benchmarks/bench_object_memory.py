"""What each object memory costs a frame, on the same frames (figures only; no test asserts on
timing).

Run: ``python benchmarks/bench_object_memory.py [--episodes DIR] [--every 40] [--sensors realistic]
[--width 320 --height 240]``. Pinned to one core, numpy/BLAS to one thread. Each chosen episode
runs in closed loop on the embedded simulator with the HoloMind agent grounding through the
spatial memory (``--drive tracker`` for the other way round); every frame the agent integrates is
also given to a shadow of the other memory, so both see exactly the same frames and the
difference is the memories' alone (``bench_agent_decision.py --split`` measures the whole act
instead, where the two memories lead the agent to different frames). Prints per episode and
overall the milliseconds per frame of ``integrate`` for each (mean, median, p95, p99), and for the
spatial memory its split into perception (back-projection, voxel keys) and integration
(association, free space, voxels) as ``memory.pipeline`` times them.

Why: the spatial memory as the planner's default (issue 31, item 3) is held back by its cost per
frame; this isolates that cost from the planning it changes.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.closed_loop import pinned_episodes_and_env  # noqa: E402
from evaluation.runner import run_episode  # noqa: E402
from planner.agent_config import OBJECT_MEMORIES, load_entry  # noqa: E402
from planner.factory import make_agent  # noqa: E402

DEV_V2 = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev_v2"


class Shadowed:
    """Times the agent's own memory's ``integrate`` and feeds each frame to a shadow memory too."""

    def __init__(self, agent: Any, shadow_kind: str) -> None:
        self.agent, self.shadow_kind = agent, shadow_kind
        self.ms: dict[str, list[float]] = {"drive": [], "shadow": []}
        self.split: list[tuple[float, float]] = []  # the spatial memory's (perception, integration) seconds
        self.shadow: Any = None
        self._wrapped: Any = None

    def wrap(self) -> None:
        """After ``reset`` made the agent's memory: time it, and make the shadow from the same config."""
        memory = self.agent.tracker
        if memory is self._wrapped:
            return
        self._wrapped = memory
        self.shadow = load_entry(OBJECT_MEMORIES[self.shadow_kind])(self.agent.config)
        own = memory.integrate

        def integrate(obs: Any) -> None:
            t0 = time.perf_counter()
            own(obs)
            t1 = time.perf_counter()
            self.shadow.integrate(obs)
            t2 = time.perf_counter()
            self.ms["drive"].append((t1 - t0) * 1e3)
            self.ms["shadow"].append((t2 - t1) * 1e3)
            for m in (memory, self.shadow):
                frame = getattr(m, "last_frame", None)
                if frame is not None and frame.step == obs.step:
                    self.split.append((frame.perception_s, frame.memory_s))

        memory.integrate = integrate


def _row(name: str, values: list[float]) -> str:
    a = np.asarray(values)
    if not len(a):
        return f"{name:24s} no frames"
    return (f"{name:24s} frames {len(a):6d}  mean {a.mean():6.2f} ms  median {np.median(a):6.2f}  "
            f"p95 {np.percentile(a, 95):6.2f}  p99 {np.percentile(a, 99):6.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", default=str(DEV_V2), help="episode folder (default: the v2 dev set)")
    ap.add_argument("--every", type=int, default=40, help="every K-th episode of the folder (default 40)")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--sensors", default="ideal", choices=("ideal", "realistic", "odom-only", "harsh"))
    ap.add_argument("--drive", default="spatial", choices=tuple(OBJECT_MEMORIES),
                    help="the memory the agent grounds through (the other one shadows it)")
    args = ap.parse_args(argv)
    shadow_kind = next(k for k in OBJECT_MEMORIES if k != args.drive)
    episodes, env = pinned_episodes_and_env(args.episodes, args.every, args.width, args.height, args.sensors)
    print(f"object memories at {args.width}x{args.height}, {len(episodes)} episode(s) from {args.episodes} "
          f"(every {args.every}th), {args.sensors} sensors, the agent on {args.drive}, {shadow_kind} shadowing; "
          "one core")
    every: dict[str, list[float]] = {args.drive: [], shadow_kind: []}
    split: list[tuple[float, float]] = []
    for ep in episodes:
        agent = make_agent("deterministic", env, object_memory=args.drive)
        timed = Shadowed(agent, shadow_kind)
        act = agent.act

        def act_timed(obs: Any, act: Any = act, timed: Shadowed = timed) -> Any:
            timed.wrap()
            return act(obs)

        agent.act = act_timed
        result, _ = run_episode(env, agent, ep)
        timed.wrap()
        print(f"{ep.id}  GC {result.gc:.3f}")
        for role, kind in (("drive", args.drive), ("shadow", shadow_kind)):
            print("  " + _row(kind, timed.ms[role]))
            every[kind].extend(timed.ms[role])
        split.extend(timed.split)
    print("all")
    for kind, values in every.items():
        print("  " + _row(kind, values))
    if split:
        s = np.asarray(split) * 1e3
        print(f"  spatial memory's split: perception {s[:, 0].mean():.2f} ms, integration {s[:, 1].mean():.2f} ms "
              f"a frame (means over {len(s)} frames)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
