"""sim_bridge.ros.tf: tf2's lookup semantics without tf2 (chains, interpolation, extrapolation
errors, unknown and unconnected frames, static transforms, cache, time 0)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from transforms3d.euler import euler2mat

from sim_bridge.ros import tf

S = 1_000_000_000


def yaw(deg: float, xyz=(0.0, 0.0, 0.0)) -> tf.Transform:
    m = np.eye(4)
    m[:3, :3] = euler2mat(0, 0, math.radians(deg), "sxyz")
    m[:3, 3] = xyz
    return tf.transform_of(m)


def test_chain_composes_parent_from_child():
    b = tf.TransformBuffer()
    b.set_transform("map", "odom", S, yaw(90, (1, 0, 0)))
    b.set_transform("odom", "base_link", S, yaw(0, (2, 0, 0)))
    b.set_transform("base_link", "camera", 0, yaw(0, (0, 0, 1.5)), static=True)
    m = b.lookup("map", "camera", S)
    assert np.allclose(m[:3, 3], (1, 2, 1.5))  # odom is turned 90 deg: base's +x is map's +y
    inv = b.lookup("camera", "map", S)
    assert np.allclose(inv @ m, np.eye(4))
    assert np.allclose(b.lookup("odom", "camera", S)[:3, 3], (2, 0, 1.5))  # common ancestor below the root


def test_interpolation_between_samples():
    b = tf.TransformBuffer()
    b.set_transform("odom", "base_link", 1 * S, yaw(0, (0, 0, 0)))
    b.set_transform("odom", "base_link", 2 * S, yaw(90, (1, 0, 0)))
    m = b.lookup("odom", "base_link", int(1.5 * S))
    assert np.allclose(m[:3, 3], (0.5, 0, 0))
    assert math.degrees(math.atan2(m[1, 0], m[0, 0])) == pytest.approx(45.0)
    exact = b.lookup("odom", "base_link", 2 * S)
    assert np.allclose(exact, tf.matrix_of(yaw(90, (1, 0, 0))))


def test_extrapolation_is_an_error_that_says_which_way():
    b = tf.TransformBuffer()
    b.set_transform("odom", "base_link", 1 * S, yaw(0))
    b.set_transform("odom", "base_link", 2 * S, yaw(0))
    with pytest.raises(tf.ExtrapolationError, match="into the future.*100.0 ms"):
        b.lookup("odom", "base_link", int(2.1 * S))
    with pytest.raises(tf.ExtrapolationError, match="into the past"):
        b.lookup("odom", "base_link", int(0.5 * S))
    ok, why = b.can_transform("odom", "base_link", int(2.1 * S))
    assert not ok and "future" in why
    single = tf.TransformBuffer()
    single.set_transform("a", "b", S, yaw(0))
    with pytest.raises(tf.ExtrapolationError):
        single.lookup("a", "b", S + 1)


def test_unknown_and_unconnected_frames():
    b = tf.TransformBuffer()
    b.set_transform("map", "odom", S, yaw(0))
    b.set_transform("world", "other", S, yaw(0))
    with pytest.raises(tf.LookupError_, match="frame 'camera' does not exist"):
        b.lookup("map", "camera", S)
    with pytest.raises(tf.ConnectivityError, match="not connected"):
        b.lookup("map", "other", S)
    assert isinstance(tf.ConnectivityError("x"), LookupError)


def test_static_holds_at_every_time_and_time_zero_is_the_latest_common():
    b = tf.TransformBuffer()
    b.set_transform("base_link", "camera", 5, yaw(0, (0, 0, 1)), static=True)
    b.set_transform("odom", "base_link", 1 * S, yaw(0, (1, 0, 0)))
    b.set_transform("odom", "base_link", 3 * S, yaw(0, (3, 0, 0)))
    assert np.allclose(b.lookup("odom", "camera", 2 * S)[:3, 3], (2, 0, 1))
    assert np.allclose(b.lookup("odom", "camera", 0)[:3, 3], (3, 0, 1))


def test_cache_keeps_only_the_last_seconds():
    b = tf.TransformBuffer(cache_s=2.0)
    for i in range(10):
        b.set_transform("odom", "base_link", i * S, yaw(0, (i, 0, 0)))
    with pytest.raises(tf.ExtrapolationError, match="past"):
        b.lookup("odom", "base_link", 5 * S)
    assert np.allclose(b.lookup("odom", "base_link", int(8.5 * S))[:3, 3], (8.5, 0, 0))


def test_out_of_order_samples_are_sorted_and_bad_input_refused():
    b = tf.TransformBuffer()
    b.set_transform("odom", "base_link", 3 * S, yaw(0, (3, 0, 0)))
    b.set_transform("odom", "base_link", 1 * S, yaw(0, (1, 0, 0)))
    assert np.allclose(b.lookup("odom", "base_link", 2 * S)[:3, 3], (2, 0, 0))
    with pytest.raises(ValueError, match="unit quaternion"):
        b.set_transform("odom", "base_link", 4 * S, tf.Transform((0, 0, 0), (0, 0, 0, 2)))
    with pytest.raises(ValueError, match="own parent"):
        b.set_transform("odom", "odom", S, yaw(0))


def test_robot_tree_gives_back_the_camera_and_base_poses():
    from household.frames import world_from_camera

    base = tf.base_matrix((1.0, 2.0, 0.9), 30.0)
    cam = world_from_camera(np.array([1.0, 2.0, 1.5]), 30.0, 30.0)  # looking 30 deg down
    b = tf.TransformBuffer()
    for t in tf.robot_transforms(base, cam, 5 * S):
        b.set_transform(t.parent, t.child, t.stamp_ns, t.transform, t.static)
    names = tf.FrameNames()
    assert np.abs(b.lookup(names.map, names.camera, 5 * S) - cam).max() < 1e-12
    assert np.abs(b.lookup(names.map, names.base, 5 * S) - base).max() < 1e-12
    assert tf.yaw_of(b.lookup(names.odom, names.base, 5 * S)) == pytest.approx(30.0)
