"""``worldmind refresh-oracle``: rerun the privileged oracle on episode files and rewrite their
stored ``oracle`` block.

Why: each episode file stores the oracle's figures from generation time (``gc``, ``sr``,
``steps_nav``, ``steps_manip``, ``steps_total``, ``actions``); the agents' step ratios are measured
against them. When the simulator changes (issue 30: L- and C-shaped counters are now their
shape), those figures go stale and every ratio computed from them is off. This reruns the oracle
exactly as the generator verifies an episode (``evaluation.generator.oracle_figures``, the same
budget) and replaces only that block.

    worldmind refresh-oracle EPISODE_FILE_OR_DIR [...] [--check] [--data-dir DIR]

Only the ``oracle`` block changes: ``max_steps`` and every other field stay as they are, and the
file keeps its formatting (the generator's: ``json.dumps(indent=1)`` plus a newline). A file whose
bytes that formatting does not reproduce is refused rather than rewritten differently. An episode
whose oracle run does not reach GC 1 and SR 1 is not written (it would store a reference the
oracle itself cannot reach) and is named; the exit status is then 1. ``--check`` prints old ->
new without writing anything.

Exit status: 0 all written (or all unchanged); 1 an episode refused; 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from household.input_files import check_input_file, unique_keys

PROG = "worldmind refresh-oracle"
FIELDS = ("gc", "sr", "steps_nav", "steps_manip", "steps_total", "actions")
MAX_EPISODE_BYTES = 8 * 1024 * 1024


class RefreshError(ValueError):
    """An episode file this command will not rewrite; the message names the file and why."""


@dataclass
class Refreshed:
    """One episode's oracle block before and after, and what was done with it."""

    path: Path
    episode_id: str
    old: dict[str, Any] | None
    new: dict[str, Any]
    wall_s: float
    written: bool = False
    refused: str | None = None  # why the file was not written, when it was not

    @property
    def changed(self) -> bool:
        return self.old != self.new

    @property
    def solved(self) -> bool:
        return self.new.get("gc") == 1.0 and self.new.get("sr") == 1.0

    def line(self) -> str:
        def steps(block: dict[str, Any] | None) -> str:
            if not block:
                return "none"
            return (f"nav {block.get('steps_nav')} manip {block.get('steps_manip')} total {block.get('steps_total')} "
                    f"actions {block.get('actions')} gc {block.get('gc')} sr {block.get('sr')}")

        status = ("REFUSED: " + self.refused if self.refused else
                  "written" if self.written else "unchanged" if not self.changed else "not written (--check)")
        return f"{self.episode_id}: {steps(self.old)} -> {steps(self.new)} [{status}; {self.wall_s:.1f} s]"


def format_episode(data: dict[str, Any]) -> str:
    """An episode file's text as the generator writes it."""
    return json.dumps(data, indent=1) + "\n"


def read_episode_file(path: Path) -> tuple[dict[str, Any], str]:
    """The file's JSON object (key order kept) and its text; refuses a file whose formatting a
    rewrite would not reproduce byte for byte."""
    check_input_file(path, "an episode file", MAX_EPISODE_BYTES)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text, object_pairs_hook=unique_keys)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RefreshError(f"{path}: cannot be read as an episode file ({exc})") from None
    if not isinstance(data, dict):
        raise RefreshError(f"{path}: expected one episode object, got {type(data).__name__}")
    if format_episode(data) != text:
        raise RefreshError(f"{path}: its formatting is not the generator's (json indent=1); not rewriting it, "
                           "since the rewrite would change more than the oracle block")
    return data, text


def rerun_oracle(path: Path, data_dir: str | None = None) -> dict[str, Any]:
    """The oracle block of ``path``'s episode as the oracle reaches it today (as the generator
    verifies an episode: unrendered embedded simulator, the generator's oracle budget)."""
    from evaluation.episodes import load_episode
    from evaluation.generator import ORACLE_MAX_STEPS, oracle_figures
    from evaluation.runner import run_episode
    from privileged.oracle import OraclePlanner
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    episode = load_episode(path)
    env = EmbeddedEnvironment(EmbeddedConfig(render=False, data_dir=data_dir))
    result, _ = run_episode(env, OraclePlanner(env), episode, max_steps=ORACLE_MAX_STEPS)
    return oracle_figures(result)


