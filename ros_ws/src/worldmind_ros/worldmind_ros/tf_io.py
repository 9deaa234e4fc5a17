"""/tf, /tf_static and /clock for the WorldMind nodes, without tf2_ros.

Why here: tf2_ros does not install from PyPI; ``sim_bridge.ros.tf.TransformBuffer`` restates
tf2's lookup semantics, and this module connects it to the wire: ``TfListener`` fills a buffer
from ``/tf`` and ``/tf_static`` (tf2_msgs/TFMessage, tf2_ros's QoS: reliable, depth 100,
/tf_static transient-local), ``TfPublisher`` sends a ``robot_transforms`` tree (static transforms
gathered into one latched message, as tf2_ros's StaticTransformBroadcaster does), ``publish_clock``
sends rosgraph_msgs/Clock. On a ROS install tf2_msgs is the system's; here ``make setup`` builds a
local one with the upstream definition (ros_ws/vendor/tf2_msgs).

``PoseGate`` holds items (frames) until the camera and base poses at their stamp can be looked
up, at most ``timeout_s`` (tf2_ros's lookup timeout): then the item is released with the poses,
or dropped with the TF error (naming frames, time and why), so nothing waits forever.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from sim_bridge.ros.tf import FrameNames, StampedTransform, Transform, TransformBuffer, TransformError

TF_TOPIC, TF_STATIC_TOPIC, CLOCK_TOPIC = "/tf", "/tf_static", "/clock"
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE,
                    history=HistoryPolicy.KEEP_LAST)
TF_STATIC_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL, history=HistoryPolicy.KEEP_LAST)
TF_STATIC_PUB_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                               durability=DurabilityPolicy.TRANSIENT_LOCAL, history=HistoryPolicy.KEEP_LAST)


def frame_names(params: dict[str, Any]) -> FrameNames:
    """FrameNames from a node's ``*_frame`` parameters (defaults where a node lacks one)."""
    d = FrameNames()
    return FrameNames(map=str(params.get("map_frame", d.map)), odom=str(params.get("odom_frame", d.odom)),
                      base=str(params.get("base_frame", d.base)),
                      camera_link=str(params.get("camera_link_frame", d.camera_link)),
                      camera=str(params.get("camera_frame", d.camera)))


def _to_msg(t: StampedTransform) -> Any:
    from geometry_msgs.msg import TransformStamped

    m = TransformStamped()
    m.header.stamp.sec, m.header.stamp.nanosec = divmod(int(t.stamp_ns), 1_000_000_000)
    m.header.frame_id, m.child_frame_id = t.parent, t.child
    tr, q = m.transform.translation, m.transform.rotation
    tr.x, tr.y, tr.z = t.transform.translation
    q.x, q.y, q.z, q.w = t.transform.rotation_xyzw
    return m


class TfPublisher:
    def __init__(self, node: Any) -> None:
        from tf2_msgs.msg import TFMessage

        self.TFMessage = TFMessage
        self.pub = node.create_publisher(TFMessage, TF_TOPIC, TF_QOS)
        self.static_pub = node.create_publisher(TFMessage, TF_STATIC_TOPIC, TF_STATIC_PUB_QOS)
        self.statics: dict[str, Any] = {}

    def send(self, transforms: list[StampedTransform]) -> None:
        dynamic = [_to_msg(t) for t in transforms if not t.static]
        if dynamic:
            self.pub.publish(self.TFMessage(transforms=dynamic))
        new_static = {t.child: _to_msg(t) for t in transforms if t.static}
        if any(k not in self.statics for k in new_static):
            self.statics.update(new_static)
            self.static_pub.publish(self.TFMessage(transforms=list(self.statics.values())))


class TfListener:
    """Fills ``buffer`` from /tf and /tf_static; a malformed transform is logged and skipped."""

    def __init__(self, node: Any, buffer: TransformBuffer | None = None) -> None:
        from tf2_msgs.msg import TFMessage

        self.node = node
        self.buffer = buffer or TransformBuffer()
        self.received = 0
        node.create_subscription(TFMessage, TF_TOPIC, lambda m: self._on(m, False), TF_QOS)
        node.create_subscription(TFMessage, TF_STATIC_TOPIC, lambda m: self._on(m, True), TF_STATIC_QOS)

    def _on(self, msg: Any, static: bool) -> None:
        for t in msg.transforms:
            tr, q = t.transform.translation, t.transform.rotation
            stamp = int(t.header.stamp.sec) * 1_000_000_000 + int(t.header.stamp.nanosec)
            try:
                self.buffer.set_transform(t.header.frame_id, t.child_frame_id, stamp,
                                          Transform((tr.x, tr.y, tr.z), (q.x, q.y, q.z, q.w)), static)
                self.received += 1
            except ValueError as exc:
                self.node.get_logger().error(f"topic {TF_STATIC_TOPIC if static else TF_TOPIC}: "
                                             f"{t.header.frame_id} -> {t.child_frame_id}: {exc}; skipped")


def publish_clock(pub: Any, stamp_ns: int) -> None:
    from rosgraph_msgs.msg import Clock

    msg = Clock()
    msg.clock.sec, msg.clock.nanosec = divmod(int(stamp_ns), 1_000_000_000)
    pub.publish(msg)


def clock_publisher(node: Any) -> Any:
    from rosgraph_msgs.msg import Clock

    return node.create_publisher(Clock, CLOCK_TOPIC, QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT,
                                                                durability=DurabilityPolicy.VOLATILE))


@dataclass
class Poses:
    map_from_camera: np.ndarray
    map_from_base: np.ndarray


@dataclass
class _Waiting:
    item: Any
    stamp_ns: int
    since: float


class PoseGate:
    """Release items once the camera and base poses at their stamp are known (tf2 lookups), or
    drop them with the reason after ``timeout_s``. ``release(item, poses)`` / ``drop(item, why)``."""

    def __init__(self, buffer: TransformBuffer, frames: FrameNames, timeout_s: float,
                 release: Callable[[Any, Poses], None], drop: Callable[[Any, str], None], limit: int = 30) -> None:
        self.buffer, self.frames, self.timeout_s = buffer, frames, float(timeout_s)
        self.release, self.drop, self.limit = release, drop, limit
        self.waiting: list[_Waiting] = []
        self.dropped = 0

    def lookup(self, stamp_ns: int) -> Poses:
        f = self.frames
        return Poses(self.buffer.lookup(f.map, f.camera, stamp_ns), self.buffer.lookup(f.map, f.base, stamp_ns))

    def push(self, item: Any, stamp_ns: int) -> None:
        self.waiting.append(_Waiting(item, stamp_ns, time.monotonic()))
        if len(self.waiting) > self.limit:
            old = self.waiting.pop(0)
            self._drop(old, "too many frames waiting for TF")
        self.poll()

    def poll(self) -> None:
        """Release in stamp order: a frame still waiting holds back the later ones (until it is
        released or dropped), so frames never overtake each other."""
        keep = []
        now = time.monotonic()
        for w in self.waiting:
            try:
                poses = self.lookup(w.stamp_ns)
            except TransformError as exc:
                if now - w.since > self.timeout_s:
                    self._drop(w, f"TF lookup failed after {self.timeout_s:g} s: {exc}")
                else:
                    keep.append(w)
                continue
            if keep:
                keep.append(w)
            else:
                self.release(w.item, poses)
        self.waiting = keep

    def _drop(self, w: _Waiting, why: str) -> None:
        self.dropped += 1
        self.drop(w.item, why)
