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


def writable_out_dir(out: str | os.PathLike[str], option: str = "--out") -> Path:
    """Check, before a run starts, that ``out`` is (or can be made) a folder that takes a file
    (issue 32): an ``--out`` naming a file or a device (/dev/full), or a folder that is read-only
    or on a full disk, failed only after minutes of running, with a traceback. Creates the
    folder; raises InputError naming it and what is wrong."""
    from household.errors import InputError

    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        kind = "a file" if folder.is_file() else "not a folder (a device, pipe or socket)"
        raise InputError(f"{option} {folder}: is {kind}; the run writes a folder of results there; "
                         f"name a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-probe-{os.getpid()}"
        try:
            with open(probe, "wb") as fh:
                fh.write(b"\0" * 4096)
                fh.flush()
                os.fsync(fh.fileno())
        finally:
            probe.unlink(missing_ok=True)
    except OSError as exc:
        raise InputError(f"{option} {folder}: cannot write there ({exc.strerror or exc}); the run would fail "
                         "after running; use another folder") from None
    return folder
