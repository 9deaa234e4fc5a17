"""Conversions between WorldMind's types (``household.types``) and ROS 2 message fields.

Written once, duck-typed, for BOTH kinds of message classes the project meets: rosbags' generated
dataclasses (bags: recording and replay, no ROS install) and rclpy's generated classes (the live
nodes in ``ros_ws``). The caller passes the classes in as a ``MessageClasses`` namespace:

    from sim_bridge.ros.convert import MessageClasses
    bag_classes = MessageClasses.from_typestore()      # rosbags, Stores.ROS2_JAZZY by default
    ros_classes = MessageClasses.from_modules()        # sensor_msgs.msg.Image etc. (rclpy's; lazy import)

Every message is built with ALL its fields as keywords (rosbags' dataclasses have no defaults; rclpy's
accept keywords), and array fields are given in the form each side stores: numpy arrays for rosbags,
``array.array`` for rclpy's unbounded byte/float sequences (numpy for fixed-size arrays on both).
Reading accepts any of ndarray, array.array, bytes or list.

Why not ros2_numpy / cv_bridge: neither installs here under numpy 2 (docs/PLATFORM.md), and these are
small enough to own and test both ways.

Public API (``classes`` is a ``MessageClasses``; ``stamp_ns`` is int nanoseconds; ``topic`` only
names the source in error messages)
------------------------------------------------------------------------------------------------
Time:      ``ns_to_time(ns, classes)``, ``time_to_ns(msg)``, ``sec_to_time(s, classes)``,
           ``time_to_sec(msg)``, ``make_header(classes, stamp_ns, frame_id)``, ``stamp_ns_of(msg)``.
Images:    ``rgb_to_msg(rgb, classes, stamp_ns, frame_id)`` (rgb8), ``depth_to_msg`` (32FC1 metres),
           ``ids_to_msg`` (32SC1); ``msg_to_rgb(msg, topic)`` (rgb8/bgr8/rgba8/bgra8 -> HxWx3 uint8),
           ``msg_to_depth(msg, topic)`` (32FC1, or 16UC1 millimetres -> float32 metres),
           ``msg_to_ids(msg, topic)`` (32SC1, 16UC1, 8UC1 -> int32). Reading honours ``step`` (row
           padding) and ``is_bigendian``; a data size other than ``step * height`` or a step shorter
           than a row is refused.
Camera:    ``intrinsics_to_camera_info(intr, classes, stamp_ns, frame_id)`` (K, P, R = I, plumb_bob
           with D = 0), ``camera_info_to_intrinsics(msg, topic, allow_distortion=False)``.
Poses:     ``matrix_to_pose_stamped(T, classes, stamp_ns, frame_id="map")``,
           ``pose_stamped_to_matrix(msg, topic)``, ``matrix_to_pose(T, classes)``, ``pose_to_matrix(pose)``,
           ``agent_to_odometry(agent, classes, stamp_ns)`` (base position + yaw quaternion, frame
           map -> base_link), ``odometry_to_base(msg, topic) -> (position, yaw_deg)``.
Strings:   ``payload_to_msg(kind, data, classes)``, ``msg_to_payload(msg, topic, kind)``.
Frames:    ``observation_to_messages(obs, classes, stamp_ns, world=None) -> dict[key, msg]`` (keys of
           ``topics.TOPICS``; ``world`` adds ground_truth), ``messages_to_observation(msgs, topic_of=None,
           step=None) -> Observation`` (needs camera_info + camera_pose + odom or agent_status; images optional;
           horizon from agent_status, else from the camera pose's pitch).
Errors:    ``ConversionError(ValueError)`` naming the topic (and ``MissingTopicError`` for a frame
           lacking a required topic).

Frames (REP 103): the world is ``map``; ``Observation.world_from_camera`` is the pose of the
*optical* camera frame (``camera_color_optical_frame``) in ``map``; Odometry carries the robot base
(``base_link``) in ``map`` with only yaw (AgentStatus has no roll/pitch). Quaternions are built and
read with transforms3d (w, x, y, z order inside, ROS x, y, z, w on the wire).
"""

from __future__ import annotations

import array
import dataclasses
import math
import sys
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from transforms3d.euler import euler2quat
from transforms3d.quaternions import mat2quat, quat2mat

