"""Poses from TF in a live node (rclpy in a private network namespace): perception_node gets
frames on WorldMind's topics and the tree on /tf + /tf_static. A frame whose images carry another
frame id, and a frame whose TF never comes, are dropped with the reason logged (frame id and
expected one; the TF lookup error after tf_timeout_s); a frame with its TF is perceived; the node
stays up throughout."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import REPO, isolated

S = 1_000_000_000


@pytest.mark.timeout(200)
@isolated(timeout=180)
def test_perception_takes_the_pose_from_tf_and_refuses_bad_frames():
    import rclpy
    from std_msgs.msg import String

    from household.frames import world_from_camera
    from sim_bridge.ros.convert import MessageClasses, observation_to_messages
    from sim_bridge.ros.tf import base_matrix, robot_transforms
    from sim_bridge.ros.topics import topic_names
    from household.types import ActionFeedback, AgentStatus, CameraIntrinsics, InstanceLabel, Observation
    from worldmind_ros.runtime import message_class, qos, topic_qos
    from worldmind_ros.tf_io import TfPublisher

    proc = subprocess.Popen([sys.executable, "-u", "-m", "worldmind_ros.perception_node", "--ros-args",
                             "-p", "tf_timeout_s:=0.3", "-p", "min_pixels:=1"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    rclpy.init()
    node = rclpy.create_node("probe")
    classes = MessageClasses.from_modules()
    keys = ("color", "depth", "camera_info", "instance_ids", "instance_labels", "odom")
    pubs = {k: node.create_publisher(message_class(k), topic_names()[k], topic_qos(k)) for k in keys}
    tfp = TfPublisher(node)
    got: list[str] = []
    node.create_subscription(String, "/worldmind/perception/objects", lambda m: got.append(m.data), qos("reliable"))

    h, w = 24, 32
    ids = np.zeros((h, w), np.int32)
    ids[8:16, 10:20] = 1
    obs = Observation(3, CameraIntrinsics.from_fov(w, h, 90.0), world_from_camera(np.array([1.0, 2.0, 1.5]), 0.0, 30.0),
                      AgentStatus((1.0, 2.0, 0.9), 0.0, 30.0), ActionFeedback(None, True),
                      rgb=np.full((h, w, 3), 100, np.uint8), depth=np.full((h, w), 2.0, np.float32),
                      instance_ids=ids, id_to_label={1: InstanceLabel("Mug|1", "Mug")})

    def send(stamp_ns: int, camera_frame: str = "camera_color_optical_frame", with_tf: bool = True) -> None:
        if with_tf:
            tfp.send(robot_transforms(base_matrix(obs.agent.position, 0.0), obs.world_from_camera, stamp_ns))
        msgs = observation_to_messages(obs, classes, stamp_ns)
        for k in ("color", "depth", "instance_ids", "camera_info"):
            msgs[k].header.frame_id = camera_frame
        for k in keys:
            pubs[k].publish(msgs[k])

    def spin(seconds: float, until=lambda: False) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not until():
            rclpy.spin_once(node, timeout_sec=0.05)

    try:
        spin(4.0, until=lambda: all(p.get_subscription_count() for p in pubs.values()))
        spin(1.0)  # best-effort readers may match a moment after the count says so
        send(9 * S, camera_frame="camera_link")  # wrong frame id
        spin(0.5)
        send(10 * S, camera_frame="camera_link")
        spin(1.5)
        send(11 * S, with_tf=False)  # no TF at this stamp: extrapolation into the future
        spin(1.5)
        assert got == []
        send(12 * S)
        spin(10.0, until=lambda: bool(got))
        assert got, "the frame with its TF was not perceived"
        assert proc.poll() is None
    finally:
        node.destroy_node()
        rclpy.shutdown()
        proc.send_signal(2)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in out, out[-3000:]
    assert "header.frame_id is 'camera_link', expected 'camera_color_optical_frame'" in out, out[-3000:]
    assert "TF lookup failed after 0.3 s" in out and "extrapolation into the future" in out, out[-3000:]
