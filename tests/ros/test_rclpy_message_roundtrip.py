"""(a) ROS messages <-> project types with rclpy's OWN message classes, through
rclpy.serialization (the CDR bytes a DDS topic carries). No rclpy.init and no DDS: nothing here
touches the network. The conversion functions are sim_bridge.ros.convert's; what is tested is that
they hold with the classes the nodes really publish."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy")
from geometry_msgs.msg import PoseStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402

from household.frames import camera_pose_from_world_from_camera  # noqa: E402,F401
from sim_bridge.ros import convert  # noqa: E402
from household.types import AgentStatus, CameraIntrinsics  # noqa: E402

CLASSES = convert.MessageClasses.from_modules()
STAMP = 1_700_000_123_456_789_012


def wire(msg):
    """What a subscriber gets: the message serialised to CDR and back, with rclpy's classes."""
    data = serialize_message(msg)
    assert isinstance(data, bytes) and len(data) > 0
    return deserialize_message(data, type(msg))


def test_classes_are_rclpys():
    assert CLASSES.Image is Image and CLASSES.CameraInfo is CameraInfo
    assert CLASSES.PoseStamped is PoseStamped and CLASSES.Odometry is Odometry


def test_image_rgb8_round_trip():
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (240, 320, 3), dtype=np.uint8)
    msg = wire(convert.rgb_to_msg(rgb, CLASSES, STAMP))
    assert (msg.encoding, msg.height, msg.width, msg.step) == ("rgb8", 240, 320, 960)
    assert convert.stamp_ns_of(msg) == STAMP
    out = convert.msg_to_rgb(msg)
    assert out.dtype == np.uint8 and np.array_equal(out, rgb)
    again = wire(convert.rgb_to_msg(out, CLASSES, STAMP))
    assert bytes(again.data) == bytes(msg.data)


def test_image_32fc1_depth_round_trip_keeps_zero_nan_and_values():
    rng = np.random.default_rng(1)
    depth = rng.uniform(0.1, 9.0, (240, 320)).astype(np.float32)
    depth[0, :10] = 0.0
    depth[1, :3] = np.nan
    msg = wire(convert.depth_to_msg(depth, CLASSES, STAMP))
    assert msg.encoding == "32FC1" and msg.step == 320 * 4
    out = convert.msg_to_depth(msg)
    assert out.dtype == np.float32
    assert np.array_equal(out, depth, equal_nan=True)


def test_image_32sc1_instance_ids_round_trip():
    rng = np.random.default_rng(2)
    ids = rng.integers(0, 40, (120, 160)).astype(np.int32)
    ids[5, 5] = 2**31 - 1
    msg = wire(convert.ids_to_msg(ids, CLASSES, STAMP))
    assert msg.encoding == "32SC1"
    out = convert.msg_to_ids(msg)
    assert out.dtype == np.int32 and np.array_equal(out, ids)


def test_image_with_row_padding_and_wrong_size_is_refused():
    ids = np.arange(12, dtype=np.int32).reshape(3, 4)
    msg = convert.ids_to_msg(ids, CLASSES, STAMP)
    raw = np.frombuffer(bytes(msg.data), np.uint8).reshape(3, 16)
    padded = np.concatenate([raw, np.zeros((3, 8), np.uint8)], axis=1)
    msg.step, msg.data = 24, padded.tobytes()
    assert np.array_equal(convert.msg_to_ids(wire(msg)), ids)
    msg.data = padded.tobytes()[:-1]
    with pytest.raises(convert.ConversionError, match="topic /worldmind/camera/instance_ids"):
        convert.msg_to_ids(msg)


def test_camera_info_round_trip():
    intr = CameraIntrinsics.from_fov(320, 240, 90.0)
    msg = wire(convert.intrinsics_to_camera_info(intr, CLASSES, STAMP))
    assert isinstance(msg, CameraInfo) and list(msg.d) == [0.0] * 5
    assert convert.camera_info_to_intrinsics(msg) == intr


def _rigid(yaw: float, pitch: float, t) -> np.ndarray:
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    m = np.eye(4)
    m[:3, :3] = rz @ ry
    m[:3, 3] = t
    return m


@pytest.mark.parametrize("yaw,pitch", [(0.0, 0.0), (2.0, -0.4), (-3.1, 1.2)])
def test_pose_stamped_round_trip(yaw, pitch):
    m = _rigid(yaw, pitch, (1.5, -2.25, 1.4))
    msg = wire(convert.matrix_to_pose_stamped(m, CLASSES, STAMP))
    assert msg.header.frame_id == "map" and convert.stamp_ns_of(msg) == STAMP
    back = convert.pose_stamped_to_matrix(msg)
    assert np.allclose(back, m, atol=1e-12)
    again = wire(convert.matrix_to_pose_stamped(back, CLASSES, STAMP))  # message -> matrix -> message
    fields = lambda p: [p.position.x, p.position.y, p.position.z,  # noqa: E731
                        p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w]
    assert fields(again.pose) == pytest.approx(fields(msg.pose), abs=1e-12)
    assert again.header == msg.header


@pytest.mark.parametrize("yaw", [0.0, 90.0, -30.0, 180.0, 135.5])
def test_odometry_round_trip(yaw):
    agent = AgentStatus((3.25, -1.5, 0.9), yaw, 30.0)
    msg = wire(convert.agent_to_odometry(agent, CLASSES, STAMP))
    assert (msg.header.frame_id, msg.child_frame_id) == ("odom", "base_link")  # REP 105: odometry in odom
    position, got_yaw = convert.odometry_to_base(msg)
    assert position == agent.position
    assert math.isclose(got_yaw, yaw, abs_tol=1e-9)
    again = wire(convert.agent_to_odometry(AgentStatus(position, got_yaw, 30.0), CLASSES, STAMP))
    assert np.allclose([again.pose.pose.orientation.z, again.pose.pose.orientation.w],
                       [msg.pose.pose.orientation.z, msg.pose.pose.orientation.w], atol=1e-12)


def test_whole_observation_round_trip_through_cdr():
    """An embedded-simulator frame -> the node's messages -> CDR -> an Observation equal to it."""
    from sim_bridge.factory import make_environment
    from evaluation.episodes import load_episode
    from evaluation.dev_set import default_episode_file

    env = make_environment("embedded", width=160, height=120)
    obs = env.reset(load_episode(default_episode_file()))
    msgs = {k: wire(m) for k, m in convert.observation_to_messages(obs, CLASSES, STAMP).items()}
    back = convert.messages_to_observation(msgs)
    assert back.step == obs.step and back.intrinsics == obs.intrinsics
    assert np.array_equal(back.rgb, obs.rgb) and np.array_equal(back.depth, obs.depth)
    assert np.array_equal(back.instance_ids, obs.instance_ids) and back.id_to_label == obs.id_to_label
    assert np.allclose(back.world_from_camera, obs.world_from_camera, atol=1e-12)
    assert back.agent.position == obs.agent.position and math.isclose(back.agent.yaw_deg % 360, obs.agent.yaw_deg % 360,
                                                                      abs_tol=1e-9)
    assert back.agent.held_object_id == obs.agent.held_object_id and back.feedback == obs.feedback
