"""Issue 32 rows of ``bench_bad_inputs.py``: inputs and situations that used to end in exit 0 with a
result that was not the run's own. Written against the public behaviour only (the CLI, the
loaders, BeliefTracker, ExperiencePool), so the same file runs on a tree from before the fixes
and gives the "before" counts.

Rows:
- ``episode semantics (#32)``: a NaN / infinite / 1e306 object position, a room 1e306 m across,
  an instruction over the parser's limit, duplicate keys (top level and nested), a house of 1,000
  rooms, 10,000 objects or a room 1 km across (household/house_limits.py). Before: read as
  valid (and scored GC 0). After: a clean error naming the file and field.
- ``concurrent writers and identity (#32)``: a second belief-log writer, a second ``eval
  longact`` or ``replay`` into an ``--out`` in use, ``--out`` equal to the episodes folder, an
  input named summary.json inside ``--out``, a rerun with an edited episode. Before: accepted
  ("read as valid"). After: refused naming the file or folder ("clean error").
- ``no lost results (#32)``: ids ``x/y`` and ``x_y`` in one run (two reports wanted), two
  processes saving one experience pool (every entry wanted), a ``record`` stopped by Ctrl-C or
  SIGTERM mid-run (no bag under the final name that replays as whole, no temporary folder left).
  Before: ``lost``. After: valid.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

EPISODE: dict[str, Any] = {
    "id": "b32", "house": {"file": "houses_dev.jsonl.gz", "index": 0}, "scenario": "test",
    "instructions": {"detailed": "Turn on the floor lamp.", "concise": "Lamp on."},
    "checklist": [{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}], "max_steps": 300}

_HOLDER = r"""
import sys, time
try:  # after issue 32: a run holds its --out; before: nothing to hold, the sleep stands for a run
    from worldmind.run_folder import lock_run_folder
    lock = lock_run_folder(sys.argv[1], "eval longact")
except ImportError:
    pass
print("ready", flush=True)
time.sleep(120)
"""

_POOL_WRITER = r"""
import sys
from planner.critic import ExperiencePool
pool = ExperiencePool.load(sys.argv[1])
for i in range(30):
    pool.record("OpenObject", "closed", f"{sys.argv[2]}{i}", "open")
    pool.save()
