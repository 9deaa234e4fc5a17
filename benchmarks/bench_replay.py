"""Replay speed: record N frames of 320x240 RGB-D + instance ids at a nominal 10 Hz from the
embedded simulator (the oracle running the first dev episode, ground truth recorded when objects
change), then replay the bag through perception -> spatial memory -> belief tracker with
``evaluation.replay_bag`` and print frames, wall time and the x-real-time factor (bag
duration / replay wall time; the target is >= 10x), with per-stage milliseconds per frame.

Run: ``python benchmarks/bench_replay.py [--frames 300] [--storage mcap|sqlite3]``. numpy/BLAS/
OpenMP are held to one thread (set before numpy is imported), so the figures are single-core.
Recording time (simulation + rendering + writing) is printed too, but is not what is measured.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--storage", default="mcap", choices=("mcap", "sqlite3"))
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    args = ap.parse_args()

    from evaluation.episodes import load_episode
    from evaluation.runner import run_episode
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
    from sim_bridge.replay.bag import BagWriter
    from evaluation.replay import replay_bag
    from evaluation.dev_set import default_episode_file
    from planner.factory import make_agent
    from worldmind.cli_bags import RecordingEnvironment

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpu(s), "
          f"python {platform.python_version()}; one thread")
    episode = load_episode(default_episode_file())
    env = EmbeddedEnvironment(EmbeddedConfig(width=args.width, height=args.height, render=True))
    suffix = ".mcap" if args.storage == "mcap" else ".db3"
    with tempfile.TemporaryDirectory() as tmp:
        bag = Path(tmp) / f"bench{suffix}"
        t0 = time.perf_counter()
        with BagWriter(bag, rate_hz=10.0) as writer:
            run_episode(RecordingEnvironment(env, writer), make_agent("oracle", env), episode,
                        max_steps=args.frames - 1)
            frames = writer.frames
        rec_s = time.perf_counter() - t0
        size = bag.stat().st_size
        print(f"recorded {frames} frames of {args.width}x{args.height} ({episode.id}, oracle) to {args.storage}: "
              f"{size / 1e6:.1f} MB in {rec_s:.1f} s (simulation + rendering + writing)")
        result = replay_bag(bag, Path(tmp) / "out")
    ms = result["timing_ms_per_frame"]
    print(f"replay: {result['frames']} frames, bag duration {result['bag_duration_s']:.1f} s, "
          f"wall time {result['wall_time_s']:.2f} s, {result['x_real_time']:.1f}x real time "
          f"({result['frames'] / result['wall_time_s']:.0f} frames/s)")
    print("  ms per frame: " + ", ".join(f"{k[:-2]} {v:.2f}" for k, v in ms.items()))
    mem = result["memory"] or {}
    print(f"  memory: {result['memory_objects']} objects; precision {mem.get('precision')}, "
          f"recall (visible) {mem.get('recall_visible')}")


if __name__ == "__main__":
    main()
