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
import math
import os
from pathlib import Path
from typing import Any, cast

import numpy as np

from household.atomic_io import atomic_write
from memory.spatial.association import AssociationConfig
from memory.spatial.freespace import FreeSpaceConfig
from memory.spatial.memory import MemoryConfig, SpatialMemory
from memory.spatial.object_table import COLUMNS
from memory.spatial.query import Region
from memory.spatial.safe_npz import MAX_MEMBER_BYTES, MAX_TOTAL_BYTES, MemoryFileError, read_npz
from memory.spatial.voxels import OBJ_BITS, VOXEL_BITS
from perception.encoders import Encoders


FORMAT = "worldmind.spatial_memory"
VERSION = 1


def _config_to_json(config: Any) -> dict[str, Any]:
    return dataclasses.asdict(config)


def _config_from_json(data: Any, path: Path) -> Any:
    """The saved configuration, each field checked against the dataclass default's type and range."""
    def build(cls: type, raw: Any, where: str, nested: dict[str, type]) -> Any:
        _check(isinstance(raw, dict), path, where, "not a JSON object")
        defaults = cls()
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(raw) - names)
        _check(not unknown, path, where, f"unknown fields {unknown}")
        kwargs = {}
        for key, value in raw.items():
            field = f"{where}.{key}"
            if key in nested:
                kwargs[key] = build(nested[key], value, field, {})
                continue
            default = getattr(defaults, key)
            if isinstance(default, str):
                _check(isinstance(value, str), path, field, f"expected a string, got {value!r}")
            elif isinstance(default, bool):
                _check(isinstance(value, bool), path, field, f"expected true/false, got {value!r}")
            elif isinstance(default, int):
                _check(isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 62, path, field,
                       f"expected an integer >= 0, got {value!r}")
            else:
                _check(isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                       and value >= 0, path, field, f"expected a finite number >= 0, got {value!r}")
            kwargs[key] = value
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise MemoryFileError(f"{path}: {where}: {exc}") from None

    config = build(MemoryConfig, data, "header.config",
                   {"association": AssociationConfig, "free_space": FreeSpaceConfig})
    _check(config.voxel_size > 0, path, "header.config.voxel_size", f"must be > 0, got {config.voxel_size}")
    _check(1 <= config.max_hits <= 127, path, "header.config.max_hits", f"must be in 1..127, got {config.max_hits}")
    _check(config.view_max_side >= 1, path, "header.config.view_max_side", "must be >= 1")
    _check(config.min_observations >= 1, path, "header.config.min_observations", "must be >= 1")
    _check(config.box_min_hits >= 1, path, "header.config.box_min_hits", "must be >= 1")
    return config


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
    # (numpy types **kwds as ArrayLike, but the bool allow_pickle makes mypy reject a dict of arrays)
    atomic_write(path, lambda fh: np.savez_compressed(fh, **cast(dict[str, Any], arrays)))
    return path


def _check(cond: bool, path: Path, field: str, why: str) -> None:
    if not cond:
        raise MemoryFileError(f"{path}: {field}: {why}")


def _allowed_members() -> set[str]:
    return ({"header", "distinct", "voxels/by_object", "voxels/hits"} | {f"table/{k}" for k in COLUMNS}
            | {f"index/{k}" for k in ("text", "clip", "has_clip", "label_text", "label_clip")}
            | {f"views/{k}" for k in VIEW_KEYS})


VIEW_KEYS = ("row", "step", "score", "bbox", "shape", "pose", "pixels", "masks")
MAX_HEADER_BYTES = 16 << 20
MAX_VIEW_SIDE = 4096


def _array(data: dict[str, np.ndarray], path: Path, key: str, dtype: Any, shape: tuple[int | None, ...]) -> np.ndarray:
    """Member ``key`` with exactly this dtype and shape (None: any length), and finite if float."""
    member = data.get(key)
    _check(member is not None, path, key, "missing")
    arr = cast(np.ndarray, member)  # present: _check raised otherwise
    ok = arr.dtype == np.dtype(dtype) and arr.ndim == len(shape) and all(
        want is None or got == want for got, want in zip(arr.shape, shape))
    _check(ok, path, key, f"expected {np.dtype(dtype)} {tuple('n' if d is None else d for d in shape)}, "
                          f"got {arr.dtype} {arr.shape}")
    if arr.dtype.kind == "f":
        _check(bool(np.all(np.isfinite(arr))), path, key, "holds NaN or infinite values")
    return arr


