"""The planner node on a robot without a localiser (issue 31): it reads poses in ``odom`` and
publishes the agent's correction as ``map -> odom`` (REP 105). The pieces the node wires, tested
without DDS; the message itself through rclpy's serialiser."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from perception.pose_correction import ScanToMapCorrector
from household.frames import se2
from sim_bridge.ros.tf import FrameNames, TransformBuffer, matrix_of, transform_of
from worldmind_ros.graph import NODE_PARAMS
from worldmind_ros.planner_node import map_to_odom, stream_pose_options

FRAMES = FrameNames(map="world", odom="wheel_odom")


def test_the_planner_node_declares_pose_correction_off_by_default() -> None:
    spec = {p.name: p for p in NODE_PARAMS["planner_node"]}
    assert spec["pose_correction"].default is False


def test_with_pose_correction_poses_are_looked_up_in_odom() -> None:
    params = {"map_frame": "world", "odom_frame": "wheel_odom", "pose_source": "tf", "tf_timeout_s": 0.5}
    assert stream_pose_options(params)["frames"].map == "world"  # a localiser gives map: as every node
    corrected = stream_pose_options({**params, "pose_correction": True})["frames"]
    assert corrected.map == "wheel_odom" and corrected.odom == "wheel_odom"


def test_the_correction_is_published_as_map_to_odom_and_composes_in_tf() -> None:
    localiser = ScanToMapCorrector()
    localiser.map_from_odom_se2 = se2(math.radians(3.0), 0.4, -0.2)
    t = map_to_odom(SimpleNamespace(localiser=localiser), FRAMES, 7_000_000_123)
    assert t is not None and (t.parent, t.child, t.stamp_ns) == ("world", "wheel_odom", 7_000_000_123)
    assert np.allclose(matrix_of(t.transform), localiser.map_from_odom, atol=1e-9)
    # with odom -> base from the robot, map -> base is the corrected pose
    buffer = TransformBuffer()
    buffer.set_transform(t.parent, t.child, t.stamp_ns, t.transform)
    odom_base = np.eye(4)
    odom_base[:3, 3] = (1.0, 0.0, 0.0)
    buffer.set_transform("wheel_odom", "base_link", t.stamp_ns, transform_of(odom_base))
    base = buffer.lookup("world", "base_link", t.stamp_ns)
    expect = localiser.map_from_odom_se2 @ np.array([1.0, 0.0, 1.0])
    assert np.allclose(base[:2, 3], expect[:2], atol=1e-9)


def test_an_agent_that_does_not_correct_publishes_nothing() -> None:
    assert map_to_odom(SimpleNamespace(), FRAMES, 1) is None
    assert map_to_odom(SimpleNamespace(localiser=None), FRAMES, 1) is None


def test_the_transform_message_survives_cdr() -> None:
    pytest.importorskip("rclpy")
    pytest.importorskip("tf2_msgs.msg", reason="tf2_msgs not built: `make setup` builds it")
    from rclpy.serialization import deserialize_message, serialize_message
    from tf2_msgs.msg import TFMessage

    from worldmind_ros.tf_io import _to_msg

    localiser = ScanToMapCorrector()
    localiser.map_from_odom_se2 = se2(0.1, 0.5, 0.25)
    t = map_to_odom(SimpleNamespace(localiser=localiser), FRAMES, 2_500_000_000)
    assert t is not None
    msg = deserialize_message(serialize_message(TFMessage(transforms=[_to_msg(t)])), TFMessage)
    m = msg.transforms[0]
    assert (m.header.frame_id, m.child_frame_id) == ("world", "wheel_odom")
    assert (m.header.stamp.sec, m.header.stamp.nanosec) == (2, 500_000_000)
    assert (m.transform.translation.x, m.transform.translation.y) == pytest.approx((0.5, 0.25))


def test_the_planner_node_grounds_through_the_object_memory_it_is_told() -> None:
    """``object_memory`` (issue 31, item 3): the tracker by default; 'spatial' gives the agent an
    in-process spatial semantic memory; anything else is refused by name."""
    from planner.spatial_object_memory import SpatialObjectMemory
    from worldmind_ros.planner_node import make_planner_agent

    spec = {p.name: p for p in NODE_PARAMS["planner_node"]}
    assert spec["object_memory"].default == "tracker"
    agent = make_planner_agent("deterministic", 0.25, object_memory="spatial")
    assert agent.config.object_memory == "spatial"
    assert isinstance(agent.object_memory(agent.config), SpatialObjectMemory)
    assert make_planner_agent("deterministic", 0.25).config.object_memory == "tracker"
    with pytest.raises(ValueError, match="object_memory: 'octomap'"):
        make_planner_agent("deterministic", 0.25, object_memory="octomap")


def test_the_planner_node_passes_the_detectors_smallest_instance_to_the_agent() -> None:
    """``detector_min_pixels``: 0 by default (the embedded simulator's segmentation misses nothing
    that shows); a robot's detector figure reaches the agent's search (planner/surface_look.py)."""
    from worldmind_ros.planner_node import make_planner_agent

    spec = {p.name: p for p in NODE_PARAMS["planner_node"]}
    assert spec["detector_min_pixels"].default == 0
    assert make_planner_agent("deterministic", 0.25).config.detector_min_pixels == 0
    assert make_planner_agent("deterministic", 0.25, detector_min_pixels=40).config.detector_min_pixels == 40
