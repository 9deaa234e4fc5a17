"""MCAP chunks with their CRC-32, so damage inside recorded data is detected on replay.

rosbags 0.11.9 writes every MCAP chunk with ``uncompressed_crc = 0`` ("no CRC" in the MCAP spec),
so a flipped byte inside image data reads back as a different, valid-looking image: a damaged bag
replayed with exit 0 and no problem while memory precision fell from 1.0 to 0.5. Its reader does
verify a non-zero CRC (``Chunk checksum mismatch``). ``CrcMcapWriter`` lets rosbags write the chunk
as usual and then fills the CRC field in place: the field sits at a fixed offset of the chunk
record (opcode u8, record length u64, message start u64, message end u64, uncompressed size u64,
then the CRC u32), so nothing else about the file changes. ``CrcWriter`` is rosbags' ``Writer``
with that storage for MCAP (sqlite3 bags are unchanged: SQLite has no per-row checksum to fill).
"""

from __future__ import annotations

import struct
from binascii import crc32

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.storage_mcap import McapWriter

CHUNK_CRC_OFFSET = 1 + 8 + 8 + 8 + 8  # opcode, record length, message start/end time, uncompressed size


class CrcMcapWriter(McapWriter):
    """rosbags' MCAP storage writer, with each chunk's uncompressed CRC-32 filled in."""

    def close_chunk(self) -> None:
        crc = crc32(self.chunk.bio.getvalue())
        start = self.bio.tell()  # the chunk record is the next thing written
        super().close_chunk()
        end = self.bio.tell()  # (the file is write-only; tests/test_bags.py checks the layout against rosbags)
        self.bio.seek(start + CHUNK_CRC_OFFSET)
        self.bio.write(struct.pack("<I", crc))
        self.bio.seek(end)


class CrcWriter(Writer):
    """rosbags' rosbag2 ``Writer`` whose MCAP files carry chunk CRCs."""

    STORAGE_PLUGINS = {**Writer.STORAGE_PLUGINS, StoragePlugin.MCAP: CrcMcapWriter}
