"""Reading what is left of a damaged bag, record by record, without its index.

rosbags reads MCAP through the summary at the end of the file, so a recording cut short (a crash,
a full disk, a copy that stopped) cannot even be opened, although every chunk before the cut is
intact. ``salvage_mcap`` walks the file from the start (MCAP's records are length-prefixed:
opcode u8, length u64, body), yields the messages of every readable chunk (uncompressed or zstd)
and stops at the first record that does not parse, reporting where. The same for a damaged
sqlite3 bag (``salvage_sqlite3``): rows are read in timestamp order until SQLite refuses.

Both return ``(connections, messages)``: ``connections`` lists ``SalvagedConnection`` (id, topic,
msgtype) and ``messages`` is an iterator of ``(connection, log_time_ns, cdr_bytes)`` that raises
``SalvageError`` (with ``.offset``) where the damage starts.
"""

from __future__ import annotations

import struct
from binascii import crc32
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

MAGIC = b"\x89MCAP0\r\n"
OP_SCHEMA, OP_CHANNEL, OP_MESSAGE, OP_CHUNK, OP_DATA_END, OP_FOOTER = 0x03, 0x04, 0x05, 0x06, 0x0F, 0x02
_KNOWN_OPS = set(range(0x01, 0x10))


class SalvageError(RuntimeError):
    def __init__(self, offset: int, problem: str) -> None:
        self.offset = offset
        super().__init__(f"at byte {offset}: {problem}")


@dataclass
class SalvagedConnection:
    id: int
    topic: str
    msgtype: str


