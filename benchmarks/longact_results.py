"""Committed per-episode LongAct results: write them from a run, compare a run against them, and say
why the unmet checklist units were missed.

    # a compact per-episode file from an `eval longact` run folder (one JSON line per episode)
    python benchmarks/longact_results.py export runs/v2-detailed \
        --episodes evaluation/data/episodes_dev_v2 --out benchmarks/results/holomind-v2-detailed.jsonl
    # what changed, episode by episode (a run folder or another results file)
    python benchmarks/longact_results.py compare benchmarks/results/holomind-v2-detailed.jsonl runs/after
    # why each unmet unit was missed (evaluation.failure_taxonomy), with the steps per cause
    python benchmarks/longact_results.py taxonomy runs/v2-detailed --episodes evaluation/data/episodes_dev_v2

The results file is what later changes are judged against: the whole set costs about an hour,
a comparison a second. Its first line is a header (what produced it); each other line holds one
episode: GC, SR, steps, actions, stop reason, units per predicate and every unmet item with its
cause. Reports that cannot be read are named and skipped, never silently dropped from a count.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.longact_breakdown import load_reports as load_run  # noqa: E402  (report.json per episode)
from evaluation.failure_taxonomy import Taxonomy, classify_report, format_taxonomy  # noqa: E402

FORMAT = "worldmind-longact-results/1"
# What two runs must agree on for an episode to count as unchanged (wall time never does).
COMPARED = ("gc", "sr", "steps_nav", "steps_manip", "num_actions", "failed_actions", "stop_reason")


def load_episodes(folder: Path | None) -> dict[str, dict[str, Any]]:
    if folder is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"{path}: skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
            continue
        if isinstance(data, dict) and "id" in data:
            out[str(data["id"])] = data
    return out


def row(report: dict[str, Any], episode: dict[str, Any] | None) -> dict[str, Any]:
    """One episode's compact record."""
    extra = report.get("extra") or {}
    units: dict[str, list[int]] = {}
    for item in report.get("checklist", []):
        u = units.setdefault(str(item.get("predicate", "?")), [0, 0])
        u[0] += int(item.get("satisfied_units", 0))
        u[1] += int(item.get("units", 0))
    return {"id": report["episode_id"], "scenario": report.get("scenario"), "gc": round(float(report["gc"]), 6),
            "sr": float(report["sr"]), "steps_nav": report.get("steps_nav"), "steps_manip": report.get("steps_manip"),
            "num_actions": report.get("num_actions"), "failed_actions": report.get("failed_actions"),
            "stop_reason": extra.get("stop_reason"), "ir": report.get("ir"),
            "planning_passes": extra.get("planning_passes"),  # Pass steps (planner.planning_budget)
            "wall_time_s": round(float(report.get("wall_time_s", 0.0)), 1),
            "oracle_steps_nav": ((episode or {}).get("oracle") or {}).get("steps_nav"),
            "units": {k: v for k, v in sorted(units.items())},
            "unmet": [u.to_dict() for u in classify_report(report, episode)]}


