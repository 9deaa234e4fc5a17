"""One run per output folder, and no run writing over its own inputs (issue 32).

Two ``eval longact`` (or ``replay``) runs into one ``--out`` both exited 0 while the second
replaced the first one's reports, summary and experience pool. A run therefore holds an flock
on ``<out>/.lock`` (its PID written inside) for as long as it runs; a second one is refused at
once, naming the folder and the holder's PID. The kernel drops the lock when the holder exits,
however it exits, so resuming after a finished, interrupted or killed run just works.

Shards (``--shard I/N``) are meant to run side by side into one folder: each takes the folder
lock *shared* (so a full run is refused while any shard runs, and the other way round) plus an
exclusive lock of its own shard, so the same shard twice is refused too.

A run whose ``--out`` holds its inputs (``--out`` equal to the ``--episodes`` folder, or an input
named summary.json inside it) would overwrite them: refused before anything runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from household.atomic_io import writable_out_dir  # noqa: F401 - checked before a run starts
from household.errors import InputError
from household.locks import FileLock, acquire

LOCK_FILE = ".lock"


@dataclass
class RunLock:
    """The locks a run holds on its output folder; ``release`` frees them (exit does too)."""

    folder: Path
    locks: list[FileLock] = field(default_factory=list)

    def release(self) -> None:
        for lock in reversed(self.locks):
            lock.release()
        self.locks.clear()

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_run_folder(out: str | os.PathLike[str], command: str, shard: tuple[int, int] | None = None) -> RunLock:
    """Take ``out``'s run lock (created with the folder); raises ``LockHeld`` naming the folder and
    the PID of the run holding it."""
    folder = Path(out)
    hint = f"it is the output folder of a running {command} until that run ends (a rerun then resumes); use another --out"
    run = RunLock(folder)
    run.locks.append(acquire(folder / LOCK_FILE, f"--out {folder}", shared=shard is not None, hint=hint))
    if shard is not None:
        k, n = shard
        try:
            run.locks.append(acquire(folder / f"{LOCK_FILE}-shard-{k}-of-{n}", f"--out {folder} (shard {k}/{n})",
                                     hint=hint))
        except BaseException:
            run.release()
            raise
    return run


def _depth_inside(path: Path, folder: Path) -> int | None:
    """How many path parts ``path`` lies below ``folder`` (None when outside it)."""
    try:
        return len(path.resolve().relative_to(folder.resolve()).parts)
    except (ValueError, OSError):
        return None


def input_files(source: str | os.PathLike[str], suffixes: tuple[str, ...] = (".json", ".jsonl", ".jsonl.gz")) -> list[Path]:
    """The files an ``--episodes`` source stands for (the folder's episode files, or the file)."""
    src = Path(source)
    if src.is_dir():
        return sorted(p for p in src.iterdir() if p.name.endswith(suffixes))
    return [src]


def refuse_inputs_inside(out: str | os.PathLike[str], option: str, source: str | os.PathLike[str],
                         inputs: Iterable[Path]) -> None:
    """Raise InputError when ``out`` is the input folder or an input lies where the run writes:
    in ``out`` itself (summary.json, summary.md, the experience pool) or in a report folder one
    level down. Inputs deeper inside ``out`` are left alone: nothing is written there."""
    folder = Path(out)
    src = Path(source)
    if src.is_dir() and _depth_inside(src, folder) == 0:
        raise InputError(f"--out {folder}: is the {option} folder {src}; the run would write its results over "
                         "its inputs; use another --out")
    for path in inputs:
        depth = _depth_inside(path, folder)
        if depth is not None and depth <= 2:
            raise InputError(f"--out {folder}: holds the input {path} ({option}) where the run writes its summary, "
                             "reports and experience pool; move the input or use another --out")