def _in_range(arr: np.ndarray, lo: int | float, hi: int | float, path: Path, key: str) -> None:
    if arr.size:
        _check(bool(np.all((arr >= lo) & (arr <= hi))), path, key,
               f"values must be in [{lo}, {hi}], found {arr.min()}..{arr.max()}")


def _header(data: dict[str, np.ndarray], path: Path) -> dict[str, Any]:
    member = data.get("header")
    _check(member is not None, path, "header", "missing")
    raw = cast(np.ndarray, member)  # present: _check raised otherwise
    _check(raw.dtype == np.uint8 and raw.ndim == 1 and raw.size <= MAX_HEADER_BYTES, path, "header",
           f"expected uint8 bytes of JSON up to {MAX_HEADER_BYTES} bytes")
    try:
        header = json.loads(raw.tobytes().decode("utf-8"))
    except RecursionError:
        raise MemoryFileError(f"{path}: header: JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise MemoryFileError(f"{path}: header: not JSON ({exc})") from None
    _check(isinstance(header, dict), path, "header", "not a JSON object")
    return header


def _regions(raw: Any, path: Path) -> list[Region]:
    _check(isinstance(raw, list), path, "header.regions", "not a list")
    out = []
    for i, r in enumerate(raw):
        where = f"header.regions[{i}]"
        _check(isinstance(r, dict) and isinstance(r.get("name"), str) and isinstance(r.get("kind"), str), path, where,
               "needs string 'name' and 'kind'")
        poly = r.get("polygon")
        _check(isinstance(poly, list) and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(c, (int, float)) and not isinstance(c, bool)
                                                        and math.isfinite(c) for c in p) for p in poly),
               path, f"{where}.polygon", "must be a list of [x, y] finite numbers")
        out.append(Region(r["name"], r["kind"], tuple((float(p[0]), float(p[1])) for p in poly)))
    return out


