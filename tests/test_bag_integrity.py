"""Bags recorded elsewhere (``ros2 bag record``) that were cut off or disagree with what they state:
replay keeps what is there and marks it partial with the reasons, or refuses a metadata file it
cannot trust naming the file and the key (issue 32). rosbag2's own behaviour these rest on (metadata.yaml
written only on close, the .db3 metadata table) is described in sim_bridge/replay/bag_integrity.py."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from evaluation.replay import replay_bag
from sim_bridge.replay.bag import BagMetadataError, BagReadError, BagReader, BagWriter, FrameItem
from sim_bridge.replay.bag_integrity import Stated, Tally, compare
from worldmind.cli_bags import RecordingEnvironment, main_replay

STEPS = 6
COLOR = "/worldmind/camera/color/image_raw"


@pytest.fixture(scope="module")
def bags(tmp_path_factory) -> dict[str, Path]:
    """One short oracle run recorded as a single .mcap, a single .db3 and a rosbag2 folder."""
    from evaluation.dev_set import default_episode_file
    from evaluation.episodes import load_episode
    from evaluation.runner import run_episode
    from planner.factory import make_agent
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    root = tmp_path_factory.mktemp("integrity")
    env = EmbeddedEnvironment(EmbeddedConfig(width=32, height=24, render=True))
    episode = load_episode(default_episode_file())
    out = {}
    for name in ("run.mcap", "run.db3", "run_dir"):
        with BagWriter(root / name) as writer:
            run_episode(RecordingEnvironment(env, writer), make_agent("oracle", env), episode, max_steps=STEPS)
        out[name] = root / name
    return out


def copy(src: Path, dst: Path) -> Path:
    (shutil.copytree if src.is_dir() else shutil.copyfile)(src, dst)
    return dst


def read_all(path: Path) -> tuple[BagReader, list[Any]]:
    reader = BagReader(path)
    return reader, [item for item in reader if isinstance(item, FrameItem)]


def edit_metadata(folder: Path, change: Any) -> Path:
    meta = folder / "metadata.yaml"
    data = yaml.safe_load(meta.read_text())
    change(data["rosbag2_bagfile_information"])
    meta.write_text(yaml.safe_dump(data))
    return meta


@pytest.mark.parametrize("name", ["run.mcap", "run.db3", "run_dir"])
def test_a_whole_bag_is_not_partial(bags, tmp_path, name):
    result = replay_bag(bags[name], tmp_path / "out")
    assert result["partial"] is False and result["partial_reasons"] == []
    assert result["frames"] == STEPS + 1
    assert result["read"]["stated"]["message_count"] == sum(result["read"]["topic_counts"].values())


def test_folder_without_metadata_yaml_is_replayed_and_marked_partial(bags, tmp_path, capsys):
    """``ros2 bag record`` killed: rosbag2 writes metadata.yaml only on close."""
    bag = copy(bags["run_dir"], tmp_path / "robot_bag")
    (bag / "metadata.yaml").unlink()
    assert main_replay([str(bag), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "partial recording" in err and "no metadata.yaml" in err and str(bag) in err
    result = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert result["partial"] is True and result["frames"] == STEPS + 1  # everything that is there
    assert any("no metadata.yaml" in r and "cut off" in r for r in result["partial_reasons"])
    assert "Partial bag" in (tmp_path / "out" / "replay.md").read_text()


def test_folder_without_metadata_and_a_truncated_storage_file_keeps_the_frames_before_the_cut(bags, tmp_path):
    bag = copy(bags["run_dir"], tmp_path / "robot_bag")
    (bag / "metadata.yaml").unlink()
    storage = bag / "run_dir.mcap"
    data = storage.read_bytes()
    storage.write_bytes(data[: int(len(data) * 0.7)])
    with pytest.raises(BagReadError, match="run_dir.mcap"):
        replay_bag(bag, tmp_path / "out")
    result = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert result["partial"] is True and 0 < result["frames"] < STEPS + 1
    assert any("no metadata.yaml" in r for r in result["partial_reasons"])


def test_a_topic_with_fewer_messages_than_stated_is_named(bags, tmp_path):
    bag = copy(bags["run_dir"], tmp_path / "bag")

    def more_color(info: dict) -> None:
        for entry in info["topics_with_message_count"]:
            if entry["topic_metadata"]["name"] == COLOR:
                entry["message_count"] += 5
        info["message_count"] += 5

    edit_metadata(bag, more_color)
    reader, frames = read_all(bag)
    assert len(frames) == STEPS + 1  # what is there is replayed
    reasons = reader.stats.partial
    assert any(f"topic {COLOR}: {STEPS + 1} of the {STEPS + 6} message(s) stated were read" in r
               and "metadata.yaml" in r for r in reasons), reasons
    assert any("message_count states" in r for r in reasons)


def test_a_duration_that_disagrees_with_the_storage_is_named(bags, tmp_path):
    bag = copy(bags["run_dir"], tmp_path / "bag")
    edit_metadata(bag, lambda info: info["duration"].update(nanoseconds=info["duration"]["nanoseconds"] * 3))
    result = replay_bag(bag, tmp_path / "out")
    assert result["partial"] is True
    assert any("duration states" in r and "metadata.yaml" in r for r in result["partial_reasons"])


def test_a_listed_split_file_that_is_gone_is_named_and_the_rest_replayed(bags, tmp_path):
    bag = copy(bags["run_dir"], tmp_path / "bag")

    def second_file(info: dict) -> None:
        info["relative_file_paths"].append("bag_1.mcap")
        info["files"].append({"path": "bag_1.mcap", "message_count": 10, "duration": {"nanoseconds": 0},
                              "starting_time": {"nanoseconds_since_epoch": 0}})
        info["message_count"] += 10

    edit_metadata(bag, second_file)
    reader, frames = read_all(bag)
    assert len(frames) == STEPS + 1
    assert any("lists bag_1.mcap, which is not in the folder" in r for r in reader.stats.partial)


def test_metadata_yaml_with_a_duplicate_key_is_refused_naming_file_and_key(bags, tmp_path, capsys):
    bag = copy(bags["run_dir"], tmp_path / "bag")
    meta = bag / "metadata.yaml"
    text = meta.read_text()
    first = text.index("\n  message_count:")
    meta.write_text(text[:first] + "\n  message_count: 999" + text[first:])
    with pytest.raises(BagMetadataError, match=r"metadata.yaml.*duplicate key 'message_count'"):
        BagReader(bag)
    out = tmp_path / "out"
    assert main_replay([str(bag), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(meta) in err and "'message_count'" in err and "Traceback" not in err
    assert "999" not in err and not out.exists()  # refused before --out is touched


@pytest.mark.parametrize("change, field", [
    (lambda info: info["topics_with_message_count"][0].update(message_count="many"),
     "rosbag2_bagfile_information.topics_with_message_count[0].message_count"),
    (lambda info: info.pop("duration"), "rosbag2_bagfile_information.duration"),
    (lambda info: info["topics_with_message_count"][1].pop("topic_metadata"),
     "rosbag2_bagfile_information.topics_with_message_count[1].topic_metadata"),
])
def test_metadata_yaml_with_a_bad_field_is_refused_naming_it(bags, tmp_path, change, field):
    bag = copy(bags["run_dir"], tmp_path / "bag")
    edit_metadata(bag, change)
    with pytest.raises(BagMetadataError) as info:
        BagReader(bag)
    assert "metadata.yaml" in str(info.value) and field in str(info.value)


def test_metadata_yaml_that_is_not_yaml_is_refused(bags, tmp_path):
    bag = copy(bags["run_dir"], tmp_path / "bag")
    (bag / "metadata.yaml").write_text("rosbag2_bagfile_information: [unclosed\n")
    with pytest.raises(BagMetadataError, match="metadata.yaml: not valid YAML"):
        BagReader(bag)


def test_a_db3_never_closed_is_marked_partial(bags, tmp_path):
    """rosbags writes the .db3 metadata row on close; rosbag2 writes one at open (no messages) and
    the final one on close: either way the latest row of a recording killed midway says so."""
    empty = copy(bags["run.db3"], tmp_path / "empty.db3")
    with sqlite3.connect(empty) as db:
        db.execute("DELETE FROM metadata")
    reader, frames = read_all(empty)
    assert len(frames) == STEPS + 1
    assert any("metadata table is empty" in r and "empty.db3" in r for r in reader.stats.partial)

    opened = copy(bags["run.db3"], tmp_path / "opened.db3")
    with sqlite3.connect(opened) as db:
        (text,) = db.execute("SELECT metadata FROM metadata").fetchone()
        info = yaml.safe_load(text)
        info.update(message_count=0, topics_with_message_count=[])
        db.execute("DELETE FROM metadata")
        db.execute("INSERT INTO metadata(metadata_version, metadata) VALUES (9, ?)", (yaml.safe_dump(info),))
    reader, _ = read_all(opened)
    assert any("states no messages" in r for r in reader.stats.partial)


def test_a_db3_stating_more_than_it_holds_names_the_topic(bags, tmp_path):
    bag = copy(bags["run.db3"], tmp_path / "more.db3")
    with sqlite3.connect(bag) as db:
        (text,) = db.execute("SELECT metadata FROM metadata").fetchone()
        info = yaml.safe_load(text)
        for entry in info["topics_with_message_count"]:
            if entry["topic_metadata"]["name"] == COLOR:
                entry["message_count"] += 2
        db.execute("UPDATE metadata SET metadata = ?", (yaml.safe_dump(info),))
    reader, _ = read_all(bag)
    assert any(f"topic {COLOR}: {STEPS + 1} of the {STEPS + 3}" in r and "more.db3 (its metadata table)" in r
               for r in reader.stats.partial)


def test_compare_names_every_disagreement():
    stated = Stated("m.yaml", {"/a": 3, "/b": 2}, 5, starting_ns=10, duration_ns=20)
    tally = Tally()
    for topic, t in (("/a", 10), ("/a", 20), ("/c", 40)):
        tally.add(topic, t)
    reasons = compare(stated, tally)
    assert "m.yaml: topic /a: 2 of the 3 message(s) stated were read" in reasons
    assert "m.yaml: topic /b: 0 of the 2 message(s) stated were read" in reasons
    assert any("topic /c: 1 message(s) read, but the topic is not listed" in r for r in reasons)
    assert any("message_count states 5, 3 were read" in r for r in reasons)
    assert any("m.yaml: duration states 0.000 s, the messages read span 0.000 s" in r for r in reasons)
    tally = Tally()
    for topic, t in (("/a", 10), ("/a", 20), ("/a", 30), ("/b", 25), ("/b", 15)):
        tally.add(topic, t)
    assert compare(stated, tally) == []


def test_a_db3_whose_metadata_entry_is_damaged_is_read_and_marked_partial(bags, tmp_path):
    """Unlike a folder's metadata.yaml, a .db3's own entry is not refused: its rows may be whole."""
    bag = copy(bags["run.db3"], tmp_path / "damaged.db3")
    with sqlite3.connect(bag) as db:
        db.execute("UPDATE metadata SET metadata = ?", ("message_count: [unclosed",))
    reader, frames = read_all(bag)
    assert len(frames) == STEPS + 1
    assert any("damaged.db3" in r and "metadata table's latest entry cannot be read" in r for r in reader.stats.partial)
