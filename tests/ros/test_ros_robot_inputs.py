"""The robot bridge as a driver stack sees it: its outputs are WorldMind's relative worldmind/...
names (under the node namespace, never a driver's own names), its inputs accept ordinary
(volatile, reliable) publishers, and an input that never publishes is reported STALE on
/diagnostics. Pure parts without DDS; the live test runs rclpy in a private network namespace."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from conftest import REPO, isolated
from sim_bridge.ros.sync import FrameSynchronizer, SyncConfig
from worldmind_ros import diagnostics as diag


def test_health_rows_report_never_received_and_silent_topics():
    sync = FrameSynchronizer(SyncConfig(required=("color", "odom"), optional=(), stale_after_s=1.0),
                             {"color": "/c", "odom": "/o"}, start_ns=0)
    sync.push("/c", 10, "img", now_ns=int(0.5e9))
    rows = {r.name: r for r in diag.topic_health("/bridge", sync.status(int(0.9e9)), ["/c", "/o"])}
    assert rows["/bridge: /c"].level == diag.OK and rows["/bridge: /o"].level == diag.OK  # not yet overdue
    rows = {r.name: r for r in diag.topic_health("/bridge", sync.status(int(2.0e9)), ["/c", "/o"])}
    assert rows["/bridge: /o"].level == diag.STALE and rows["/bridge: /o"].message == "never received"
    assert rows["/bridge: /c"].level == diag.STALE and rows["/bridge: /c"].message == "silent 1.5 s"
    assert dict(rows["/bridge: /c"].values)["received"] == "1"


def test_never_received_needs_a_start_time():
    """Without start_ns a topic that never publishes could never become stale (the old bug)."""
    sync = FrameSynchronizer(SyncConfig(required=("odom",), optional=(), stale_after_s=1.0), {"odom": "/o"},
                             start_ns=0)
    assert sync.status(int(5e9)).stale == ["/o"]


@pytest.mark.timeout(200)
@isolated(timeout=180)
def test_robot_bridge_namespaced_outputs_volatile_inputs_and_stale_diagnostics():
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    proc = subprocess.Popen([sys.executable, "-u", "-m", "worldmind_ros.robot_bridge_node", "--ros-args",
                             "-r", "__ns:=/r1", "-p", "stale_after_s:=1.0"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    rclpy.init()
    node = rclpy.create_node("probe")
    try:
        got: list = []
        node.create_subscription(DiagnosticArray, "/diagnostics", got.append, 10)
        plain = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
        labels = node.create_publisher(String, "/robot/segmentation/instance_labels", plain)
        status = node.create_publisher(String, "/robot/status", plain)
        end = time.monotonic() + 30
        stale = {}
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.1)
            for arr in got:
                for s in arr.status:
                    stale[s.name] = (s.level, s.message)
            if labels.get_subscription_count() and status.get_subscription_count() and \
                    any("/robot/odom" in k and v[1] == "never received" for k, v in stale.items()):
                break
        assert labels.get_subscription_count() == 1, "a volatile reliable label publisher was not matched"
        assert status.get_subscription_count() == 1, "a volatile reliable status publisher was not matched"
        odom = [v for k, v in stale.items() if k.endswith(": /robot/odom")]
        assert odom and odom[0] == (bytes([diag.STALE]), "never received"), stale
        topics = {name for name, _ in node.get_topic_names_and_types()}
        assert "/r1/worldmind/camera/color/image_raw" in topics and "/r1/worldmind/odom" in topics, topics
        assert "/odom" not in topics and "/camera/color/image_raw" not in topics
        assert proc.poll() is None
    finally:
        node.destroy_node()
        rclpy.shutdown()
        proc.send_signal(2)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in out, out[-3000:]
    assert "topic /robot/odom: stale sensor (never received)" in out, out[-3000:]
