"""Deterministic instruction parser: item precision/recall on the committed dev episodes.

    .venv/bin/python benchmarks/bench_instruction_parser.py [--episodes DIR] [--show-misses N]

For each episode, both instructions ("detailed", "concise") are decomposed by
``planner.instruction_parser.InstructionParser`` and all goals' items are compared with the
episode's checklist under ``items_match`` (same object type, predicate, value, count and target
type; object/target rooms compared only when both name one), paired one-to-one. Precision =
matched / parsed items, recall = matched / checklist items, pooled over all episodes. Also prints
the same figures under exact ``ChecklistItem`` equality ("strict": rooms must agree too, which a
concise instruction that drops rooms can not meet), the hand-written paraphrase set's recovery rate (tests/data/instruction_paraphrases.jsonl) and
the parse time. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from household.checklist import ChecklistItem  # noqa: E402
from evaluation.episodes import load_episodes  # noqa: E402
from planner.instruction_parser import InstructionParser, goal_items, match_count  # noqa: E402
from household.house_data import load_asset_database  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", default=str(ROOT / "evaluation/data/episodes_dev"))
    ap.add_argument("--paraphrases", default=str(ROOT / "tests/data/instruction_paraphrases.jsonl"))
    ap.add_argument("--show-misses", type=int, default=5, help="print up to N mismatching episodes per kind")
    args = ap.parse_args()

    parser = InstructionParser(load_asset_database())
    episodes, errors = load_episodes(args.episodes)
    print(f"episodes: {len(episodes)} from {args.episodes}" + (f" ({len(errors)} failed to load)" if errors else ""))
    for kind in ("detailed", "concise"):
        parsed_n = gold_n = matched = perfect = unparsed = strict = 0
        t0 = time.perf_counter()
        misses = []
        for ep in episodes:
            items = goal_items(parser.decompose(ep.instructions[kind], None))
            m = match_count(items, ep.checklist)
            left = list(ep.checklist)
            for it in items:
                if it in left:
                    left.remove(it)
                    strict += 1
            parsed_n += len(items)
            gold_n += len(ep.checklist)
            matched += m
            unparsed += len(parser.unparsed)
            if m == len(items) == len(ep.checklist):
                perfect += 1
            else:
                misses.append((ep, items))
        dt = time.perf_counter() - t0
        p = matched / parsed_n if parsed_n else 0.0
        r = matched / gold_n if gold_n else 0.0
        print(f"{kind:9s} precision {p:.4f} ({matched}/{parsed_n})  recall {r:.4f} ({matched}/{gold_n})  "
              f"episodes fully recovered {perfect}/{len(episodes)}  unparsed clauses {unparsed}  "
              f"parse {1000 * dt / max(1, len(episodes)):.2f} ms/instruction")
        print(f"{'':9s} strict (exact item equality): precision {strict / max(1, parsed_n):.4f}  "
              f"recall {strict / max(1, gold_n):.4f}")
        for ep, items in misses[:args.show_misses]:
            gold = [i.describe() for i in ep.checklist]
            got = [i.describe() for i in items]
            print(f"  miss {ep.id}: missing {sorted(set(gold) - set(got))} extra {sorted(set(got) - set(gold))}")
    path = Path(args.paraphrases)
    if path.exists():
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        exact = item_hits = item_total = parsed_total = 0
        for row in rows:
            gold = [ChecklistItem.from_dict(d) for d in row["items"]]
            items = goal_items(parser.decompose(row["instruction"], None))
            m = match_count(items, gold)
            exact += int(m == len(gold) == len(items))
            item_hits += m
            item_total += len(gold)
            parsed_total += len(items)
        print(f"paraphrases: {exact}/{len(rows)} instructions recovered exactly ({exact / len(rows):.3f}); "
              f"item recall {item_hits / item_total:.3f}, precision {item_hits / max(1, parsed_total):.3f}")


if __name__ == "__main__":
    main()
