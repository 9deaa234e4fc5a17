"""Recorded bags open in Foxglove and the mcap tools, and carry each topic's QoS (issue 15).

Checked with the reference MCAP reader (the ``mcap`` package, which Foxglove's own loader
mirrors), not with rosbags, which wrote the file: the ros2 profile, every schema a ``ros2msg``
definition, every channel CDR, the summary and chunk CRCs valid, and rosbag2's
``offered_qos_profiles`` on every channel of the topic contract, so ``ros2 bag play`` offers the
latched topics (label table, agent status, plan) transient-local again and the sensor streams
best-effort, as the live nodes subscribe to them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from household.types import Action
from sim_bridge.replay.bag import BagReader, BagWriter, FrameItem
from sim_bridge.ros.topics import TOPICS, topic_names

mcap_reader = pytest.importorskip("mcap.reader", reason="the mcap package (dev extra) is not installed")

W, H, FRAMES = 64, 48, 6


def _record(path: Path, storage: str | None = None) -> int:
    from evaluation.dev_set import default_episode_file
    from evaluation.episodes import load_episode
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    env = EmbeddedEnvironment(EmbeddedConfig(width=W, height=H, render=True))
    obs = env.reset(load_episode(default_episode_file()))
    with BagWriter(path, storage=storage) as writer:
        writer.write_observation(obs, env.ground_truth())
        writer.write_event("plan", {"goals": [{"id": "g1", "text": "tidy"}], "edges": []})
        for _ in range(FRAMES - 1):
            action = Action("RotateRight")
            obs = env.step(action).observation
            writer.write_observation(obs, env.ground_truth(), action=action)
    return FRAMES


@pytest.fixture(scope="module")
def bag(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fox") / "run.mcap"
    _record(path)
    return path


def _qos(channel: Any) -> list[dict[str, Any]]:
    return yaml.safe_load(channel.metadata.get("offered_qos_profiles", "")) or []


def test_the_reference_reader_sees_a_ros2_bag(bag):
    with bag.open("rb") as f:
        reader = mcap_reader.make_reader(f, validate_crcs=True)
        header, summary = reader.get_header(), reader.get_summary()
        assert header.profile == "ros2"
        assert summary is not None and summary.statistics is not None
        assert summary.schemas and all(s.encoding == "ros2msg" and s.data for s in summary.schemas.values())
        assert all(c.message_encoding == "cdr" for c in summary.channels.values())
        names = {s.name for s in summary.schemas.values()}
        assert {"sensor_msgs/msg/Image", "sensor_msgs/msg/CameraInfo", "nav_msgs/msg/Odometry"} <= names
        # every message reads back, chunk CRCs checked by the reader itself
        counts: dict[str, int] = {}
        for _schema, channel, _message in reader.iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    names_by_key = topic_names()
    for key in ("color", "depth", "camera_info", "instance_ids", "odom", "camera_pose"):
        assert counts[names_by_key[key]] == FRAMES
    assert sum(counts.values()) == summary.statistics.message_count


def test_every_contract_topic_records_its_qos(bag):
    with bag.open("rb") as f:
        summary = mcap_reader.make_reader(f).get_summary()
    by_name = {name: TOPICS[key] for key, name in topic_names().items()}
    seen = 0
    for channel in summary.channels.values():
        spec = by_name[channel.topic]
        (profile,) = _qos(channel)
        assert profile["reliability"] == spec.qos_spec.reliability
        assert profile["durability"] == spec.qos_spec.durability
        assert profile["history"] == "keep_last" and profile["depth"] == spec.qos_spec.depth
        seen += 1
    assert seen >= 8
    labels = next(c for c in summary.channels.values() if c.topic == topic_names()["instance_labels"])
    color = next(c for c in summary.channels.values() if c.topic == topic_names()["color"])
    assert _qos(labels)[0]["durability"] == "transient_local"  # a late subscriber still gets the table
    assert _qos(color)[0]["reliability"] == "best_effort"


def test_sqlite3_bags_record_the_same_qos(tmp_path):
    from rosbags.rosbag2 import Reader

    path = tmp_path / "run.db3"
    _record(path, storage="sqlite3")
    with Reader(path) as reader:
        qos = {c.topic: c.ext.offered_qos_profiles for c in reader.connections}
    assert qos[topic_names()["agent_status"]][0].durability.name == "TRANSIENT_LOCAL"
    assert qos[topic_names()["depth"]][0].reliability.name == "BEST_EFFORT"
    assert len([i for i in BagReader(path) if isinstance(i, FrameItem)]) == FRAMES


def test_a_topic_outside_the_contract_records_no_qos_rather_than_a_guess(tmp_path):
    path = tmp_path / "extra.mcap"
    with BagWriter(path) as writer:
        writer.write_text("/robot/custom_debug", "{}", writer.start_ns)
    with path.open("rb") as f:
        (channel,) = mcap_reader.make_reader(f).get_summary().channels.values()
    assert channel.topic == "/robot/custom_debug" and _qos(channel) == []
