"""One way to write a file so a crash, a kill or a concurrent reader never sees half of it.

Write to a temp file in the same folder, flush and fsync it, then ``os.replace`` it over the
target: the file is the old one or the new one, never a mix. Every writer of results, caches,
memory snapshots, traces and experience pools goes through here (there were five copies, one
without fsync).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable

from household.secrets import redact

# mkstemp makes 0600; results and caches are for sharing with the rest of the team.
FILE_MODE = 0o644


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], None], mode: int = FILE_MODE) -> Path:
    """Call ``write(fh)`` on a temp file beside ``path``, fsync it and move it over ``path``
    (the folder is created if needed). On any error the temp file is removed and ``path`` is
    left as it was."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, mode: int = FILE_MODE) -> Path:
    def write(fh: BinaryIO) -> None:
        fh.write(data)

    return atomic_write(path, write, mode)


def atomic_write_text(path: str | os.PathLike[str], text: str, mode: int = FILE_MODE) -> Path:
    """Write text atomically, with every registered secret (API keys) replaced by "***"."""
    return atomic_write_bytes(path, redact(text).encode("utf-8"), mode)
