"""The LLM decomposer alone on the person-written free-form set, beside the deterministic parser.

    .venv/bin/python benchmarks/bench_llm_decomposer.py --planner llm:local [--llm-config FILE]
        [--freeform FILE] [--parts tune,heldout] [--styles detailed,concise,adversarial]
        [--workers 4] [--limit N] [--time-budget S] [--out FILE.jsonl]

Each text is decomposed the way an episode's first decision decomposes it: ``LLMDecomposer`` on a
step-0 context (the asset database's types, nothing seen yet; the decomposer's prompt never lists
objects), through the real ``LLMClient``: the role's JSON schema sent to the server (constrained
decoding where the server has it), the role's checks, bounded repairs, and the deterministic
parser as the fallback, each fallback recorded with its reason. Each text gets a fresh client, so
each line of ``--out`` holds that text's own counters, written as soon as the text is done (a run
cut short keeps what it did; ``--time-budget`` stops starting new texts after S seconds).

Figures, per style (detailed, concise, adversarial) and per part of the fixed split
(``benchmarks/freeform_split.py``: "tune" was used to tune the deterministic parser, "heldout"
never was; nothing here is tuned on either):
- answers: the share that parsed and met the schema ("schema-valid"), and that also passed the
  role's checks ("accepted"), over every answer (repairs included);
- decisions: by the model, fell back (by reason), the model's share;
- latency per call (median, p95, seconds) and tokens per call;
- checklist items (the lenient match of ``bench_instruction_parser``: same type, predicate, value,
  count, target type; rooms only where both name one): precision and recall of the goals the agent
  would use (the model's where it decided, the parser's where it fell back), of the model's
  answers alone (a fallback contributes no item), and of the deterministic parser on the same texts.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.freeform_split import DEFAULT_FREEFORM, load_freeform  # noqa: E402
from household.assets import default_catalog  # noqa: E402
from household.checklist import ChecklistItem  # noqa: E402
from planner.instruction_parser import InstructionParser, goal_items, match_count  # noqa: E402
from planner.llm.client import LLMClient  # noqa: E402
from planner.llm.factory import load_llm_config, model_spec_from_planner  # noqa: E402
from planner.llm.roles import LLMDecomposer  # noqa: E402
from planner.llm.usage import latency_quantile  # noqa: E402
from planner.roles import PlannerContext  # noqa: E402

STYLES = ("detailed", "concise", "adversarial")


@dataclass(frozen=True)
class Text:
    """One instruction to decompose and the checklist it must yield."""

    id: str
    style: str
    part: str
    text: str
    gold: tuple[ChecklistItem, ...]


def freeform_texts(path: Path, parts: set[str], styles: set[str]) -> list[Text]:
    """The free-form set's texts: each episode entry's detailed and concise wording (scored against
    its checklist) and each adversarial entry's text (against its expected checklist)."""
    out: list[Text] = []
    for e in load_freeform(path):
        if e["split"] not in parts:
            continue
        if e["style"] == "adversarial":
            if "adversarial" in styles:
                out.append(Text(e["episode_id"], "adversarial", e["split"], e["text"],
                                tuple(ChecklistItem.from_dict(d) for d in e["expected_checklist"])))
            continue
        gold = tuple(ChecklistItem.from_dict(d) for d in e["checklist"])
        for style in ("detailed", "concise"):
            if style in styles:
                out.append(Text(e["episode_id"], style, e["split"], e[style], gold))
    return out


def start_context() -> PlannerContext:
    """What the agent knows when it decomposes an instruction: the vocabulary, nothing seen."""
    return PlannerContext(step=0, held_object_id=None, held_object_type=None, known_objects=[], rooms_seen=[],
                          history=[], experience=[], object_types=list(default_catalog().object_types))


