"""Is a bag whole? What rosbag2 states about a recording, checked against what is in it.

A bag recorded on a robot by ``ros2 bag record`` carries no marker of ours (``BagWriter`` marks an
interrupted recording itself), so a recording that was cut off must be recognised from what
rosbag2 itself writes (checked against ros2/rosbag2: ``SequentialWriter``, ``MetadataIo``,
``rosbag2_storage/yaml.hpp``, the sqlite3 and MCAP storage plugins):

- ``metadata.yaml`` (top key ``rosbag2_bagfile_information``) is written by the recorder only when
  it closes (``SequentialWriter::close``). A rosbag2 folder without it is a recording that never
  closed: killed, crashed, power lost (``ros2 bag reindex`` rebuilds it from the storage files).
- It states ``message_count`` (the sum over ``topics_with_message_count[].message_count``, each
  counted as the message reached storage), ``starting_time.nanoseconds_since_epoch`` (the first
  message's receive time), ``duration.nanoseconds`` (last minus first receive time),
  ``relative_file_paths`` and, from version 5, ``files[]`` (``path``, ``message_count``, ...) for
  the split storage files ``<folder>_<N>.<ext>``. Storage files that hold fewer messages of a topic
  than stated, messages spanning another time, or listed files that are gone: the folder is not
  the recording its metadata describes.
- The sqlite3 plugin also keeps the metadata in the .db3 itself (table ``metadata``, one row per
  update: at open with no messages, at each split, at close), so a lone .db3 whose latest row
  still states no messages was never closed. rosbags (our writer) adds its row at close only.
- An MCAP file states its counts in its summary (Statistics, chunk indexes); one cut short has no
  summary and is read by ``salvage``, which names where it ends.

``inspect_bag`` reads and validates what a bag states before anything is read (a metadata.yaml
that cannot be trusted, e.g. a key given twice, is refused: ``BagMetadataError`` naming the file
and the key or field); ``Tally`` counts what was read; ``compare`` lists every disagreement as a
reason the bag is partial. A reader replays what is there and reports it partial, never whole.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from household.errors import InputError
from household.input_files import DuplicateKeyError, check_input_file, load_yaml_unique_keys

METADATA_FILE = "metadata.yaml"
TOP_KEY = "rosbag2_bagfile_information"
STORAGE_SUFFIXES = (".mcap", ".db3")
MAX_METADATA_BYTES = 16 * 1024 * 1024  # a few kB per topic; more is not a rosbag2 metadata file
NS = 1_000_000_000


class BagMetadataError(InputError):
    """A bag's stated metadata that cannot be read or trusted; the message names the file and the
    key or field (never a value beyond what identifies it)."""


@dataclass
class Stated:
    """What a bag says it holds: per-topic message counts, the total, when and how long."""

    source: str  # the file that says it (metadata.yaml, or a .db3's metadata table)
    topics: dict[str, int]
    message_count: int
    starting_ns: int | None = None
    duration_ns: int | None = None
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "message_count": self.message_count, "topics": dict(self.topics),
                "starting_ns": self.starting_ns, "duration_ns": self.duration_ns, "files": list(self.files)}


@dataclass
class BagLayout:
    """A bag's files and statement, before reading: ``storage`` in reading order, ``stated`` when
    the bag says what it holds, ``partial`` the reasons known up front that it is not whole,
    ``problems`` what is odd but does not make it partial."""

    path: Path
    storage: list[Path]
    stated: Stated | None = None
    partial: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def is_folder(self) -> bool:
        return self.path.is_dir()


@dataclass
class Tally:
    """What a read found, over every topic (read or skipped): messages per topic, receive times."""

    topics: Counter = field(default_factory=Counter)
    first_ns: int | None = None
    last_ns: int | None = None

    def add(self, topic: str, t: int) -> None:
        self.topics[topic] += 1
        self.first_ns = t if self.first_ns is None else min(self.first_ns, t)
        self.last_ns = t if self.last_ns is None else max(self.last_ns, t)

    @property
    def total(self) -> int:
        return sum(self.topics.values())


# ---- reading what a bag states ---------------------------------------------------------------------

def _field(where: str, path: str, problem: str) -> BagMetadataError:
    return BagMetadataError(f"{where}: {path}: {problem}")


def _count(value: Any, where: str, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _field(where, path, f"expected a non-negative integer, got {type(value).__name__}")
    return value


def _mapping(value: Any, where: str, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _field(where, path, f"expected a mapping, got {type(value).__name__}")
    return value


def _list(value: Any, where: str, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _field(where, path, f"expected a list, got {type(value).__name__}")
    return value


def _get(mapping: dict[str, Any], key: str, where: str, path: str) -> Any:
    if key not in mapping:
        raise _field(where, f"{path}.{key}" if path else key, "missing")
    return mapping[key]


def _time(mapping: dict[str, Any], key: str, inner: str, where: str, path: str) -> int:
    sub = _mapping(_get(mapping, key, where, path), where, f"{path}.{key}")
    return _count(_get(sub, inner, where, f"{path}.{key}"), where, f"{path}.{key}.{inner}")


def parse_metadata(body: Any, where: str, path: str = TOP_KEY) -> Stated:
    """The statement of a rosbag2 metadata body (the mapping under ``rosbag2_bagfile_information``),
    validated field by field as rosbag2's own decoder reads it; errors name ``where`` and the field."""
    info = _mapping(body, where, path)
    version = _count(_get(info, "version", where, path), where, f"{path}.version")
    _get(info, "storage_identifier", where, path)
    topics: dict[str, int] = {}
    entries = _list(_get(info, "topics_with_message_count", where, path), where, f"{path}.topics_with_message_count")
    for i, entry in enumerate(entries):
        at = f"{path}.topics_with_message_count[{i}]"
        entry = _mapping(entry, where, at)
        meta = _mapping(_get(entry, "topic_metadata", where, at), where, f"{at}.topic_metadata")
        name = _get(meta, "name", where, f"{at}.topic_metadata")
        if not isinstance(name, str) or not name:
            raise _field(where, f"{at}.topic_metadata.name", "expected a topic name")
        _get(meta, "type", where, f"{at}.topic_metadata")
        # one topic may be listed once per message type: its counts add up
        topics[name] = topics.get(name, 0) + _count(_get(entry, "message_count", where, at), where,
                                                    f"{at}.message_count")
    files = [str(f) for f in _list(_get(info, "relative_file_paths", where, path), where,
                                   f"{path}.relative_file_paths")]
    if version >= 5 and "files" in info:
        for i, entry in enumerate(_list(info["files"], where, f"{path}.files")):
            at = f"{path}.files[{i}]"
            entry = _mapping(entry, where, at)
            _get(entry, "path", where, at)
            _count(_get(entry, "message_count", where, at), where, f"{at}.message_count")
    return Stated(source=where, topics=topics,
                  message_count=_count(_get(info, "message_count", where, path), where, f"{path}.message_count"),
                  starting_ns=_time(info, "starting_time", "nanoseconds_since_epoch", where, path),
                  duration_ns=_time(info, "duration", "nanoseconds", where, path), files=files)


