"""Free-wording WorldLines questions (issue 13, item 4): does the belief tracker reach the same
answers when a question is asked as people ask it instead of in the generator's template form?

For every QA sample of dev-house traces, the template question is matched to its family with the
template pattern; its slots (entities, actor, day, time) fill each free-wording form of that family
in tests/data/question_paraphrases.json; the belief memory answers at the sample's cutoff and is
scored like the template question. Forms at even positions were used to extend the question
planner ("tuned"); forms at odd positions were not looked at while doing so ("held out") — both
were written before the planner was extended, by the same person, so the split is weaker than a
set written by someone else.

    python benchmarks/bench_question_paraphrases.py [--houses 0-3] [--days 7] [--per-family 12]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.worldlines.generator import generate_house_trace  # noqa: E402
from evaluation.worldlines.harness import make_memory  # noqa: E402
from evaluation.worldlines.metrics import qa_correct  # noqa: E402
from evaluation.worldlines.samples import generate_samples  # noqa: E402
from household.selection import parse_indices  # noqa: E402
from memory.belief.retrieval import _RULES, normalize_question  # noqa: E402

FORMS = json.loads((ROOT / "tests" / "data" / "question_paraphrases.json").read_text())["families"]


def family_and_slots(question: str) -> tuple[str, dict[str, str]] | None:
    """The paraphrase family of a TEMPLATE question and its slots (the first rule that matches is
    the template form of its intent)."""
    q = normalize_question(question)
    for pattern, intent in _RULES:
        m = pattern.match(q)
        if m:
            g = {k: v for k, v in m.groupdict().items() if v is not None}
            if intent == "current":
                intent = {"on or off": "current_power", "open or closed": "current_open"}.get(
                    g.get("attr", ""), "current_location")
            return intent, g
    return None


def fill(form: str, slots: dict[str, str]) -> str:
    values = dict(slots)
    if "e" in values:
        values["e_sp"] = re.sub(r"_(\d+)$", r" \1", values["e"])
    return form.format(**values)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--houses", default="0-3")
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--per-family", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    score: dict[str, list[bool]] = defaultdict(list)
    per_family: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    unparsed: list[str] = []
    for idx in parse_indices(args.houses):
        trace = generate_house_trace("houses_dev.jsonl.gz", idx, days=args.days, seed=args.seed)
        qa, _ = generate_samples(trace, n_per_family=args.per_family, n_plans=0, seed=args.seed)
        memory = make_memory("belief", trace)
        events, i = trace.events, 0
        for s in sorted(qa, key=lambda s: s.cutoff):
            j = i
            while j < len(events) and events[j].t <= s.cutoff:
                j += 1
            memory.ingest(events[i:j])  # events up to this sample's cutoff only
            i = j
            found = family_and_slots(s.question)
            if found is None:
                continue
            family, slots = found
            ok = qa_correct(s, memory.answer(s.question, s.cutoff))
            score["template"].append(ok)
            per_family[family]["template"].append(ok)
            for k, form in enumerate(FORMS.get(family, [])):
                q = fill(form, slots)
                variant = dataclasses.replace(s, question=q)
                got = qa_correct(variant, memory.answer(q, s.cutoff))
                split = "tuned" if k % 2 == 0 else "held_out"
                score[split].append(got)
                per_family[family][split].append(got)
                if not got and len(unparsed) < 20:
                    unparsed.append(f"[{split}] {q}")
    acc = {k: round(sum(v) / len(v), 3) if v else None for k, v in score.items()}
    n = {k: len(v) for k, v in score.items()}
    print(json.dumps({"accuracy": acc, "n": n, "per_family": {
        f: {k: round(sum(v) / len(v), 3) for k, v in d.items()} for f, d in sorted(per_family.items())},
        "not_understood_examples": unparsed}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