class Decomposition:
    """One worker's parser (it keeps per-call state, so one per thread) and the shared config."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.context = start_context()
        self._local = threading.local()

    def parser(self) -> InstructionParser:
        if not hasattr(self._local, "parser"):
            self._local.parser = InstructionParser(default_catalog())
        return self._local.parser

    def run(self, t: Text) -> dict[str, Any]:
        client = LLMClient(self.config)
        role = LLMDecomposer(client, fallback=self.parser())
        start = time.perf_counter()
        try:
            goals = role.decompose(t.text, self.context)
            error = None
        except Exception as exc:  # a crash in the role is a finding, not the end of the run
            goals, error = [], f"{type(exc).__name__}: {exc}"[:300]
        wall = time.perf_counter() - start
        usage = client.usage()
        u = usage["by_role"].get("decompose", {})
        by_model = usage["decisions"]["by_model"] == 1
        gold = list(t.gold)
        used = goal_items(goals)
        used_matched = match_count(used, gold)
        try:
            alone = goal_items(self.parser().decompose(t.text, None))
        except ValueError:
            alone = []
        return {
            "id": t.id, "style": t.style, "part": t.part, "chars": len(t.text),
            "by_model": by_model, "error": error,
            "fallback": (usage["fallback_events"][0]["category"] if usage["fallback_events"] else None),
            "fallback_reason": (usage["fallback_events"][0]["reason"][:300] if usage["fallback_events"] else None),
            "calls": u.get("calls", 0), "answers": u.get("answers", 0), "schema_valid": u.get("schema_valid", 0),
            "accepted": u.get("accepted", 0), "repairs": u.get("repairs", 0), "retries": u.get("retries", 0),
            "latencies": [round(x, 4) for x in client.call_latencies("decompose")],
            "prompt_tokens": u.get("prompt_tokens", 0), "completion_tokens": u.get("completion_tokens", 0),
            "wall_s": round(wall, 3), "gold": len(gold),
            "used": {"parsed": len(used), "matched": used_matched},
            "model": {"parsed": len(used) if by_model else 0, "matched": used_matched if by_model else 0},
            "parser": {"parsed": len(alone), "matched": match_count(alone, gold)},
        }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Pooled figures over ``rows`` (one per text)."""
    n = len(rows)
    answers = sum(r["answers"] for r in rows)
    lat = [x for r in rows for x in r["latencies"]]
    calls = sum(r["calls"] for r in rows)
    gold = sum(r["gold"] for r in rows)
    reasons: dict[str, int] = {}
    for r in rows:
        if not r["by_model"]:
            key = r["fallback"] or ("crash" if r["error"] else "none")
            reasons[key] = reasons.get(key, 0) + 1

    def pr(key: str) -> dict[str, float]:
        parsed = sum(r[key]["parsed"] for r in rows)
        matched = sum(r[key]["matched"] for r in rows)
        return {"P": round(matched / parsed, 3) if parsed else 0.0, "R": round(matched / gold, 3) if gold else 0.0}

    return {
        "texts": n, "calls": calls, "answers": answers,
        "schema_valid": round(sum(r["schema_valid"] for r in rows) / answers, 4) if answers else None,
        "accepted": round(sum(r["accepted"] for r in rows) / answers, 4) if answers else None,
        "by_model": sum(r["by_model"] for r in rows), "fell_back": n - sum(r["by_model"] for r in rows),
        "model_share": round(sum(r["by_model"] for r in rows) / n, 3) if n else None,
        "fallback_reasons": dict(sorted(reasons.items())),
        "repairs": sum(r["repairs"] for r in rows),
        "latency_p50_s": latency_quantile(lat, 0.5), "latency_p95_s": latency_quantile(lat, 0.95),
        "prompt_tokens_per_call": round(sum(r["prompt_tokens"] for r in rows) / calls, 1) if calls else None,
        "completion_tokens_per_call": round(sum(r["completion_tokens"] for r in rows) / calls, 1) if calls else None,
        "used": pr("used"), "model": pr("model"), "parser": pr("parser"),
    }


