"""The durable, append-only event log (JSON Lines, fsync on commit).

Why JSONL and not sqlite: ``benchmarks/bench_belief.py`` measures both. With group commit (one
``fsync`` per acknowledged batch) the JSONL log keeps ingestion far above 20,000 events/s, and
reopening needs nothing but the file. An event counts as *acknowledged* once ``commit()`` (or
``BeliefTracker.ingest``, which calls it) has returned: by then its line is on disk. Events
appended but not yet committed may be lost by a crash; that is the documented trade of batching
acknowledgements, and a caller wanting one fsync per event commits after each.

Reopening tolerates what a crash leaves behind. Every record we write ends with ``\\n`` and is
fsynced before it is acknowledged, so the last acknowledged record always ends at the last newline
of the file: recovery scans backwards (in blocks, with no size limit: a record of any length is
found whole) for that newline and cuts only the bytes after it, the torn tail of an
unacknowledged write. Nothing that ends in a newline is ever cut, so no number of reopen cycles
can lose an acknowledged record. A malformed line in the middle (someone edited the file) is
skipped and reported in ``problems`` with its byte offset, never fatal, so nothing already stored
is lost. Each line ends with its CRC-32 (``_crc``), so damage inside a value is reported, never
read back as a different event. Format problems are ``LogFormatError``: it names the file and
the byte offset.

One writer at a time (issue 32). Two writers on one log (a relaunch while the old node still
runs) each kept their own idea of the file's end: the second one's recovery cut the first one's
acknowledged records as a "torn tail" and its offsets pointed into the other's lines (false
"checksum mismatch" errors). A writer therefore holds an exclusive advisory lock on the sidecar
``<log>.lock`` (with its PID in it) from before recovery until ``close``; a second writer gets
``LockHeld`` naming the log and that PID. Readers (``DurableLog(path, writable=False)``,
``BeliefTracker.open(path, read_only=True)``) take no lock and never cut anything: a final line
without its newline is a write in progress to them, not damage.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator

from household.locks import FileLock, acquire
from household.secrets import redact

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


#: Largest record the log writes or reads back; a longer line is a format error (not a hang or a
#: memory blow-up when someone points the log at a huge file).
MAX_RECORD_BYTES = 16 * 1024 * 1024
_BLOCK = 1 << 16
_CRC_TAIL = re.compile(rb',"_crc":"([0-9a-f]{8})"\}\r?\n?\Z')


class LogFormatError(ValueError):
    """A damaged or oversized belief-log record; names the file and the byte offset."""

    def __init__(self, path: str | os.PathLike[str], offset: int, reason: str) -> None:
        super().__init__(f"{path}: byte {offset}: {reason}")
        self.path = str(path)
        self.offset = offset
        self.reason = reason


def encode_record(record: dict) -> bytes:
    """The record's line as stored: compact JSON (secrets redacted), its CRC-32 as the last field
    ``_crc`` (so a flipped bit inside a value is detected, not read back as a different event), one
    newline."""
    body = redact(json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)).encode("utf-8")
    if body == b"{}":
        return b"{}\n"
    return body[:-1] + b',"_crc":"%08x"}\n' % zlib.crc32(body)


def parse_record(line: bytes, path: str | os.PathLike[str], offset: int) -> dict:
    """One log line as a JSON object, or ``LogFormatError`` naming where it is and why not.

    Lines without a ``_crc`` tail (logs written before checksums) are read as plain JSON."""
    if len(line) > MAX_RECORD_BYTES:
        raise LogFormatError(path, offset, f"record of {len(line)} bytes is over the {MAX_RECORD_BYTES}-byte limit")
    tail = _CRC_TAIL.search(line)
    if tail is not None:
        line = line[:tail.start()] + b"}"
        if zlib.crc32(line) != int(tail.group(1), 16):
            raise LogFormatError(path, offset, "checksum mismatch: the record was altered after it was written")
    try:
        rec = json.loads(line)
    except RecursionError:
        raise LogFormatError(path, offset, "record nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise LogFormatError(path, offset, f"not a JSON record ({exc})") from None
    if not isinstance(rec, dict):
        raise LogFormatError(path, offset, f"record is a JSON {type(rec).__name__}, not an object")
    return rec


def last_newline_end(fh, end: int) -> int:
    """Offset just past the last ``\\n`` in the first ``end`` bytes of ``fh`` (0 if none).

    Scans backwards block by block, so a final record of any length is found whole.
    """
    pos = end
    while pos > 0:
        start = max(0, pos - _BLOCK)
        fh.seek(start)
        block = fh.read(pos - start)
        i = block.rfind(b"\n")
        if i >= 0:
            return start + i + 1
        pos = start
    return 0


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The sidecar lock file of the log at ``path``."""
    p = Path(path)
    return p.with_name(p.name + ".lock")


