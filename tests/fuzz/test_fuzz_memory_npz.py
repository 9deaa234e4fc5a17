"""Fuzzing the spatial-memory file (issue 16, item 5): every damaged or hostile .npz either loads
into a consistent memory or raises MemoryFileError naming the file; never another exception, never
a large allocation, and a memory already in use is never touched. Seeded and bounded."""
from __future__ import annotations

import io
import json
import random
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_spatial_memory import ROOM, explore  # noqa: E402

from memory.spatial import MemoryFileError, SpatialMemory, load_memory, save_memory  # noqa: E402
from memory.spatial import store  # noqa: E402

SEED = 20261124


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, bytes, dict]:
    mem = SpatialMemory()
    explore(mem, ROOM)
    path = save_memory(mem, tmp_path_factory.mktemp("mem") / "good.npz")
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    return path, path.read_bytes(), arrays


def _write(tmp_path: Path, arrays: dict, name: str = "bad.npz") -> Path:
    path = tmp_path / name
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return path


def _expect_clean(path: Path) -> str:
    """'loaded' or 'error'; anything else fails the test."""
    try:
        mem = load_memory(path)
    except MemoryFileError as exc:
        assert str(path) in str(exc)
        return "error"
    len(mem)
    mem.query_text("mug", k=3)  # a loaded memory must be usable
    return "loaded"


def test_truncations_and_bit_flips(saved, tmp_path):
    _, blob, _ = saved
    rng = random.Random(SEED)
    outcomes = []
    cuts = sorted({int(len(blob) * f) for f in (0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)})
    for i, cut in enumerate(cuts):
        p = tmp_path / f"cut{i}.npz"
        p.write_bytes(blob[:cut])
        outcomes.append(_expect_clean(p))
    for i in range(40):
        b = bytearray(blob)
        for _ in range(rng.randint(1, 8)):
            pos = rng.randrange(len(b))
            b[pos] ^= 1 << rng.randrange(8)
        p = tmp_path / f"flip{i}.npz"
        p.write_bytes(bytes(b))
        outcomes.append(_expect_clean(p))
    assert outcomes.count("error") >= len(cuts) - 1  # a cut file is never taken for a memory


@pytest.mark.parametrize("mutate,field", [
    (lambda a: a.update({"table/label_id": -np.ones_like(a["table/label_id"])}), "table/label_id"),
    (lambda a: a["table/aabb_min"].__setitem__((0, 0), np.nan), "table/aabb_min"),
    (lambda a: a["table/aabb_min"].__setitem__((0, 0), 99.0), "table/aabb_min"),
    (lambda a: a.update({"table/status": np.full_like(a["table/status"], 7)}), "table/status"),
    (lambda a: a["index/text"].__setitem__((0, 0), np.inf), "index/text"),
    (lambda a: a.update({"table/area": a["table/area"].astype(np.float32)}), "table/area"),
    (lambda a: a.pop("voxels/hits"), "voxels/hits"),
    (lambda a: a.update({"extra": np.zeros(3)}), "extra"),
    (lambda a: a.update({"header": np.frombuffer(b"[1, 2]", np.uint8)}), "header"),
    (lambda a: a.update({"header": np.frombuffer(b"\xff\xfe", np.uint8)}), "header"),
])
def test_field_damage_is_named(saved, tmp_path, mutate, field):
    _, _, arrays = saved
    arrays = {k: v.copy() for k, v in arrays.items()}
    mutate(arrays)
    with pytest.raises(MemoryFileError, match=field.replace("/", ".")):
        load_memory(_write(tmp_path, arrays))


@pytest.mark.parametrize("key,value", [("voxel_size", 0), ("voxel_size", -0.05), ("voxel_size", "x"),
                                       ("max_hits", 0), ("association", None)])
def test_header_config_values_are_checked(saved, tmp_path, key, value):
    _, _, arrays = saved
    header = json.loads(arrays["header"].tobytes())
    header["config"][key] = value
    arrays = dict(arrays, header=np.frombuffer(json.dumps(header).encode(), np.uint8))
    with pytest.raises(MemoryFileError, match="header.config"):
        load_memory(_write(tmp_path, arrays))


def test_an_oversized_member_is_refused_before_it_is_read(saved, tmp_path, monkeypatch):
    _, _, arrays = saved
    monkeypatch.setattr(store, "MAX_MEMBER_BYTES", 4096)
    big = dict(arrays, **{"table/area": np.zeros(10_000)})  # 80 KB: over the (lowered) limit
    reads: list[str] = []
    real_load = np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: reads.append("np.load") or real_load(*a, **k))
    with pytest.raises(MemoryFileError, match="over the limit"):
        load_memory(_write(tmp_path, big))
    assert reads == []  # refused from the zip directory, nothing decompressed


def test_a_pickled_member_never_runs(saved, tmp_path):
    _, _, arrays = saved
    path = _write(tmp_path, arrays)
    buf = io.BytesIO()
    np.save(buf, np.array([{"boom": 1}], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("distinct.npy", buf.getvalue())  # shadows the real member with an object array
    assert _expect_clean(path) == "error"


def test_a_failed_load_leaves_the_memory_in_use_alone(saved, tmp_path):
    path, blob, _ = saved
    mem = load_memory(path)
    before = len(mem)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(MemoryFileError):
        load_memory(bad)
    assert len(mem) == before