def load_memory(path: str | os.PathLike[str], encoders: Encoders | None = None, *,
                max_member_bytes: int = MAX_MEMBER_BYTES, max_total_bytes: int = MAX_TOTAL_BYTES) -> SpatialMemory:
    """Load and validate a saved memory; any problem is a ``MemoryFileError`` naming the file and field.

    The result is a new memory: a failed load leaves whatever memory the caller holds untouched.
    """
    path = Path(path)
    if not path.is_file():
        raise MemoryFileError(f"{path}: no such memory file")
    data = read_npz(path, _allowed_members(), max_member_bytes=max_member_bytes, max_total_bytes=max_total_bytes)
    header = _header(data, path)
    _check(header.get("format") == FORMAT, path, "header.format", f"expected {FORMAT!r}, got {header.get('format')!r}")
    _check(header.get("version") == VERSION, path, "header.version",
           f"file version {header.get('version')!r} is not supported (this code reads version {VERSION})")
    config = _config_from_json(header.get("config"), path)
    enc_saved = cast(dict[str, Any], header.get("encoders"))
    _check(isinstance(enc_saved, dict), path, "header.encoders", "not a JSON object")  # raises if it is not
    memory = SpatialMemory(encoders, config)
    enc_now = memory.encoders.describe()
    for key in ("text", "text_dim", "clip", "clip_dim"):
        _check(enc_saved.get(key) == enc_now.get(key), path, f"header.encoders.{key}",
               f"saved with {enc_saved.get(key)!r}, loading with {enc_now.get(key)!r}; pass the same encoders")
    labels = cast(list[str], header.get("labels"))
    _check(isinstance(labels, list) and all(isinstance(x, str) for x in labels), path, "header.labels",
           "not a list of strings")  # raises if they are not
    frames = header.get("frames", 0)
    _check(isinstance(frames, int) and not isinstance(frames, bool) and frames >= 0, path, "header.frames",
           f"expected an integer >= 0, got {frames!r}")
    max_hits = header.get("max_hits", config.max_hits)
    _check(isinstance(max_hits, int) and not isinstance(max_hits, bool) and 1 <= max_hits <= 127, path,
           "header.max_hits", f"expected an integer in 1..127, got {max_hits!r}")
    regions = _regions(header.get("regions", []), path)

    n = len(_array(data, path, "table/status", COLUMNS["status"][0], (None,)))
    _check(n < (1 << OBJ_BITS), path, "table", "too many objects")
    columns = {name: _array(data, path, f"table/{name}", dtype, (n,) + shape)
               for name, (dtype, shape, _) in COLUMNS.items()}
    n_labels = len(labels)
    _in_range(columns["status"], 1, 3, path, "table/status")
    _in_range(columns["label_id"], 0, n_labels - 1, path, "table/label_id")
    _in_range(columns["vote_label"], -1, n_labels - 1, path, "table/vote_label")
    _in_range(columns["merged_into"], -1, n - 1, path, "table/merged_into")
    for key in ("vote_weight", "area", "n_obs", "n_voxels", "peak_voxels", "absent"):
        _check(bool(np.all(columns[key] >= 0)), path, f"table/{key}", "holds negative values")
    for key in ("first_step", "last_step", "ended_step"):
        _check(bool(np.all(columns[key] >= -1)), path, f"table/{key}", "holds values below -1")
    _check(bool(np.all(columns["aabb_min"] <= columns["aabb_max"])), path, "table/aabb_min",
           "a box has min > max")

    index_arrays = {
        "text": _array(data, path, "index/text", np.float32, (n, memory.index.text_dim)),
        "clip": _array(data, path, "index/clip", np.float32, (n, memory.index.clip_dim)),
        "has_clip": _array(data, path, "index/has_clip", bool, (n,)),
        "label_text": _array(data, path, "index/label_text", np.float32, (n_labels, memory.index.text_dim)),
        "label_clip": _array(data, path, "index/label_clip", np.float32, (n_labels, memory.index.clip_dim)),
    }

    by_object = _array(data, path, "voxels/by_object", np.int64, (None,))
    hits = _array(data, path, "voxels/hits", np.int8, (len(by_object),))
    _check(bool(np.all(by_object >= 0)), path, "voxels/by_object", "holds negative voxel codes")
    _check(bool(np.all(by_object[1:] > by_object[:-1])), path, "voxels/by_object", "not strictly sorted")
    _check(len(by_object) == 0 or int(by_object[-1] >> VOXEL_BITS) < n, path, "voxels/by_object",
           "refers to objects beyond the table")
    _in_range(hits, 1, max_hits, path, "voxels/hits")
    distinct = _array(data, path, "distinct", np.int64, (None, 2))
    _in_range(distinct, 0, n - 1, path, "distinct")

    views = _views(data, path, n)
    memory.table.restore(columns, labels)
    memory.index.restore(index_arrays)
    memory.voxels.restore(by_object, hits)
    memory.views.restore(views)
    memory.distinct = {(int(a), int(b)) for a, b in distinct}
    memory.regions = regions
    memory.frames = frames
    return memory


def _views(data: dict[str, np.ndarray], path: Path, n: int) -> dict[str, np.ndarray]:
    """The stored object views, checked so that ``ViewStore.restore`` cannot fail or over-read."""
    row = _array(data, path, "views/row", np.int64, (None,))
    v = len(row)
    out = {"row": row, "step": _array(data, path, "views/step", np.int64, (v,)),
           "score": _array(data, path, "views/score", np.float64, (v,)),
           "bbox": _array(data, path, "views/bbox", np.int64, (v, 4)),
           "shape": _array(data, path, "views/shape", np.int64, (v, 2)),
           "pose": _array(data, path, "views/pose", np.float64, (v, 4, 4)),
           "pixels": _array(data, path, "views/pixels", np.uint8, (None,)),
           "masks": _array(data, path, "views/masks", bool, (None,))}
    _in_range(row, 0, n - 1, path, "views/row")
    _in_range(out["shape"], 0, MAX_VIEW_SIDE, path, "views/shape")
    sizes = int((out["shape"][:, 0] * out["shape"][:, 1]).sum()) if v else 0
    _check(len(out["pixels"]) == 3 * sizes, path, "views/pixels", f"expected {3 * sizes} bytes for the view shapes, "
           f"got {len(out['pixels'])}")
    _check(len(out["masks"]) == sizes, path, "views/masks", f"expected {sizes} values, got {len(out['masks'])}")
    return out
