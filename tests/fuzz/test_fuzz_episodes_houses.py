"""Fuzz suite for the remaining formats the project reads (issue 16): episode files, houses files
and experience pools. Seeded and bounded. Every mutated input gives either a valid result or the
format's own error naming the file, never another exception:

- episodes: ``load_episode`` then ``validate_episode`` -> an Episode, or ``EpisodeError`` whose
  text names the file (or, for validation, the episode);
- houses files: ``iter_house_lines`` / ``load_house`` -> houses, or ``HouseError`` naming file:line;
- experience pools: ``ExperiencePool.load`` -> a pool, or ``ValueError`` naming the file.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import sys
from pathlib import Path

import pytest
from fuzz_mutations import HOSTILE_VALUES, bit_flips, deep, json_mutations, splices, truncations

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.dev_set import default_episode_file  # noqa: E402
from evaluation.episodes import EpisodeError, load_episode, validate_episode  # noqa: E402
from household.house_data import (HouseError, iter_house_lines, load_asset_database, parse_house_line,  # noqa: E402
                                  resolve_data_file)
from planner.critic import ExperiencePool  # noqa: E402

SEED = 16


@pytest.fixture(scope="module")
def assets() -> dict:
    return load_asset_database()


@pytest.fixture(scope="module")
def episode_text() -> str:
    return Path(default_episode_file()).read_text(encoding="utf-8")


def _episode_outcome(path: Path, assets: dict) -> str:
    """'ok' or 'error'; anything else raises and fails the test with the input named."""
    try:
        ep = load_episode(path)
    except EpisodeError as exc:
        assert str(path) in str(exc), f"{path.name}: the error does not name the file: {exc}"
        return "error"
    try:
        house = ep.resolve_house(None)
        validate_episode(ep, house, assets)
    except (EpisodeError, HouseError) as exc:
        assert ep.id in str(exc) or str(path) in str(exc) or "house" in str(exc).lower(), str(exc)[:200]
        return "error"
    assert all(math.isfinite(float(v)) for v in (ep.max_steps,)), "a non-finite budget was accepted"
    return "ok"


def test_episode_bytes_damage(tmp_path: Path, assets: dict, episode_text: str) -> None:
    data = episode_text.encode("utf-8")
    rng = random.Random(SEED)
    cases = list(truncations(data, max(1, len(data) // 25))) + list(bit_flips(data, rng, 25)) + list(splices(data, rng, 10))
    seen = {"ok": 0, "error": 0}
    for name, blob in cases:
        path = tmp_path / f"{name.replace('@', '_')}.json"
        path.write_bytes(blob)
        seen[_episode_outcome(path, assets)] += 1
    assert seen["error"] > 0  # the corpus does reach the error paths


def test_episode_field_mutations(tmp_path: Path, assets: dict, episode_text: str) -> None:
    base = json.loads(episode_text)
    rng = random.Random(SEED)
    seen = {"ok": 0, "error": 0}
    for k, (_name, mutated) in enumerate(json_mutations(base, rng, 80)):
        path = tmp_path / f"m{k}.json"
        try:
            path.write_text(json.dumps(mutated), encoding="utf-8")
        except (ValueError, UnicodeEncodeError):  # NaN is written as NaN by json; surrogates cannot be
            path.write_bytes(json.dumps(mutated, ensure_ascii=True).encode("ascii", "surrogateescape"))
        seen[_episode_outcome(path, assets)] += 1
    for k, value in enumerate(HOSTILE_VALUES):
        for field in ("max_steps", "checklist", "house", "instructions", "agent_start", "id"):
            mutated = dict(base, **{field: value})
            path = tmp_path / f"h{k}_{field}.json"
            path.write_text(json.dumps(mutated, ensure_ascii=True), encoding="utf-8")
            seen[_episode_outcome(path, assets)] += 1
    deep_path = tmp_path / "deep.json"
    deep_path.write_text(deep(100_000), encoding="utf-8")
    assert _episode_outcome(deep_path, assets) == "error"
    assert seen["error"] > 0


@pytest.fixture(scope="module")
def house_lines() -> list[bytes]:
    path = resolve_data_file("houses_dev.jsonl.gz")
    with gzip.open(path, "rb") as fh:
        return [fh.readline() for _ in range(2)]


def _houses_outcome(path: Path) -> str:
    """Read every line and parse each, as `run`, `generate` and the audit do: a bad line is a
    HouseError naming file:line (the other lines still parse); a bad stream ends the read with one."""
    errors = 0
    try:
        for lineno, line in iter_house_lines(path):
            try:
                house = parse_house_line(path, lineno, line)
            except HouseError as exc:
                assert f"{path}:{lineno + 1}" in str(exc) or path.name in str(exc), str(exc)[:200]
                errors += 1
                continue
            assert isinstance(house, dict)
    except HouseError as exc:
        assert path.name in str(exc), f"{path.name}: the error does not name the file: {exc}"
        return "error"
    return "error" if errors else "ok"


def test_houses_file_damage(tmp_path: Path, house_lines: list[bytes]) -> None:
    raw = b"".join(house_lines)
    packed = gzip.compress(raw)
    rng = random.Random(SEED)
    cases = [(f"gz-{n}", b) for n, b in truncations(packed, max(1, len(packed) // 12))]
    cases += [(f"gz-{n}", b) for n, b in bit_flips(packed, rng, 12)]
    cases += [(f"plain-{n}", b) for n, b in splices(raw, rng, 8)]
    cases += [(f"plain-{n}", b) for n, b in bit_flips(raw, rng, 8)]
    cases += [("deep", deep(100_000).encode()), ("not-json", b"hello\n"), ("nul", b"\x00" * 4096)]
    seen = {"ok": 0, "error": 0}
    for name, blob in cases:
        suffix = ".jsonl.gz" if name.startswith("gz-") else ".jsonl"
        path = tmp_path / f"{name.replace('@', '_')}{suffix}"
        path.write_bytes(blob)
        seen[_houses_outcome(path)] += 1
    assert seen["error"] + seen["ok"] == len(cases)


def test_experience_pool_mutations(tmp_path: Path) -> None:
    good = {"entries": [{"action": "OpenObject", "situation": "closed", "object_type": "Fridge",
                         "fix": "open", "seen": 2, "validated": 1}]}
    src = tmp_path / "good.json"
    src.write_text(json.dumps(good), encoding="utf-8")
    try:
        ExperiencePool.load(src)
    except ValueError:
        pytest.skip("the sample entry does not match the pool's current fields")
    rng = random.Random(SEED)
    cases: list[tuple[str, bytes]] = [(n, json.dumps(v, ensure_ascii=True).encode()) for n, v in
                                      json_mutations(good, rng, 60)]
    data = src.read_bytes()
    cases += list(truncations(data, 7)) + list(bit_flips(data, rng, 20))
    cases += [("deep", deep(100_000).encode())]
    for k, (name, blob) in enumerate(cases):
        path = tmp_path / f"pool{k}.json"
        path.write_bytes(blob)
        try:
            pool = ExperiencePool.load(path)
        except ValueError as exc:
            assert str(path) in str(exc), f"{name}: the error does not name the file: {exc}"
            continue
        for exp in pool.entries.values():  # accepted: every field has its type and range
            assert isinstance(exp.seen, int) and exp.seen >= 0 and isinstance(exp.validated, int) and exp.validated >= 0
