"""Fuzz: damaged and hostile spatial-memory ``.npz`` files. Every case ends in a memory that
works (counts, objects, queries, save and reload) or in ``MemoryFileError``; never another
exception, never a hang, never pickle, and a memory already in RAM is never touched."""

from __future__ import annotations

import io
import json
import random
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fuzz_mutations import HOSTILE_VALUES, bit_flips, json_mutations, splices, truncations

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the synthetic scene helpers
from test_spatial_memory import ROOM, SPOTS, explore, snapshot  # noqa: E402

from memory.spatial import MemoryFileError, SpatialMemory  # noqa: E402
from memory.spatial.memory import MemoryConfig  # noqa: E402
from memory.spatial.store import load_memory, save_memory  # noqa: E402

pytestmark = pytest.mark.timeout(120)
SEED = 16


@pytest.fixture(scope="module")
def built() -> SpatialMemory:
    mem = SpatialMemory(config=MemoryConfig(max_views=1, view_max_side=24))
    explore(mem, ROOM, spots=SPOTS[:2])
    assert len(mem) > 0 and len(mem.views)
    return mem


@pytest.fixture(scope="module")
def members(built: SpatialMemory, tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    path = save_memory(built, tmp_path_factory.mktemp("m") / "good.npz")
    with np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _npz(data: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **data)
    return buf.getvalue()


def _try(path: Path, blob: bytes, name: str) -> str:
    """'loaded' (and the memory works) or 'error' (MemoryFileError naming the file)."""
    path.write_bytes(blob)
    try:
        mem = load_memory(path)
    except MemoryFileError as exc:
        assert path.name in str(exc), f"{name}: error does not name the file: {exc}"
        return "error"
    len(mem), mem.objects("active"), mem.objects("retired"), mem.query_text("mug", k=3)  # it works ...
    again = load_memory(save_memory(mem, path.with_suffix(".re.npz")))  # ... and round-trips
    assert len(again) == len(mem), name
    return "loaded"


def test_bytes_level_damage(members: dict[str, np.ndarray], built: SpatialMemory, tmp_path: Path) -> None:
    before = snapshot(built)
    rng = random.Random(SEED)
    outcomes = {"loaded": 0, "error": 0}
    for compressed in (False, True):
        blob = _npz(members, compressed)
        cases = list(truncations(blob, max(1, len(blob) // 25))) + list(bit_flips(blob, rng, 30)) + \
            list(splices(blob, rng, 20))
        for name, data in cases:
            outcomes[_try(tmp_path / "m.npz", data, name)] += 1
    assert outcomes["error"] > 30 and outcomes["loaded"] >= 1  # the untouched-prefix flips still load
    after = snapshot(built)
    assert all(np.array_equal(before[k], after[k]) for k in before)  # the memory in RAM is untouched


def _hostile_arrays(arr: np.ndarray, rng: random.Random) -> list[tuple[str, np.ndarray]]:
    with np.errstate(all="ignore"):  # the casts themselves overflow: that is the point
        return _hostile(arr, rng)


def _hostile(arr: np.ndarray, rng: random.Random) -> list[tuple[str, np.ndarray]]:
    out = [("empty", arr[:0]), ("scalar", np.array(7, arr.dtype)), ("2x", np.concatenate([arr, arr])),
           ("f16", arr.astype(np.float16)), ("u64", arr.astype(np.uint64)), ("bool", arr.astype(bool)),
           ("transposed", arr.T.copy()), ("bytes", np.frombuffer(arr.tobytes(), np.uint8).copy())]
    if arr.size:
        for label, value in (("nan", np.nan), ("inf", np.inf), ("neg", -5), ("huge", 2**62)):
            bad = arr.astype(np.float64 if label in ("nan", "inf") else arr.dtype, copy=True)
            try:
                bad.reshape(-1)[rng.randrange(bad.size)] = value
            except (OverflowError, ValueError):
                continue
            out.append((label, bad))
    return out


def test_member_level_hostile_arrays(members: dict[str, np.ndarray], tmp_path: Path) -> None:
    rng = random.Random(SEED)
    outcomes = {"loaded": 0, "error": 0}
    for key in sorted(members):
        if key == "header":
            continue
        hostile = _hostile_arrays(members[key], rng)
        for label, bad in rng.sample(hostile, min(4, len(hostile))):
            outcomes[_try(tmp_path / "m.npz", _npz({**members, key: bad}), f"{key}:{label}")] += 1
    for extra in ("extra", "table/area_copy", "header/x"):
        assert _try(tmp_path / "m.npz", _npz({**members, extra: np.zeros(3)}), extra) == "error"
    assert outcomes["error"] > 60


def test_header_mutations(members: dict[str, np.ndarray], tmp_path: Path) -> None:
    rng = random.Random(SEED)
    header = json.loads(members["header"].tobytes())
    outcomes = {"loaded": 0, "error": 0}
    texts = [json.dumps(h, allow_nan=True) for _, h in json_mutations(header, rng, 100)]
    texts += ["[" * 100_000, '{"format": ' * 5000, "\xff", "", "null", json.dumps(HOSTILE_VALUES[:10])]
    for i, text in enumerate(texts):
        hdr = np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8)
        outcomes[_try(tmp_path / "m.npz", _npz({**members, "header": hdr}), f"header#{i}")] += 1
    assert outcomes["error"] > 40


def test_npy_headers_that_lie_are_refused_before_allocating(members: dict[str, np.ndarray], tmp_path: Path) -> None:
    blob = _npz(members)
    for shape, descr in (((10**12,), "<f8"), ((2**40, 2**40), "<i8"), ((-1,), "<i8"), ((3,), "|O"), ((3,), "<U8"),
                         ((3,), [("a", "<i4")])):
        buf = io.BytesIO()
        try:
            np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
        except ValueError:
            continue
        src = zipfile.ZipFile(io.BytesIO(blob))
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as dst:
            for info in src.infolist():
                dst.writestr(info.filename, buf.getvalue() + b"\0" * 64 if info.filename == "distinct.npy"
                             else src.read(info))
        assert _try(tmp_path / "m.npz", out.getvalue(), f"lying header {shape} {descr}") == "error"
