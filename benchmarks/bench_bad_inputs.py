"""Bad-input tally (issue 16): seeded corpora of damaged and hostile inputs per format the project
reads, each fed to its reader; prints, per format, the inputs tried, how many were read as valid,
how many gave the format's own error naming the file (clean), and how many raised anything else
(a traceback a user would see). Not a test: the fuzz suites in tests/fuzz assert the same
behaviour; this prints the counts the README's table quotes.

    .venv/bin/python benchmarks/bench_bad_inputs.py [--seed 16] [--out runs/bench_bad_inputs.json] [--only issue32]

Formats: episode files, houses files (.jsonl.gz), experience pools, spatial-memory .npz, belief
logs, MCAP bags, LLM config files. Mutations (tests/fuzz/fuzz_mutations.py): truncations, bit
flips, splices, JSON leaves replaced by hostile values, deep nesting. The issue-32 rows
(benchmarks/bad_inputs_issue32.py) add valid-looking episodes with impossible values, concurrent
writers and runs, and colliding report folders; ``lost`` counts commands that exited 0 while a
result was overwritten or dropped. Every case's peak memory is measured beside its outcome
(``case_memory``: the process's peak resident set during the case, and a child process's) and
printed one line per case; a case growing over 1 GB counts as a runaway in memory.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "fuzz"), str(ROOT / "benchmarks")]

from case_memory import LIMIT_MB  # noqa: E402
from fuzz_mutations import bit_flips, deep, json_mutations, splices, truncations  # noqa: E402


def _bytes_cases(data: bytes, rng: random.Random, n: int) -> list[tuple[str, bytes]]:
    return (list(truncations(data, max(1, len(data) // n))) + list(bit_flips(data, rng, n))
            + list(splices(data, rng, max(1, n // 3))) + [("deep", deep(100_000).encode())])


def _json_cases(value: Any, rng: random.Random, n: int) -> list[tuple[str, bytes]]:
    return [(name, json.dumps(v, ensure_ascii=True).encode()) for name, v in json_mutations(value, rng, n)]


SLOW_S = 10.0  # a case taking longer is counted as a runaway (issue 32)


class _Recovered(Exception):
    """A file read back with its damage cut or skipped and named (the belief log recovers)."""


class Tally:
    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.cases: list[dict[str, Any]] = []  # one per input: its outcome, seconds and peak memory

    def run(self, fmt: str, cases: list[tuple[str, bytes]], suffix: str, read: Callable[[Path], None],
            errors: tuple[type[BaseException], ...], tmp: Path) -> None:
        for k, (name, blob) in enumerate(cases):
            path = tmp / f"{fmt.replace(' ', '_')}-{k}{suffix}"
            path.write_bytes(blob)
            self.one(fmt, name, path, read, errors)

    def one(self, fmt: str, name: str, path: Path, read: Callable[[Path], None],
            errors: tuple[type[BaseException], ...]) -> None:
        """Count one input (or situation) at ``path``: valid, a clean error naming it, another
        error, a result lost (``bad_inputs_issue32.Lost``) or a traceback."""
        from bad_inputs_issue32 import Lost
        from case_memory import LIMIT_MB, MemoryProbe

        row = self.rows.setdefault(fmt, {"tried": 0, "valid": 0, "clean_error": 0, "error_not_naming_file": 0,
                                         "lost": 0, "traceback": 0, "slow": 0, "over_memory": 0,
                                         "peak_growth_mb": 0.0, "examples": []})
        row["tried"] += 1
        outcome = "traceback"
        probe = MemoryProbe()
        t0 = time.perf_counter()
        try:
            with probe:
                outcome = self._one(row, name, path, read, errors, Lost)
        finally:
            took = time.perf_counter() - t0
            if took > SLOW_S:  # a runaway: whatever the outcome, a user waited this long for it
                row["slow"] += 1
                if len(row["examples"]) < 3:
                    row["examples"].append(f"{name}: took {took:.0f} s")
            mem = probe.result
            if mem is not None:
                row["peak_growth_mb"] = round(max(row["peak_growth_mb"], mem.worst_mb), 1)
                if mem.worst_mb > LIMIT_MB:  # a runaway in memory (issue 32: within 1 GB)
                    row["over_memory"] += 1
                    if len(row["examples"]) < 3:
                        row["examples"].append(f"{name}: {mem.worst_mb:.0f} MB")
            self.cases.append({"format": fmt, "case": name, "outcome": outcome, "s": round(took, 3),
                               **(mem.to_dict() if mem is not None else {})})

    @staticmethod
    def _one(row: dict[str, Any], name: str, path: Path, read: Callable[[Path], None],
             errors: tuple[type[BaseException], ...], Lost: type[Exception]) -> str:  # noqa: N803
        """Count the outcome in ``row`` and return its column name."""
        try:
            read(path)
            row["valid"] += 1
            return "valid"
        except Lost as exc:
            row["lost"] += 1
            if len(row["examples"]) < 3:
                row["examples"].append(f"{name}: lost: {str(exc)[:160]}")
            return "lost"
        except errors as exc:
            key = "clean_error" if path.name in str(exc) else "error_not_naming_file"
            row[key] += 1
            if key != "clean_error" and len(row["examples"]) < 3:
                row["examples"].append(f"{name}: {str(exc)[:160]}")
            return key
        except Exception as exc:  # noqa: BLE001 - this is what is being counted
            row["traceback"] += 1
            if len(row["examples"]) < 3:
                row["examples"].append(f"{name}: {type(exc).__name__}: {str(exc)[:160]}")
            return "traceback"

    def case_lines(self) -> list[str]:
        """One line per case: format, case, outcome, seconds, peak memory (the process's peak
        resident set, its growth during the case, a child process's peak where one set a new
        maximum)."""
        out = []
        for c in self.cases:
            child = f", child {c['children_peak_mb']:.0f} MB" if c.get("children_peak_mb") is not None else ""
            mem = (f"peak {c['peak_mb']:.0f} MB (+{c['growth_mb']:.1f} MB{child}; {c['method']})"
                   if "peak_mb" in c else "peak n/a")
            out.append(f"  {c['format']} | {c['case']} | {c['outcome']} | {c['s']:.2f} s | {mem}")
        return out


def _record_turning_bag(env: Any, path: Path, frames: int) -> Path:
    """A bag of ``frames`` observations of the default episode, turning left in place: the
    well-formed bag the bag cases damage."""
    from evaluation.dev_set import default_episode_file
    from evaluation.episodes import load_episode
    from household.types import Action
    from sim_bridge.replay.bag import BagWriter

    with BagWriter(path) as writer:
        obs = env.reset(load_episode(default_episode_file()))
        for _i in range(frames):
            writer.write_observation(obs)
            obs = env.step(Action("RotateLeft")).observation
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--n", type=int, default=30, help="mutations of each kind per format")
    ap.add_argument("--out", default="runs/bench_bad_inputs.json")
    ap.add_argument("--only", choices=("issue32",), default=None, help="only the issue-32 rows")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    tally = Tally()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wm-bad-") as tmpdir:
        tmp = Path(tmpdir)
        if args.only == "issue32":
            _issue32(tally, tmp)
        else:
            _all_formats(tally, tmp, rng, args.n)
            _issue32(tally, tmp)
    elapsed = time.perf_counter() - t0
    print(f"Bad-input tally, seed {args.seed}, {elapsed:.1f} s")
    print("| format | inputs tried | read as valid | clean error (or recovery) naming the file | error not naming it | "
          f"result lost, exit 0 | traceback | over {SLOW_S:g} s | over {LIMIT_MB / 1024:g} GB | largest peak growth |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for fmt, r in tally.rows.items():
        print(f"| {fmt} | {r['tried']} | {r['valid']} | {r['clean_error']} | {r['error_not_naming_file']} | "
              f"{r['lost']} | {r['traceback']} | {r['slow']} | {r['over_memory']} | {r['peak_growth_mb']:.1f} MB |")
    for fmt, r in tally.rows.items():
        for ex in r["examples"]:
            print(f"  {fmt}: {ex}")
    print("Per case (format | case | outcome | seconds | memory):")
    for line in tally.case_lines():
        print(line)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"seed": args.seed, "rows": tally.rows, "cases": tally.cases}, indent=1) + "\n")
    return 0


def _issue32(tally: Tally, tmp: Path) -> None:
    """The issue-32 rows (benchmarks/bad_inputs_issue32.py)."""
    import bad_inputs_issue32 as b32
    from evaluation.episodes import EpisodeError, load_episode, validate_episode
    from household.errors import InputError
    from household.house_data import HouseError, load_asset_database, load_house, resolve_data_file
    from memory.belief.log import LogFormatError

    assets = load_asset_database()
    work = tmp / "issue32"
    work.mkdir()

    def read_episode(p: Path) -> None:
        ep = load_episode(p)
        try:
            validate_episode(ep, ep.resolve_house(None), assets)
        except (EpisodeError, HouseError) as exc:
            raise EpisodeError(f"{p.name}: {exc}") from None

    tally.run("episode semantics (#32)", b32.semantic_cases(load_house("houses_dev.jsonl.gz", 0)), ".json",
              read_episode, (EpisodeError, HouseError), work)
    with gzip.open(resolve_data_file("houses_dev.jsonl.gz"), "rt") as fh:
        first_house = fh.readline()
    for k, (name, suffix, blob, fn, errors) in enumerate(b32.duplicate_key_cases(first_house)):
        path = work / f"dup-{k}{suffix}"
        path.write_bytes(blob)
        tally.one("duplicate keys, other JSON inputs (#32)", name, path, fn, errors)
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    env = EmbeddedEnvironment(EmbeddedConfig(width=64, height=48))
    bag = _record_turning_bag(env, work / "small.mcap", 4)
    refusals = (b32.Refused, InputError, LogFormatError, OSError)
    for name, path, fn in b32.situation_cases(work, bag):
        tally.one("concurrent writers and identity (#32)", name, path, fn, refusals)
    for name, path, fn in b32.lost_cases(work):
        tally.one("no lost results (#32)", name, path, fn, refusals)
    folder = _record_turning_bag(env, work / "robot_bag", 4)
    import bad_inputs_robot_bags

    for name, path, fn in bad_inputs_robot_bags.robot_bag_cases(work, folder, bag):
        tally.one("robot bags cut off or misstated (#32)", name, path, fn, refusals)


def _all_formats(tally: Tally, tmp: Path, rng: random.Random, n_mut: int) -> None:
    """The format rows of issue 16."""
    # episodes
    from evaluation.dev_set import default_episode_file
    from evaluation.episodes import EpisodeError, load_episode, validate_episode
    from household.house_data import (HouseError, iter_house_lines, load_asset_database, parse_house_line,
                                      resolve_data_file)

    assets = load_asset_database()
    ep_bytes = Path(default_episode_file()).read_bytes()

    def read_episode(p: Path) -> None:
        ep = load_episode(p)
        try:
            validate_episode(ep, ep.resolve_house(None), assets)
        except (EpisodeError, HouseError) as exc:  # validation names the episode, not the file
            raise EpisodeError(f"{p.name}: {exc}") from None

    tally.run("episode file", _bytes_cases(ep_bytes, rng, n_mut) + _json_cases(json.loads(ep_bytes), rng, 3 * n_mut),
              ".json", read_episode, (EpisodeError, HouseError), tmp)
    # houses
    with gzip.open(resolve_data_file("houses_dev.jsonl.gz"), "rb") as fh:
        lines = [fh.readline() for _ in range(2)]

    def read_houses(p: Path) -> None:
        bad = []
        for lineno, line in iter_house_lines(p):
            try:
                parse_house_line(p, lineno, line)
            except HouseError as exc:
                bad.append(str(exc))
        if bad:
            raise HouseError(bad[0])

    raw = b"".join(lines)
    tally.run("houses file (.jsonl.gz)", _bytes_cases(gzip.compress(raw), rng, n_mut), ".jsonl.gz",
              read_houses, (HouseError,), tmp)
    tally.run("houses file (.jsonl)", _bytes_cases(raw, rng, n_mut), ".jsonl", read_houses, (HouseError,), tmp)
    # experience pool
    from planner.critic import ExperiencePool

    pool = {"entries": [{"action": "OpenObject", "situation": "closed", "object_type": "Fridge", "fix": "open",
                         "seen": 2, "validated": 1}]}
    pool_bytes = json.dumps(pool).encode()
    tally.run("experience pool", _bytes_cases(pool_bytes, rng, n_mut) + _json_cases(pool, rng, 2 * n_mut),
              ".json", ExperiencePool.load, (ValueError,), tmp)
    # spatial memory .npz
    from memory.pipeline import MemoryPipeline
    from memory.spatial import MemoryFileError
    from memory.spatial.store import load_memory, save_memory
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    env = EmbeddedEnvironment(EmbeddedConfig(width=64, height=48))
    from evaluation.episodes import load_episode as _le

    pipeline = MemoryPipeline.build()
    pipeline.process(env.reset(_le(default_episode_file())))
    npz = save_memory(pipeline.memory, tmp / "good.npz").read_bytes()
    tally.run("spatial memory .npz", _bytes_cases(npz, rng, n_mut), ".npz", load_memory, (MemoryFileError,), tmp)
    # belief log
    from memory.belief import BeliefTracker
    from memory.belief.log import LogFormatError

    good_log = tmp / "good-log.jsonl"
    tr = BeliefTracker(good_log)
    tr.ingest([{"id": f"e{i}", "t": float(i), "actor": "robot", "kind": "observation", "action": "inspect",
                "observers": [], "effects": [[f"obj_{i % 3}", "location", f"rec_{i}"]], "text": f"event {i}"}
               for i in range(12)])
    tr.close()

    def read_log(p: Path) -> None:
        """A log is recovered, not refused: damage is cut or skipped and named in ``problems``
        (counted here as a clean error naming the file); nothing acknowledged before it is lost."""
        tracker = BeliefTracker.open(p)
        problems = list(tracker.log.problems)
        tracker.close()
        if problems:
            raise _Recovered(problems[0])

    tally.run("belief log", _bytes_cases(good_log.read_bytes(), rng, n_mut), ".jsonl", read_log,
              (LogFormatError, _Recovered), tmp)
    # bags
    from sim_bridge.replay.bag import BagReadError, BagReader

    bag = _record_turning_bag(env, tmp / "good.mcap", 8)

    def read_bag(p: Path) -> None:
        for _ in BagReader(p):
            pass

    tally.run("bag (.mcap)", _bytes_cases(bag.read_bytes(), rng, n_mut), ".mcap", read_bag,
              (BagReadError, FileNotFoundError), tmp)
    # LLM config
    from planner.llm import LLMConfigError, load_llm_config

    cfg = {"api_base": "http://127.0.0.1:8080/v1", "api_key_env": "MY_KEY", "temperature": 0.0,
           "max_tokens": 512, "timeout": 30.0, "max_repairs": 1}
    tally.run("LLM config", _bytes_cases(json.dumps(cfg).encode(), rng, n_mut) + _json_cases(cfg, rng, 2 * n_mut),
              ".json", lambda p: load_llm_config("openai/worldmind-mock", p, environ={}), (LLMConfigError,), tmp)


if __name__ == "__main__":
    sys.exit(main())