def _load_yaml(text: str, where: str) -> Any:
    import yaml

    try:
        return load_yaml_unique_keys(text)
    except DuplicateKeyError as exc:
        raise BagMetadataError(f"{where}: {exc}; refusing a metadata file that states two things") from None
    except RecursionError:
        raise BagMetadataError(f"{where}: nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        raise BagMetadataError(f"{where}: not valid YAML{at}") from None


def read_metadata_yaml(path: Path) -> Stated:
    """A rosbag2 folder's metadata.yaml, validated; BagMetadataError naming the file otherwise."""
    check_input_file(path, "a rosbag2 metadata file", MAX_METADATA_BYTES)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BagMetadataError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    data = _mapping(_load_yaml(text, str(path)), str(path), "(the document)")
    return parse_metadata(_get(data, TOP_KEY, str(path), ""), str(path))


def stated_in_db3(path: Path) -> tuple[Stated | None, str | None]:
    """The latest metadata a .db3 keeps in its ``metadata`` table, and why the file looks unclosed
    (its table empty or stating no messages although it has some) or unverifiable (that entry
    damaged: unlike a folder's metadata.yaml it is not refused, since the rows may still be whole),
    or (None, None) where it keeps none (schemas before 3) or cannot be asked (a damaged file: the
    salvage read names that)."""
    import sqlite3

    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return None, None
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "metadata" not in tables:
            return None, None
        row = db.execute("SELECT metadata FROM metadata ORDER BY id DESC LIMIT 1").fetchone()
        has_messages = db.execute("SELECT 1 FROM messages LIMIT 1").fetchone() is not None
    except sqlite3.Error:
        return None, None
    finally:
        db.close()
    where = f"{path} (its metadata table)"
    if row is None:
        return None, ("its metadata table is empty: the recorder never closed it (rosbag2 and rosbags "
                      "write the final entry on close)") if has_messages else None
    try:
        stated = parse_metadata(_load_yaml(str(row[0]), where), where, "metadata")
    except BagMetadataError as exc:  # damage inside the file: the rows still read, but cannot be checked
        return None, (f"its metadata table's latest entry cannot be read ({str(exc)[len(where) + 2:]}), so the "
                      "messages cannot be checked against it")
    if has_messages and stated.message_count == 0:
        return None, ("its metadata table's latest entry states no messages, yet it holds some: the recorder "
                      "never closed it (rosbag2 writes an entry at open and the final one at close)")
    return stated, None


_SPLIT_INDEX = re.compile(r"_(\d+)$")


def _split_order(p: Path) -> tuple[int, str]:
    """rosbag2 names split files ``<folder>_<N>.<ext>``: read them in N order, then by name."""
    m = _SPLIT_INDEX.search(p.name[: -len(p.suffix)])
    return (int(m.group(1)) if m else 1 << 30, p.name)


def inspect_bag(path: str | Path) -> BagLayout:
    """The bag's storage files in reading order and what it states about itself. Raises
    BagMetadataError for a metadata file that cannot be trusted; a folder without metadata.yaml,
    or one whose listed files are gone, is read as what is there with the reason in ``partial``."""
    path = Path(path)
    if not path.is_dir():
        layout = BagLayout(path, [path])
        if path.suffix == ".db3" and path.is_file():
            stated, unclosed = stated_in_db3(path)
            layout.stated = stated
            if unclosed:
                layout.partial.append(f"{path}: {unclosed}")
        return layout
    present = sorted((p for p in path.iterdir() if p.suffix in STORAGE_SUFFIXES and p.is_file()), key=_split_order)
    layout = BagLayout(path, present)
    meta = path / METADATA_FILE
    if not meta.exists():
        layout.partial.append(f"{path}: no {METADATA_FILE}: rosbag2 writes it when the recorder closes, so this "
                              f"recording was cut off ({len(present)} storage file(s) read as they are; "
                              "`ros2 bag reindex` can rebuild the metadata)")
        return layout
    stated = read_metadata_yaml(meta)
    layout.stated = stated
    listed = [path / Path(f).name for f in stated.files]
    missing = [p for p in listed if not p.exists()]
    for p in missing:
        layout.partial.append(f"{meta}: lists {p.name}, which is not in the folder")
    unlisted = [p for p in present if p not in listed]
    for p in unlisted:
        layout.problems.append(f"{path}: {p.name} is not listed in {METADATA_FILE}; not read")
    layout.storage = [p for p in listed if p.exists()]  # rosbag2's order, as a rosbags reader reads them
    return layout


# ---- checking what was read against it ---------------------------------------------------------------

def compare(stated: Stated, tally: Tally) -> list[str]:
    """Every way the messages read disagree with the statement, one line each naming the source
    and the topic or field; empty when they agree."""
    out: list[str] = []
    src = stated.source
    for topic in sorted(set(stated.topics) | set(tally.topics)):
        want, got = stated.topics.get(topic, 0), tally.topics.get(topic, 0)
        if want != got:
            if topic not in stated.topics:
                out.append(f"{src}: topic {topic}: {got} message(s) read, but the topic is not listed")
            else:
                out.append(f"{src}: topic {topic}: {got} of the {want} message(s) stated were read")
    if stated.message_count != tally.total:
        out.append(f"{src}: message_count states {stated.message_count}, {tally.total} were read")
    if tally.first_ns is not None and tally.last_ns is not None:
        if stated.starting_ns is not None and stated.starting_ns != tally.first_ns:
            out.append(f"{src}: starting_time states {stated.starting_ns} ns, the first message read is at "
                       f"{tally.first_ns} ns")
        span = tally.last_ns - tally.first_ns
        if stated.duration_ns is not None and stated.duration_ns != span:
            out.append(f"{src}: duration states {stated.duration_ns / NS:.3f} s, the messages read span "
                       f"{span / NS:.3f} s")
    return out


def stated_by_reader(source: str, connections: list[Any]) -> Stated | None:
    """An MCAP file's own counts as rosbags read them from its summary (per connection)."""
    topics: dict[str, int] = {}
    for c in connections:
        topics[c.topic] = topics.get(c.topic, 0) + int(getattr(c, "msgcount", 0) or 0)
    return Stated(source=f"{source} (its summary)", topics=topics, message_count=sum(topics.values()))
