"""Issue 32: /dev/zero, a link to it, a named pipe or an oversized file named as an episode, a
houses file, an experience pool or a bag: refused at once, naming the file and what it is (it
streamed gigabytes, or hung in open())."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from household.input_files import NotARegularFile, check_input_file


def _specials(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    folder = tmp_path / "folder.json"
    folder.mkdir()
    return {"a named pipe": fifo, "a character device": link, "a folder": folder}


def _bounded(fn, *args):
    """Run fn in a thread: a reader that blocks on a FIFO must not hang the test run."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), f"{fn.__name__} blocked on {args}"
    return box


def test_special_files_are_named_and_refused(tmp_path: Path) -> None:
    for kind, path in _specials(tmp_path).items():
        with pytest.raises(NotARegularFile, match=kind):
            check_input_file(path, "an episode file")
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(2_000_000)  # sparse: 2 MB without writing them
    with pytest.raises(NotARegularFile, match="2,000,000 bytes, more than an episode file may be"):
        check_input_file(big, "an episode file", max_bytes=1_000_000)
    assert check_input_file(tmp_path / "missing.json", "an episode file") == tmp_path / "missing.json"


def test_every_reader_refuses_them(tmp_path: Path) -> None:
    from evaluation.episodes import load_episode
    from household.house_data import load_house
    from planner.critic import ExperiencePool
    from sim_bridge.replay.bag import BagReader

    for kind, path in _specials(tmp_path).items():
        readers = [load_episode, lambda p: load_house(p, 0), ExperiencePool.load]
        if kind != "a folder":  # a bag may be a rosbag2 folder
            readers.append(lambda p: list(BagReader(p)))
        for reader in readers:
            box = _bounded(reader, path)
            error = box.get("error")
            assert isinstance(error, ValueError) and not isinstance(error, RecursionError), (kind, reader, box)
            assert str(path) in str(error) and ("not a regular file" in str(error) or kind == "a folder"), error
