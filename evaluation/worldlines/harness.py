"""The WorldLines harness: traces -> samples -> a memory answers at each cutoff -> metrics.

``run_worldlines_eval(houses, days, seed, memory, out_dir)`` generates (or reuses) one trace per
house, its samples, and feeds the chosen memory the trace's events in time order, stopping at
each sample's cutoff to ask its questions, so nothing after the cutoff reaches the memory. It
writes ``worldlines_<memory>.json`` and ``.md`` (per-family and overall accuracy, Judge/Perfect,
Session Any@5, Event R@5, the planning probe, timings) plus the traces and samples as JSONL.
``main_worldlines(argv)`` is the command-line entry (``worldmind eval worldlines`` can call it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from household.atomic_io import writable_out_dir
from household.text import printable
from evaluation.worldlines.baselines import BeliefMemory, FlatMemory, Memory, MemoryAnswer, TextEncoder
from evaluation.worldlines.generator import generate_house_trace
from evaluation.worldlines.metrics import Judge, event_recall, mean, plan_with_memory, qa_correct, score_plan, \
    session_any
from evaluation.worldlines.replay import Replay
from evaluation.worldlines.samples import FAMILIES, PlanSample, QASample, generate_samples
from evaluation.worldlines.trace import Trace
from household.atomic_io import atomic_write_text

MEMORIES = ("belief", "bm25", "embedding", "full-context")


def make_memory(kind: str, trace: Trace, encoder: TextEncoder | None = None) -> Memory:
    m = trace.meta
    if kind == "belief":
        return BeliefMemory(m.room_of, m.entities + list(m.rooms) + m.mobiles + m.receptacles, m.members)
    if kind in ("bm25", "embedding", "full-context"):
        return FlatMemory(kind, m.room_of, encoder)
    raise ValueError(f"unknown memory {kind!r} (available: {', '.join(MEMORIES)})")


def evaluate_trace(trace: Trace, qa: list[QASample], plans: list[PlanSample], kind: str, *,
                   judge: Judge | None = None, encoder: TextEncoder | None = None) -> tuple[list[dict], list[dict], dict]:
    """Feed events up to each cutoff, ask that cutoff's questions; per-sample result rows."""
    memory = make_memory(kind, trace, encoder)
    replay = Replay(trace)
    items: list[tuple[float, int, Any]] = sorted([(s.cutoff, 0, s) for s in qa] + [(p.cutoff, 1, p) for p in plans],
                                                 key=lambda x: (x[0], x[1]))
    events, i = trace.events, 0
    rows, prow = [], []
    t_ingest = t_answer = 0.0
    n_answers = 0
    for cutoff, _, s in items:
        j = i
        while j < len(events) and events[j].t <= cutoff:
            j += 1
        t0 = time.perf_counter()
        memory.ingest(events[i:j])
        t_ingest += time.perf_counter() - t0
        i = j
        if isinstance(s, QASample):
            t0 = time.perf_counter()
            ans = memory.answer(s.question, cutoff)
            t_answer += time.perf_counter() - t0
            n_answers += 1
            rows.append({"id": s.id, "family": s.family, "target": s.target, "question": s.question,
                         "expected": s.answer, "accept_status": s.accept_status, "value": ans.value,
                         "status": ans.status, "correct": qa_correct(s, ans), "event_r5": event_recall(s, ans),
                         "session_any5": session_any(s, ans),
                         "judge": judge.score(s.question, s.answer, ans.value) if judge is not None else None})
        else:
            def ask(q: str, c: float = cutoff) -> MemoryAnswer:
                return memory.answer(q, c)

            steps, used = plan_with_memory(s, ask, set(trace.meta.containers), trace.meta.room_of)
            sc = score_plan(s, steps, used, replay.world_at(cutoff))
            prow.append({"id": s.id, "instruction": s.instruction, "plan": steps, "reference": s.reference_plan,
                         **sc.__dict__})
    timing = {"ingest_s": t_ingest, "answer_ms_mean": 1000 * t_answer / max(n_answers, 1), "events": len(events)}
    return rows, prow, timing