from household.frames import camera_pose_from_world_from_camera, is_rigid_transform
from sim_bridge.ros import payloads
from sim_bridge.ros.topics import COLOR_ENCODING, DEPTH_ENCODING, FRAMES, IDS_ENCODING, topic_names

from household.types import ActionFeedback, AgentStatus, CameraIntrinsics, Observation, WorldState

DEFAULT_NAMES = topic_names()  # resolved default names, for error messages

NS = 1_000_000_000
EXACT_TOLERANCE = 1e-6  # agent_status copies of a pose are used when they agree with the messages to this
_LITTLE = sys.byteorder == "little"


class ConversionError(ValueError):
    """A message that cannot become the project's type (or the reverse); names the topic."""


class MissingTopicError(ConversionError):
    """A frame lacks a message it cannot be assembled without."""


@dataclass(frozen=True)
class MessageClasses:
    """The message classes conversions build. Any object with these attributes works."""

    Time: Any
    Header: Any
    Image: Any
    CameraInfo: Any
    RegionOfInterest: Any
    Point: Any
    Quaternion: Any
    Pose: Any
    PoseStamped: Any
    PoseWithCovariance: Any
    Vector3: Any
    Twist: Any
    TwistWithCovariance: Any
    Odometry: Any
    String: Any

    _NAMES = {
        "Time": "builtin_interfaces/msg/Time", "Header": "std_msgs/msg/Header",
        "Image": "sensor_msgs/msg/Image", "CameraInfo": "sensor_msgs/msg/CameraInfo",
        "RegionOfInterest": "sensor_msgs/msg/RegionOfInterest", "Point": "geometry_msgs/msg/Point",
        "Quaternion": "geometry_msgs/msg/Quaternion", "Pose": "geometry_msgs/msg/Pose",
        "PoseStamped": "geometry_msgs/msg/PoseStamped",
        "PoseWithCovariance": "geometry_msgs/msg/PoseWithCovariance", "Vector3": "geometry_msgs/msg/Vector3",
        "Twist": "geometry_msgs/msg/Twist", "TwistWithCovariance": "geometry_msgs/msg/TwistWithCovariance",
        "Odometry": "nav_msgs/msg/Odometry", "String": "std_msgs/msg/String",
    }

    @classmethod
    def from_typestore(cls, typestore: Any = None) -> "MessageClasses":
        """rosbags' classes (default: ``get_typestore(Stores.ROS2_JAZZY)``)."""
        if typestore is None:
            from rosbags.typesys import Stores, get_typestore

            typestore = get_typestore(Stores.ROS2_JAZZY)
        return cls(**{attr: typestore.types[name] for attr, name in cls._NAMES.items()})

    @classmethod
    def from_modules(cls) -> "MessageClasses":
        """The ROS 2 Python message packages' classes (what rclpy publishes); imported here, lazily."""
        import importlib

        out = {}
        for attr, name in cls._NAMES.items():
            pkg, _, typ = name.split("/")
            out[attr] = getattr(importlib.import_module(f"{pkg}.msg"), typ)
        return cls(**out)


def _numpy_style(msg_cls: Any) -> bool:
    """rosbags' classes are dataclasses and store arrays as numpy; rclpy's are not."""
    return dataclasses.is_dataclass(msg_cls)


def _bytes_field(msg_cls: Any, raw: bytes | np.ndarray) -> Any:
    buf = np.ascontiguousarray(raw).view(np.uint8).reshape(-1) if isinstance(raw, np.ndarray) else raw
    if _numpy_style(msg_cls):
        return np.frombuffer(bytes(buf), dtype=np.uint8).copy() if not isinstance(buf, np.ndarray) else buf.copy()
    return array.array("B", bytes(buf))


def _float_seq(msg_cls: Any, values: Any) -> Any:
    """An unbounded float64[] (CameraInfo.d)."""
    vals = np.asarray(values, dtype=np.float64).reshape(-1)
    return vals.copy() if _numpy_style(msg_cls) else array.array("d", vals.tolist())


def _bytes_of(data: Any) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    if isinstance(data, (bytes, bytearray, memoryview, array.array)):
        return np.frombuffer(data, dtype=np.uint8)
    return np.asarray(list(data), dtype=np.uint8)


