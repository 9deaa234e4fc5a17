"""Opening a bag's storage for reading: rosbags' indexed reader where it works, else file by file
with a sequential salvage read of whatever rosbags cannot open.

Why file by file: rosbags opens a rosbag2 folder through its metadata.yaml and refuses the whole
folder when that file is missing (a recording that never closed) or one listed file is gone or
cut short, although every other split file is whole. Reading each storage file on its own keeps
what is there; the reasons it is not the whole recording come from ``bag_integrity``.

``open_storage(path, layout) -> OpenedBag``: every connection, and one message stream over all of
them in reading order (files in split order), which raises where the data is damaged, naming the
file. ``BagReadError`` (naming the file) when nothing can be opened at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from household.input_files import check_input_file
from sim_bridge.replay.bag_integrity import BagLayout, Stated, stated_by_reader
from sim_bridge.replay.salvage import SalvageError, salvage_mcap, salvage_sqlite3

Message = tuple[Any, int, bytes]  # (connection with .topic and .msgtype, receive time ns, CDR bytes)


class BagReadError(RuntimeError):
    """A bag that cannot be read (further); the message names the file."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        super().__init__(f"{path}: {problem}")


@dataclass
class OpenedBag:
    connections: list[Any]
    messages: Iterator[Message]
    stated: Stated | None = None  # what the storage itself states (an indexed MCAP's summary)
    problems: list[str] = field(default_factory=list)
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for close in self.closers:
            try:
                close()
            except Exception:  # noqa: BLE001 - closing a damaged reader must not mask the read's outcome
                pass


def _salvage(storage: Path) -> tuple[list[Any], Iterator[Message]]:
    if storage.suffix == ".mcap":
        return salvage_mcap(storage)
    if storage.suffix == ".db3":
        return salvage_sqlite3(storage)
    raise SalvageError(0, "not an .mcap or .db3 file")


def _indexed(path: Path) -> tuple[Any, list[Any]]:
    from rosbags.rosbag2 import Reader

    reader = Reader(path)
    reader.open()
    return reader, list(reader.connections)


def open_storage(path: Path, layout: BagLayout) -> OpenedBag:
    # a FIFO or /dev/zero named as a bag would block or stream for ever
    for f in ([p for p in path.iterdir() if p.suffix in (".mcap", ".db3", ".yaml")] if path.is_dir() else [path]):
        check_input_file(f, "a bag")
    try:
        reader, conns = _indexed(path)
    except Exception as exc:  # rosbags raises several types for unreadable files
        first = f"{type(exc).__name__}: {exc}"
    else:
        stated = stated_by_reader(str(path), conns) if path.suffix == ".mcap" and not path.is_dir() else None
        return OpenedBag(conns, reader.messages(), stated, closers=[reader.close])
    if path.is_dir():
        return _open_files(path, layout.storage, first)
    try:
        conns, messages = _salvage(path)
    except (SalvageError, OSError) as exc:
        raise BagReadError(path, f"cannot open bag ({first}); salvage failed: {exc}") from None
    return OpenedBag(conns, messages, problems=[f"{path}: index unreadable ({first}); reading records sequentially"])


def _once(messages: Iterator[Message]) -> Callable[[], Iterator[Message]]:
    """A salvage read's iterator, handed out when its file's turn comes."""
    return lambda: messages


def _open_files(folder: Path, files: list[Path], first: str) -> OpenedBag:
    """The folder's storage files one by one (rosbags could not open the folder as a whole)."""
    if not files:
        raise BagReadError(folder, f"cannot open bag ({first}), and it holds no .mcap or .db3 storage file")
    opened = OpenedBag([], iter(()), problems=[f"{folder}: rosbags cannot open the folder ({first}); reading its "
                                                f"{len(files)} storage file(s) one by one"])
    parts: list[tuple[Path, Callable[[], Iterator[Message]]]] = []
    for f in files:
        try:
            reader, conns = _indexed(f)
            opened.closers.append(reader.close)
            parts.append((f, reader.messages))
        except Exception as exc:  # noqa: BLE001 - as above: fall back to the record-by-record read
            try:
                conns, messages = _salvage(f)
            except (SalvageError, OSError) as exc2:
                raise BagReadError(f, f"cannot open storage file ({type(exc).__name__}: {exc}); "
                                      f"salvage failed: {exc2}") from None
            opened.problems.append(f"{f}: index unreadable ({type(exc).__name__}: {exc}); reading records sequentially")
            parts.append((f, _once(messages)))
        opened.connections += conns

    def stream() -> Iterator[Message]:
        for f, messages in parts:
            try:
                yield from messages()
            except Exception as exc:  # damage inside one file: name it (the reader names the bag)
                raise RuntimeError(f"{f.name}: {type(exc).__name__}: {exc}") from None

    opened.messages = stream()
    return opened