def _print(name: str, s: dict[str, Any]) -> None:
    if not s["texts"]:
        return
    lat = (f"latency p50 {s['latency_p50_s']:.2f} s p95 {s['latency_p95_s']:.2f} s"
           if s["latency_p50_s"] is not None else "no calls")
    print(f"  {name:24s} n={s['texts']:3d}  schema-valid {s['schema_valid']}  accepted {s['accepted']}  "
          f"model decided {s['by_model']}/{s['texts']} (fallbacks {s['fallback_reasons'] or 0})  {lat}  "
          f"tokens/call {s['prompt_tokens_per_call']}+{s['completion_tokens_per_call']}")
    print(f"  {'':24s} items P/R: as used {s['used']['P']:.3f}/{s['used']['R']:.3f}  "
          f"model alone {s['model']['P']:.3f}/{s['model']['R']:.3f}  "
          f"deterministic parser {s['parser']['P']:.3f}/{s['parser']['R']:.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--planner", default="llm:local", help="llm:<model> as for worldmind run (default: llm:local)")
    ap.add_argument("--llm-config", default=None, help="LLM config file (YAML or JSON), as for worldmind run")
    ap.add_argument("--freeform", default=str(DEFAULT_FREEFORM))
    ap.add_argument("--parts", default="tune,heldout", help="split parts: tune, heldout or both")
    ap.add_argument("--styles", default=",".join(STYLES))
    ap.add_argument("--workers", type=int, default=1, help="texts decomposed at once (server slots)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N texts (0: all)")
    ap.add_argument("--time-budget", type=float, default=0.0, help="start no text after S seconds (0: none)")
    ap.add_argument("--out", default=None, help="one JSON line per text, written as each is done")
    ap.add_argument("--summary", default=None, help="the printed figures as JSON")
    args = ap.parse_args(argv)

    spec = model_spec_from_planner(args.planner)
    if spec is None:
        print(f"--planner must be llm:<model>, got {args.planner!r}", file=sys.stderr)
        return 2
    config = load_llm_config(spec, args.llm_config)
    path = Path(args.freeform)
    if not path.is_file():
        print(f"free-form set not found: {path}", file=sys.stderr)
        return 2
    texts = freeform_texts(path, {p.strip() for p in args.parts.split(",")}, {s.strip() for s in args.styles.split(",")})
    if args.limit:
        texts = texts[:args.limit]
    print(f"{len(texts)} texts from {path}; model {config.model} at {config.api_base or '(provider default)'}; "
          f"{args.workers} at once", flush=True)
    job = Decomposition(config)
    rows: list[dict[str, Any]] = []
    out = open(args.out, "w", encoding="utf-8") if args.out else None
    start = time.perf_counter()
    pending: set[Future] = set()
    queue = list(texts)
    with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
        while queue or pending:
            while queue and len(pending) < max(1, args.workers):
                if args.time_budget and time.perf_counter() - start > args.time_budget:
                    print(f"time budget of {args.time_budget:.0f} s spent: {len(queue)} texts not started",
                          flush=True)
                    queue = []
                    break
                pending.add(pool.submit(job.run, queue.pop(0)))
            if not pending:
                break
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                row = f.result()
                rows.append(row)
                if out is not None:
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                if len(rows) % 10 == 0:
                    print(f"  {len(rows)}/{len(texts)} texts, {time.perf_counter() - start:.0f} s", flush=True)
    if out is not None:
        out.close()
    wall = time.perf_counter() - start
    summary: dict[str, Any] = {"model": config.model, "texts": len(rows), "wall_s": round(wall, 1), "by": {}}
    print(f"{len(rows)} texts in {wall:.0f} s")
    for style in STYLES:
        for part in ("tune", "heldout", "all"):
            sel = [r for r in rows if r["style"] == style and (part == "all" or r["part"] == part)]
            if sel:
                s = summarize(sel)
                summary["by"][f"{style}/{part}"] = s
                _print(f"{style} ({part})", s)
    summary["all"] = summarize(rows)
    _print("all texts", summary["all"])
    if args.summary:
        Path(args.summary).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