def summarise(rows: list[dict], prow: list[dict]) -> dict:
    def block(rs: list[dict]) -> dict:
        judged = [r["judge"] for r in rs if r["judge"] is not None]
        return {"n": len(rs), "accuracy": mean([float(r["correct"]) for r in rs]),
                "judge": sum(judged) / (3 * len(judged)) if judged else None,
                "perfect": sum(j == 3 for j in judged) / len(judged) if judged else None,
                "event_r5": mean([r["event_r5"] for r in rs]), "session_any5": mean([r["session_any5"] for r in rs])}

    return {"overall": block(rows), "families": {f: block([r for r in rows if r["family"] == f]) for f in FAMILIES},
            "planning": {k: mean([p[k] for p in prow]) for k in
                         ("state_consistency", "precondition_validity", "memory_use", "action_order")} | {"n": len(prow)}}


@dataclass(frozen=True)
class HouseJob:
    """One house of a WorldLines run, as an executor task (evaluation/executor.py)."""

    houses_file: str
    index: int
    days: int
    seed: int
    memory: str
    n_per_family: int
    n_plans: int
    judge: Judge | None = None
    encoder: TextEncoder | None = None


def run_house_job(job: HouseJob) -> dict[str, Any]:
    """Trace, samples and the memory's answers for one house; the driver writes the files."""
    trace = generate_house_trace(job.houses_file, job.index, days=job.days, seed=job.seed)
    qa, plans = generate_samples(trace, n_per_family=job.n_per_family, n_plans=job.n_plans, seed=job.seed)
    rows, prow, timing = evaluate_trace(trace, qa, plans, job.memory, judge=job.judge, encoder=job.encoder)
    return {"trace": trace, "qa": [s.to_dict() for s in qa], "plans": [p.to_dict() for p in plans],
            "rows": rows, "prow": prow, "timing": timing}


def run_worldlines_eval(houses: Sequence[int], days: int, seed: int, memory: str, out_dir: str | os.PathLike[str], *,
                        houses_file: str = "houses_dev.jsonl.gz", n_per_family: int = 25, n_plans: int = 10,
                        judge: Judge | None = None, encoder: TextEncoder | None = None,
                        progress: bool = True, executor: Any = None) -> dict:
    """Evaluate one memory on ``days``-long traces of the given houses; writes JSON + Markdown.
    ``executor`` (default: this process) runs one task per house; rows are concatenated in house
    order whatever order the tasks finish in, and a house whose task failed is listed under
    ``failed_houses`` with the reason while the others are scored."""
    from evaluation.executor import InProcessExecutor, Task

    if memory not in MEMORIES:
        raise ValueError(f"unknown memory {memory!r} (available: {', '.join(MEMORIES)})")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tasks = [Task(n, f"house {idx}", HouseJob(houses_file, idx, days, seed, memory, n_per_family, n_plans, judge, encoder))
             for n, idx in enumerate(houses)]
    done: dict[int, dict[str, Any]] = {}
    failed: list[dict[str, Any]] = []
    for count, outcome in enumerate((executor or InProcessExecutor()).run(run_house_job, tasks), start=1):
        idx = outcome.task.payload.index
        if not outcome.ok:
            failed.append({"house": idx, "reason": outcome.error})
            print(f"[worldlines {memory}] house {idx} ({count}/{len(houses)}): failed: {outcome.error}",
                  file=sys.stderr, flush=True)
            continue
        got = done[outcome.task.index] = outcome.value
        got["trace"].save(out / "traces" / f"house{idx:03d}.jsonl")
        _write_jsonl(out / "samples" / f"house{idx:03d}_qa.jsonl", got["qa"])
        _write_jsonl(out / "samples" / f"house{idx:03d}_plans.jsonl", got["plans"])
        if progress:
            acc = mean([float(x["correct"]) for x in got["rows"]])
            print(f"[worldlines {memory}] house {idx} ({count}/{len(houses)}): {len(got['trace'].events)} events, "
                  f"{len(got['qa'])} questions, accuracy {acc:.3f}", file=sys.stderr, flush=True)
    rows = [r for n in sorted(done) for r in done[n]["rows"]]
    prow = [p for n in sorted(done) for p in done[n]["prow"]]
    timings = [{"house": houses[n], **done[n]["timing"]} for n in sorted(done)]
    result = {"memory": memory, "houses_file": houses_file, "houses": list(houses), "days": days, "seed": seed,
              "embedding": "hashed bag-of-words (crc32, 1024-d)" if memory == "embedding" and encoder is None else None,
              "judge_configured": judge is not None, **summarise(rows, prow), "timings": timings}
    if failed:
        result["failed_houses"] = sorted(failed, key=lambda f: f["house"])
    _write_json(out / f"worldlines_{memory}.json", {**result, "rows": rows, "plans": prow})
    (out / f"worldlines_{memory}.md").write_text(printable(to_markdown([result])))
    return result


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def to_markdown(results: list[dict]) -> str:
    lines = ["# WorldLines memory evaluation", ""]
    r0 = results[0]
    lines.append(f"Houses {r0['houses_file']} {r0['houses']}, {r0['days']} days, seed {r0['seed']}. "
                 "Judge/Perfect need a configured model (n/a otherwise).")
    lines += ["", "| memory | accuracy | Judge | Perfect | Event R@5 | Session Any@5 | " +
              " | ".join(FAMILIES) + " |", "|" + "---|" * (6 + len(FAMILIES))]
    for r in results:
        o = r["overall"]
        fam = " | ".join(_fmt(r["families"][f]["accuracy"]) for f in FAMILIES)
        lines.append(f"| {r['memory']} | {_fmt(o['accuracy'])} | {_fmt(o['judge'])} | {_fmt(o['perfect'])} | "
                     f"{_fmt(o['event_r5'])} | {_fmt(o['session_any5'])} | {fam} |")
    lines += ["", "| memory | plans | State consistency | Precondition validity | Memory use | Action order |",
              "|---|---|---|---|---|---|"]
    for r in results:
        p = r["planning"]
        lines.append(f"| {r['memory']} | {p['n']} | {_fmt(p['state_consistency'])} | {_fmt(p['precondition_validity'])}"
                     f" | {_fmt(p['memory_use'])} | {_fmt(p['action_order'])} |")
    return "\n".join(lines) + "\n"