# ---- time ---------------------------------------------------------------------------------------

def ns_to_time(ns: int, classes: MessageClasses) -> Any:
    ns = int(ns)
    return classes.Time(sec=ns // NS, nanosec=ns % NS)


def time_to_ns(msg: Any) -> int:
    return int(msg.sec) * NS + int(msg.nanosec)


def sec_to_time(seconds: float, classes: MessageClasses) -> Any:
    return ns_to_time(round(seconds * NS), classes)


def time_to_sec(msg: Any) -> float:
    return int(msg.sec) + int(msg.nanosec) / NS


def make_header(classes: MessageClasses, stamp_ns: int, frame_id: str) -> Any:
    return classes.Header(stamp=ns_to_time(stamp_ns, classes), frame_id=frame_id)


def stamp_ns_of(msg: Any) -> int:
    """The header stamp of any stamped message, in nanoseconds."""
    return time_to_ns(msg.header.stamp)


# ---- images -------------------------------------------------------------------------------------

# encoding -> (channels, numpy dtype of one channel)
_ENCODINGS: dict[str, tuple[int, str]] = {
    "rgb8": (3, "u1"), "bgr8": (3, "u1"), "rgba8": (4, "u1"), "bgra8": (4, "u1"), "mono8": (1, "u1"),
    "32FC1": (1, "f4"), "16UC1": (1, "u2"), "32SC1": (1, "i4"), "8UC1": (1, "u1"), "mono16": (1, "u2"),
}


def _array_to_image(arr: np.ndarray, encoding: str, classes: MessageClasses, stamp_ns: int, frame_id: str) -> Any:
    channels, kind = _ENCODINGS[encoding]
    arr = np.ascontiguousarray(arr, dtype=np.dtype(kind).newbyteorder("="))
    height, width = arr.shape[:2]
    step = width * channels * arr.dtype.itemsize
    return classes.Image(header=make_header(classes, stamp_ns, frame_id), height=int(height), width=int(width),
                         encoding=encoding, is_bigendian=0 if _LITTLE else 1, step=int(step),
                         data=_bytes_field(classes.Image, arr))


def rgb_to_msg(rgb: np.ndarray, classes: MessageClasses, stamp_ns: int,
               frame_id: str = FRAMES["camera"]) -> Any:
    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ConversionError(f"rgb must be HxWx3 uint8, got {rgb.shape} {rgb.dtype}")
    return _array_to_image(rgb, COLOR_ENCODING, classes, stamp_ns, frame_id)


def depth_to_msg(depth: np.ndarray, classes: MessageClasses, stamp_ns: int,
                 frame_id: str = FRAMES["camera"]) -> Any:
    depth = np.asarray(depth)
    if depth.ndim != 2 or depth.dtype != np.float32:
        raise ConversionError(f"depth must be HxW float32 metres, got {depth.shape} {depth.dtype}")
    return _array_to_image(depth, DEPTH_ENCODING, classes, stamp_ns, frame_id)


def ids_to_msg(ids: np.ndarray, classes: MessageClasses, stamp_ns: int,
               frame_id: str = FRAMES["camera"]) -> Any:
    ids = np.asarray(ids)
    if ids.ndim != 2 or not np.issubdtype(ids.dtype, np.integer):
        raise ConversionError(f"instance ids must be HxW integers, got {ids.shape} {ids.dtype}")
    if ids.size and (ids.min() < np.iinfo(np.int32).min or ids.max() > np.iinfo(np.int32).max):
        raise ConversionError("instance ids do not fit 32SC1")
    return _array_to_image(ids.astype(np.int32, copy=False), IDS_ENCODING, classes, stamp_ns, frame_id)


def msg_to_array(msg: Any, topic: str, accepted: tuple[str, ...]) -> tuple[np.ndarray, str]:
    """(array in native byte order, encoding): HxW for one channel, HxWxC otherwise."""
    encoding = str(msg.encoding)
    if encoding not in accepted:
        raise ConversionError(f"topic {topic}: image encoding {encoding!r} is not one of {', '.join(accepted)}")
    channels, kind = _ENCODINGS[encoding]
    height, width, step = int(msg.height), int(msg.width), int(msg.step)
    dtype = np.dtype(kind).newbyteorder(">" if int(msg.is_bigendian) else "<")
    row = width * channels * dtype.itemsize
    data = _bytes_of(msg.data)
    if height <= 0 or width <= 0:
        raise ConversionError(f"topic {topic}: image is {width}x{height}")
    if step < row:
        raise ConversionError(f"topic {topic}: step {step} is shorter than a {encoding} row of {width} pixels ({row} bytes)")
    if data.size != step * height:
        raise ConversionError(f"topic {topic}: data has {data.size} bytes, step {step} x height {height} "
                              f"= {step * height} expected")
    rows = data.reshape(height, step)[:, :row]
    arr = np.ascontiguousarray(rows).view(dtype).reshape((height, width) if channels == 1 else (height, width, channels))
    return arr.astype(dtype.newbyteorder("="), copy=False), encoding


def msg_to_rgb(msg: Any, topic: str = DEFAULT_NAMES["color"]) -> np.ndarray:
    arr, enc = msg_to_array(msg, topic, ("rgb8", "bgr8", "rgba8", "bgra8"))
    if enc.startswith("bgr"):
        arr = arr[..., [2, 1, 0]]
    elif arr.shape[2] == 4:
        arr = arr[..., :3]
    return np.ascontiguousarray(arr, dtype=np.uint8)


def msg_to_depth(msg: Any, topic: str = DEFAULT_NAMES["depth"]) -> np.ndarray:
    arr, enc = msg_to_array(msg, topic, ("32FC1", "16UC1"))
    if enc == "16UC1":  # millimetres, 0 = no return
        return (arr.astype(np.float32) / np.float32(1000.0)).astype(np.float32)
    return np.array(arr, dtype=np.float32, copy=True)


def msg_to_ids(msg: Any, topic: str = DEFAULT_NAMES["instance_ids"]) -> np.ndarray:
    arr, _ = msg_to_array(msg, topic, ("32SC1", "16UC1", "8UC1"))
    return np.array(arr, dtype=np.int32, copy=True)


# ---- camera info --------------------------------------------------------------------------------

def intrinsics_to_camera_info(intr: CameraIntrinsics, classes: MessageClasses, stamp_ns: int,
                              frame_id: str = FRAMES["camera"]) -> Any:
    k = np.array([intr.fx, 0.0, intr.cx, 0.0, intr.fy, intr.cy, 0.0, 0.0, 1.0], dtype=np.float64)
    p = np.array([intr.fx, 0.0, intr.cx, 0.0, 0.0, intr.fy, intr.cy, 0.0, 0.0, 0.0, 1.0, 0.0], dtype=np.float64)
    roi = classes.RegionOfInterest(x_offset=0, y_offset=0, height=0, width=0, do_rectify=False)
    return classes.CameraInfo(header=make_header(classes, stamp_ns, frame_id), height=int(intr.height),
                              width=int(intr.width), distortion_model="plumb_bob",
                              d=_float_seq(classes.CameraInfo, [0.0] * 5), k=k,
                              r=np.eye(3, dtype=np.float64).reshape(-1), p=p, binning_x=0, binning_y=0, roi=roi)


def camera_info_to_intrinsics(msg: Any, topic: str = DEFAULT_NAMES["camera_info"],
                              allow_distortion: bool = False) -> CameraIntrinsics:
    """K gives fx, fy, cx, cy. Images with distortion (D != 0) are refused unless
    ``allow_distortion``: perception back-projects with a pinhole, so a rectified stream is needed."""
    k = np.asarray(list(msg.k), dtype=np.float64)
    if k.shape != (9,) or not np.all(np.isfinite(k)):
        raise ConversionError(f"topic {topic}: field 'k' must be 9 finite numbers")
    if k[0] <= 0 or k[4] <= 0:
        raise ConversionError(f"topic {topic}: field 'k' has fx={k[0]}, fy={k[4]}: camera not calibrated")
    d = np.asarray(list(msg.d), dtype=np.float64)
    if d.size and np.any(d != 0) and not allow_distortion:
        raise ConversionError(f"topic {topic}: field 'd' is non-zero ({msg.distortion_model}); subscribe to a "
                              "rectified image (image_rect) or pass allow_distortion=True")
    if int(msg.width) <= 0 or int(msg.height) <= 0:
        raise ConversionError(f"topic {topic}: width/height are {msg.width}x{msg.height}")
    return CameraIntrinsics(int(msg.width), int(msg.height), float(k[0]), float(k[4]), float(k[2]), float(k[5]))


# ---- poses --------------------------------------------------------------------------------------

def matrix_to_pose(matrix: np.ndarray, classes: MessageClasses, topic: str = "") -> Any:
    m = np.asarray(matrix, dtype=np.float64)
    if not is_rigid_transform(m):
        raise ConversionError(f"{'topic ' + topic + ': ' if topic else ''}pose is not a rigid 4x4 transform")
    w, x, y, z = mat2quat(m[:3, :3])
    if w < 0:  # one canonical sign, so a round trip is deterministic
        w, x, y, z = -w, -x, -y, -z
    t = m[:3, 3]
    return classes.Pose(position=classes.Point(x=float(t[0]), y=float(t[1]), z=float(t[2])),
                        orientation=classes.Quaternion(x=float(x), y=float(y), z=float(z), w=float(w)))


def pose_to_matrix(pose: Any, topic: str = "") -> np.ndarray:
    q = pose.orientation
    quat = np.array([q.w, q.x, q.y, q.z], dtype=np.float64)
    norm = float(np.linalg.norm(quat))
    if not np.all(np.isfinite(quat)) or abs(norm - 1.0) > 1e-3:
        raise ConversionError(f"{'topic ' + topic + ': ' if topic else ''}field 'orientation' is not a unit "
                              f"quaternion (norm {norm:.6g})")
    out = np.eye(4)
    out[:3, :3] = quat2mat(quat / norm)
    p = pose.position
    out[:3, 3] = (float(p.x), float(p.y), float(p.z))
    return out


def matrix_to_pose_stamped(matrix: np.ndarray, classes: MessageClasses, stamp_ns: int,
                           frame_id: str = FRAMES["world"]) -> Any:
    return classes.PoseStamped(header=make_header(classes, stamp_ns, frame_id), pose=matrix_to_pose(matrix, classes))


def pose_stamped_to_matrix(msg: Any, topic: str = DEFAULT_NAMES["camera_pose"]) -> np.ndarray:
    return pose_to_matrix(msg.pose, topic)


def agent_to_odometry(agent: AgentStatus, classes: MessageClasses, stamp_ns: int,
                      frame_id: str = FRAMES["odom"], child_frame_id: str = FRAMES["base"]) -> Any:
    """Odometry in ``odom`` (REP 105). A simulator has no drift, so map -> odom is identity and the
    pose is the agent's map pose; TF carries the same tree (``tf.robot_transforms``)."""
    w, x, y, z = euler2quat(0.0, 0.0, math.radians(agent.yaw_deg), "sxyz")
    pose = classes.Pose(position=classes.Point(x=float(agent.position[0]), y=float(agent.position[1]),
                                               z=float(agent.position[2])),
                        orientation=classes.Quaternion(x=float(x), y=float(y), z=float(z), w=float(w)))
    zero36 = np.zeros(36, dtype=np.float64)
    zero = classes.Vector3(x=0.0, y=0.0, z=0.0)
    return classes.Odometry(header=make_header(classes, stamp_ns, frame_id), child_frame_id=child_frame_id,
                            pose=classes.PoseWithCovariance(pose=pose, covariance=zero36),
                            twist=classes.TwistWithCovariance(twist=classes.Twist(linear=zero, angular=zero),
                                                              covariance=zero36.copy()))


def odometry_to_base(msg: Any, topic: str = DEFAULT_NAMES["odom"]) -> tuple[tuple[float, float, float], float]:
    """(position, yaw in degrees counter-clockwise about +z, in (-180, 180])."""
    pose = msg.pose.pose
    q = pose.orientation
    vals = [float(q.w), float(q.x), float(q.y), float(q.z)]
    if not all(math.isfinite(v) for v in vals) or abs(math.sqrt(sum(v * v for v in vals)) - 1.0) > 1e-3:
        raise ConversionError(f"topic {topic}: field 'pose.pose.orientation' is not a unit quaternion")
    w, x, y, z = vals
    yaw = math.degrees(math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))
    p = pose.position
    return (float(p.x), float(p.y), float(p.z)), (180.0 if yaw == -180.0 else yaw)


