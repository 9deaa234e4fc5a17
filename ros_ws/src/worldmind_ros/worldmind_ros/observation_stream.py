"""Sensor topics in, whole ``Observation``s out: what the planner, perception and memory nodes
(and the robot bridge, on the robot's topics) subscribe through.

Why a layer over ``sim_bridge.ros.sync.FrameSynchronizer``: the synchroniser matches stamped
messages, but two contract topics are std_msgs/String and carry no header. The label table
carries its stamp in the payload (``stamp_ns``), so it is pushed with that stamp. The agent status
carries the ``step`` instead, so it is paired with the frame after synchronisation: a frame waits
(at most ``status_wait_s``) for the agent status of its step, because the planner must not act on
a frame without the held object and the feedback of the last action. Frames are delivered in
stamp order and never twice (a frame republished for late joiners has a new stamp and the same
step: the planner acts once per step, the memory may integrate it again, which is harmless).

Poses come from TF (``pose_source="tf"``, the default): each frame waits in a ``tf_io.PoseGate``
until ``map -> camera_frame`` and ``map -> base_frame`` at its stamp can be looked up on
/tf and /tf_static (tf2 semantics, interpolated), at most ``tf_timeout_s``; then it is dropped with
the TF error logged. ``pose_source="topic"`` takes the camera pose and odometry topics instead.
Incoming frame ids are checked (images and camera info in ``camera_frame``, odometry in
``odom_frame`` -> ``base_frame``): a frame with another frame id is dropped with an error naming
the topic, the frame id and the expected one.

``slop_s`` defaults to 0: on WorldMind's own topics every message of a frame carries the SAME
stamp (the sim bridge and the robot bridge stamp a whole frame once), so matching is exact and a
subscriber that fell behind can never pair one frame's label table with a neighbour's ids. The
robot bridge passes its ``sync_slop_s`` for a robot's independently stamped drivers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from std_msgs.msg import String

from sim_bridge.ros import payloads
from sim_bridge.ros.convert import check_frame_ids, messages_to_observation, stamp_ns_of
from sim_bridge.ros.tf import FrameNames
from sim_bridge.ros.sync import FrameSynchronizer, SyncConfig, SyncedFrame
from household.types import Observation
from worldmind_ros.runtime import WorldMindNode, message_class, topic_qos
from worldmind_ros.tf_io import PoseGate, Poses, TfListener

IMAGE_KEYS = ("color", "depth", "camera_info", "instance_ids", "odom", "camera_pose")
SENSOR_KEYS = IMAGE_KEYS + ("instance_labels",)


@dataclass
class _Held:
    frame: SyncedFrame
    step: int | None
    since: float


def pose_options(params: Mapping[str, Any]) -> dict[str, Any]:
    """ObservationStream keyword arguments from a node's ``_POSES`` parameters (graph.py)."""
    from worldmind_ros.tf_io import frame_names

    return {"pose_source": str(params.get("pose_source", "tf")), "frames": frame_names(dict(params)),
            "tf_timeout_s": float(params.get("tf_timeout_s", 0.5))}