class DurableLog:
    """Append-only JSONL file. ``append`` buffers, ``commit`` makes the buffer durable.

    ``writable=False`` opens it for reading only: no lock, no recovery cut, ``append`` refused."""

    def __init__(self, path: str | os.PathLike[str], writable: bool = True) -> None:
        self.path = Path(path)
        self.writable = writable
        self.problems: list[str] = []
        self._lock: FileLock | None = None
        self._pending: list[bytes] = []
        self._fh: BinaryIO | None = None
        if not writable:
            if not self.path.is_file():
                raise LogFormatError(self.path, 0, "no such log file" if not self.path.exists() else "not a regular file")
            self._rfh = open(self.path, "rb")
            self._size = self._rfh.seek(0, os.SEEK_END)
            self._committed = self._size
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and not self.path.is_file():
            raise LogFormatError(self.path, 0, "not a regular file")
        self._lock = acquire(lock_path(self.path), f"belief log {self.path}",
                             hint="close the other writer first, or open the log read-only")
        try:
            self._recover()
            fh = self._fh = open(self.path, "ab")
        except BaseException:
            self._lock.release()
            raise
        self._size = fh.tell()
        self._committed = self._size
        self._rfh = open(self.path, "rb")

    def _recover(self) -> None:
        """Cut the torn tail (bytes after the last newline) a crash left, and nothing else."""
        if not self.path.exists():
            return
        if not self.path.is_file():
            raise LogFormatError(self.path, 0, "not a regular file")
        with open(self.path, "rb+") as fh:
            end = fh.seek(0, os.SEEK_END)
            cut = last_newline_end(fh, end)
            if cut < end:
                fh.truncate(cut)
                fh.flush()
                os.fsync(fh.fileno())
                self.problems.append(f"{self.path}: byte {cut}: cut a torn final line ({end - cut} bytes, "
                                     "no newline: never acknowledged) left by a crash")

    @staticmethod
    def encode(record: dict) -> bytes:
        return encode_record(record)

    def append(self, record: dict) -> int:
        """Buffer one record; returns the byte offset its line will have."""
        if not self.writable:
            raise LogFormatError(self.path, self._size, "log opened read-only; records cannot be appended")
        try:
            line = self.encode(record)
        except (TypeError, ValueError, RecursionError) as exc:
            raise LogFormatError(self.path, self._size, f"record cannot be stored as strict JSON ({exc})") from None
        if len(line) > MAX_RECORD_BYTES:
            raise LogFormatError(self.path, self._size,
                                 f"record of {len(line)} bytes is over the {MAX_RECORD_BYTES}-byte limit")
        offset = self._size
        self._pending.append(line)
        self._size += len(line)
        return offset

    def commit(self) -> None:
        """Write and fsync everything appended so far: after this returns it survives a crash."""
        if not self._pending or self._fh is None:
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
                    return parse_record(line, self.path, offset)
                pos += len(line)
            raise KeyError(offset)
        self._rfh.seek(offset)
        return parse_record(self._rfh.readline(MAX_RECORD_BYTES + 1), self.path, offset)

    def scan(self) -> Iterator[tuple[int, dict]]:
        """(offset, record) for every committed, parseable line; bad lines go to ``problems``."""
        offset = 0
        lineno = 0
        with open(self.path, "rb") as fh:
            while True:
                line = fh.readline(MAX_RECORD_BYTES + 1)
                if not line:
                    break
                if not self.writable and not line.endswith(b"\n") and len(line) <= MAX_RECORD_BYTES:
                    break  # a reader sees the writer's record in progress: not damage, not yet committed
                lineno += 1
                if len(line) > MAX_RECORD_BYTES and not line.endswith(b"\n"):
                    rest = fh.readline(_BLOCK)  # skip the remainder of the oversized line
                    while rest and not rest.endswith(b"\n"):
                        rest = fh.readline(_BLOCK)
                    self.problems.append(f"{self.path}:{lineno}: skipped malformed log line at byte {offset}: "
                                         f"record over the {MAX_RECORD_BYTES}-byte limit")
                    offset = fh.tell()
                    continue
                try:
                    rec = parse_record(line, self.path, offset)
                except LogFormatError as exc:
                    self.problems.append(f"{self.path}:{lineno}: skipped malformed log line at byte {offset}: "
                                         f"{exc.reason}")
                else:
                    yield offset, rec
                offset += len(line)

    def close(self) -> None:
        """Commit what is pending, close the file and release the writer's lock."""
        try:
            self.commit()
        finally:
            if self._fh is not None:
                self._fh.close()
            self._rfh.close()
            if self._lock is not None:
                self._lock.release()