class _Buf:
    def __init__(self, data: bytes | memoryview, base: int) -> None:
        self.data = memoryview(data)
        self.pos = 0
        self.base = base

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise SalvageError(self.base + self.pos, f"record needs {n} bytes, {len(self.data) - self.pos} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u16(self) -> int:
        return struct.unpack("<H", self.take(2))[0]

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def string(self) -> str:
        raw = self.take(self.u32())
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise SalvageError(self.base + self.pos, "string is not UTF-8") from None

    @property
    def left(self) -> int:
        return len(self.data) - self.pos


def salvage_mcap(path: str | Path) -> tuple[list[SalvagedConnection], Iterator[tuple[SalvagedConnection, int, bytes]]]:
    data = Path(path).read_bytes()
    if not data.startswith(MAGIC):
        raise SalvageError(0, "not an MCAP file (bad magic)")
    schemas: dict[int, str] = {}
    channels: dict[int, SalvagedConnection] = {}

    def records(buf: _Buf) -> Iterator[tuple[int, _Buf]]:
        while buf.left:
            start = buf.pos
            if buf.left < 9:
                raise SalvageError(buf.base + start, f"{buf.left} stray byte(s) where a record should start")
            op = buf.take(1)[0]
            length = buf.u64()
            if op not in _KNOWN_OPS:
                raise SalvageError(buf.base + start, f"unknown record opcode 0x{op:02x}")
            if op == OP_CHUNK and length > buf.left:  # a chunk cut short: its complete messages still count
                body = _Buf(buf.take(buf.left), buf.base + buf.pos - buf.left)
                body.cut = True  # type: ignore[attr-defined]
                yield op, body
                raise SalvageError(buf.base + start, f"chunk of {length} bytes is cut short (truncated file)")
            body = _Buf(buf.take(length), buf.base + buf.pos - length)
            yield op, body

    def inner(buf: _Buf) -> Iterator[tuple[SalvagedConnection, int, bytes]]:
        for op, body in records(buf):
            if op == OP_SCHEMA:
                sid = body.u16()
                schemas[sid] = body.string()
            elif op == OP_CHANNEL:
                cid, sid = body.u16(), body.u16()
                topic = body.string()
                body.string()  # message encoding
                if sid not in schemas:
                    raise SalvageError(body.base, f"channel {topic} names unknown schema {sid}")
                if cid not in channels:  # the second pass keeps the first pass's objects
                    channels[cid] = SalvagedConnection(cid, topic, schemas[sid])
            elif op == OP_MESSAGE:
                cid = body.u16()
                body.u32()
                log_time = body.u64()
                body.u64()
                if cid not in channels:
                    raise SalvageError(body.base, f"message on unknown channel {cid}")
                yield channels[cid], log_time, bytes(body.take(body.left))
            elif op == OP_CHUNK:
                body.u64()
                body.u64()
                size = body.u64()
                crc = body.u32()  # 0: written without one (rosbags before mcap_crc)
                compression = body.string()
                declared = body.u64()
                cut = getattr(body, "cut", False)
                pstart = body.base + body.pos
                payload = body.take(min(declared, body.left) if cut and compression == "" else declared)
                if compression == "":
                    raw: bytes | memoryview = payload
                elif compression == "zstd":
                    try:
                        import zstandard
                    except ImportError:
                        raise SalvageError(body.base, "zstd-compressed chunk, and zstandard is not installed") from None
                    try:
                        raw = zstandard.ZstdDecompressor().decompress(bytes(payload), max_output_size=size)
                    except zstandard.ZstdError as exc:
                        raise SalvageError(body.base, f"chunk does not decompress: {exc}") from None
                else:
                    raise SalvageError(body.base, f"unsupported chunk compression {compression!r}")
                if crc and not cut and crc32(raw) != crc:  # a cut chunk is partial by design: no whole CRC
                    raise SalvageError(body.base, "chunk checksum mismatch (CRC-32): the data inside it is damaged")
                yield from inner(_Buf(raw, pstart))  # offsets exact for uncompressed chunks
            elif op in (OP_DATA_END, OP_FOOTER):
                ended[0] = True
                return

    ended = [False]

    def messages() -> Iterator[tuple[SalvagedConnection, int, bytes]]:
        ended[0] = False
        yield from inner(_Buf(data[len(MAGIC):], len(MAGIC)))
        if not ended[0]:
            raise SalvageError(len(data), "file ends without MCAP's data-end/footer records (truncated)")

    # Channels are announced inside the chunks, so the list fills as messages are read; callers
    # that need it up front get the channels of a first pass (cheap: no deserialisation).
    conns: list[SalvagedConnection] = []
    try:
        for _ in inner(_Buf(data[len(MAGIC):], len(MAGIC))):
            pass
    except SalvageError:
        pass
    conns = sorted(channels.values(), key=lambda c: c.id)
    return conns, messages()


def _sqlite_padded_copies(path: Path) -> tuple[Path, Path] | None:
    """Two copies of a truncated SQLite file, extended to the size its header states with pages of
    0x00 and of 0xAA; None when the file is not short (or not SQLite). SQLite refuses a file
    shorter than its header says ("database disk image is malformed") although every page before
    the cut is intact. With the lost pages filled in, a table scan reads the rows before the cut;
    a row whose blob ran on into a lost overflow page reads differently from the two copies, so
    comparing them tells intact rows from damaged ones (one padded copy alone would hand back a
    zero-filled image as if it were recorded)."""
    import os
    import shutil
    import tempfile

    with open(path, "rb") as fh:
        header = fh.read(100)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
        return None
    page = struct.unpack(">H", header[16:18])[0]
    page = 65536 if page == 1 else page
    expected = struct.unpack(">I", header[28:32])[0] * page
    missing = expected - path.stat().st_size
    if missing <= 0:
        return None
    copies = []
    for fill in (b"\x00", b"\xaa"):
        fd, tmp = tempfile.mkstemp(prefix=".salvage-", suffix=".db3")
        os.close(fd)
        shutil.copyfile(path, tmp)
        with open(tmp, "ab") as fh:
            block = fill * page
            for _ in range(missing // page):
                fh.write(block)
            fh.write(fill * (missing % page))
        copies.append(Path(tmp))
    return copies[0], copies[1]


def salvage_sqlite3(path: str | Path) -> tuple[list[SalvagedConnection], Iterator[tuple[SalvagedConnection, int, bytes]]]:
    """Rows of a damaged .db3. A file cut short (a recording killed mid-write, a partial copy)
    gives back, in storage order, the rows that read the same from two differently padded copies
    (see ``_sqlite_padded_copies``), up to the first one that does not."""
    import sqlite3

    src = Path(path)
    try:
        padded = _sqlite_padded_copies(src)
    except OSError as exc:
        raise SalvageError(0, f"sqlite3: {exc}") from None
    paths = list(padded) if padded else [src]

    def cleanup() -> None:
        if padded:
            for tmp in padded:
                tmp.unlink(missing_ok=True)

    try:
        dbs = [sqlite3.connect(f"file:{p}?mode=ro", uri=True) for p in paths]
        rows = dbs[0].execute("SELECT id, name, type FROM topics ORDER BY id").fetchall()
    except sqlite3.DatabaseError as exc:
        cleanup()
        raise SalvageError(0, f"sqlite3: {exc}") from None
    conns = {int(i): SalvagedConnection(int(i), name, typ) for i, name, typ in rows}
    # Sorting needs every row, so a cut file is read in storage (insertion) order instead; the
    # reader's synchroniser drops and counts anything out of order.
    query = ("SELECT topic_id, timestamp, data FROM messages" if padded
             else "SELECT topic_id, timestamp, data FROM messages ORDER BY timestamp, id")

    def messages() -> Iterator[tuple[SalvagedConnection, int, bytes]]:
        n = 0
        try:
            cursors = [db.execute(query) for db in dbs]
            while True:
                got = [cur.fetchone() for cur in cursors]
                if got[0] is None:
                    return
                if any(row != got[0] for row in got[1:]):
                    raise SalvageError(n, f"sqlite3: row {n + 1} runs into the part of the file that was lost")
                n += 1
                tid, t, data = got[0]
                if int(tid) in conns:
                    yield conns[int(tid)], int(t), bytes(data)
        except sqlite3.DatabaseError as exc:
            raise SalvageError(n, f"sqlite3 after {n} row(s): {exc}") from None
        finally:
            for db in dbs:
                db.close()
            cleanup()

    return list(conns.values()), messages()