def refresh_file(path: Path, *, write: bool = True, data_dir: str | None = None) -> Refreshed:
    """Rerun the oracle on one episode file and (``write``) replace its oracle block when it
    changed and the oracle solved the episode."""
    from household.atomic_io import atomic_write_text

    data, _text = read_episode_file(path)
    started = time.perf_counter()
    new = rerun_oracle(path, data_dir)
    old = data.get("oracle")
    out = Refreshed(path, str(data.get("id", path.stem)), old if isinstance(old, dict) else None, new,
                    time.perf_counter() - started)
    if not out.solved:
        out.refused = (f"episode {out.episode_id} ({path}): the oracle reached GC {new['gc']} SR {new['sr']}, not 1; "
                       "its oracle block was not rewritten")
        return out
    if write and out.changed:
        data["oracle"] = new  # replaced in place: the key keeps its position in the file
        atomic_write_text(path, format_episode(data))
        out.written = True
    return out


def episode_files(sources: Sequence[str]) -> list[Path]:
    """The .json episode files named, folders expanded (sorted); a missing source is an error."""
    files: list[Path] = []
    for src in sources:
        p = Path(src)
        if p.is_dir():
            files += sorted(f for f in p.glob("*.json") if f.is_file())
        elif p.is_file():
            files.append(p)
        else:
            raise RefreshError(f"{p}: no such episode file or folder")
    return files


@dataclass
class Summary:
    """Figures over a refresh: how many changed, mean steps before and after."""

    results: list[Refreshed] = field(default_factory=list)

    def mean(self, key: str, which: str) -> float | None:
        vals = [float(b[key]) for r in self.results if (b := (r.old if which == "old" else r.new)) and key in b]
        return sum(vals) / len(vals) if vals else None

    def lines(self, wall_s: float) -> list[str]:
        changed = [r for r in self.results if r.changed]
        refused = [r for r in self.results if r.refused]
        out = [f"{len(self.results)} episode(s) in {wall_s:.1f} s: {len(changed)} changed, "
               f"{sum(r.written for r in self.results)} written, {len(refused)} refused"]
        for key in ("steps_nav", "steps_manip", "steps_total"):
            old, new = self.mean(key, "old"), self.mean(key, "new")
            out.append(f"  mean {key}: {_f(old)} -> {_f(new)}")
        if changed:
            out.append("  changed steps_total: " + ", ".join(
                f"{r.episode_id} {_f((r.old or {}).get('steps_total'))}->{_f(r.new.get('steps_total'))}"
                for r in changed))
        out += [f"  refused: {r.refused}" for r in refused]
        return out


def _f(v: Any) -> str:
    return "n/a" if v is None else f"{float(v):.1f}"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Rerun the oracle on episode files and rewrite only their "
                                "stored oracle block (refused where the oracle does not reach GC 1 and SR 1).")
    p.add_argument("episodes", nargs="+", metavar="FILE_OR_DIR", help="episode .json files or folders of them")
    p.add_argument("--check", action="store_true", help="print old -> new, write nothing")
    p.add_argument("--data-dir", default=None, help="folder holding the houses files (also: $WORLDMIND_DATA_DIR)")
    return p


def main_refresh_oracle(argv: Sequence[str]) -> int:
    try:
        args = _parser().parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    from evaluation.episodes import EpisodeError
    from household.house_data import HouseError

    summary = Summary()
    started = time.perf_counter()
    try:
        files = episode_files(args.episodes)
        for path in files:
            result = refresh_file(path, write=not args.check, data_dir=args.data_dir)
            summary.results.append(result)
            print(result.line(), flush=True)
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted after {len(summary.results)} episode(s) (each written file is whole)",
              file=sys.stderr)
        return 130
    except (RefreshError, EpisodeError, HouseError, FileNotFoundError) as exc:
        for line in summary.lines(time.perf_counter() - started):
            print(line)
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    for line in summary.lines(time.perf_counter() - started):
        print(line)
    return 1 if any(r.refused for r in summary.results) else 0
