"""GC, SR and satisfied checklist units per predicate and per scenario, from the per-episode
reports `worldmind eval longact` wrote; with two or more run folders, side by side (the episodes
they share), e.g. before and after a change.

    python benchmarks/longact_breakdown.py runs/holomind-v2-e12
    python benchmarks/longact_breakdown.py runs/before runs/after

Reads only report.json files; a damaged one is named and skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def load_reports(folder: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    reports, problems = {}, []
    for path in sorted(folder.glob("*/report.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            reports[str(data["episode_id"])] = data
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problems.append(f"{path}: skipped ({type(exc).__name__}: {exc})")
    return reports, problems


def breakdown(reports: dict[str, dict[str, Any]], episode_ids: list[str]) -> dict[str, Any]:
    units: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    scenarios: dict[str, list[float]] = defaultdict(list)
    gc, sr = [], []
    for eid in episode_ids:
        r = reports[eid]
        gc.append(float(r["gc"]))
        sr.append(float(r["sr"]))
        scenarios[str(r.get("scenario") or "?")].append(float(r["gc"]))
        for item in r.get("checklist", []):
            u = units[str(item.get("predicate", "?"))]
            u[0] += int(item.get("satisfied_units", 0))
            u[1] += int(item.get("units", 0))
    n = max(len(episode_ids), 1)
    return {"episodes": len(episode_ids), "gc": sum(gc) / n, "sr": sum(sr) / n,
            "units": {k: tuple(v) for k, v in sorted(units.items())},
            "scenarios": {k: (len(v), sum(v) / len(v)) for k, v in sorted(scenarios.items())}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="eval longact output folders")
    args = ap.parse_args(argv)
    loaded = []
    for run in args.runs:
        folder = Path(run)
        if not folder.is_dir():
            print(f"{folder}: not a folder", file=sys.stderr)
            return 2
        reports, problems = load_reports(folder)
        for p in problems:
            print(p, file=sys.stderr)
        loaded.append(reports)
    shared = sorted(set.intersection(*(set(r) for r in loaded)))
    if not shared:
        print("no episode is in every run", file=sys.stderr)
        return 1
    results = [breakdown(r, shared) for r in loaded]
    names = [Path(r).name for r in args.runs]
    print(f"{len(shared)} episodes in every run" + ("" if len(loaded) == 1 else f" ({', '.join(names)})"))
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    print("| mean GC | " + " | ".join(f"{r['gc']:.3f}" for r in results) + " |")
    print("| SR | " + " | ".join(f"{r['sr']:.3f}" for r in results) + " |")
    for pred in sorted({p for r in results for p in r["units"]}):
        cells = [f"{r['units'][pred][0]}/{r['units'][pred][1]}" if pred in r["units"] else "-" for r in results]
        print(f"| {pred} (units) | " + " | ".join(cells) + " |")
    for scen in sorted({s for r in results for s in r["scenarios"]}):
        cells = [f"{r['scenarios'][scen][1]:.3f} ({r['scenarios'][scen][0]})" if scen in r["scenarios"] else "-"
                 for r in results]
        print(f"| GC, {scen} (episodes) | " + " | ".join(cells) + " |")
    if len(loaded) > 1:
        first = loaded[0]
        for other, name in zip(loaded[1:], names[1:]):
            up = sum(other[e]["gc"] > first[e]["gc"] + 1e-9 for e in shared)
            down = sum(other[e]["gc"] < first[e]["gc"] - 1e-9 for e in shared)
            print(f"{name} vs {names[0]}: GC higher on {up}, lower on {down}, equal on {len(shared) - up - down}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
