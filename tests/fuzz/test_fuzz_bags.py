"""Fuzz suite for recorded bags (issue 16): truncations, bit flips and splices of a small MCAP and
a small sqlite3 bag. Reading one through ``BagReader`` either finishes (problems named in its
stats) or raises ``BagReadError`` naming the file, after yielding what came before the damage;
never another exception. A flipped byte inside a recorded MCAP chunk must not read back as a
healthy bag with different images: the chunk CRC makes it an error.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from fuzz_mutations import bit_flips, splices, truncations

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

pytest.importorskip("rosbags")

from sim_bridge.replay.bag import BagReadError, BagReader, BagWriter, FrameItem  # noqa: E402

SEED = 16
FRAMES = 12


@pytest.fixture(scope="module")
def bags(tmp_path_factory) -> dict[str, Path]:
    from evaluation.dev_set import default_episode_file
    from evaluation.episodes import load_episode
    from household.types import Action
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    root = tmp_path_factory.mktemp("fuzzbags")
    env = EmbeddedEnvironment(EmbeddedConfig(width=32, height=24, render=True))
    obs = env.reset(load_episode(default_episode_file()))
    frames = [obs]
    for i in range(FRAMES - 1):
        frames.append(env.step(Action("RotateLeft" if i % 2 else "MoveAhead")).observation)
    out = {}
    for suffix in (".mcap", ".db3"):
        path = root / f"small{suffix}"
        with BagWriter(path) as writer:
            for o in frames:
                writer.write_observation(o)
        out[suffix] = path
    return out


def _read(path: Path) -> tuple[str, list[FrameItem]]:
    reader = BagReader(path)
    items: list[FrameItem] = []
    try:
        for item in reader:
            if isinstance(item, FrameItem):
                items.append(item)
    except BagReadError as exc:
        assert str(path) in str(exc), f"{path.name}: the error does not name the file: {exc}"
        return "error", items
    return "ok", items


def _cases(data: bytes, rng: random.Random) -> list[tuple[str, bytes]]:
    return (list(truncations(data, max(1, len(data) // 10))) + list(bit_flips(data, rng, 20))
            + list(splices(data, rng, 6)))


@pytest.mark.parametrize("suffix", [".mcap", ".db3"])
def test_damaged_bags_read_up_to_the_damage_or_fail_naming_the_file(bags, tmp_path: Path, suffix: str) -> None:
    good = bags[suffix]
    status, clean = _read(good)
    assert status == "ok" and len(clean) == FRAMES
    rng = random.Random(SEED)
    seen = {"ok": 0, "error": 0}
    for k, (name, blob) in enumerate(_cases(good.read_bytes(), rng)):
        path = tmp_path / f"case{k}{suffix}"
        path.write_bytes(blob)
        try:
            status, items = _read(path)
        except FileNotFoundError:  # an empty file may not even open as a bag: the path is named
            status, items = "error", []
        seen[status] += 1
        assert len(items) <= FRAMES, name
        if suffix == ".mcap" and status == "ok" and len(items) == FRAMES:
            # read back whole: then it must read back the same images (no silent damage)
            for a, b in zip(items, clean):
                assert np.array_equal(a.observation.rgb, b.observation.rgb), f"{name}: images differ silently"
                assert np.array_equal(a.observation.depth, b.observation.depth), f"{name}: depth differs silently"
    assert seen["error"] > 0
