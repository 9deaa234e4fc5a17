"""Round trips between the project's types and ROS message classes (rosbags' classes; the rclpy-class
round trip lives with the ROS nodes' tests). Every conversion must be lossless: images bit-identical,
poses to 1e-9, stamps to the nanosecond, including through CDR serialisation as a bag stores it."""

from __future__ import annotations

import numpy as np
import pytest
from rosbags.typesys import Stores, get_typestore

from household.frames import world_from_camera
from sim_bridge.ros import convert as cv
from sim_bridge.ros.topics import QOS, SENSOR_KEYS, TOPICS, node_topic_names, spec_for_topic, topic_names
from household.types import ActionFeedback, AgentStatus, CameraIntrinsics, InstanceLabel, Observation

TS = get_typestore(Stores.ROS2_JAZZY)
C = cv.MessageClasses.from_typestore(TS)


def cdr(msg):
    """Serialise and deserialise as a bag does."""
    return TS.deserialize_cdr(TS.serialize_cdr(msg, msg.__msgtype__), msg.__msgtype__)


def make_obs(h: int = 6, w: int = 8, seed: int = 0) -> Observation:
    rng = np.random.default_rng(seed)
    intr = CameraIntrinsics.from_fov(w, h, 90.0)
    depth = rng.uniform(0.2, 5.0, (h, w)).astype(np.float32)
    depth[0, 0] = 0.0
    depth[1, 1] = np.nan
    ids = rng.integers(0, 4, (h, w)).astype(np.int32)
    obs = Observation(7, intr, world_from_camera(np.array([1.0, -2.0, 1.5]), 123.0, 30.0),
                      AgentStatus((1.0, -2.0, 0.0), 123.0, 30.0, "Mug|1", "Mug"),
                      ActionFeedback("MoveAhead", False, "blocked"),
                      rgb=rng.integers(0, 256, (h, w, 3)).astype(np.uint8), depth=depth, instance_ids=ids,
                      id_to_label={1: InstanceLabel("Mug|1", "Mug"), 2: InstanceLabel("Cup|2", "Cup"),
                                   3: InstanceLabel("Sofa|3", "Sofa")})
    return obs


def test_topic_contract_is_complete_and_remappable():
    names = topic_names()
    assert names["depth"] == "/worldmind/camera/depth/image_raw"
    # relative names, all under worldmind/: a namespace moves them, and none is a driver's own name
    assert all(not spec.name.startswith("/") and spec.name.startswith("worldmind/") for spec in TOPICS.values())
    assert not set(names.values()) & {"/camera/color/image_raw", "/camera/depth/image_raw", "/odom",
                                      "/camera/color/camera_info"}
    assert node_topic_names()["odom"] == "worldmind/odom" and node_topic_names("/r1")["odom"] == "/r1/worldmind/odom"
    assert TOPICS["color"].qos_spec == QOS["sensor"] and QOS["sensor"].reliability == "best_effort"
    assert QOS["sensor"].depth == 5 and QOS["reliable"].depth == 10
    assert TOPICS["instance_labels"].qos_spec.durability == "transient_local"
    assert TOPICS["plan"].qos == "latched"
    assert all(TOPICS[k].payload_kind for k in TOPICS if TOPICS[k].msg_type == "std_msgs/msg/String")
    assert set(SENSOR_KEYS) <= set(TOPICS)
    remapped = topic_names({"color": "/rs/color/image_rect"}, namespace="robot1")
    assert remapped["color"] == "/rs/color/image_rect" and remapped["odom"] == "/robot1/worldmind/odom"
    assert spec_for_topic("/robot1/worldmind/odom", remapped).key == "odom"
    with pytest.raises(KeyError, match="colour"):
        topic_names({"colour": "/x"})
    # every message type named in the contract exists in the Jazzy type store
    assert all(spec.msg_type in TS.types for spec in TOPICS.values())