def read_results(path: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(header, episode id -> row) of a results file; a bad line is named."""
    header: dict[str, Any] = {}
    rows: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise SystemExit(f"{path}:{n}: not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise SystemExit(f"{path}:{n}: expected an object")
        if n == 1 and data.get("format") == FORMAT:
            header = data
        elif "id" in data:
            rows[str(data["id"])] = data
        else:
            raise SystemExit(f"{path}:{n}: no 'id' field")
    return header, rows


def rows_of(source: Path, episodes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    if source.is_dir():
        reports, problems = load_run(source)
        for p in problems:
            print(p, file=sys.stderr)
        return {eid: row(r, episodes.get(eid)) for eid, r in reports.items()}
    return read_results(source)[1]


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parents[1])
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def cmd_export(args: argparse.Namespace) -> int:
    run = Path(args.run)
    if not run.is_dir():
        print(f"{run}: not a run folder", file=sys.stderr)
        return 2
    episodes = load_episodes(Path(args.episodes) if args.episodes else None)
    reports, problems = load_run(run)
    for p in problems:
        print(p, file=sys.stderr)
    if not reports:
        print(f"{run}: no report.json found", file=sys.stderr)
        return 2
    first = next(iter(reports.values()))
    header = {"format": FORMAT, "commit": args.commit or _commit(), "planner": first.get("planner"),
              "instruction": first.get("instruction_kind"), "sensors": (first.get("extra") or {}).get("sensors"),
              "episodes": len(reports), "command": args.command or ""}
    lines = [json.dumps(header)] + [json.dumps(row(r, episodes.get(eid)), separators=(",", ":"))
                                    for eid, r in sorted(reports.items())]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(out)
    rows = [json.loads(line) for line in lines[1:]]
    print(f"{out}: {len(rows)} episodes, " + headline(rows))
    return 0


def headline(rows: list[dict[str, Any]]) -> str:
    """GC, SR and mean navigation steps beside the oracle's (the episodes' stored oracle runs)."""
    n = max(len(rows), 1)
    gc = sum(float(r["gc"]) for r in rows) / n
    sr = sum(float(r["sr"]) for r in rows) / n
    nav = sum(float(r.get("steps_nav") or 0.0) for r in rows) / n
    with_oracle = [r for r in rows if r.get("oracle_steps_nav")]
    text = f"GC {gc:.3f}, SR {sr:.3f}, nav {nav:.1f}"
    if with_oracle:
        ours = sum(float(r.get("steps_nav") or 0.0) for r in with_oracle)
        theirs = sum(float(r["oracle_steps_nav"]) for r in with_oracle)
        text += f" (oracle {theirs / len(with_oracle):.1f}: {ours / theirs:.2f}x)"
    return text


def cmd_compare(args: argparse.Namespace) -> int:
    episodes = load_episodes(Path(args.episodes) if args.episodes else None)
    before = rows_of(Path(args.before), episodes)
    after = rows_of(Path(args.after), episodes)
    shared = sorted(set(before) & set(after))
    if not shared:
        print("no episode in common", file=sys.stderr)
        return 2
    changed = [eid for eid in shared if any(before[eid].get(k) != after[eid].get(k) for k in COMPARED)]
    for eid in changed:
        b, a = before[eid], after[eid]
        parts = [f"{k} {b.get(k)} -> {a.get(k)}" for k in COMPARED if b.get(k) != a.get(k)]
        print(f"{eid}: " + "; ".join(parts))

    def mean(rows: dict[str, dict[str, Any]], key: str) -> float:
        return sum(float(rows[e].get(key) or 0.0) for e in shared) / len(shared)

    print(f"{len(shared)} episodes in common ({len(set(before) - set(after))} only before, "
          f"{len(set(after) - set(before))} only after); {len(changed)} changed")
    print(f"  before: {headline([before[e] for e in shared])}")
    print(f"  after:  {headline([after[e] for e in shared])}")
    for key in ("gc", "sr", "steps_nav", "num_actions"):
        print(f"  {key:<12} {mean(before, key):10.3f} -> {mean(after, key):10.3f}")
    worse = [e for e in shared if float(after[e]["gc"]) < float(before[e]["gc"]) - 1e-9]
    better = [e for e in shared if float(after[e]["gc"]) > float(before[e]["gc"]) + 1e-9]
    print(f"  GC better in {len(better)}, worse in {len(worse)}" + (f": {', '.join(worse)}" if worse else ""))
    return 0


def cmd_taxonomy(args: argparse.Namespace) -> int:
    episodes = load_episodes(Path(args.episodes) if args.episodes else None)
    source = Path(args.source)
    tax = Taxonomy()
    if source.is_dir():
        reports, problems = load_run(source)
        for p in problems:
            print(p, file=sys.stderr)
        for eid, report in sorted(reports.items()):
            tax.add(classify_report(report, episodes.get(eid)), report)
    else:
        from evaluation.failure_taxonomy import UnmetUnit
        _, rows = read_results(source)
        for eid, r in sorted(rows.items()):
            unmet = [UnmetUnit(eid, int(u["item"]), u["predicate"], u["type"], int(u["units"]), u["cause"],
                               tuple(u.get("goals", ())), u.get("detail", ""), u.get("agent_check", ""))
                     for u in r.get("unmet", [])]
            tax.add(unmet, {"checklist": [{"units": v[1]} for v in r.get("units", {}).values()]})
    print(format_taxonomy(tax))
    if not source.is_dir():
        print("(steps per cause are read from run folders only)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="write a results file from a run folder")
    e.add_argument("run")
    e.add_argument("--out", required=True)
    e.add_argument("--episodes", help="the episode folder the run used (for the checklist items' types)")
    e.add_argument("--commit", help="the commit the run was made at (default: the checkout's HEAD)")
    e.add_argument("--command", help="the command that made the run (written to the header)")
    e.set_defaults(func=cmd_export)
    c = sub.add_parser("compare", help="what changed between two runs (folders or results files)")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--episodes", help="the episode folder (only needed for run folders)")
    c.set_defaults(func=cmd_compare)
    t = sub.add_parser("taxonomy", help="why the unmet checklist units were missed")
    t.add_argument("source", help="a run folder or a results file")
    t.add_argument("--episodes", help="the episode folder the run used")
    t.set_defaults(func=cmd_taxonomy)
    args = ap.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
