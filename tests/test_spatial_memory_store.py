"""Save/load: lossless (every field compared, and the loaded memory behaves identically),
atomic (a failed save keeps the old file), and refusing corrupt, truncated, version-mismatched or
encoder-mismatched files with errors that name the file and the field."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from spatial_scene import Box, render
from test_spatial_memory import ROOM, SPOTS, explore

from memory.spatial import MemoryFileError, Region, SpatialMemory
from memory.spatial.memory import MemoryConfig
from memory.spatial.store import load_memory, save_memory
from perception.encoders import Encoders, HashTextEncoder
from perception.perceive import Perception


def everything(mem: SpatialMemory) -> dict[str, object]:
    out: dict[str, object] = {f"table/{k}": v for k, v in mem.table.export().items()}
    out.update({f"index/{k}": v for k, v in mem.index.export().items()})
    out.update({f"views/{k}": v for k, v in mem.views.export().items()})
    out.update({"voxels/by_object": mem.voxels.by_object, "voxels/by_voxel": mem.voxels.by_voxel,
                "voxels/hits": mem.voxels.hits, "voxels/max_hits": mem.voxels.max_hits,
                "distinct": sorted(mem.distinct), "regions": mem.regions, "labels": mem.table.labels,
                "config": mem.config, "frames": mem.frames, "encoders": mem.encoders.describe()})
    return out


def assert_same(a: SpatialMemory, b: SpatialMemory) -> None:
    ea, eb = everything(a), everything(b)
    assert ea.keys() == eb.keys()
    for key in ea:
        va, vb = ea[key], eb[key]
        if isinstance(va, np.ndarray):
            assert va.dtype == vb.dtype and va.shape == vb.shape and np.array_equal(va, vb), key
        else:
            assert va == vb, key


@pytest.fixture(scope="module")
def built() -> SpatialMemory:
    room = Region("room|1", "Kitchen", ((-1.0, -3.0), (5.0, -3.0), (5.0, 3.0), (-1.0, 3.0)))
    mem = SpatialMemory(config=MemoryConfig(max_views=2), regions=[room])
    step = explore(mem, ROOM)
    explore(mem, ROOM[:2] + ROOM[3:], spots=SPOTS[:2], start=step)  # the mug goes: a retired row
    assert mem.objects("retired") and mem.distinct and len(mem.views)
    return mem


def test_round_trip_is_lossless_and_behaves_the_same(built: SpatialMemory, tmp_path: Path) -> None:
    path = save_memory(built, tmp_path / "mem.npz")
    loaded = load_memory(path)
    assert_same(built, loaded)
    for a, b in zip(built.objects("retired"), loaded.objects("retired")):
        assert a.object_id == b.object_id and a.status == b.status
    frame = Perception().process(render(ROOM, (0.5, -1.0, 1.5), 30.0, 25.0, step=999))
    copy = load_memory(path)
    ra, rb = copy.integrate(frame), loaded.integrate(frame)
    assert (ra.created, ra.updated, ra.retired) == (rb.created, rb.updated, rb.retired)
    assert_same(copy, loaded)
    assert [(h.object_id, h.score) for h in copy.query_text("apple on the dining table")] == \
        [(h.object_id, h.score) for h in loaded.query_text("apple on the dining table")]
    assert built.query_text("apple on the dining table")[0].object_id == loaded.query_text("apple")[0].object_id


def test_failed_save_keeps_the_previous_file(built: SpatialMemory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = save_memory(built, tmp_path / "mem.npz")
    before = path.read_bytes()

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", boom)
    with pytest.raises(OSError, match="disk full"):
        save_memory(built, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["mem.npz"]  # no temporary left behind


def rewrite(src: Path, dst: Path, edit) -> Path:
    with np.load(src, allow_pickle=False) as npz:
        data = {k: npz[k] for k in npz.files}
    edit(data)
    with open(dst, "wb") as fh:
        np.savez(fh, **data)
    return dst


def test_bad_files_are_refused_with_the_field_named(built: SpatialMemory, tmp_path: Path) -> None:
    good = save_memory(built, tmp_path / "good.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(MemoryFileError, match="junk.npz: not a readable memory file"):
        load_memory(junk)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    with pytest.raises(MemoryFileError, match="truncated.npz"):
        load_memory(truncated)
    with pytest.raises(MemoryFileError, match="no such memory file"):
        load_memory(tmp_path / "missing.npz")

    def set_header(data: dict, **changes: object) -> None:
        header = json.loads(data["header"].tobytes())
        header.update(changes)
        data["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)

    future = rewrite(good, tmp_path / "v99.npz", lambda d: set_header(d, version=99))
    with pytest.raises(MemoryFileError, match=r"v99.npz: header.version: file version 99"):
        load_memory(future)
    other = rewrite(good, tmp_path / "other.npz", lambda d: set_header(d, format="something.else"))
    with pytest.raises(MemoryFileError, match="header.format"):
        load_memory(other)
    missing = rewrite(good, tmp_path / "nocol.npz", lambda d: d.pop("table/area"))
    with pytest.raises(MemoryFileError, match="table/area: missing"):
        load_memory(missing)
    unsorted = rewrite(good, tmp_path / "unsorted.npz",
                       lambda d: d.__setitem__("voxels/by_object", d["voxels/by_object"][::-1].copy()))
    with pytest.raises(MemoryFileError, match="voxels/by_object: not strictly sorted"):
        load_memory(unsorted)
    short = rewrite(good, tmp_path / "short.npz", lambda d: d.__setitem__("index/text", d["index/text"][:-1]))
    with pytest.raises(MemoryFileError, match="index/text"):
        load_memory(short)
    with pytest.raises(MemoryFileError, match="header.encoders.text"):
        load_memory(good, Encoders(HashTextEncoder(64)))
    assert zipfile.is_zipfile(good)


def test_a_failed_load_leaves_the_memory_in_use_untouched(built: SpatialMemory, tmp_path: Path) -> None:
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in everything(built).items()}
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"\x00" * 100)
    with pytest.raises(MemoryFileError):
        load_memory(bad)
    after = everything(built)
    for k, v in before.items():
        assert (np.array_equal(v, after[k]) if isinstance(v, np.ndarray) else v == after[k]), k


def test_empty_memory_round_trips(tmp_path: Path) -> None:
    mem = SpatialMemory()
    loaded = load_memory(save_memory(mem, tmp_path / "empty.npz"))
    assert_same(mem, loaded)
    assert len(loaded) == 0
    box = Box("b", "Cabinet", (2.0, 0.0, 1.5), (0.4, 0.6, 0.5))
    loaded.integrate(Perception().process(render([box], (0.0, 0.0, 1.5), 0.0, 0.0)))
    assert len(loaded) == 1


def _header_edit(**changes: object):
    def edit(data: dict) -> None:
        header = json.loads(data["header"].tobytes())
        for key, value in changes.items():
            target = header
            *parents, last = key.split(".")
            for p in parents:
                target = target[p]
            target[last] = value
        data["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    return edit


def _set(key: str, fn):
    return lambda d: d.__setitem__(key, fn(d[key].copy()))


def _nan_first(a: np.ndarray) -> np.ndarray:
    a.reshape(-1)[0] = np.nan
    return a


@pytest.mark.parametrize("name,edit,match", [
    ("neglabel", _set("table/label_id", lambda a: a * 0 - 3), "table/label_id: values must be in"),
    ("biglabel", _set("table/label_id", lambda a: a + 10_000), "table/label_id: values must be in"),
    ("voxel0", _header_edit(**{"config.voxel_size": 0}), "header.config.voxel_size: must be > 0"),
    ("voxelneg", _header_edit(**{"config.voxel_size": -0.05}), "header.config.voxel_size"),
    ("nanbox", _set("table/aabb_min", _nan_first), "table/aabb_min: holds NaN"),
    ("inverted", lambda d: d.update({"table/aabb_min": d["table/aabb_max"] + 1}), "table/aabb_min: a box has min > max"),
    ("nanindex", _set("index/text", _nan_first), "index/text: holds NaN"),
    ("badtype", _header_edit(**{"config.max_views": "three"}), "header.config.max_views"),
    ("minobs0", _header_edit(**{"config.min_observations": 0}), "header.config.min_observations: must be >= 1"),
    ("unknowncfg", _header_edit(**{"config.evil": 1}), r"header.config: unknown fields \['evil'\]"),
    ("labels", _header_edit(labels=[1, 2]), "header.labels"),
    ("regions", _header_edit(regions=[{"name": "r", "kind": "k", "polygon": [[0, "x"]]}]), "header.regions"),
    ("header", lambda d: d.update({"header": np.frombuffer(b"[" * 100_000, np.uint8)}), "header: JSON nested"),
    ("hits", _set("voxels/hits", lambda a: a * 0 + 100), "voxels/hits: values must be in"),
    ("views", _set("views/shape", lambda a: a * 0 + 10**9), "views/shape"),
    ("distinct", _set("distinct", lambda a: a - 10**6), "distinct: values must be in"),
    ("extra", lambda d: d.update({"payload": np.zeros(10, np.uint8)}), "member 'payload.npy': not part of"),
    ("objdtype", lambda d: d.update({"distinct": np.array([[1, 2]], dtype=object)}), "member 'distinct'"),
    ("dtype", _set("table/area", lambda a: a.astype(np.float32)), "table/area: expected float64"),
])
def test_every_bad_field_is_a_memory_file_error_naming_it(built: SpatialMemory, tmp_path: Path, name: str, edit,
                                                           match: str) -> None:
    good = save_memory(built, tmp_path / "good.npz")
    with np.load(good, allow_pickle=False) as npz:
        data = {k: npz[k] for k in npz.files}
    edit(data)
    bad = tmp_path / f"{name}.npz"
    with open(bad, "wb") as fh:
        np.savez(fh, **data)  # np.savez pickles object arrays: the loader must refuse, never unpickle
    with pytest.raises(MemoryFileError, match=match) as err:
        load_memory(bad)
    assert f"{name}.npz" in str(err.value)


def test_sizes_are_checked_from_the_zip_directory_before_anything_is_inflated(built: SpatialMemory,
                                                                              tmp_path: Path) -> None:
    good = save_memory(built, tmp_path / "good.npz")
    with pytest.raises(MemoryFileError, match="over the 1000-byte limit per member"):
        load_memory(good, max_member_bytes=1000)
    with pytest.raises(MemoryFileError, match="over the 5000-byte limit"):
        load_memory(good, max_total_bytes=5000)
    # An .npy header claiming a huge shape with a few bytes of data: refused, nothing allocated.
    import io
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<i8", "fortran_order": False, "shape": (10**12, 2)})
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(tmp_path / "liar.npz", "w") as dst:
        for info in src.infolist():
            body = buf.getvalue() + b"\0" * 16 if info.filename == "distinct.npy" else src.read(info)
            dst.writestr(info.filename, body)
    with pytest.raises(MemoryFileError, match="member 'distinct': unreadable .*header claims"):
        load_memory(tmp_path / "liar.npz")
