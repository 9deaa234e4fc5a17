"""``worldmind parse "TEXT" [--json] [--routines]``: what an instruction becomes, without running it.

Why a command of its own: a user (or a researcher comparing decomposers) needs to see which
checklist items a sentence yields and which clauses were not understood, before spending an
episode on it. Items use the episode checklist vocabulary (object selector with type/room/count,
predicate, target, value); each carries the clause it came from, and items expanded from a routine
word ("tidy", "set the table") are marked ``"inferred": true``. ``--json`` prints
``{"items": [...], "unparsed": [...]}``.

Exit status: 0 when at least one item was produced; 1 when none was (the unparsed clauses say
why); 2 for bad input (empty, too long, unreadable), with one line naming the problem.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

EXIT_USAGE = 2


def parse_report(text: str, routines: bool = False, embed: bool = True) -> dict[str, Any]:
    """The JSON-ready report of one instruction: items (with source clause), unparsed clauses,
    and how unknown noun phrases were grounded (``embed``: use all-MiniLM-L6-v2 when the
    ``text`` extra is installed)."""
    from planner.instruction_parser import InstructionParser
    from planner.language.grounding import default_encoder
    from household.house_data import load_asset_database

    encoder = default_encoder() if embed else None
    parser = InstructionParser(load_asset_database(), routines=routines, encoder=encoder)
    goals = parser.decompose(text, None)
    items: list[dict[str, Any]] = []
    for g in goals:
        inferred = g.typed_hints.inferred
        for item in g.items:
            d = item.to_dict()
            d["goal"] = g.id
            d["clause"] = g.text
            if inferred:
                d["inferred"] = True
                d["routine"] = inferred
            items.append(d)
    unparsed = [{"text": u.text, "reason": u.reason} for u in parser.unparsed]
    report: dict[str, Any] = {"items": items, "unparsed": unparsed,
                              "encoder": getattr(encoder, "name", None)}
    if parser.grounding_notes:
        report["grounding"] = [g.to_dict() | {"note": g.describe()} for g in parser.grounding_notes.values()]
    return report


def _describe(d: dict[str, Any]) -> str:
    from household.checklist import ChecklistItem

    keep = {k: v for k, v in d.items() if k in ("object", "predicate", "target", "value")}
    line = ChecklistItem.from_dict(keep).describe()
    if d.get("inferred"):
        line += f"   [inferred from routine '{d['routine']}', not stated]"
    return f"{line}   <- \"{d['clause']}\""


def main_parse(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="worldmind parse", description=__doc__.splitlines()[0])
    ap.add_argument("text", help="the instruction (use - to read it from stdin)")
    ap.add_argument("--json", action="store_true", help='print {"items": [...], "unparsed": [...]}')
    ap.add_argument("--no-embed", action="store_true",
                    help="do not ground unknown nouns by embedding even where the 'text' extra is installed")
    ap.add_argument("--routines", action="store_true",
                    help="expand routine words (tidy, set the table, ...) from typical placements, marked inferred")
    try:
        args = ap.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    text = args.text
    if text == "-":
        from planner.instruction_parser import MAX_INSTRUCTION_CHARS

        text = sys.stdin.read(MAX_INSTRUCTION_CHARS + 1)  # bounded: never reads a huge stream whole
    try:
        report = parse_report(text, routines=args.routines, embed=not args.no_embed)
    except ValueError as exc:
        print(f"worldmind parse: instruction: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for d in report["items"]:
            print(_describe(d))
        for u in report["unparsed"]:
            print(f"unparsed: \"{u['text']}\" ({u['reason']})")
        for g in report.get("grounding", []):
            print(f"grounding: {g['note']}")
        if not report["items"]:
            print("no goal: nothing in the instruction names a known object and an end state", file=sys.stderr)
    return 0 if report["items"] else 1
