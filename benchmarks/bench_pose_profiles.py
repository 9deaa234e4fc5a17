"""Absolute trajectory error of the pose the planner reads, per sensor profile (issue 31).

Run: ``python benchmarks/bench_pose_profiles.py [--episodes DIR] [--every 40] [--seeds 1]
[--profiles realistic,odom-only,odom-only+correction,harsh]``. Each episode is driven once by the oracle (privileged,
on the embedded simulator without rendering: the pose does not depend on the images), and its
true frames are recorded; each profile's ``SensorNoise`` then filters the same frames, seeded per
episode exactly as ``worldmind eval longact --sensors P`` seeds it (seed 0, then 1, ... with
``--seeds``). Per episode and profile it prints the path length, the ATE RMSE (metres: root mean
square of the position error at every frame, no alignment, because the planner uses the ``map``
frame as it is given), the largest error, the heading RMSE and the relocalisation jumps.

A profile named ``P+correction`` (e.g. ``odom-only+correction``) is profile P with its frames
then passed through the scan-to-map pose correction the agent uses on a robot without a
localiser (``perception.pose_correction``; seeded from the same noise, so it sits beside P's
uncorrected figure); such a run renders depth (slower) and also prints the frames by outcome
and the correction's wall time per frame.

The trajectory is the oracle's, not HoloMind's: a figure of the pose model over a household
episode's motion (moves of 0.25 m, turns of 30 degrees), not of any planner. Figures only; the
behaviour is asserted in tests/test_pose_profiles.py.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.episodes import load_episodes  # noqa: E402
from evaluation.runner import run_episode  # noqa: E402
from household.types import Observation  # noqa: E402
from planner.factory import make_agent  # noqa: E402
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment  # noqa: E402
from perception.pose_correction import CorrectorConfig, ScanToMapCorrector  # noqa: E402
from sim_bridge.sensors import SensorNoise, sensor_profile  # noqa: E402

CORRECTED = "+correction"  # a profile name with this suffix: its frames through the scan-to-map correction
DEV = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev"


class Recorder:
    """The environment as it is, keeping every observation it hands out (the true frames)."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.frames: list[Observation] = []

    def reset(self, episode: Any) -> Observation:
        self.frames = [self.env.reset(episode)]
        return self.frames[0]

    def step(self, action: Any) -> Any:
        result = self.env.step(action)
        self.frames.append(result.observation)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)


@dataclass
class Track:
    """One profile over one recorded episode: per-frame position (m) and heading (deg) errors."""

    pos: np.ndarray
    head: np.ndarray
    jumps: int
    outcomes: dict[str, int]
    seconds_per_frame: float = 0.0  # the correction's wall time

    @property
    def ate_rmse(self) -> float:
        return float(np.sqrt(np.mean(self.pos ** 2)))

    @property
    def head_rmse(self) -> float:
        return float(np.sqrt(np.mean(self.head ** 2)))


def path_length(frames: list[Observation]) -> float:
    xy = np.array([f.agent.position[:2] for f in frames], dtype=float)
    return float(np.hypot(*np.diff(xy, axis=0).T).sum()) if len(xy) > 1 else 0.0


def track(frames: list[Observation], episode: Any, profile: str, seed: int, corrected: bool = False) -> Track:
    noise = SensorNoise(None, sensor_profile(profile), seed=seed)
    noise.begin(episode)
    corrector = ScanToMapCorrector(CorrectorConfig(depth_noise_k=noise.profile.depth.noise_k)) if corrected else None
    pos, head = [], []
    spent = 0.0
    for truth in frames:
        seen = noise.degrade(truth)
        if corrector is not None:
            t0 = time.perf_counter()
            seen = corrector.correct(seen)
            spent += time.perf_counter() - t0
        pos.append(math.hypot(seen.agent.position[0] - truth.agent.position[0],
                              seen.agent.position[1] - truth.agent.position[1]))
        head.append(abs((seen.agent.yaw_deg - truth.agent.yaw_deg + 180.0) % 360.0 - 180.0))
    return Track(np.asarray(pos), np.asarray(head), noise.pose_error.jumps,
                 dict(corrector.outcomes) if corrector is not None else {}, spent / max(len(frames), 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", default=str(DEV), help="episode folder (default: the committed dev set)")
    ap.add_argument("--every", type=int, default=40, help="every K-th episode of the folder (default 40)")
    ap.add_argument("--seeds", type=int, default=1, help="noise seeds per episode (0 .. N-1; eval uses 0)")
    ap.add_argument("--profiles", default="realistic,odom-only,harsh")
    args = ap.parse_args(argv)
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    for p in profiles:
        sensor_profile(p.removesuffix(CORRECTED))  # an unknown name fails here, naming the choices
    render = any(p.endswith(CORRECTED) for p in profiles)  # the correction registers depth
    loaded, problems = load_episodes(args.episodes)
    for line in problems:
        print(f"skipped: {line}", file=sys.stderr)
    episodes = loaded[::max(args.every, 1)]
    print(f"oracle trajectories of {len(episodes)} episode(s) from {args.episodes} (every {args.every}th), "
          f"{args.seeds} seed(s); ATE = RMSE of the map-frame position the planner reads, no alignment")
    pooled: dict[str, list[Track]] = {p: [] for p in profiles}
    for ep in episodes:
        sim = EmbeddedEnvironment(EmbeddedConfig(render=render))
        env = Recorder(sim)
        result, _ = run_episode(env, make_agent("oracle", sim), ep)
        frames = env.frames
        print(f"{ep.id}: {len(frames)} frames, {path_length(frames):.1f} m travelled, oracle GC {result.gc:.3f}")
        for p in profiles:
            tracks = [track(frames, ep, p.removesuffix(CORRECTED), seed, p.endswith(CORRECTED))
                      for seed in range(args.seeds)]
            pooled[p].extend(tracks)
            print(f"  {p:<22} ATE RMSE {np.mean([t.ate_rmse for t in tracks]):7.3f} m  "
                  f"max {max(float(t.pos.max()) for t in tracks):7.3f} m  "
                  f"heading RMSE {np.mean([t.head_rmse for t in tracks]):6.2f} deg  "
                  f"jumps {sum(t.jumps for t in tracks)}"
                  + (f"  frames {dict(sum((Counter(t.outcomes) for t in tracks), Counter()))}, "
                     f"{1000 * np.mean([t.seconds_per_frame for t in tracks]):.1f} ms/frame"
                     if p.endswith(CORRECTED) else ""))
    print("all episodes (RMSE over every frame pooled; mean of per-episode ATE):")
    for p in profiles:
        pos = np.concatenate([t.pos for t in pooled[p]]) if pooled[p] else np.zeros(1)
        head = np.concatenate([t.head for t in pooled[p]]) if pooled[p] else np.zeros(1)
        print(f"  {p:<22} ATE RMSE {float(np.sqrt(np.mean(pos ** 2))):7.3f} m (mean per episode "
              f"{np.mean([t.ate_rmse for t in pooled[p]]):.3f})  max {float(pos.max()):.3f} m  "
              f"heading RMSE {float(np.sqrt(np.mean(head ** 2))):.2f} deg  jumps {sum(t.jumps for t in pooled[p])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
