"""The ROS 2 topic contract of WorldMind, as data (docs/ARCHITECTURE.md "ROS 2").

Every node (``ros_ws``), the bag recorder/reader (``sim_bridge.replay``) and the live-robot
synchroniser (``sim_bridge.ros.sync``) read topic names, message types and QoS from here, so the
contract is written down once and a rename is one edit. Nothing here imports rclpy: a node turns a
``QosSpec`` into an ``rclpy.qos.QoSProfile`` itself, e.g.::

    from rclpy.qos import QoSProfile, ReliabilityPolicy, DurabilityPolicy, HistoryPolicy
    spec = TOPICS["color"].qos_spec            # or QOS["sensor"]
    profile = QoSProfile(depth=spec.depth,
                         reliability=ReliabilityPolicy[spec.reliability.upper()],   # BEST_EFFORT / RELIABLE
                         durability=DurabilityPolicy[spec.durability.upper()],      # VOLATILE / TRANSIENT_LOCAL
                         history=HistoryPolicy[spec.history.upper()])               # KEEP_LAST

Public API
----------
- ``QosSpec`` (frozen dataclass) and ``QOS``: the three QoS classes by name:
  ``"sensor"`` (best-effort, keep-last 5, volatile: camera and odometry streams, where a late frame
  is worse than a lost one), ``"reliable"`` (reliable, keep-last 10, volatile: requests, results,
  events that must all arrive) and ``"latched"`` (reliable, keep-last 10, transient-local: label
  tables, plans and status that a late-joining node must still get).
- ``TopicSpec`` (frozen dataclass): ``key`` (logical name used in code), ``name`` (default topic),
  ``msg_type`` (ROS 2 type name, ``pkg/msg/Type``, the spelling rosbags uses; ``ros_type`` gives the
  ``pkg.msg.Type`` import path), ``qos`` (class name), ``payload_kind`` (for std_msgs/String topics:
  the ``worldmind/<kind>`` JSON schema of ``sim_bridge.ros.payloads``), ``description``.
- ``TOPICS``: ``dict[key, TopicSpec]`` in a fixed order. Keys: color, depth, camera_info, instance_ids,
  instance_labels, odom, camera_pose, agent_status, ground_truth, plan, critic, belief_updates,
  memory_query, memory_answer, memory_markers, skill_request, skill_result.
- ``SENSOR_KEYS``: the keys that make up one Observation (what ``sync.FrameSynchronizer`` matches).
- ``FRAMES``: REP 103 / REP 105 frame ids used in headers (``map``, ``odom``, ``base_link``,
  ``camera_color_optical_frame``).
- Names are RELATIVE and all under ``worldmind/`` (``worldmind/camera/color/image_raw``), so a
  namespace moves them and they never coincide with a robot driver's own topics (``/camera/...``,
  ``/odom``). ``resolve(name, namespace)`` gives the absolute name.
- ``topic_names(overrides=None, namespace="")``: ``dict[key, absolute name]`` after remapping; unknown
  keys raise ``KeyError`` listing the valid ones (a typo must not silently keep the default).
  ``node_topic_names(namespace="")``: the names nodes use (relative unless a namespace is given).
- ``LEGACY_NAMES``: the sensor topics' names before they moved under ``worldmind/`` (bag readers
  accept them).
- ``spec_for_topic(name, names=None)``: the ``TopicSpec`` a (possibly remapped) topic name stands for.

Encodings on image topics: color ``rgb8`` (HxWx3 uint8), depth ``32FC1`` metres (0 = no return;
``16UC1`` millimetres is accepted on read, as RealSense-style drivers publish it), instance ids
``32SC1`` (0 = no object), each with the same stamp as the frame it belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class QosSpec:
    """A QoS profile without rclpy: the policy names are rclpy's enum member names, lower-case."""

    name: str
    reliability: str  # "best_effort" | "reliable"
    durability: str  # "volatile" | "transient_local"
    history: str  # "keep_last"
    depth: int


QOS: dict[str, QosSpec] = {
    "sensor": QosSpec("sensor", "best_effort", "volatile", "keep_last", 5),
    "reliable": QosSpec("reliable", "reliable", "volatile", "keep_last", 10),
    "latched": QosSpec("latched", "reliable", "transient_local", "keep_last", 10),
}


@dataclass(frozen=True)
class TopicSpec:
    key: str
    name: str
    msg_type: str  # "sensor_msgs/msg/Image"
    qos: str  # a key of QOS
    payload_kind: str | None = None  # std_msgs/String topics: the payloads.py kind
    description: str = ""

    @property
    def qos_spec(self) -> QosSpec:
        return QOS[self.qos]

    @property
    def ros_type(self) -> str:
        """``sensor_msgs.msg.Image``: the Python import path of the rclpy message class."""
        return self.msg_type.replace("/", ".")


IMAGE = "sensor_msgs/msg/Image"
CAMERA_INFO = "sensor_msgs/msg/CameraInfo"
ODOMETRY = "nav_msgs/msg/Odometry"
POSE_STAMPED = "geometry_msgs/msg/PoseStamped"
STRING = "std_msgs/msg/String"
MARKER_ARRAY = "visualization_msgs/msg/MarkerArray"

# Image encodings (sensor_msgs/image_encodings.hpp spelling).
COLOR_ENCODING = "rgb8"
DEPTH_ENCODING = "32FC1"
IDS_ENCODING = "32SC1"

