"""The durable, append-only event log (JSON Lines, fsync on commit).

Why JSONL and not sqlite: ``benchmarks/bench_belief.py`` measures both. With group commit (one
``fsync`` per acknowledged batch) the JSONL log keeps ingestion far above 20,000 events/s, and
reopening needs nothing but the file. An event counts as *acknowledged* once ``commit()`` (or
``BeliefTracker.ingest``, which calls it) has returned: by then its line is on disk. Events
appended but not yet committed may be lost by a crash; that is the documented trade of batching
acknowledgements, and a caller wanting one fsync per event commits after each.

Reopening tolerates what a crash leaves behind: a torn last line (no newline, or not JSON) is cut
off; a malformed line in the middle (someone edited the file) is skipped and reported in
``problems`` with its line number, never fatal, so nothing already stored is lost.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import BinaryIO, Iterator


_BLOCK = 65536


def _last_line_start(fh: BinaryIO, end: int) -> int:
    """Byte offset where the file's last line starts (its final newline, if any, belongs to it)."""
    fh.seek(end - 1)
    pos = end - 1 if fh.read(1) == b"\n" else end
    while pos > 0:
        lo = max(0, pos - _BLOCK)
        fh.seek(lo)
        i = fh.read(pos - lo).rfind(b"\n")
        if i >= 0:
            return lo + i + 1
        pos = lo
    return 0


class DurableLog:
    """Append-only JSONL file. ``append`` buffers, ``commit`` makes the buffer durable."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.problems: list[str] = []
        self._recover()
        self._fh = open(self.path, "ab")
        self._pending: list[bytes] = []
        self._size = self._fh.tell()
        self._committed = self._size
        self._rfh = open(self.path, "rb")

    def _recover(self) -> None:
        """Cut a torn final line left by a crash, so the next append starts on a clean line.

        The last line is found by scanning backwards for the newline before it, however long the
        line is: reading a fixed-size tail once cut acknowledged records longer than the tail."""
        if not self.path.exists():
            return
        with open(self.path, "rb+") as fh:
            fh.seek(0, os.SEEK_END)
            end = fh.tell()
            if end == 0:
                return
            start = _last_line_start(fh, end)
            fh.seek(start)
            last = fh.read(end - start)
            ok = last.endswith(b"\n")
            if ok:
                try:
                    json.loads(last)
                except ValueError:
                    ok = False
            if not ok:
                fh.truncate(start)
                fh.flush()
                os.fsync(fh.fileno())
                self.problems.append(f"{self.path}: cut a torn final line ({len(last)} bytes at byte {start}) "
                                     "left by a crash")

    def append(self, record: dict) -> int:
        """Buffer one record; returns the byte offset its line will have."""
        line = (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        offset = self._size
        self._pending.append(line)
        self._size += len(line)
        return offset

    def commit(self) -> None:
        """Write and fsync everything appended so far: after this returns it survives a crash."""
        if not self._pending:
            return
        self._fh.write(b"".join(self._pending))
        self._pending.clear()
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._committed = self._size

    def read_at(self, offset: int) -> dict:
        """The record whose line starts at ``offset`` (committed or still pending)."""
        if offset >= self._committed:
            pos = self._committed
            for line in self._pending:
                if pos == offset:
                    return json.loads(line)
                pos += len(line)
            raise KeyError(offset)
        self._rfh.seek(offset)
        return json.loads(self._rfh.readline())

    def scan(self) -> Iterator[tuple[int, dict]]:
        """(offset, record) for every committed, parseable line; bad lines go to ``problems``."""
        offset = 0
        with open(self.path, "rb") as fh:
            for lineno, line in enumerate(fh, start=1):
                try:
                    rec = json.loads(line)
                    if not isinstance(rec, dict):
                        raise ValueError("not a JSON object")
                except ValueError as exc:
                    self.problems.append(f"{self.path}:{lineno}: skipped malformed log line ({exc})")
                else:
                    yield offset, rec
                offset += len(line)

    def close(self) -> None:
        self.commit()
        self._fh.close()
        self._rfh.close()