@pytest.mark.parametrize("through_cdr", [False, True])
def test_images_round_trip_bit_identical(through_cdr):
    obs = make_obs()
    wrap = cdr if through_cdr else (lambda m: m)
    rgb = cv.msg_to_rgb(wrap(cv.rgb_to_msg(obs.rgb, C, 5)))
    depth = cv.msg_to_depth(wrap(cv.depth_to_msg(obs.depth, C, 5)))
    ids = cv.msg_to_ids(wrap(cv.ids_to_msg(obs.instance_ids, C, 5)))
    assert rgb.dtype == np.uint8 and rgb.tobytes() == obs.rgb.tobytes()
    assert depth.dtype == np.float32 and depth.tobytes() == obs.depth.tobytes()  # NaN bits included
    assert ids.dtype == np.int32 and np.array_equal(ids, obs.instance_ids)
    msg = cv.depth_to_msg(obs.depth, C, 5)
    assert msg.encoding == "32FC1" and msg.step == obs.depth.shape[1] * 4 and msg.is_bigendian == 0


def test_image_read_honours_step_padding_and_big_endian():
    depth = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    row = depth.astype(">f4").tobytes()
    padded = b"".join(depth[r].astype(">f4").tobytes() + b"\xff" * 8 for r in range(3))
    msg = C.Image(header=cv.make_header(C, 0, "cam"), height=3, width=4, encoding="32FC1", is_bigendian=1,
                  step=24, data=np.frombuffer(padded, np.uint8).copy())
    out = cv.msg_to_depth(msg, "/d")
    assert out.dtype == np.float32 and out.dtype.byteorder in ("=", "<", "|")
    assert np.array_equal(out, depth) and len(row) == 48
    bgr = np.array([[[1, 2, 3], [4, 5, 6]]], dtype=np.uint8)
    msg = C.Image(header=cv.make_header(C, 0, "cam"), height=1, width=2, encoding="bgr8", is_bigendian=0, step=6,
                  data=bgr.reshape(-1).copy())
    assert cv.msg_to_rgb(msg).tolist() == [[[3, 2, 1], [6, 5, 4]]]
    mm = np.array([[0, 1500]], dtype=np.uint16)
    msg = C.Image(header=cv.make_header(C, 0, "cam"), height=1, width=2, encoding="16UC1", is_bigendian=0, step=4,
                  data=mm.view(np.uint8).reshape(-1).copy())
    assert cv.msg_to_depth(msg).tolist() == [[0.0, 1.5]]


def test_wrong_image_size_or_encoding_names_the_topic():
    msg = cv.rgb_to_msg(np.zeros((4, 5, 3), np.uint8), C, 0)
    msg.data = msg.data[:-1]
    with pytest.raises(cv.ConversionError, match=r"/camera/color/image_raw.*59 bytes"):
        cv.msg_to_rgb(msg)
    msg = cv.depth_to_msg(np.zeros((4, 5), np.float32), C, 0)
    msg.step = 8
    with pytest.raises(cv.ConversionError, match="/my/depth: step 8 is shorter"):
        cv.msg_to_depth(msg, "/my/depth")
    with pytest.raises(cv.ConversionError, match="/ids.*encoding 'rgb8'"):
        cv.msg_to_ids(cv.rgb_to_msg(np.zeros((2, 2, 3), np.uint8), C, 0), "/ids")
    with pytest.raises(cv.ConversionError):
        cv.depth_to_msg(np.zeros((2, 2), np.float64), C, 0)


def test_camera_info_round_trip_and_checks():
    intr = CameraIntrinsics.from_fov(320, 240, 90.0)
    msg = cdr(cv.intrinsics_to_camera_info(intr, C, 99))
    assert cv.camera_info_to_intrinsics(msg) == intr
    assert msg.distortion_model == "plumb_bob" and list(msg.d) == [0.0] * 5
    assert list(msg.p)[:3] == [intr.fx, 0.0, intr.cx] and list(msg.k)[8] == 1.0
    msg.d = np.array([0.1, 0, 0, 0, 0], dtype=np.float64)
    with pytest.raises(cv.ConversionError, match="/cam/info: field 'd'"):
        cv.camera_info_to_intrinsics(msg, "/cam/info")
    assert cv.camera_info_to_intrinsics(msg, allow_distortion=True) == intr
    msg.k = np.zeros(9)
    with pytest.raises(cv.ConversionError, match="not calibrated"):
        cv.camera_info_to_intrinsics(msg)


