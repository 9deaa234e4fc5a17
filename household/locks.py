"""Advisory locks that say who holds them: one writer per belief log, one run per output folder.

Why flock (not a lock file that exists or not): the kernel releases an flock when its holder
exits, however it exits (kill -9 included), so a crashed run never leaves a stale lock behind
and a resumed run after it simply takes the lock again. Locks are taken non-blocking: a second
writer is refused at once with an error naming the file and the PID written into the lock file
by its holder, instead of silently interleaving with (or replacing) what the first one
acknowledged.

The lock file is never removed: unlinking a lock file while another process has it open lets
two processes each "hold" a lock on a different inode. On release its PID is cleared instead.

flock locks belong to an open file description, so a second ``acquire`` of the same lock in the
same process is refused too (two trackers on one log in one process corrupt it just as well).
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path

from household.errors import InputError


class LockHeld(InputError):
    """Someone else writes there now; the message names the file or folder and the holder's PID."""


def _holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 64).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return f"process {text}" if text.isdigit() else "another process"


@dataclass
class FileLock:
    """A held advisory lock; ``release`` (or process exit) frees it."""

    path: Path
    shared: bool = False
    _fd: int | None = field(default=None, repr=False)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if not self.shared:  # the PID of a holder that is gone would only mislead the next message
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> "FileLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:  # an object dropped without close() still frees its lock
        try:
            self.release()
        except Exception:  # noqa: BLE001 - at interpreter exit the kernel frees it anyway
            pass


def acquire(lock_path: str | os.PathLike[str], what: str, *, shared: bool = False, hint: str = "") -> FileLock:
    """Take the lock at ``lock_path`` (created if missing) without waiting, and write our PID into it.

    ``what`` names the thing protected in the refusal ("belief log /x/log.jsonl"). ``shared``
    takes a shared lock (several holders, e.g. the shards of one run), refused while an exclusive
    holder runs and refusing one. Raises ``LockHeld`` when the lock is taken.
    """
    path = Path(lock_path)
    try:  # O_CLOEXEC: workers this process starts (Ray) must not inherit and outlive the lock
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        raise InputError(f"{what}: cannot create the lock file {path} ({exc.strerror or exc})") from None
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise LockHeld(f"{what}: in use by {holder} (lock {path}); refusing a second writer"
                       + (f"; {hint}" if hint else "")) from None
    except OSError as exc:  # a file system without flock (some network mounts): say so, no traceback
        os.close(fd)
        raise InputError(f"{what}: cannot lock {path} ({exc.strerror or exc}); put it on a local file system") from None
    except BaseException:
        os.close(fd)
        raise
    try:
        os.ftruncate(fd, 0)  # shared holders: the last one to start is named
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:
        pass  # the PID is for the message only; the lock itself is held
    return FileLock(path, shared, fd)


def acquire_waiting(lock_path: str | os.PathLike[str], what: str, timeout_s: float = 30.0) -> FileLock:
    """The exclusive lock at ``lock_path``, waiting (polling) up to ``timeout_s`` for a holder
    that keeps it only for a short read-merge-write (the experience pool's save); ``LockHeld``
    naming the holder when it does not come free in time (a hung process, not a busy one)."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return acquire(lock_path, what)
        except LockHeld:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)
