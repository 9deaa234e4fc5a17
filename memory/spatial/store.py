"""Saving and loading a spatial memory: one versioned ``.npz`` file, written atomically.

Everything is plain arrays plus one JSON header (format name, version, configuration, label
vocabulary, regions, encoder names and sizes), loaded with ``allow_pickle=False`` so a file can
never run code. The file is written to a temporary name in the same folder, fsynced and renamed
over the target, so a crash leaves either the old file or the new one. Loading checks the format,
the version, every array's presence, dtype and shape, and the cross-references between them, and
raises ``MemoryFileError`` naming the file and the field; it builds a new memory, so a failed
load leaves any memory already in use untouched.
"""

from __future__ import annotations

import dataclasses
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from household.atomic_io import atomic_write
from memory.spatial.association import AssociationConfig
from memory.spatial.freespace import FreeSpaceConfig
from memory.spatial.memory import MemoryConfig, SpatialMemory
from memory.spatial.object_table import COLUMNS, STATUS_NAMES
from memory.spatial.query import Region
from memory.spatial.voxels import OBJ_BITS, VOXEL_BITS
from perception.encoders import Encoders

FORMAT = "worldmind.spatial_memory"
VERSION = 1


class MemoryFileError(ValueError):
    """A memory file that cannot be loaded; names the file and the field."""


def _config_to_json(config: Any) -> dict[str, Any]:
    return dataclasses.asdict(config)


def _config_from_json(data: dict[str, Any]) -> MemoryConfig:
    data = dict(data)
    data["association"] = AssociationConfig(**data["association"])
    data["free_space"] = FreeSpaceConfig(**data["free_space"])
    return MemoryConfig(**data)


def save_memory(memory: SpatialMemory, path: str | os.PathLike[str]) -> Path:
    path = Path(path)
    header = {
        "format": FORMAT, "version": VERSION, "config": _config_to_json(memory.config),
        "labels": memory.table.labels, "frames": memory.frames,
        "regions": [{"name": r.name, "kind": r.kind, "polygon": [list(p) for p in r.polygon]} for r in memory.regions],
        "encoders": memory.encoders.describe(), "max_hits": memory.voxels.max_hits,
    }
    arrays: dict[str, np.ndarray] = {"header": np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)}
    arrays.update({f"table/{k}": v for k, v in memory.table.export().items()})
    arrays.update({f"index/{k}": v for k, v in memory.index.export().items()})
    arrays.update({f"views/{k}": v for k, v in memory.views.export().items()})
    arrays["voxels/by_object"] = memory.voxels.by_object
    arrays["voxels/hits"] = memory.voxels.hits
    arrays["distinct"] = np.array(sorted(memory.distinct), dtype=np.int64).reshape(-1, 2)
    atomic_write(path, lambda fh: np.savez_compressed(fh, **arrays))
    return path


def _check(cond: bool, path: Path, field: str, why: str) -> None:
    if not cond:
        raise MemoryFileError(f"{path}: {field}: {why}")


_VIEW_KEYS = ("row", "step", "score", "bbox", "shape", "pose", "pixels", "masks")
_MEMBERS = ({"header", "voxels/by_object", "voxels/hits", "distinct"} | {f"table/{k}" for k in COLUMNS}
            | {f"index/{k}" for k in ("text", "clip", "has_clip", "label_text", "label_clip")}
            | {f"views/{k}" for k in _VIEW_KEYS})
# A member larger than this (uncompressed) is refused before anything is allocated: a memory of
# 100k objects with views is well under it, a crafted 2 GB member is not read.
MAX_MEMBER_BYTES = 512 * 1024 * 1024
MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024


def _read_members(path: Path) -> dict[str, np.ndarray]:
    """The file's arrays, after checking the zip directory: only known members, each within
    MAX_MEMBER_BYTES and all within MAX_FILE_BYTES (sizes as the directory states them, checked
    before decompressing; a member that inflates past its stated size fails in zipfile)."""
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise MemoryFileError(f"{path}: not a readable memory file ({type(exc).__name__}: {exc})") from None
    total = 0
    for info in infos:
        name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        if name not in _MEMBERS:
            raise MemoryFileError(f"{path}: member {info.filename!r}: not part of a memory file")
        if info.file_size > MAX_MEMBER_BYTES:
            raise MemoryFileError(f"{path}: member {info.filename!r}: {info.file_size} bytes uncompressed, over the "
                                  f"limit of {MAX_MEMBER_BYTES}")
        total += info.file_size
    if total > MAX_FILE_BYTES:
        raise MemoryFileError(f"{path}: {total} bytes uncompressed, over the limit of {MAX_FILE_BYTES}")
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except Exception as exc:  # zlib, a bad .npy header, a pickled object array: all "not readable"
        raise MemoryFileError(f"{path}: not a readable memory file ({type(exc).__name__}: {exc})") from None


def load_memory(path: str | os.PathLike[str], encoders: Encoders | None = None) -> SpatialMemory:
    """Read a memory file into a NEW memory; every problem is a MemoryFileError naming the file and
    the member or field, so a bad file never touches a memory already in use."""
    path = Path(path)
    if not path.is_file():
        raise MemoryFileError(f"{path}: no such memory file")
    try:
        return _load(path, _read_members(path), encoders)
    except MemoryFileError:
        raise
    except Exception as exc:  # anything the checks below did not foresee still names the file
        raise MemoryFileError(f"{path}: inconsistent memory file ({type(exc).__name__}: {exc})") from None


def _finite(arr: np.ndarray) -> bool:
    return not np.issubdtype(arr.dtype, np.floating) or bool(np.all(np.isfinite(arr)))