# ---- strings ------------------------------------------------------------------------------------

def payload_to_msg(kind: str, data: Mapping[str, Any], classes: MessageClasses, topic: str = "") -> Any:
    return classes.String(data=payloads.encode(kind, data, topic))


def msg_to_payload(msg: Any, topic: str, kind: str | None = None) -> payloads.Payload:
    return payloads.decode(msg.data, topic, kind)


# ---- whole frames -------------------------------------------------------------------------------

def observation_to_messages(obs: Observation, classes: MessageClasses, stamp_ns: int,
                            world: WorldState | None = None, frames: Any = None) -> dict[str, Any]:
    """One Observation as the messages of ``topics.SENSOR_KEYS`` + agent_status (+ ground_truth when
    ``world`` is given: evaluation only), all stamped ``stamp_ns``. Image keys are absent when the
    observation was not rendered. ``frames`` (``tf.FrameNames``) sets the frame ids (default REP 105
    names)."""
    cam = frames.camera if frames is not None else FRAMES["camera"]
    odom, base = (frames.odom, frames.base) if frames is not None else (FRAMES["odom"], FRAMES["base"])
    world_frame = frames.map if frames is not None else FRAMES["world"]
    out: dict[str, Any] = {}
    if obs.rgb is not None:
        out["color"] = rgb_to_msg(obs.rgb, classes, stamp_ns, cam)
    if obs.depth is not None:
        out["depth"] = depth_to_msg(obs.depth, classes, stamp_ns, cam)
    if obs.instance_ids is not None:
        out["instance_ids"] = ids_to_msg(obs.instance_ids, classes, stamp_ns, cam)
        out["instance_labels"] = payload_to_msg(
            "label_table", payloads.labels_to_payload(obs.id_to_label, step=obs.step, stamp_ns=stamp_ns), classes)
    out["camera_info"] = intrinsics_to_camera_info(obs.intrinsics, classes, stamp_ns, cam)
    out["odom"] = agent_to_odometry(obs.agent, classes, stamp_ns, odom, base)
    out["camera_pose"] = matrix_to_pose_stamped(obs.world_from_camera, classes, stamp_ns, world_frame)
    out["agent_status"] = payload_to_msg(
        "agent_status", payloads.agent_status_to_payload(obs.agent, obs.step, obs.feedback, obs.world_from_camera),
        classes)
    if world is not None:
        out["ground_truth"] = payload_to_msg("ground_truth", payloads.world_state_to_payload(world, obs.step), classes)
    return out