FRAMES = {
    "world": "map",  # REP 103 world (x forward, y left, z up), REP 105 "map"
    "odom": "odom",
    "base": "base_link",
    "camera": "camera_color_optical_frame",  # optical: x right, y down, z forward
}

_SPECS = (
    TopicSpec("color", "worldmind/camera/color/image_raw", IMAGE, "sensor", None, "RGB, rgb8 HxWx3"),
    TopicSpec("depth", "worldmind/camera/depth/image_raw", IMAGE, "sensor", None,
              "z-depth 32FC1 metres, registered to color; 0 = no return"),
    TopicSpec("camera_info", "worldmind/camera/color/camera_info", CAMERA_INFO, "sensor", None,
              "pinhole intrinsics of color (and registered depth/ids)"),
    TopicSpec("instance_ids", "worldmind/camera/instance_ids", IMAGE, "sensor", None,
              "instance segmentation 32SC1, 0 = no object; same stamp as color"),
    TopicSpec("instance_labels", "worldmind/camera/instance_labels", STRING, "latched", "label_table",
              "JSON id -> (object id, type) table for instance_ids, same stamp"),
    TopicSpec("odom", "worldmind/odom", ODOMETRY, "sensor", None, "base pose in the REP 103 world (map frame)"),
    TopicSpec("camera_pose", "worldmind/camera/pose", POSE_STAMPED, "sensor", None,
              "world_from_camera: optical camera frame in the map frame"),
    TopicSpec("agent_status", "worldmind/agent_status", STRING, "latched", "agent_status",
              "held object, camera horizon, step and last action feedback"),
    TopicSpec("ground_truth", "worldmind/ground_truth", STRING, "reliable", "ground_truth",
              "evaluation only: THOR-shaped world state per step; never subscribed by the agent"),
    TopicSpec("plan", "worldmind/plan", STRING, "latched", "goal_dag", "the current goal DAG"),
    TopicSpec("critic", "worldmind/critic", STRING, "reliable", "critic_directive",
              "Pass / Refine / Replan directives"),
    TopicSpec("belief_updates", "worldmind/belief_updates", STRING, "reliable", "belief_update",
              "events for the belief tracker"),
    TopicSpec("memory_query", "worldmind/memory/query", STRING, "reliable", "memory_query", "memory questions"),
    TopicSpec("memory_answer", "worldmind/memory/answer", STRING, "reliable", "memory_answer", "their answers"),
    TopicSpec("memory_markers", "worldmind/memory/markers", MARKER_ARRAY, "latched", None,
              "the spatial memory's objects for RViz"),
    TopicSpec("skill_request", "worldmind/skill/request", STRING, "reliable", "skill_request",
              "skill calls to the robot / sim bridge"),
    TopicSpec("skill_result", "worldmind/skill/result", STRING, "reliable", "skill_result", "their outcomes"),
)

TOPICS: dict[str, TopicSpec] = {s.key: s for s in _SPECS}

# Names before they moved under worldmind/ (sensor topics used to be a RealSense driver's own names):
# bag readers still accept bags recorded with them.
LEGACY_NAMES: dict[str, str] = {
    "color": "/camera/color/image_raw", "depth": "/camera/depth/image_raw",
    "camera_info": "/camera/color/camera_info", "instance_ids": "/camera/instance_ids",
    "instance_labels": "/camera/instance_labels", "odom": "/odom", "camera_pose": "/camera/pose",
}

# What one Observation is assembled from (instance_labels rides with instance_ids).
SENSOR_KEYS = ("color", "depth", "camera_info", "instance_ids", "instance_labels", "odom", "camera_pose")


def resolve(name: str, namespace: str = "") -> str:
    """A relative topic name as ROS resolves it in ``namespace`` (absolute names stay as they are)."""
    if name.startswith("/"):
        return name
    ns = namespace.strip("/")
    return f"/{ns}/{name}" if ns else f"/{name}"


def topic_names(overrides: Mapping[str, str] | None = None, namespace: str = "") -> dict[str, str]:
    """Resolved (absolute) names after remapping, as they appear in a bag or ``ros2 topic list``.
    ``overrides`` maps keys to absolute names (a robot's driver topics); ``namespace`` is the
    nodes' namespace (``/robot1``), under which every other (relative) name resolves."""
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(TOPICS))
    if unknown:
        raise KeyError(f"unknown topic key(s) {', '.join(map(repr, unknown))} (valid: {', '.join(TOPICS)})")
    return {key: overrides.get(key, resolve(spec.name, namespace)) for key, spec in TOPICS.items()}


def node_topic_names(namespace: str = "") -> dict[str, str]:
    """The names a node creates its publishers and subscriptions with: the RELATIVE names, so the
    node's ROS namespace (``ros2 launch ... namespace:=/robot1``, ``-r __ns:=/robot1``) moves them,
    or, when the legacy ``topic_namespace`` parameter is set, names resolved under it."""
    if namespace.strip("/"):
        return topic_names(namespace=namespace)
    return {key: spec.name for key, spec in TOPICS.items()}


def spec_for_topic(name: str, names: Mapping[str, str] | None = None) -> TopicSpec | None:
    """The spec a topic name stands for under ``names`` (default: the default names); None if none."""
    names = names or topic_names()
    for key, topic in names.items():
        if topic == name:
            return TOPICS[key]
    return None
