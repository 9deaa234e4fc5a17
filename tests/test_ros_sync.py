"""The live backend's frame synchroniser, driven by push() as the rclpy node drives it."""

from __future__ import annotations

import pytest

from sim_bridge.ros.sync import FrameSynchronizer, StaleSensorError, SyncConfig
from sim_bridge.ros.topics import topic_names

MS = 1_000_000
KEYS = ("color", "depth", "camera_info", "instance_ids", "instance_labels", "odom", "camera_pose")


def push_frame(sync, t, jitter=None, skip=(), now=None):
    out = []
    for k in KEYS:
        if k in skip:
            continue
        s = t + (jitter or {}).get(k, 0)
        out += sync.push(k, s, f"{k}@{s}", now_ns=now)
    return out


def test_exact_and_jittered_stamps_make_one_frame_each():
    sync = FrameSynchronizer()
    frames = []
    for i in range(5):
        frames += push_frame(sync, i * 100 * MS, jitter={"odom": 7 * MS, "depth": -3 * MS})
    # the last frame waits for proof that no closer odom/depth can come
    assert [f.stamp_ns for f in frames] == [0, 100 * MS, 200 * MS, 300 * MS]
    f = frames[1]
    assert f.messages["odom"] == f"odom@{107 * MS}" and f.stamps["depth"] == 97 * MS and f.skew_ns == 7 * MS
    assert set(f.messages) == set(KEYS)
    frames = push_frame(sync, 500 * MS)
    assert [f.stamp_ns for f in frames] == [400 * MS, 500 * MS]  # exact stamps need no wait


def test_topic_names_are_accepted_and_remapped():
    names = topic_names({"color": "/rs/color"})
    sync = FrameSynchronizer(names=names)
    sync.push("/rs/color", 0, "c")
    with pytest.raises(KeyError, match="/worldmind/camera/color/image_raw"):
        sync.push("/worldmind/camera/color/image_raw", 0, "c")


def test_closest_message_within_slop_wins_and_older_ones_are_consumed():
    sync = FrameSynchronizer(SyncConfig(required=("color", "odom"), optional=(), slop_ns=30 * MS))
    for s in (0, 40 * MS, 90 * MS, 130 * MS):
        sync.push("odom", s, s)
    frames = sync.push("color", 100 * MS, "c")
    assert len(frames) == 1 and frames[0].messages["odom"] == 90 * MS
    frames = sync.push("color", 200 * MS, "c2")  # odom 130 is 70 ms away: wait for a newer odom
    assert frames == []
    frames = sync.push("odom", 210 * MS, 210 * MS)
    assert frames[0].messages["odom"] == 210 * MS
    assert sync.status(0).topics["/worldmind/odom"].received == 5


def test_unmatched_anchor_is_dropped_and_counted():
    sync = FrameSynchronizer(SyncConfig(required=("color", "depth"), optional=(), slop_ns=10 * MS))
    sync.push("color", 0, "c0")
    sync.push("color", 100 * MS, "c1")
    frames = sync.push("depth", 100 * MS, "d1")  # nothing near 0: color@0 cannot match
    assert [f.stamp_ns for f in frames] == [100 * MS] and sync.unmatched == 1


def test_out_of_order_stamps_are_dropped_and_counted_deterministically():
    def run():
        sync = FrameSynchronizer(SyncConfig(required=("color", "depth"), optional=()))
        out = []
        for key, s in (("color", 0), ("depth", 0), ("color", 200 * MS), ("color", 100 * MS),  # late
                       ("depth", 100 * MS), ("depth", 200 * MS), ("depth", 200 * MS)):  # duplicate
            out += sync.push(key, s, f"{key}{s}")
        return [(f.stamp_ns, f.messages["depth"]) for f in out], sync.status(0)

    frames, status = run()
    assert frames == [(0, "depth0"), (200 * MS, f"depth{200 * MS}")]
    assert status.topics["/worldmind/camera/color/image_raw"].out_of_order == 1
    assert status.topics["/worldmind/camera/depth/image_raw"].out_of_order == 1 and status.out_of_order == 2
    assert run()[0] == frames


def test_bounded_queues_count_overflow():
    sync = FrameSynchronizer(SyncConfig(required=("color", "depth"), optional=(), queue_size=3))
    for i in range(10):
        sync.push("color", i * MS, i)
    st = sync.status(0).topics["/worldmind/camera/color/image_raw"]
    assert st.overflow == 7 and len(sync._queues["color"]) == 3


def test_optional_and_latched_topics():
    cfg = SyncConfig(required=("color", "depth"), optional=("agent_status",), latched=("camera_info",))
    sync = FrameSynchronizer(cfg)
    sync.push("camera_info", 0, "info")
    sync.push("color", 100 * MS, "c")
    frames = sync.push("depth", 100 * MS, "d")
    assert frames[0].messages == {"color": "c", "depth": "d", "camera_info": "info"}  # no status: not waited for
    sync.push("agent_status", 200 * MS, "s")
    sync.push("color", 200 * MS, "c2")
    frames = sync.push("depth", 200 * MS, "d2")
    assert frames[0].messages["agent_status"] == "s" and frames[0].messages["camera_info"] == "info"


def test_stale_sensor_is_named():
    sync = FrameSynchronizer(SyncConfig(required=("color", "depth", "odom"), optional=(), stale_after_s=1.0),
                             start_ns=0)
    sync.push("color", 0, "c", now_ns=0)
    sync.push("depth", 0, "d", now_ns=0)
    sync.push("odom", 0, "o", now_ns=0)
    sync.check_stale(900 * MS)  # fine
    sync.push("color", 1000 * MS, "c", now_ns=1000 * MS)
    sync.push("odom", 1000 * MS, "o", now_ns=1000 * MS)
    with pytest.raises(StaleSensorError, match=r"/worldmind/camera/depth/image_raw \(silent 1\.5 s\)") as info:
        sync.check_stale(1500 * MS)
    assert info.value.topics == ["/worldmind/camera/depth/image_raw"]
    fresh = FrameSynchronizer(SyncConfig(required=("color", "depth"), optional=()), start_ns=0)
    fresh.push("color", 0, "c", now_ns=0)
    with pytest.raises(StaleSensorError, match="depth/image_raw \\(never received\\)"):
        fresh.check_stale(3000 * MS)


def test_bad_config_is_refused():
    with pytest.raises(KeyError, match="colour"):
        FrameSynchronizer(SyncConfig(required=("colour",)))
    with pytest.raises(ValueError, match="anchor"):
        FrameSynchronizer(SyncConfig(required=("depth",), anchor="color", optional=()))


def test_flush_decides_waiting_anchors_at_end_of_input():
    sync = FrameSynchronizer(SyncConfig(required=("color", "depth"), optional=(), slop_ns=20 * MS))
    sync.push("color", 100 * MS, "c")
    assert sync.push("depth", 95 * MS, "d") == []  # a closer depth might still come
    sync.push("color", 300 * MS, "c2")  # nothing near it
    frames = sync.flush()
    assert [(f.stamp_ns, f.messages["depth"]) for f in frames] == [(100 * MS, "d")]
    assert sync.unmatched == 1 and sync.flush() == []