def check_frame_ids(msgs: Mapping[str, Any], camera_frame: str, odom_frame: str, base_frame: str,
                    topic_of: Mapping[str, str] | None = None) -> list[str]:
    """Problems with the frame ids of one frame's messages (empty: all as expected). Images and
    camera info must be in the camera's optical frame, odometry in ``odom_frame`` with child
    ``base_frame``: data in another frame would be put in the map at the wrong place."""
    names = dict(topic_of or {})
    out = []
    for key in ("color", "depth", "instance_ids", "camera_info"):
        if key in msgs and msgs[key].header.frame_id.lstrip("/") != camera_frame:
            out.append(f"topic {names.get(key, DEFAULT_NAMES[key])}: header.frame_id is "
                       f"{msgs[key].header.frame_id!r}, expected {camera_frame!r} (camera_frame)")
    if "odom" in msgs:
        m = msgs["odom"]
        if m.header.frame_id.lstrip("/") != odom_frame or m.child_frame_id.lstrip("/") != base_frame:
            out.append(f"topic {names.get('odom', DEFAULT_NAMES['odom'])}: frame_id/child_frame_id are "
                       f"{m.header.frame_id!r}/{m.child_frame_id!r}, expected {odom_frame!r}/{base_frame!r}")
    return out


def messages_to_observation(msgs: Mapping[str, Any], topic_of: Mapping[str, str] | None = None,
                            step: int | None = None, allow_distortion: bool = False,
                            world_from_camera: np.ndarray | None = None,
                            map_from_base: np.ndarray | None = None) -> Observation:
    """Assemble an Observation from one frame's messages keyed like ``topics.TOPICS``.

    Required: camera_info, camera_pose, and odom unless agent_status gives the base pose. Optional: color, depth,
    instance_ids (+ instance_labels),
    agent_status (step, horizon, held object, feedback, and exact copies of the poses, used where they
    agree with the PoseStamped/Odometry to 1e-6; without it the horizon is the camera pose's pitch,
    nothing is held and ``step`` is used). ``topic_of`` maps keys to the topic names used in
    error messages (default: the default names)."""
    names = dict(topic_of or {})

    def name(key: str) -> str:
        return names.get(key, DEFAULT_NAMES[key])

    # From TF (the nodes look both poses up at the frame's stamp) or from the pose/odometry topics.
    required = ("camera_info",) + (("camera_pose",) if world_from_camera is None else ()) \
        + (("odom",) if "agent_status" not in msgs and map_from_base is None else ())
    missing = [name(k) for k in required if k not in msgs]
    if missing:
        raise MissingTopicError(f"frame lacks required topic(s) {', '.join(missing)}")
    intr = camera_info_to_intrinsics(msgs["camera_info"], name("camera_info"), allow_distortion)
    if world_from_camera is not None:
        pose = np.asarray(world_from_camera, dtype=np.float64)
    else:
        pose = pose_stamped_to_matrix(msgs["camera_pose"], name("camera_pose"))
    position: tuple[float, float, float] | None = None
    yaw = 0.0
    if map_from_base is not None:
        position = (float(map_from_base[0, 3]), float(map_from_base[1, 3]), float(map_from_base[2, 3]))
        yaw = math.degrees(math.atan2(map_from_base[1, 0], map_from_base[0, 0]))
        yaw = 180.0 if yaw == -180.0 else yaw
    elif "odom" in msgs:
        position, yaw = odometry_to_base(msgs["odom"], name("odom"))
    held_id = held_type = None
    feedback = ActionFeedback(None, True)
    if "agent_status" in msgs:
        data = msg_to_payload(msgs["agent_status"], name("agent_status"), "agent_status").data
        status, status_step, feedback = payloads.agent_status_from_payload(data)
        horizon, held_id, held_type = status.horizon_deg, status.held_object_id, status.held_object_type
        step = status_step if step is None else step
        # The status carries exact copies of what the quaternions carry to ~1e-16; when they agree
        # (they do for anything this module wrote) take the exact ones, so replay is bit-identical.
        exact = data.get("world_from_camera")
        if exact is not None:
            exact_pose = np.asarray(exact, dtype=np.float64).reshape(4, 4)
            if np.abs(exact_pose - pose).max() <= EXACT_TOLERANCE:
                pose = exact_pose
        if position is None or (np.abs(np.subtract(status.position, position)).max() <= EXACT_TOLERANCE
                                and abs((status.yaw_deg - yaw + 180.0) % 360.0 - 180.0) <= EXACT_TOLERANCE):
            position, yaw = status.position, status.yaw_deg
    else:
        horizon = camera_pose_from_world_from_camera(pose)[2]
    assert position is not None
    obs = Observation(int(step or 0), intr, pose, AgentStatus(position, yaw, horizon, held_id, held_type), feedback)
    shape = (intr.height, intr.width)
    for key, fn, attr in (("color", msg_to_rgb, "rgb"), ("depth", msg_to_depth, "depth"),
                          ("instance_ids", msg_to_ids, "instance_ids")):
        if key in msgs:
            arr = fn(msgs[key], name(key))
            if arr.shape[:2] != shape:
                raise ConversionError(f"topic {name(key)}: image is {arr.shape[1]}x{arr.shape[0]}, "
                                      f"camera_info says {intr.width}x{intr.height}")
            setattr(obs, attr, arr)
    if "instance_labels" in msgs:
        obs.id_to_label = payloads.labels_from_payload(
            msg_to_payload(msgs["instance_labels"], name("instance_labels"), "label_table").data)
    return obs
