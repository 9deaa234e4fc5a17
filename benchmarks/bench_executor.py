"""Wall time of `eval longact` on the Ray executor with 1 and with N workers: episodes per hour per
core, speed-up, and whether every per-episode report is identical (all fields but wall_time_s).

Each run is the real CLI in a subprocess, into its own --out, inside a private network namespace
holding only loopback where ``unshare -n`` is permitted (Ray then never sees another interface).

    # labelled subset (every 12th dev episode), deterministic HoloMind planner:
    python benchmarks/bench_executor.py --every 12 --workers 1 2
    # the whole dev set (about 124 episodes x 30-60 s each on one core):
    python benchmarks/bench_executor.py --every 1 --workers 1 2

Writes <out>/bench_executor.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEV = REPO / "evaluation" / "data" / "episodes_dev"
NETNS_SH = 'ip link set lo up && ip link set lo multicast on && exec "$@"'


def netns_ok() -> bool:
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def reports(out: Path) -> dict[str, dict]:
    """Every per-episode report, minus its wall time (the one field that may differ)."""
    found = {}
    for path in sorted(out.glob("*/report.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        data.pop("wall_time_s", None)
        found[data["episode_id"]] = data
    return found


def run(argv: list[str], env: dict[str, str], netns: bool) -> tuple[float, int, str]:
    cmd = ["unshare", "-n", "sh", "-c", NETNS_SH, "sh", *argv] if netns else argv
    started = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
    return time.monotonic() - started, proc.returncode, (proc.stdout + proc.stderr)[-3000:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", default=str(DEV))
    ap.add_argument("--every", type=int, default=12, help="every K-th episode (default 12: a labelled subset)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--planner", default="deterministic")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--in-process", action="store_true", help="also time the default in-process executor")
    ap.add_argument("--out", default="runs/bench_executor")
    ap.add_argument("extra", nargs="*", help="more `eval longact` options, after --")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    token = out / "ray_token"  # a private token for the throwaway runtime, never the user's ~/.ray one
    token.write_text(secrets.token_hex(32), encoding="utf-8")
    token.chmod(0o600)
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(token),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    netns = netns_ok()
    base = [sys.executable, "-m", "worldmind.cli", "eval", "longact", "--episodes", args.episodes,
            "--every", str(args.every), "--planner", args.planner, *args.extra]
    if args.limit:
        base += ["--limit", str(args.limit)]
    if args.planner != "oracle":  # the same pool waves for every executor, so reports can be compared
        base += ["--experience-wave", "8"]
    configs = ([("in-process", [], 1)] if args.in_process else []) + [
        (f"ray-{w}", ["--workers", str(w)], w) for w in args.workers]
    rows = []
    for name, extra, cores in configs:
        target = out / name
        if target.exists():
            sys.exit(f"{target} exists: give a fresh --out (a resumed run would time nothing)")
        wall, rc, tail = run(base + ["--out", str(target)] + extra, env, netns)
        if rc != 0:
            print(tail, file=sys.stderr)
            sys.exit(f"{name}: exit status {rc}")
        n = len(reports(target))
        rows.append({"executor": name, "cores": cores, "episodes": n, "wall_s": round(wall, 1),
                     "episodes_per_hour_per_core": round(n / (wall / 3600) / cores, 2)})
        print(f"{name}: {n} episodes in {wall:.1f} s", flush=True)
    ref = next(r for r in rows if r["executor"].startswith("ray-"))
    first = reports(out / ref["executor"])
    for row in rows:
        row["speedup_vs_ray_1"] = round(ref["wall_s"] / row["wall_s"], 2) if ref["cores"] == 1 else None
        row["identical_reports"] = reports(out / row["executor"]) == first
    result = {"command": " ".join(sys.argv), "episodes": args.episodes, "every": args.every, "planner": args.planner,
              "netns": netns, "cpu_count": os.cpu_count(), "rows": rows}
    (out / "bench_executor.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print("| executor | cores | episodes | wall (s) | episodes/h/core | speed-up vs 1 worker | identical reports |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['executor']} | {r['cores']} | {r['episodes']} | {r['wall_s']} | {r['episodes_per_hour_per_core']} | "
              f"{r['speedup_vs_ray_1']} | {r['identical_reports']} |")
    return 0 if all(r["identical_reports"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
