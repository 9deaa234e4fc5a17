"""Issue 32 row of ``bench_bad_inputs.py``: bags as ``ros2 bag record`` leaves them when a
recording is cut off or its metadata disagrees with its storage (no marker of ours inside), each
replayed through the CLI. Before: replayed with exit 0 as if whole ("read as valid"), or a
duplicate key silently resolved. After: exit 1 with the bag marked partial and the reason named,
or exit 2 refusing the metadata file naming the key ("clean error"). What rosbag2 writes and when:
sim_bridge/replay/bag_integrity.py.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any, Callable

import yaml

from bad_inputs_issue32 import _cli


def _copy(src: Path, dst: Path) -> Path:
    (shutil.copytree if src.is_dir() else shutil.copyfile)(src, dst)
    return dst


def _edit(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    meta = folder / "metadata.yaml"
    data = yaml.safe_load(meta.read_text())
    change(data["rosbag2_bagfile_information"])
    meta.write_text(yaml.safe_dump(data))


def _more_on_first_topic(info: dict[str, Any]) -> None:
    info["topics_with_message_count"][0]["message_count"] += 3
    info["message_count"] += 3


def _longer(info: dict[str, Any]) -> None:
    info["duration"]["nanoseconds"] = info["duration"]["nanoseconds"] * 2 + 1


def _second_file(info: dict[str, Any]) -> None:
    info["relative_file_paths"].append("gone_1.mcap")


def robot_bag_cases(tmp: Path, folder: Path, single: Path) -> list[tuple[str, Path, Callable[[Path], None]]]:
    """(name, bag, replay it): ``folder`` a whole rosbag2 folder bag, ``single`` a whole .mcap."""
    cases: list[tuple[str, Path, Callable[[Path], None]]] = []

    def replay(p: Path) -> None:
        _cli(["replay", str(p), "--out", str(tmp / f"replay-{p.name}")])

    def add(name: str, bag: Path) -> None:
        cases.append((name, bag, replay))

    bag = _copy(folder, tmp / "robot-nometa")
    (bag / "metadata.yaml").unlink()
    add("folder without metadata.yaml (recorder killed)", bag)
    bag = _copy(folder, tmp / "robot-nometa-cut")
    (bag / "metadata.yaml").unlink()
    storage = next(bag.glob("*.mcap"))
    storage.write_bytes(storage.read_bytes()[: storage.stat().st_size * 2 // 3])
    add("no metadata.yaml, storage file cut short", bag)
    for name, change in (("a topic with fewer messages than stated", _more_on_first_topic),
                         ("duration disagrees with the storage", _longer),
                         ("a listed split file is gone", _second_file)):
        bag = _copy(folder, tmp / f"robot-{len(cases)}")
        _edit(bag, change)
        add(name, bag)
    bag = _copy(folder, tmp / "robot-dupkey")
    meta = bag / "metadata.yaml"
    text = meta.read_text()
    at = text.index("\n  message_count:")
    meta.write_text(text[:at] + "\n  message_count: 1" + text[at:])
    add("metadata.yaml with a duplicate key", bag)
    db3 = tmp / "robot-unclosed.db3"
    from sim_bridge.replay.bag import BagReader, BagWriter

    with BagWriter(db3) as writer:  # a .db3 copy of the single bag, then its close-time entry removed
        from sim_bridge.replay.bag import FrameItem

        for item in BagReader(single):
            if isinstance(item, FrameItem):
                writer.write_observation(item.observation)
    with sqlite3.connect(db3) as db:
        db.execute("DELETE FROM metadata")
    add(".db3 never closed (its metadata table without the close-time entry)", db3)
    return cases
