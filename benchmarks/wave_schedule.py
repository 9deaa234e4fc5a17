"""How long the experience pool's waves take on N workers, replayed from a committed results file's
per-episode wall times: in file order (the executor before ``longest_first``), longest first by
the step budget (``worldmind/cli_longact.longest_first``, what `eval longact` does now), longest
first by the true times (the best a list schedule of a wave can do knowing them), and the whole
run split evenly over the workers (no wave boundaries at all).

    python benchmarks/wave_schedule.py benchmarks/results/holomind-v2-detailed.jsonl \
        --episodes evaluation/data/episodes_dev_v2 --workers 2 --wave 8

A model, not a measurement: each episode keeps the time it took in the run the file holds, and the
Ray start and the driver's own work between waves (about a minute over the whole set) are left out.
Why it exists: a wave ends when its last episode does, so the order a wave is handed out in decides
how long a worker idles at its end; this says how much of a run that is before a whole-set run is
spent to measure it.
"""

from __future__ import annotations

import argparse
import heapq
import json
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.longact_results import read_results  # noqa: E402  (names a bad line)
from worldmind.cli_longact import longest_first  # noqa: E402


def makespan(times: list[float], workers: int) -> float:
    """List scheduling: each next episode to the worker that frees first (Ray's queue here)."""
    free = [0.0] * workers
    for t in times:
        heapq.heappush(free, heapq.heappop(free) + t)
    return max(free)


def replay(ids: list[str], times: dict[str, float], budgets: dict[str, int], workers: int,
           wave: int) -> dict[str, float]:
    """Seconds for the whole run under each order (episodes in ``ids`` order, waves of ``wave``)."""
    out = {"file order": 0.0, "longest first (step budget)": 0.0, "longest first (true times)": 0.0}
    for k in range(0, len(ids), wave):
        part = ids[k:k + wave]
        by_budget = longest_first(list(range(len(part))), [SimpleNamespace(max_steps=budgets[i]) for i in part])
        out["file order"] += makespan([times[i] for i in part], workers)
        out["longest first (step budget)"] += makespan([times[part[j]] for j in by_budget], workers)
        out["longest first (true times)"] += makespan(sorted((times[i] for i in part), reverse=True), workers)
    out["even split, no waves"] = sum(times.values()) / workers
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, help="a benchmarks/results/*.jsonl file (wall_time_s per episode)")
    ap.add_argument("--episodes", type=Path, required=True, help="the episode folder the run used (max_steps)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--wave", type=int, default=8, help="the run's --experience-wave (Ray's default: 8)")
    args = ap.parse_args(argv)
    if args.workers < 1 or args.wave < 1:
        ap.error("--workers and --wave must be at least 1")
    times = {eid: float(r["wall_time_s"]) for eid, r in read_results(args.results)[1].items()}
    budgets: dict[str, int] = {}
    for eid in times:
        path = args.episodes / f"{eid}.json"
        try:
            budgets[eid] = int(json.loads(path.read_text(encoding="utf-8"))["max_steps"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"{path}: no max_steps ({type(exc).__name__}: {exc})", file=sys.stderr)
            return 2
    ids = sorted(times)  # the executor's episode order: episode files by name
    print(f"{len(ids)} episodes from {args.results}, {args.workers} workers, waves of {args.wave}")
    for name, seconds in replay(ids, times, budgets, args.workers, args.wave).items():
        print(f"  {name:30s} {seconds / 60:6.1f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
