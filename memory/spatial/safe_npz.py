"""Reading an ``.npz`` file without trusting it: allowed members only, sizes checked before allocating.

Why not ``np.load``: it inflates whatever members a file holds (an extra 2 GB member costs 2 GB
of RAM) and lets an ``.npy`` header claim any shape before a byte of data is read. Here the zip
directory is read first; every member must be on the allow list and under the per-member and
total size limits (uncompressed sizes, so a zip bomb is refused before it inflates), and every
``.npy`` header must describe a plain numeric dtype whose byte count matches what the member
really holds. Data is read with ``frombuffer`` (never pickle). Every failure, whatever layer it
comes from (zip, zlib, npy header), is a ``MemoryFileError`` naming the file and the member.
"""

from __future__ import annotations

import math
import os
import zipfile
from pathlib import Path
from typing import Iterable

import numpy as np

#: Default limits: a 100k-object memory with views is a few hundred MB.
MAX_MEMBER_BYTES = 1 << 30
MAX_TOTAL_BYTES = 4 << 30
ALLOWED_KINDS = "biuf"  # bool, signed, unsigned, float: never object, string or void dtypes


class MemoryFileError(ValueError):
    """A memory file that cannot be loaded; names the file and the member or field."""


def read_npz(path: str | os.PathLike[str], allowed: Iterable[str], *, max_member_bytes: int = MAX_MEMBER_BYTES,
             max_total_bytes: int = MAX_TOTAL_BYTES) -> dict[str, np.ndarray]:
    """Every member of ``path`` as an array, after checking names and sizes against the limits."""
    path = Path(path)
    allowed = set(allowed)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise MemoryFileError(f"{path}: not a readable memory file (not a zip archive: {exc})") from None
    with zf:
        infos = zf.infolist()
        total = 0
        seen: set[str] = set()
        for info in infos:
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if name not in allowed:
                raise MemoryFileError(f"{path}: member {info.filename!r}: not part of the memory format")
            if name in seen:
                raise MemoryFileError(f"{path}: member {info.filename!r}: appears twice")
            seen.add(name)
            if info.file_size > max_member_bytes:
                raise MemoryFileError(f"{path}: member {info.filename!r}: {info.file_size} bytes uncompressed is over "
                                      f"the {max_member_bytes}-byte limit per member")
            total += info.file_size
            if total > max_total_bytes:
                raise MemoryFileError(f"{path}: members add up to over the {max_total_bytes}-byte limit")
        out = {}
        for info in infos:
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            out[name] = _read_member(zf, info, path, name)
        return out


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, name: str) -> np.ndarray:
    fmt = np.lib.format
    try:
        with zf.open(info) as fh:
            version = fmt.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = fmt.read_array_header_1_0(fh)
            elif version in ((2, 0), (3, 0)):
                shape, fortran, dtype = fmt.read_array_header_2_0(fh)
            else:
                raise ValueError(f"npy version {version} not supported")
            if dtype.hasobject or dtype.kind not in ALLOWED_KINDS or dtype.fields is not None or dtype.subdtype:
                raise ValueError(f"dtype {dtype} is not a plain numeric type")
            if any((not isinstance(s, int)) or s < 0 for s in shape):
                raise ValueError(f"bad shape {shape}")
            nbytes = math.prod(shape) * dtype.itemsize
            if nbytes > info.file_size:  # a header may not claim more data than the member holds
                raise ValueError(f"header claims {nbytes} bytes of data, the member holds {info.file_size}")
            raw = fh.read(nbytes)
            if len(raw) != nbytes:
                raise ValueError(f"data ends after {len(raw)} of {nbytes} bytes")
            if fh.read(1):  # reading to the end also makes zipfile verify the member's CRC-32
                raise ValueError("the member holds more bytes than its header describes")
            return np.frombuffer(raw, dtype=dtype).reshape(shape, order="F" if fortran else "C").copy()
    except Exception as exc:  # zipfile, zlib and numpy's header parser (tokenize, ast) each raise their own
        # types on hostile bytes; all of them mean the same thing here: this member is damaged.
        raise MemoryFileError(f"{path}: member {name!r}: unreadable ({type(exc).__name__}: {exc})") from None