"""


class Lost(Exception):
    """A result that should exist is gone (overwritten or dropped) while the command exited 0."""


class Refused(Exception):
    """The CLI refused with exit status 2; the message is what it printed."""


def _cli(argv: list[str]) -> None:
    from worldmind import cli

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = cli.main(argv)
    if rc != 0:
        raise Refused(f"exit {rc}: {err.getvalue().strip()[:300]}")


def semantic_cases(house: dict[str, Any]) -> list[tuple[str, bytes]]:
    """Episode files that are well-formed JSON of the right shape, with a value no house has."""
    out = []
    for name, value in (("nan position", math.nan), ("inf position", math.inf), ("1e306 position", 1e306)):
        bad = copy.deepcopy(house)
        bad["objects"][1]["position"]["x"] = value
        out.append((name, json.dumps(dict(EPISODE, house=bad)).encode()))
    bad = copy.deepcopy(house)
    bad["rooms"][0]["floorPolygon"][1]["z"] = 1e306
    out.append(("room 1e306 m", json.dumps(dict(EPISODE, house=bad)).encode()))
    long = "Turn on the lamp. " * 600
    out.append(("instruction over the parser limit",
                json.dumps(dict(EPISODE, instructions={"detailed": long, "concise": "Lamp on."})).encode()))
    big = copy.deepcopy(house)
    big["rooms"] += [dict(big["rooms"][0], id=f"r{i}") for i in range(1000)]
    out.append(("1,000 rooms", json.dumps(dict(EPISODE, house=big)).encode()))
    big = copy.deepcopy(house)
    obj = {k: v for k, v in big["objects"][1].items() if k != "children"}
    big["objects"] += [dict(obj, id=f"o{i}") for i in range(10_000)]
    out.append(("10,000 objects", json.dumps(dict(EPISODE, house=big)).encode()))
    big = copy.deepcopy(house)
    big["rooms"][0]["floorPolygon"] = [{"x": x, "y": 0, "z": z} for x, z in ((-400, -400), (600, -400), (600, 600),
                                                                             (-400, 600))]
    out.append(("a room 1 km across", json.dumps(dict(EPISODE, house=big)).encode()))
    text = json.dumps(EPISODE)
    out.append(("duplicate top-level key", (text[:-1] + ', "max_steps": 5}').encode()))
    out.append(("duplicate nested key", text.replace('"predicate": "isToggled"',
                                                     '"predicate": "isToggled", "predicate": "isOpen"').encode()))
    return out


def duplicate_key_cases(house_line: str) -> list[tuple[str, str, bytes, Callable[[Path], None], tuple]]:
    """(name, suffix, bytes, reader, its clean errors): JSON inputs other than episode files with a
    key given twice. Before: read as valid (last one wins). After: an error naming file and key."""
    from household.house_data import HouseError, iter_house_lines, parse_house_line
    from planner.critic import ExperiencePool
    from planner.llm import LLMConfigError, load_llm_config

    def read_houses(p: Path) -> None:
        for lineno, line in iter_house_lines(p):
            parse_house_line(p, lineno, line)

    pool = ('{"entries": [{"action": "OpenObject", "situation": "closed", "object_type": "Fridge", "fix": "open", '
            '"seen": 2, "seen": 9, "validated": 1}]}')
    cfg = '{"api_base": "http://127.0.0.1:8080/v1", "temperature": 0.0, "max_tokens": 512, "temperature": 1.5}'
    llm = (lambda p: load_llm_config("openai/worldmind-mock", p, environ={}), (LLMConfigError,))
    return [("houses line, key twice", ".jsonl", (house_line.rstrip("\n")[:-1] + ', "rooms": []}\n').encode(),
             read_houses, (HouseError,)),
            ("experience pool, key twice", ".json", pool.encode(), ExperiencePool.load, (ValueError,)),
            ("LLM config JSON, key twice", ".json", cfg.encode(), *llm),
            ("LLM config YAML, key twice", ".yaml",
             b"api_base: http://127.0.0.1:8080/v1\ntemperature: 0.0\ntemperature: 1.5\n", *llm)]


def _hold(out: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(out)], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env=_ENV, start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def _eps(folder: Path, *episodes: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for k, ep in enumerate(episodes):
        (folder / f"e{k}.json").write_text(json.dumps(ep))
    return folder


def situation_cases(tmp: Path, bag: Path) -> list[tuple[str, Path, Callable[[Path], None]]]:
    """(name, the file or folder an error must name, the scenario) for the concurrency and
    identity rows; the scenario raises Refused/LogFormatError/... when refused, Lost when a
    result is gone, and returns when the command went through."""
    from memory.belief import BeliefTracker

    def second_log_writer(p: Path) -> None:
        first = BeliefTracker(p)
        try:
            BeliefTracker(p).close()
        finally:
            first.close()

    def second_run(p: Path) -> None:
        src = _eps(tmp / "sr-eps", EPISODE)
        holder = _hold(p)
        try:
            _cli(["eval", "longact", "--episodes", str(src), "--out", str(p), "--no-render"])
        finally:
            _stop(holder)

    def second_replay(p: Path) -> None:
        holder = _hold(p)
        try:
            _cli(["replay", str(bag), "--out", str(p)])
        finally:
            _stop(holder)

    def out_is_episodes(p: Path) -> None:
        _eps(p, EPISODE)
        _cli(["eval", "longact", "--episodes", str(p), "--out", str(p), "--no-render"])

    def summary_input(p: Path) -> None:
        p.mkdir(parents=True)
        (p / "summary.json").write_text(json.dumps(EPISODE))
        _cli(["eval", "longact", "--episodes", str(p / "summary.json"), "--out", str(p), "--no-render"])

    def edited_rerun(p: Path) -> None:
        src = _eps(tmp / "er-eps", EPISODE)
        _cli(["eval", "longact", "--episodes", str(src), "--out", str(p), "--no-render"])
        _eps(src, dict(EPISODE, checklist=[{"object": {"type": "FloorLamp", "count": 2}, "predicate": "isToggled"}]))
        _cli(["eval", "longact", "--episodes", str(src), "--out", str(p), "--no-render"])

    def non_utf8_manifest(p: Path) -> None:
        out = tmp / "gen-out"
        out.mkdir()
        p.write_bytes(b"dev\tparams\tseed=0\xff\xfe\n")
        _cli(["generate", "--houses", "houses_dev.jsonl.gz", "--indices", "0", "--out", str(out)])

    def out_is_a_file(p: Path) -> None:
        p.write_text("not a folder")
        _cli(["memory-eval", "--index", "0", "--out", str(p)])

    return [("non-UTF-8 generation manifest", tmp / "gen-out" / "generation-manifest.tsv", non_utf8_manifest),
            ("memory-eval --out naming a file", tmp / "out-file", out_is_a_file),
            ("second belief-log writer", tmp / "log.jsonl", second_log_writer),
            ("second eval longact into a busy --out", tmp / "busy-out", second_run),
            ("second replay into a busy --out", tmp / "busy-replay", second_replay),
            ("--out equal to --episodes", tmp / "same-folder", out_is_episodes),
            ("input summary.json inside --out", tmp / "summary-in-out", summary_input),
            ("rerun with an edited episode", tmp / "edited-out", edited_rerun)]


def lost_cases(tmp: Path) -> list[tuple[str, Path, Callable[[Path], None]]]:
    """Scenarios that pass when every result is there and raise Lost otherwise."""

    def colliding_ids(p: Path) -> None:
        src = _eps(tmp / "ids-eps", dict(EPISODE, id="x/y"), dict(EPISODE, id="x_y"))
        _cli(["eval", "longact", "--episodes", str(src), "--out", str(p), "--no-render"])
        ids = {json.loads(r.read_text())["episode_id"] for r in p.glob("*/report.json")}
        if ids != {"x/y", "x_y"}:
            raise Lost(f"{p}: reports for {sorted(ids)} only, not x/y and x_y")

    def pool_writers(p: Path) -> None:
        procs = [subprocess.Popen([sys.executable, "-c", _POOL_WRITER, str(p), tag], cwd=ROOT, env=_ENV,
                                  start_new_session=True) for tag in ("A", "B")]
        try:
            for proc in procs:
                proc.wait(timeout=120)
        finally:
            for proc in procs:
                _stop(proc)
        keys = set(json.loads(p.read_text())["entries"][i]["object_type"] for i in range(len(
            json.loads(p.read_text())["entries"])))
        missing = {f"{t}{i}" for t in "AB" for i in range(30)} - keys
        if missing:
            raise Lost(f"{p}: {len(missing)} of 60 entries lost")

    def interrupted_record(sig: int) -> Callable[[Path], None]:
        def scenario(p: Path) -> None:
            p.mkdir()
            bag = p / "run.mcap"
            proc = subprocess.Popen([sys.executable, "-m", "worldmind.cli", "record", "--out", str(bag),
                                     "--max-steps", "400", "--width", "64", "--height", "48"], cwd=p, env=_ENV,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                end = time.monotonic() + 60
                while not any(q.name.startswith(".run.") for q in p.iterdir()) and time.monotonic() < end:
                    time.sleep(0.05)
                time.sleep(1.5)
                os.killpg(proc.pid, sig)
                proc.wait(timeout=60)
            finally:
                _stop(proc)
            left = sorted(q.name for q in p.iterdir() if q.name.startswith("."))
            if bag.exists():
                err = io.StringIO()
                from worldmind import cli

                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    rc = cli.main(["replay", str(bag), "--out", str(p / "rep")])
                if rc == 0 and "partial" not in err.getvalue():
                    raise Lost(f"{bag}: the interrupted recording is under the final name and replays with exit 0 "
                               "as a whole run")
            if left:
                raise Lost(f"{p}: temporary folder(s) {left} left behind by the interrupted recording")
        return scenario

    def control_characters(p: Path) -> None:
        ctl = dict(EPISODE, id="ctl\x1b[2J\u202e",
                   instructions={"detailed": "Turn on the floor lamp.\x1b]0;title\x07", "concise": "Lamp on."})
        src = _eps(tmp / "ctl-eps", ctl)
        _cli(["eval", "longact", "--episodes", str(src), "--out", str(p), "--no-render"])
        for md in [*p.glob("*/report.md"), p / "summary.md"]:
            if any(c in md.read_text() for c in "\x1b\x07\u202e"):
                raise Lost(f"{md}: raw terminal control characters from the episode")

    def linked_pool(p: Path) -> None:
        from planner.critic import ExperiencePool

        shared = tmp / "shared-pool.json"
        first = ExperiencePool.load(shared)
        first.record("OpenObject", "closed", "Fridge", "open")
        first.save()
        p.symlink_to(shared)
        pool = ExperiencePool.load(p)
        pool.record("OpenObject", "closed", "Cabinet", "open")
        pool.save()
        types = {e.object_type for e in ExperiencePool.load(shared).entries.values()}
        if not p.is_symlink() or types != {"Fridge", "Cabinet"}:
            raise Lost(f"{p}: the link to {shared} was replaced by a private copy; the shared pool holds "
                       f"{sorted(types)} only")

    return [("report ids x/y and x_y", tmp / "ids-out", colliding_ids),
            ("experience pool saved through a symbolic link", tmp / "linked-pool.json", linked_pool),
            ("control characters into report.md", tmp / "ctl-out", control_characters),
            ("two processes saving one experience pool", tmp / "pool.json", pool_writers),
            ("record interrupted by Ctrl-C", tmp / "rec-int", interrupted_record(signal.SIGINT)),
            ("record stopped by SIGTERM", tmp / "rec-term", interrupted_record(signal.SIGTERM))]