def _write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=1))


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def main_worldlines(argv: Sequence[str] | None = None) -> int:
    """``worldlines --houses 0-4 --days 30 --seed 0 --memory belief,bm25,... --out DIR``."""
    from household.errors import InputError as CliError
    from household.selection import parse_indices
    from evaluation.executor import ExecutorError
    from evaluation.executor_options import add_executor_options, executor_from_args

    ap = argparse.ArgumentParser(prog="worldmind eval worldlines", description=__doc__.splitlines()[0])
    ap.add_argument("--houses", default="0-2", help="house indices in the houses file, e.g. 0-4,7")
    ap.add_argument("--houses-file", default="houses_dev.jsonl.gz")
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--memory", default=",".join(MEMORIES), help=f"comma list of {', '.join(MEMORIES)}")
    ap.add_argument("--per-family", type=int, default=25)
    ap.add_argument("--plans", type=int, default=10)
    ap.add_argument("--out", default="runs/worldlines")
    add_executor_options(ap, unit="house")
    args = ap.parse_args(argv)
    try:
        houses = parse_indices(args.houses)
        kinds = [k.strip() for k in args.memory.split(",") if k.strip()]
        bad = [k for k in kinds if k not in MEMORIES]
        if bad or args.days < 1:
            raise CliError(f"--memory: unknown {bad} (available: {', '.join(MEMORIES)})" if bad else "--days must be >= 1")
        writable_out_dir(args.out)  # a file, a device or a full disk as --out: refused before any house runs
        executor = executor_from_args(args)
        try:
            results = [run_worldlines_eval(houses, args.days, args.seed, k, args.out, houses_file=args.houses_file,
                                           n_per_family=args.per_family, n_plans=args.plans, executor=executor)
                       for k in kinds]
        finally:
            executor.close()
    except (CliError, ExecutorError, FileNotFoundError, ValueError) as exc:
        print(f"worldmind: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nworldmind eval worldlines: interrupted", file=sys.stderr)
        return 130
    md = to_markdown(results)
    Path(args.out, "summary.md").write_text(printable(md))
    _write_json(Path(args.out, "summary.json"), results)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main_worldlines())
