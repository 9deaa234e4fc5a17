"""Not a timing: the figures of a `worldmind memory-eval` run folder, per house and as means over
named groups of houses (the part chosen on, the part held back), and a compact per-house file
for `benchmarks/results/` so the next session compares against it instead of re-running it.

    .venv/bin/python benchmarks/memory_eval_results.py summary runs/me --groups tuned=0-3,held=4-9
    .venv/bin/python benchmarks/memory_eval_results.py export runs/me --out benchmarks/results/F.jsonl \
        --commit abc1234 --command "worldmind memory-eval ..."
    .venv/bin/python benchmarks/memory_eval_results.py summary benchmarks/results/F.jsonl

Recall is given against the objects seen in at least one frame (``recall_visible``: what the
exploration showed) and against every object of the house (``recall_all``: what it showed at all);
precision, centroid error and duplicates as `evaluation.memory_metrics` defines them (match radius
in the run's config).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

PHASES = ("explored", "after_move")
FIELDS = ("recall_visible", "recall_all", "precision", "centroid_error_mean", "duplicate_rate",
          "memory_objects", "gt_objects", "gt_visible")
WALK = ("agent_steps", "path_m", "surfaces_surveyed", "stop_reason", "frames")


def _indices(spec: str) -> set[int]:
    out: set[int] = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def rows_of(path: Path) -> list[dict[str, Any]]:
    """One compact row per house and phase, from a run folder or an exported file."""
    if path.is_file():
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return [r for r in lines if "house_index" in r]
    files = sorted(path.glob("house_*/memory_eval.json")) or sorted(path.glob("memory_eval.json"))
    if not files:
        raise SystemExit(f"memory_eval_results: {path}: no memory_eval.json in it or in its house_* folders")
    out = []
    for f in files:
        try:
            result = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            print(f"memory_eval_results: {f}: skipped ({exc})", file=sys.stderr)
            continue
        for phase in PHASES:
            r = result.get(phase)
            if not r:
                continue
            row: dict[str, Any] = {"house_index": result["index"], "house_id": result["house_id"], "phase": phase}
            row.update({k: r.get(k) for k in FIELDS})
            row.update({k: r.get("timing", {}).get(k) for k in WALK if k in r.get("timing", {})})
            if phase == "after_move":
                row["moved"] = len(r.get("moved", []))
                row["moved_found_at_new_place"] = r.get("moved_found_at_new_place")
            out.append(row)
    return out


def summary(rows: list[dict[str, Any]], groups: dict[str, set[int]]) -> list[str]:
    lines = []
    for name, members in groups.items():
        for phase in PHASES:
            sel = [r for r in rows if r["phase"] == phase and r["house_index"] in members]
            if not sel:
                continue

            def mean(key: str, sel: list[dict[str, Any]] = sel) -> float:
                vals = [r[key] for r in sel if r.get(key) is not None]
                return statistics.mean(vals) if vals else float("nan")

            text = (f"{name:8s} {phase:10s} houses {len(sel):2d}: recall seen {mean('recall_visible'):.3f} "
                    f"(per house {min(r['recall_visible'] for r in sel):.3f}-{max(r['recall_visible'] for r in sel):.3f}), "
                    f"recall all {mean('recall_all'):.3f}, precision {mean('precision'):.3f} "
                    f"({min(r['precision'] for r in sel):.3f}-{max(r['precision'] for r in sel):.3f}), "
                    f"centroid error {mean('centroid_error_mean'):.3f} m, duplicates {mean('duplicate_rate'):.3f}")
            if any("agent_steps" in r for r in sel):
                text += f", agent steps {mean('agent_steps'):.0f}, surfaces {mean('surfaces_surveyed'):.1f}"
            if phase == "after_move":
                text += (f", moved objects found at the new place {sum(r.get('moved_found_at_new_place') or 0 for r in sel)}"
                         f"/{sum(r.get('moved') or 0 for r in sel)}")
            lines.append(text)
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary", help="means per group of houses")
    s.add_argument("source", type=Path, help="memory-eval --out folder, or an exported .jsonl")
    s.add_argument("--groups", default="", help="name=indices,... e.g. tuned=0-3,held=4-9 (default: all)")
    e = sub.add_parser("export", help="write the compact per-house file")
    e.add_argument("source", type=Path)
    e.add_argument("--out", type=Path, required=True)
    e.add_argument("--commit", required=True)
    e.add_argument("--command", required=True, help="the command that made the run (written in the header)")
    args = ap.parse_args(argv)
    rows = rows_of(args.source)
    if args.cmd == "summary":
        groups: dict[str, set[int]] = {}
        for item in filter(None, _split_groups(args.groups)):
            name, _, spec = item.partition("=")
            groups[name] = _indices(spec)
        groups = groups or {"all": {r["house_index"] for r in rows}}
        print("\n".join(summary(rows, groups)))
        return 0
    header = {"format": "worldmind-memory-eval-results/1", "commit": args.commit, "command": args.command,
              "houses": len({r["house_index"] for r in rows})}
    args.out.write_text("\n".join(json.dumps(r, separators=(",", ":")) for r in [header, *rows]) + "\n")
    print(f"wrote {args.out}: {len(rows)} rows")
    return 0


def _split_groups(spec: str) -> list[str]:
    """'tuned=0-3,held=4-9' -> ['tuned=0-3', 'held=4-9'] (a comma before a name starts a group)."""
    out: list[str] = []
    for part in spec.split(","):
        if "=" in part or not out:
            out.append(part)
        else:
            out[-1] += "," + part
    return out


if __name__ == "__main__":
    raise SystemExit(main())