def _load(path: Path, data: dict[str, np.ndarray], encoders: Encoders | None) -> SpatialMemory:
    _check("header" in data, path, "header", "missing")
    try:
        header = json.loads(data["header"].tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MemoryFileError(f"{path}: header: not JSON ({exc})") from exc
    _check(isinstance(header, dict), path, "header", "not a JSON object")
    _check(header.get("format") == FORMAT, path, "header.format", f"expected {FORMAT!r}, got {header.get('format')!r}")
    _check(header.get("version") == VERSION, path, "header.version",
           f"file version {header.get('version')} is not supported (this code reads version {VERSION})")
    try:
        config = _config_from_json(header["config"])
    except (KeyError, TypeError, AttributeError) as exc:
        raise MemoryFileError(f"{path}: header.config: {exc}") from None
    voxel = config.voxel_size
    _check(isinstance(voxel, (int, float)) and bool(np.isfinite(voxel)) and voxel > 0, path,
           "header.config.voxel_size", f"must be a positive number, got {voxel!r}")
    _check(isinstance(config.max_hits, int) and 1 <= config.max_hits <= 127, path, "header.config.max_hits",
           f"must be an integer in 1..127, got {config.max_hits!r}")
    enc_saved = header.get("encoders") or {}
    memory = SpatialMemory(encoders, config)
    enc_now = memory.encoders.describe()
    for key in ("text", "text_dim", "clip", "clip_dim"):
        _check(enc_saved.get(key) == enc_now.get(key), path, f"header.encoders.{key}",
               f"saved with {enc_saved.get(key)!r}, loading with {enc_now.get(key)!r}; pass the same encoders")
    labels = header.get("labels")
    _check(isinstance(labels, list) and all(isinstance(x, str) for x in labels), path, "header.labels",
           "not a list of strings")

    columns = {}
    n = None
    for name, (dtype, shape, _) in COLUMNS.items():
        key = f"table/{name}"
        _check(key in data, path, key, "missing")
        arr = data[key]
        n = len(arr) if n is None else n
        _check(arr.dtype == np.dtype(dtype) and arr.shape == (n,) + shape, path, key,
               f"expected {np.dtype(dtype)} {(n,) + shape}, got {arr.dtype} {arr.shape}")
        _check(_finite(arr), path, key, "holds NaN or infinite values")
        columns[name] = arr
    _check(bool(np.all((columns["label_id"] >= 0) & (columns["label_id"] < len(labels)))), path, "table/label_id",
           "refers to unknown labels")
    _check(bool(np.all(columns["aabb_min"] <= columns["aabb_max"])), path, "table/aabb_min",
           "a box minimum lies above its maximum")
    _check(bool(np.all(np.isin(columns["status"], list(STATUS_NAMES)))), path, "table/status", "unknown status codes")

    index_arrays = {}
    for key, width in (("text", memory.index.text_dim), ("clip", memory.index.clip_dim)):
        arr = data.get(f"index/{key}")
        _check(arr is not None and arr.dtype == np.float32 and arr.shape == (n, width), path, f"index/{key}",
               f"expected float32 ({n}, {width})")
        _check(_finite(arr), path, f"index/{key}", "holds NaN or infinite values")
        index_arrays[key] = arr
    for key in ("has_clip", "label_text", "label_clip"):
        _check(f"index/{key}" in data, path, f"index/{key}", "missing")
        index_arrays[key] = data[f"index/{key}"]
    _check(index_arrays["has_clip"].shape == (n,) and index_arrays["has_clip"].dtype == bool, path, "index/has_clip",
           f"expected bool ({n},)")
    for key, width in (("label_text", memory.index.text_dim), ("label_clip", memory.index.clip_dim)):
        _check(index_arrays[key].shape == (len(labels), width), path, f"index/{key}",
               f"expected ({len(labels)}, {width}), got {index_arrays[key].shape}")

    by_object, hits = data.get("voxels/by_object"), data.get("voxels/hits")
    _check(by_object is not None and by_object.dtype == np.int64 and by_object.ndim == 1, path, "voxels/by_object",
           "missing or not int64")
    _check(hits is not None and hits.shape == by_object.shape and hits.dtype == np.int8, path, "voxels/hits",
           "missing or not aligned with voxels/by_object")
    _check(bool(np.all(by_object[1:] > by_object[:-1])), path, "voxels/by_object", "not strictly sorted")
    _check(len(by_object) == 0 or int(by_object[-1] >> VOXEL_BITS) < n, path, "voxels/by_object",
           "refers to objects beyond the table")
    _check(bool(np.all((hits >= 1) & (hits <= header.get("max_hits", config.max_hits)))), path, "voxels/hits",
           "out of range")
    distinct = data.get("distinct")
    _check(distinct is not None and distinct.ndim == 2 and distinct.shape[1] == 2, path, "distinct", "missing or malformed")
    _check(n < (1 << OBJ_BITS), path, "table", "too many objects")

    memory.table.restore(columns, labels)
    memory.index.restore(index_arrays)
    memory.voxels.restore(by_object, hits)
    view_keys = _VIEW_KEYS
    for key in view_keys:
        _check(f"views/{key}" in data, path, f"views/{key}", "missing")
    try:
        memory.views.restore({k: data[f"views/{k}"] for k in view_keys})
    except (ValueError, IndexError) as exc:
        raise MemoryFileError(f"{path}: views: {exc}") from exc
    memory.distinct = {(int(a), int(b)) for a, b in distinct}
    try:
        memory.regions = [Region(r["name"], r["kind"], tuple(tuple(float(c) for c in p) for p in r["polygon"]))
                          for r in header.get("regions", [])]
    except (KeyError, TypeError, ValueError) as exc:
        raise MemoryFileError(f"{path}: header.regions: {exc}") from exc
    memory.frames = int(header.get("frames", 0))
    return memory