@pytest.mark.parametrize("yaw,pitch", [(0.0, 0.0), (123.0, 30.0), (-179.5, -30.0), (180.0, 60.0), (90.0, 45.0)])
def test_poses_round_trip(yaw, pitch):
    pose = world_from_camera(np.array([3.25, -1.5, 1.5]), yaw, pitch)
    back = cv.pose_stamped_to_matrix(cdr(cv.matrix_to_pose_stamped(pose, C, 1)))
    assert np.abs(back - pose).max() < 1e-9
    agent = AgentStatus((3.25, -1.5, 0.0), yaw, pitch)
    odom = cdr(cv.agent_to_odometry(agent, C, 1))
    assert odom.header.frame_id == "odom" and odom.child_frame_id == "base_link"
    pos, yaw_back = cv.odometry_to_base(odom)
    assert pos == agent.position
    assert abs((yaw_back - yaw + 180.0) % 360.0 - 180.0) < 1e-9


def test_bad_pose_is_refused():
    with pytest.raises(cv.ConversionError, match="rigid"):
        cv.matrix_to_pose_stamped(np.diag([2.0, 1, 1, 1]), C, 0)
    msg = cv.matrix_to_pose_stamped(np.eye(4), C, 0)
    msg.pose.orientation.w = 0.0
    with pytest.raises(cv.ConversionError, match="/camera/pose.*orientation"):
        cv.pose_stamped_to_matrix(msg)


def test_time_round_trips():
    for ns in (0, 1, 999_999_999, 1_000_000_000, 1_731_000_000_123_456_789):
        assert cv.time_to_ns(cdr(cv.make_header(C, ns, "x")).stamp) == ns
    assert cv.time_to_sec(cv.sec_to_time(12.5, C)) == 12.5
    assert cv.time_to_ns(cv.sec_to_time(0.1, C)) == 100_000_000


def test_whole_observation_round_trip_through_cdr():
    obs = make_obs()
    msgs = {k: cdr(m) for k, m in cv.observation_to_messages(obs, C, 1_000_000_123).items()}
    assert set(SENSOR_KEYS) <= set(msgs) and "ground_truth" not in msgs
    assert all(cv.stamp_ns_of(msgs[k]) == 1_000_000_123 for k in SENSOR_KEYS if k != "instance_labels")
    back = cv.messages_to_observation(msgs)
    assert back.step == obs.step and back.intrinsics == obs.intrinsics
    # the agent_status payload's exact copy restores the bits a quaternion loses
    assert np.array_equal(back.world_from_camera, obs.world_from_camera)
    assert back.agent == obs.agent and back.feedback == obs.feedback
    assert back.rgb.tobytes() == obs.rgb.tobytes() and back.depth.tobytes() == obs.depth.tobytes()
    assert np.array_equal(back.instance_ids, obs.instance_ids) and back.id_to_label == obs.id_to_label


def test_observation_without_status_or_images_and_missing_topics():
    obs = make_obs()
    msgs = cv.observation_to_messages(obs, C, 5)
    for k in ("agent_status", "color", "depth", "instance_ids", "instance_labels"):
        del msgs[k]
    back = cv.messages_to_observation(msgs, step=3)
    assert back.step == 3 and back.rgb is None and abs(back.agent.horizon_deg - 30.0) < 1e-9
    del msgs["odom"]
    with pytest.raises(cv.MissingTopicError, match="/odom"):
        cv.messages_to_observation(msgs)
    msgs = cv.observation_to_messages(obs, C, 5)
    msgs["depth"] = cv.depth_to_msg(np.zeros((3, 3), np.float32), C, 5)
    with pytest.raises(cv.ConversionError, match="/camera/depth/image_raw: image is 3x3"):
        cv.messages_to_observation(msgs)


def test_status_pose_copy_is_ignored_when_it_disagrees_with_the_pose_topic():
    obs = make_obs()
    msgs = cv.observation_to_messages(obs, C, 5)
    moved = obs.world_from_camera.copy()
    moved[0, 3] += 1.0
    msgs["camera_pose"] = cv.matrix_to_pose_stamped(moved, C, 5)
    back = cv.messages_to_observation(msgs)
    assert np.abs(back.world_from_camera - moved).max() < 1e-9  # the PoseStamped is the truth