class ObservationStream:
    """Subscribe ``node`` to the sensor topics ``names`` and call ``on_observation(obs, stamp_ns)``
    for each complete frame. ``with_status``: pair frames with ``agent_status`` by step."""

    def __init__(self, node: WorldMindNode, names: Mapping[str, str],
                 on_observation: Callable[[Observation, int], None], *, with_status: bool = True,
                 slop_s: float = 0.0, stale_after_s: float = 2.0, status_wait_s: float = 1.0,
                 qos_override: Any = None, pose_source: str = "tf", frames: FrameNames | None = None,
                 tf_timeout_s: float = 0.5) -> None:
        if pose_source not in ("tf", "topic"):
            raise ValueError(f"parameter pose_source: 'tf' or 'topic', got {pose_source!r}")
        self.node = node
        self.names = dict(names)
        self.on_observation = on_observation
        self.with_status = with_status
        self.status_wait_s = status_wait_s
        frames = frames if frames is not None else FrameNames()
        self.frames_ids = frames
        self.pose_source = pose_source
        self.rejected = 0
        image_keys = IMAGE_KEYS if pose_source == "topic" else tuple(k for k in IMAGE_KEYS if k != "camera_pose")
        cfg = SyncConfig(required=image_keys + ("instance_labels",), optional=(), latched=(),
                         slop_ns=int(slop_s * 1e9), stale_after_s=stale_after_s)
        self.sync = FrameSynchronizer(cfg, self.names)
        self.statuses: dict[int, Any] = {}  # step -> agent_status String
        self.latest_status: Any = None
        self.held: list[_Held] = []
        self.last_stamp = -1
        self.frames = 0
        self.subs = []
        self.tf = TfListener(node) if pose_source == "tf" else None
        self.gate = (PoseGate(self.tf.buffer, frames, tf_timeout_s, self._finish, self._reject)
                     if self.tf is not None else None)
        for key in image_keys:
            self.subs.append(node.create_subscription(
                message_class(key), self.names[key], node.guarded(self.names[key], self._image_cb(key)),
                qos_override or topic_qos(key)))
        self.subs.append(node.create_subscription(String, self.names["instance_labels"],
                                                  node.guarded(self.names["instance_labels"], self._on_labels),
                                                  topic_qos("instance_labels")))
        if with_status:
            self.subs.append(node.create_subscription(String, self.names["agent_status"],
                                                      node.guarded(self.names["agent_status"], self._on_status),
                                                      topic_qos("agent_status")))
        self.timer = node.create_timer(0.1, self._flush_overdue)

    def _now(self) -> int:
        return self.node.get_clock().now().nanoseconds

    def _image_cb(self, key: str) -> Callable[[Any], None]:
        def cb(msg: Any) -> None:
            self._emit(self.sync.push(key, stamp_ns_of(msg), msg, self._now()))
        return cb

    def _on_labels(self, msg: String) -> None:
        topic = self.names["instance_labels"]
        data = payloads.decode(msg.data, topic, "label_table").data
        stamp = data.get("stamp_ns")
        if stamp is None:
            raise payloads.PayloadError(topic, "stamp_ns", "needed to synchronise the label table with its image")
        self._emit(self.sync.push("instance_labels", int(stamp), msg, self._now()))

    def _on_status(self, msg: String) -> None:
        data = payloads.decode(msg.data, self.names["agent_status"], "agent_status").data
        step = int(data["step"])
        self.statuses[step] = msg
        self.latest_status = msg
        for old in [s for s in self.statuses if s < step - 50]:
            del self.statuses[old]
        self._release(force=False)

    def _emit(self, frames: list[SyncedFrame]) -> None:
        for frame in frames:
            step = payloads.decode(frame.messages["instance_labels"].data, self.names["instance_labels"],
                                   "label_table").data.get("step")
            self.held.append(_Held(frame, step, time.monotonic()))
        self._release(force=False)

    def _flush_overdue(self) -> None:
        self._release(force=True)
        if self.gate is not None:
            self.gate.poll()

    def _release(self, force: bool) -> None:
        """Deliver held frames whose status is here (or, past ``status_wait_s``, the latest one)."""
        keep: list[_Held] = []
        for h in self.held:
            status = self.statuses.get(h.step) if h.step is not None else None
            overdue = force and time.monotonic() - h.since > self.status_wait_s
            if not self.with_status:
                self._deliver(h, None)
            elif status is not None:
                self._deliver(h, status)
            elif overdue:
                self.node.get_logger().warning(
                    f"topic {self.names['agent_status']}: no status for step {h.step} within "
                    f"{self.status_wait_s:g} s; using the latest")
                self._deliver(h, self.latest_status)
            else:
                keep.append(h)
        self.held = keep

    def _deliver(self, h: _Held, status: Any) -> None:
        if h.frame.stamp_ns <= self.last_stamp:
            return  # never twice, never backwards
        f = self.frames_ids
        problems = check_frame_ids(h.frame.messages, f.camera, f.odom, f.base, self.names)
        if problems:
            self._reject((h, status), "; ".join(problems))
            return
        if self.gate is not None:
            self.gate.push((h, status), h.frame.stamp_ns)
        else:
            self._finish((h, status), None)

    def _reject(self, item: tuple[_Held, Any], why: str) -> None:
        self.rejected += 1
        self.node.get_logger().error(f"frame at {item[0].frame.stamp_ns / 1e9:.3f} (step {item[0].step}) dropped: {why}")

    def _finish(self, item: tuple[_Held, Any], poses: Poses | None) -> None:
        h, status = item
        if h.frame.stamp_ns <= self.last_stamp:
            return
        msgs = dict(h.frame.messages)
        if status is not None:
            msgs["agent_status"] = status
        obs = messages_to_observation(msgs, topic_of=self.names, step=h.step,
                                      world_from_camera=poses.map_from_camera if poses else None,
                                      map_from_base=poses.map_from_base if poses else None)
        if status is not None:
            # The status carries the pose exactly as the bridge knew it; odometry's quaternion
            # round trip turns 30.0 degrees into 29.999999999999996 and 210 into -150, which a
            # planner discretising headings must not see (the ROS run must match in-process).
            agent, _, _ = payloads.agent_status_from_payload(
                payloads.decode(status.data, self.names["agent_status"], "agent_status").data)
            obs.agent = agent
        self.last_stamp = h.frame.stamp_ns
        self.frames += 1
        self.on_observation(obs, h.frame.stamp_ns)
