"""The LLM roles in whole episodes, in figures: issue 33's per-episode table from the reports.

Reads every ``report.json`` under the folders given (``eval longact`` / ``run`` outputs; an LLM run
and a deterministic run of the same episodes side by side), groups them by planner and
instruction kind, and prints per group: episodes, mean GC and SR; and for the LLM planner, per role
and in total, the answers, the share that met the role's JSON schema, the share the role accepted,
the decisions, the share the model took and the fallbacks (with why), and each call's latency
pooled over the episodes (median, p95; from ``call_latencies_s``, written since this script
exists). GC/SR are compared on the episodes both planners finished: an episode stopped by
``--time-limit`` (its ``stop_reason``) is counted apart, and one killed before its report has none.

    python benchmarks/llm_episode_figures.py RUN [RUN ...] [--json OUT]

Why a script and not the ``eval longact`` summary: on the GPU machine the episodes run as
separate processes (no Ray there), each into its own folder, and the figures the issue asks for
(schema-valid share, fallback share, pooled latency) are not in that summary.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from planner.llm.usage import latency_quantile  # noqa: E402


def read_reports(folders: list[Path]) -> list[dict[str, Any]]:
    """Every per-episode report under ``folders``; an unreadable one is named and skipped."""
    out = []
    for folder in folders:
        for path in sorted(folder.rglob("report.json")):
            try:
                report = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                print(f"{path}: unreadable report, skipped ({exc})", file=sys.stderr)
                continue
            report["_path"] = str(path)
            out.append(report)
    return out


def _share(n: int, d: int) -> str:
    return f"{n}/{d} ({n / d:.1%})" if d else f"{n}/0"


def role_figures(reports: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per role (and "all"): answers, schema-valid, accepted, calls, decisions, by model, fell back,
    fallback reasons and the pooled latencies of the calls."""
    acc: dict[str, dict[str, Any]] = defaultdict(lambda: {"answers": 0, "schema_valid": 0, "accepted": 0,
                                                         "calls": 0, "repairs": 0, "decisions": 0,
                                                         "by_model": 0, "fell_back": 0,
                                                         "reasons": Counter(), "latencies": []})
    for r in reports:
        llm = (r.get("extra") or {}).get("llm") or {}
        for role, u in (llm.get("by_role") or {}).items():
            for name in ("all", role):
                a = acc[name]
                for k in ("answers", "schema_valid", "accepted", "calls", "repairs"):
                    a[k] += int(u.get(k) or 0)
                a["latencies"].extend(float(x) for x in u.get("call_latencies_s") or [])
        for role, d in (llm.get("decisions_by_role") or {}).items():
            for name in ("all", role):
                a = acc[name]
                a["decisions"] += int(d.get("decisions") or 0)
                a["by_model"] += int(d.get("by_model") or 0)
                a["fell_back"] += int(d.get("fell_back") or 0)
                a["reasons"].update({str(k): int(v) for k, v in (d.get("fallback_reasons") or {}).items()})
    return dict(acc)


def group_key(report: dict[str, Any]) -> tuple[str, str]:
    return str(report.get("planner")), str(report.get("instruction_kind"))


def time_limited(report: dict[str, Any]) -> bool:
    """Stopped by ``--time-limit`` (scored as it stood), not finished by the agent or its step budget."""
    return str((report.get("extra") or {}).get("stop_reason", "")).startswith("time limit")


def figures(reports: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in reports:
        groups[group_key(r)][str(r.get("episode_id"))] = r  # a rerun of the same episode replaces it
    out: dict[str, Any] = {}
    for (planner, kind), by_id in sorted(groups.items()):
        rows = list(by_id.values())
        entry: dict[str, Any] = {"planner": planner, "instruction": kind, "episodes": len(rows),
                                 "gc": sum(float(r["gc"]) for r in rows) / len(rows),
                                 "sr": sum(float(r["sr"]) for r in rows) / len(rows),
                                 "time_limited": sorted(i for i, r in by_id.items() if time_limited(r)),
                                 "ids": sorted(by_id)}
        if planner.startswith("llm:"):
            roles = role_figures(rows)
            entry["roles"] = {name: {**{k: v for k, v in a.items() if k not in ("latencies", "reasons")},
                                     "fallback_reasons": dict(a["reasons"]),
                                     "latency_p50_s": latency_quantile(a["latencies"], 0.5),
                                     "latency_p95_s": latency_quantile(a["latencies"], 0.95),
                                     "timed_calls": len(a["latencies"])}
                              for name, a in sorted(roles.items())}
        out[f"{planner} {kind}"] = entry
    return out


def _paired(out: dict[str, Any], reports: list[dict[str, Any]]) -> list[str]:
    """GC/SR of the LLM planner beside a non-LLM one on the episodes both have, per instruction kind."""
    lines = []
    by = {group_key(r) + (str(r.get("episode_id")),): r for r in reports}
    for e in out.values():
        if not e["planner"].startswith("llm:"):
            continue
        for other in out.values():
            if other["planner"].startswith("llm:") or other["instruction"] != e["instruction"]:
                continue
            both = sorted((set(e["ids"]) - set(e["time_limited"])) & (set(other["ids"]) - set(other["time_limited"])))
            if not both:
                continue
            gl = [float(by[(e["planner"], e["instruction"], i)]["gc"]) for i in both]
            go = [float(by[(other["planner"], other["instruction"], i)]["gc"]) for i in both]
            sl = [float(by[(e["planner"], e["instruction"], i)]["sr"]) for i in both]
            so = [float(by[(other["planner"], other["instruction"], i)]["sr"]) for i in both]
            n = len(both)
            lines.append(f"  {e['instruction']}, {n} episodes both finished: GC {sum(gl) / n:.3f} ({e['planner']}) vs "
                         f"{sum(go) / n:.3f} ({other['planner']}); SR {sum(sl) / n:.3f} vs {sum(so) / n:.3f}; "
                         f"GC higher in {sum(a > b for a, b in zip(gl, go))}, lower in {sum(a < b for a, b in zip(gl, go))}")
    return lines


def print_figures(out: dict[str, Any], reports: list[dict[str, Any]]) -> None:
    for key, e in out.items():
        cut = f" ({len(e['time_limited'])} stopped by the time limit, scored as they stood)" if e["time_limited"] else ""
        print(f"{key}: {e['episodes']} episodes{cut}, GC {e['gc']:.3f}, SR {e['sr']:.3f}")
        for role, a in (e.get("roles") or {}).items():
            p50, p95 = a["latency_p50_s"], a["latency_p95_s"]
            lat = f"latency p50 {p50:.2f} s, p95 {p95:.2f} s over {a['timed_calls']} calls" if p50 is not None else "no timed calls"
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(a["fallback_reasons"].items(), key=lambda kv: -kv[1]))
            print(f"  {role:10s} answers {a['answers']}: schema-valid {_share(a['schema_valid'], a['answers'])}, "
                  f"accepted {_share(a['accepted'], a['answers'])}; decisions {a['decisions']}: by the model "
                  f"{_share(a['by_model'], a['decisions'])}, fell back {_share(a['fell_back'], a['decisions'])}"
                  + (f" ({reasons})" if reasons else "") + f"; {lat}")
    for line in _paired(out, reports):
        print(line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="folders holding per-episode report.json files")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    missing = [str(p) for p in args.runs if not p.is_dir()]
    if missing:
        print(f"not a folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    reports = read_reports(args.runs)
    if not reports:
        print(f"no report.json under {', '.join(map(str, args.runs))}", file=sys.stderr)
        return 1
    out = figures(reports)
    print_figures(out, reports)
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
