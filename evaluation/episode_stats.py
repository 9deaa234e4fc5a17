"""What a folder of LongAct episodes holds: the figures issue 18 asks of a generated set.

Goals and items per episode, the share of items per predicate (fill split by liquid, clean =
isDirty false), episodes with a count item (count 2 or 3), items that pin which object they mean
(an id, a list of ids or a room on the object or target selector), scenario shares, concise and
detailed instruction lengths in words, oracle verification, and why goals or episodes were
infeasible (from each episode's ``generation`` record and the generator's manifest).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from household.checklist import ChecklistItem, ObjectSelector
from evaluation.episodes import Episode, load_episodes
from evaluation.generator import MANIFEST

CONCISE_LIMIT = 35


def predicate_label(item: ChecklistItem) -> str:
    """The LongAct predicate family an item checks ("fill:wine", "clean", "pick/place", ...)."""
    p = item.predicate
    if p == "inReceptacle":
        return "pick/place"
    if p == "isFilledWithLiquid":
        return f"fill:{item.value}" if isinstance(item.value, str) else "fill"
    if p == "isDirty":
        return "clean" if item.value is False else "dirty"
    return {"isSliced": "slice", "isCooked": "cook", "isToggled": "toggle", "isOpen": "open/close",
            "isHeld": "held", "inRoom": "inRoom"}.get(p, p)


def _pinned(sel: ObjectSelector | None) -> bool:
    return sel is not None and (sel.id is not None or sel.ids is not None or sel.room is not None)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def episode_stats(episodes: list[Episode], manifest_lines: list[str] | None = None) -> dict[str, Any]:
    items = [it for e in episodes for it in e.checklist]
    n_items = len(items) or 1
    preds = Counter(predicate_label(it) for it in items)
    families = Counter(label.split(":")[0] for label in preds.elements())
    goals = [len(e.goals) if e.goals is not None else len(e.checklist) for e in episodes]
    concise = [len(e.instructions["concise"].split()) for e in episodes]
    detailed = [len(e.instructions["detailed"].split()) for e in episodes]
    count_eps = [e for e in episodes if any(it.object.units in (2, 3) for it in e.checklist)]
    pinned = [it for it in items if _pinned(it.object) or _pinned(it.target)]
    dropped: Counter[str] = Counter()
    for e in episodes:
        for d in (e.extra.get("generation") or {}).get("dropped", []):
            dropped[f"{d.get('kind')}: {d.get('reason')}"] += 1
    failed: Counter[str] = Counter()
    for line in manifest_lines or []:
        parts = line.split("\t")
        if len(parts) >= 2 and parts[1] == "infeasible":
            failed[parts[4] if len(parts) > 4 else "(no reason recorded)"] += 1
            for note in parts[5:]:
                dropped[note] += 1
    oracle_ok = sum(1 for e in episodes if e.oracle and e.oracle.get("gc") == 1.0 and e.oracle.get("sr") == 1.0)
    # Episodes whose oracle had to crouch (an object on a low shelf, in a drawer or a box on the floor)
    crouched = [e for e in episodes if (e.extra.get("generation") or {}).get("crouched_for")]
    return {
        "episodes": len(episodes),
        "oracle_verified": oracle_ok,
        "crouch_episode_share": len(crouched) / (len(episodes) or 1),
        "goals_per_episode": {"mean": _mean(goals), "min": min(goals, default=0), "max": max(goals, default=0)},
        "items_per_episode": _mean([len(e.checklist) for e in episodes]),
        "items": len(items),
        "predicate_share": {k: v / n_items for k, v in sorted(preds.items())},
        "family_share": {k: v / n_items for k, v in sorted(families.items())},
        "count_episode_share": len(count_eps) / (len(episodes) or 1),
        "count_items": sum(1 for it in items if it.object.units > 1),
        "reference_item_share": len(pinned) / n_items,
        "scenario_share": {k: v / (len(episodes) or 1) for k, v in sorted(Counter(e.scenario for e in episodes).items())},
        "concise_words": {"mean": _mean(concise), "max": max(concise, default=0),
                          "over_limit": sum(1 for c in concise if c > CONCISE_LIMIT)},
        "detailed_words": {"mean": _mean(detailed), "max": max(detailed, default=0)},
        "episodes_with_start_states": sum(1 for e in episodes if e.object_states),
        "infeasible_episodes": dict(failed.most_common()),
        "dropped_goals": dict(dropped.most_common()),
    }


def folder_stats(folder: str | Path) -> tuple[dict[str, Any], list[str]]:
    """Stats of every episode in a folder (and its generation manifest, if any), plus the load
    errors of records that could not be read."""
    episodes, errors = load_episodes(folder)
    manifest = Path(folder) / MANIFEST
    lines = manifest.read_text(encoding="utf-8").splitlines() if manifest.exists() else []
    return episode_stats(episodes, lines), errors


def format_stats(stats: dict[str, Any]) -> str:
    """The stats as a short Markdown report."""
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    g = stats["goals_per_episode"]
    lines = [
        f"episodes: {stats['episodes']} (oracle GC = SR = 1: {stats['oracle_verified']}; "
        f"the oracle crouched in {pct(stats['crouch_episode_share'])})",
        f"goals per episode: mean {g['mean']:.2f} (min {g['min']}, max {g['max']}); "
        f"checklist items per episode: {stats['items_per_episode']:.2f} ({stats['items']} items)",
        "predicate share of items: " + ", ".join(f"{k} {pct(v)}" for k, v in stats["family_share"].items()),
        "  by liquid / value: " + ", ".join(f"{k} {pct(v)}" for k, v in stats["predicate_share"].items()
                                            if ":" in k),
        f"episodes with a count item (2 or 3): {pct(stats['count_episode_share'])} "
        f"({stats['count_items']} count items)",
        f"items that pin which object (id / ids / room): {pct(stats['reference_item_share'])}",
        "scenarios: " + ", ".join(f"{k} {pct(v)}" for k, v in stats["scenario_share"].items()),
        f"concise instruction: mean {stats['concise_words']['mean']:.1f} words, max {stats['concise_words']['max']}, "
        f"{stats['concise_words']['over_limit']} over {CONCISE_LIMIT}",
        f"detailed instruction: mean {stats['detailed_words']['mean']:.1f} words, max {stats['detailed_words']['max']}",
        f"episodes with start states (dirty objects): {stats['episodes_with_start_states']}",
        "infeasible (house, scenario) pairs: " + (", ".join(f"{v} x {k}" for k, v in stats["infeasible_episodes"].items())
                                                  or "none"),
        "goals dropped by the oracle check: " + (", ".join(f"{v} x {k}" for k, v in stats["dropped_goals"].items())
                                                 or "none"),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="Statistics of a folder of generated LongAct episodes")
    parser.add_argument("folder")
    parser.add_argument("--json", help="also write the stats as JSON to this file")
    args = parser.parse_args(argv)
    if not Path(args.folder).is_dir():
        print(f"error: {args.folder}: not a folder of episodes", file=sys.stderr)
        return 2
    stats, errors = folder_stats(args.folder)
    for e in errors:
        print(f"skipped: {e}", file=sys.stderr)
    print(format_stats(stats))
    if args.json:
        Path(args.json).write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    return 0
