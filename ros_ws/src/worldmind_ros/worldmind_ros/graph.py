"""The WorldMind node graphs (sim, robot, replay) as data: ONE description read by everything
that starts nodes.

Why one place: ``launch/{sim,robot,replay}.launch.py`` (for a ROS 2 install with ``ros2 launch``)
and ``worldmind ros up ...`` (``worldmind/cli_ros.py``: plain OS processes, because launch and
launch_ros do not install from PyPI) must start the same nodes with the same parameters and the
same remappable robot topics; if each kept its own list they would drift. The nodes themselves
read their parameter declarations (name, default, description) from ``NODE_PARAMS`` here, and
``config/worldmind.yaml`` is checked against it by the tests, so a parameter exists in one place.

Nothing here imports rclpy (the CLI imports this module to build command lines).

Public API
----------
- ``ParamSpec`` / ``NODE_PARAMS``: per node type (the module name), its parameters.
- ``NodeSpec``: one node of a graph: ROS node name, module (``python -m worldmind_ros.<module>``),
  console-script executable, parameter overrides, whether its exit ends the graph.
- ``RobotTopic`` / ``ROBOT_TOPICS``: the robot-side topics the robot bridge subscribes to (and the
  example adapter publishes), each with its launch argument name: these are what a user remaps
  onto their robot's driver topics.
- ``GRAPHS``: ``{"sim": Graph, "robot": Graph, "replay": Graph}``; ``graph(name, **options)``
  returns the graph with per-run parameter overrides filled in (episode, agent, bag, ...).
- ``ros_args(spec, params_file, overrides, remaps)``: the ``--ros-args`` command-line tail a
  process gets (the CLI launcher uses it; tests check it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

PACKAGE = "worldmind_ros"
PACKAGE_DIR = Path(__file__).resolve().parent
CONFIG_FILE = PACKAGE_DIR.parent / "config" / "worldmind.yaml"  # source tree; installed: share/worldmind_ros/config
FASTDDS_PROFILE = PACKAGE_DIR.parent / "config" / "fastdds_large_frames.xml"  # see the file's comment


@dataclass(frozen=True)
class ParamSpec:
    """One ROS parameter: its type is the default's type (ROS parameters are typed)."""

    name: str
    default: Any
    description: str


def _p(name: str, default: Any, description: str) -> ParamSpec:
    return ParamSpec(name, default, description)


_COMMON = (
    _p("topic_namespace", "", "prefix for every WorldMind topic that is not remapped (e.g. /robot1)"),
    _p("autostart", True, "configure and activate at start (false: stay unconfigured for a lifecycle manager)"),
)

# Frame ids (REP 105), as parameters of every node that publishes or looks up TF.
_FRAMES = (
    _p("map_frame", "map", "world frame (REP 105 map)"),
    _p("odom_frame", "odom", "odometry frame (REP 105 odom)"),
    _p("base_frame", "base_link", "robot base frame"),
    _p("camera_frame", "camera_color_optical_frame", "optical frame of the color camera (images, camera info)"),
)
# How the sensor consumers get poses.
_POSES = _FRAMES + (
    _p("pose_source", "tf", "camera/base poses from TF at each image stamp ('tf') or from the camera_pose and "
                            "odom topics ('topic')"),
    _p("tf_timeout_s", 0.5, "a frame waits at most this long for its TF, then is dropped (logged)"),
)
# The node that holds the graph's one object memory serves it (memory_server.py): the memory node,
# or the planner when its agent grounds through the spatial memory (object_memory 'spatial').
_SERVES_MEMORY = (
    _p("marker_period_s", 1.0, "publish the MarkerArray of the map at most this often"),
    _p("default_k", 5, "hits per text query when the query does not say"),
)
_PUBLISHES_TF = _FRAMES + (
    _p("camera_link_frame", "camera_link", "body-aligned camera frame between base and optical frame"),
)

# Parameters per node module. Keep descriptions short: they show in `ros2 param describe`.
NODE_PARAMS: dict[str, tuple[ParamSpec, ...]] = {
    "sim_bridge_node": _COMMON + _PUBLISHES_TF + (
        _p("sim", "embedded", "simulator backend for sim_bridge.factory.make_environment"),
        _p("episode", "", "LongAct episode JSON file to run (empty: the first committed dev episode)"),
        _p("instruction", "detailed", "instruction kind the planner gets: detailed | concise"),
        _p("data_dir", "", "folder of house files that are not shipped (empty: package data)"),
        _p("width", 320, "rendered image width in pixels"),
        _p("height", 240, "rendered image height in pixels"),
        _p("move_step", 0.25, "metres per MoveAhead/Back/Left/Right"),
        _p("max_steps", 0, "step budget (0: the episode's own budget)"),
        _p("request_timeout_s", 120.0, "end the episode if no skill request arrives for this long"),
        _p("publish_ground_truth", False, "evaluation only: publish the THOR-shaped world state per step"),
        _p("skill_action", "worldmind/execute_skill", "ExecuteSkill action this simulator serves"),
        _p("skill_duration_s", 0.0, "each skill takes this long (feedback, cancellable) before the step runs"),
        _p("out", "", "write the episode report (report.json/.md/.png) to this folder (empty: none)"),
        _p("result_file", "", "write the episode result JSON to this file (empty: none)"),
    ),
    "example_robot_adapter": _COMMON + _PUBLISHES_TF + (
        _p("episode", "", "LongAct episode JSON file the simulated robot lives in (empty: first dev episode)"),
        _p("data_dir", "", "folder of house files that are not shipped"),
        _p("width", 320, "rendered image width in pixels"),
        _p("height", 240, "rendered image height in pixels"),
        _p("move_step", 0.25, "metres per MoveAhead/Back/Left/Right"),
        _p("max_steps", 0, "step budget (0: the episode's own budget)"),
        _p("request_timeout_s", 120.0, "stop if no skill request arrives for this long"),
        _p("skill_action", "/robot/execute_skill", "ExecuteSkill action the simulated robot serves"),
        _p("skill_duration_s", 0.0, "each skill takes this long (feedback, cancellable) before the step runs"),
        _p("result_file", "", "write the episode result JSON here when the planner says Stop"),
    ),
    "robot_bridge_node": _COMMON + _POSES + (
        _p("sync_slop_s", 0.05, "approximate-time sync: max stamp spread of one frame's messages"),
        _p("stale_after_s", 1.0, "warn when a sensor has been silent this long (stale-sensor detection)"),
        _p("skill_timeout_s", 60.0, "fail a skill request the robot has not answered within this time"),
        _p("robot_skill_action", "/robot/execute_skill", "the robot's ExecuteSkill action server (goals relayed to it)"),
    ),
    "perception_node": _COMMON + _POSES + (
        _p("voxel_size", 0.05, "voxel edge in metres (must equal the memory's)"),
        _p("min_pixels", 20, "instances with fewer pixels are ignored"),
        _p("max_depth", 10.0, "depth beyond this (metres) is ignored"),
        _p("mask_edge_check", False, "drop mask pixels the depth puts apart from their object (a learned "
                                     "segmenter's masks bleed over silhouettes); false for exact masks"),
    ),
    "memory_node": _COMMON + _POSES + _SERVES_MEMORY + (
        _p("voxel_size", 0.05, "voxel edge in metres"),
        _p("min_pixels", 20, "instances with fewer pixels are ignored (in-process perception)"),
        _p("min_observations", 1, "an object counts (queries, markers) once this many segments were associated "
                                  "with it; 2 or more drops a real segmenter's one-frame false positives"),
        _p("learned_segmenter", False, "the segmenter reports false detections, bleeds masks and confuses "
                                       "look-alikes: objects count after 3 views, boxes from voxels seen twice, "
                                       "mask pixels apart from their object in depth dropped, label flips outvoted "
                                       "(memory/spatial/sensor_settings.py); false for exact masks"),
        _p("depth_noise_k", 0.0, "the depth camera's noise, sigma = k z^2 in metres (datasheet; 0.0036 for a "
                                 "D435-class camera): the free-space test's margin; 0: exact"),
        _p("pose_tolerance", 0.0, "metres the localised pose may be off (the localiser's bias plus jitter bound, "
                                  "e.g. 0.075): where an object may be before it is called gone, and how far two "
                                  "views of one object may disagree; 0: exact"),
        _p("yaw_tolerance_deg", 0.0, "degrees the localised heading may be off (e.g. 2.1); 0: exact"),
        _p("save_path", "", "save the memory here on shutdown (empty: do not save)"),
    ),
    "belief_node": _COMMON + (
        _p("log_path", "", "durable event log of the tracker (empty: in memory only)"),
        _p("self_name", "robot", "the robot's actor name (observer gate)"),
        _p("observation_period_s", 1.0, "turn perceived objects into belief events at most this often"),
    ),
    "planner_node": _COMMON + _POSES + _SERVES_MEMORY + (
        _p("agent", "deterministic", "agent for planner.factory.make_agent, or scripted:<actions.json>"),
        _p("episode", "", "episode JSON file: the instruction (its checklist is stripped, never given to the agent)"),
        _p("instruction", "detailed", "instruction kind: detailed | concise"),
        _p("instruction_text", "", "robot mode: the instruction itself (used when episode is empty)"),
        _p("move_step", 0.25, "metres per move the agent assumes"),
        _p("depth_noise_k", 0.0, "the depth camera's noise, sigma = k z^2 in metres (datasheet; e.g. 0.005 for "
                                 "a D435-class stereo camera): the agent's map weighs returns by it; 0: exact"),
        _p("pose_tolerance", 0.0, "metres the localised pose may be off frame to frame (the localiser's stated "
                                  "accuracy, e.g. 0.05 for AMCL indoors): where no plan exists at full clearance the "
                                  "agent plans with that much less; 0: exact"),
        _p("confirm_views", 1, "views of an object that must agree on where it is before the agent believes it "
                               "(2 for a detector with false detections)"),
        _p("mask_edge_check", False, "drop mask pixels the depth puts apart from their object before its box is "
                                     "built (true behind a learned segmenter whose masks bleed); false: exact masks"),
        _p("pose_correction", False, "true on a robot without a localiser: poses are read in odom_frame, each depth "
                                     "frame is registered against the agent's own map, and the planner publishes "
                                     "map_frame -> odom_frame on /tf (REP 105); false where a localiser (AMCL, "
                                     "slam_toolbox) publishes it"),
        _p("detector_min_pixels", 0, "the smallest instance, in pixels, the robot's detector reports (its stated "
                                     "figure; e.g. 40 at 320x240): a search then looks over a surface from close by "
                                     "for small things (planner/surface_look.py); 0: a segmenter that reports "
                                     "whatever shows"),
        _p("object_memory", "tracker", "what the agent grounds objects through: 'tracker' (a box per segmenter id) "
                                       "or 'spatial' (an in-process spatial semantic memory, the memory node's kind: "
                                       "voxels, label votes, text index; planner/spatial_object_memory.py). With "
                                       "'spatial' this node serves the memory's topics and services and the graph "
                                       "starts no memory node (graph(object_memory=...))"),
        _p("memory_save_path", "", "object_memory 'spatial': save the agent's memory here on shutdown (empty: "
                                   "do not save)"),
        _p("max_steps", 0, "stop after this many actions (0: the episode's budget, or unlimited)"),
        _p("result_timeout_s", 60.0, "give up on a skill unanswered for this long (the goal is cancelled)"),
        _p("skill_interface", "action", "how skills are sent: 'action' (ExecuteSkill goals) or 'topic' "
                                        "(worldmind/skill_request JSON)"),
        _p("skill_action", "worldmind/execute_skill", "ExecuteSkill action the planner sends goals to"),
        _p("exit_on_stop", True, "exit the node (status 0) once the agent has said Stop"),
        _p("wait_for_task", False, "idle until a RunTask goal (worldmind/run_task) gives the task; stay up after it"),
    ),
    "critic_node": _COMMON + (
        _p("fail_streak_replan", 3, "this many failed skills in a row: advise Replan"),
    ),
    "bag_player_node": _COMMON + _PUBLISHES_TF + (
        _p("bag", "", "MCAP or sqlite3 bag to play"),
        _p("rate", 0.0, "playback speed factor (0: as fast as subscribers keep up)"),
        _p("start_delay_s", 1.0, "wait this long for subscribers to match before playing"),
    ),
}


@dataclass(frozen=True)
class RobotTopic:
    """A robot-side topic: what a robot's drivers publish (or its skill server serves)."""

    key: str  # the WorldMind topic key it feeds (sim_bridge.ros.topics.TOPICS)
    default: str  # default name; remap to the robot's
    launch_arg: str  # DeclareLaunchArgument name in robot.launch.py and --remap shortcut of the CLI
    description: str


ROBOT_TOPICS: tuple[RobotTopic, ...] = (
    RobotTopic("color", "/robot/camera/color/image_raw", "color_topic", "RGB image (rgb8 or bgr8)"),
    RobotTopic("depth", "/robot/camera/depth/image_raw", "depth_topic", "depth registered to color (32FC1 m or 16UC1 mm)"),
    RobotTopic("camera_info", "/robot/camera/color/camera_info", "camera_info_topic", "color CameraInfo"),
    RobotTopic("instance_ids", "/robot/segmentation/instance_ids", "instance_ids_topic",
               "instance segmenter output (32SC1)"),
    RobotTopic("instance_labels", "/robot/segmentation/instance_labels", "instance_labels_topic",
               "segmenter label table (worldmind/label_table JSON)"),
    RobotTopic("odom", "/robot/odom", "odom_topic", "base odometry in the map frame"),
    RobotTopic("camera_pose", "/robot/camera/pose", "camera_pose_topic", "optical camera pose in the map frame"),
    RobotTopic("agent_status", "/robot/status", "status_topic", "held object, camera horizon (worldmind/agent_status)"),
    RobotTopic("skill_request", "/robot/skill/request", "skill_request_topic", "skill calls TO the robot"),
    RobotTopic("skill_result", "/robot/skill/result", "skill_result_topic", "skill outcomes FROM the robot"),
)
ROBOT_TOPIC_BY_ARG = {t.launch_arg: t for t in ROBOT_TOPICS}


@dataclass(frozen=True)
class NodeSpec:
    name: str  # ROS node name
    module: str  # worldmind_ros.<module>; also the NODE_PARAMS key
    params: Mapping[str, Any] = field(default_factory=dict)  # overrides of NODE_PARAMS defaults
    ends_graph: bool = False  # its exit ends the whole graph (the sim episode, the bag)
    robot_side: bool = False  # uses ROBOT_TOPICS names (remapped by robot launch arguments)

    @property
    def executable(self) -> str:
        """console_scripts name in setup.py (``ros2 run worldmind_ros <executable>``)."""
        return self.module

    @property
    def python_module(self) -> str:
        return f"{PACKAGE}.{self.module}"


@dataclass(frozen=True)
class Graph:
    name: str
    description: str
    nodes: tuple[NodeSpec, ...]

    def node(self, name: str) -> NodeSpec:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"graph {self.name!r} has no node {name!r} (nodes: {', '.join(n.name for n in self.nodes)})")


# The stack that is the same everywhere: perception, memory, belief (+ planner and critic where a
# task is executed).
_MIND = (
    NodeSpec("perception", "perception_node"),
    NodeSpec("memory", "memory_node"),
    NodeSpec("belief", "belief_node"),
)
_ACT = (
    NodeSpec("planner", "planner_node"),
    NodeSpec("critic", "critic_node"),
)

GRAPHS: dict[str, Graph] = {
    "sim": Graph("sim", "the nodes against the embedded simulator: sim_bridge serves skills and publishes sensors",
                 (NodeSpec("sim_bridge", "sim_bridge_node", ends_graph=True),) + _MIND + _ACT),
    "robot": Graph("robot", "the nodes against a live robot's topics via robot_bridge (optionally the example "
                            "adapter as the robot)",
                   (NodeSpec("robot_bridge", "robot_bridge_node", robot_side=True),) + _MIND
                   + (NodeSpec("planner", "planner_node", ends_graph=True), NodeSpec("critic", "critic_node"))),
    "replay": Graph("replay", "a recorded bag played through perception, memory and belief",
                    (NodeSpec("bag_player", "bag_player_node", ends_graph=True),) + _MIND),
}
EXAMPLE_ROBOT = NodeSpec("example_robot", "example_robot_adapter", robot_side=True)
MODES = tuple(GRAPHS)
# The planner's object memories (planner.agent_config.OBJECT_MEMORIES) that are the scene map
# itself: with one of these the planner node holds the graph's memory and serves it
# (memory_server.py), and the graph starts no memory node, so there is one map, the one acted on.
PLANNER_HOLDS_MEMORY = ("spatial",)


def memory_node_runs(object_memory: str) -> bool:
    """Whether a graph whose planner grounds through ``object_memory`` starts the memory node."""
    return object_memory not in PLANNER_HOLDS_MEMORY


def param_defaults(module: str) -> dict[str, Any]:
    return {p.name: p.default for p in NODE_PARAMS[module]}


def graph(name: str, *, episode: str = "", agent: str = "", bag: str = "", out: str = "",
          instruction: str = "", example_robot: bool = False, object_memory: str = "",
          extra: Mapping[str, Mapping[str, Any]] | None = None) -> Graph:
    """``GRAPHS[name]`` with this run's options set as parameter overrides of the nodes that take
    them. ``object_memory``: what the planner grounds through (empty: its parameter's default); one
    in ``PLANNER_HOLDS_MEMORY`` leaves the memory node out (the planner serves its memory).
    ``extra``: {node name: {param: value}} for anything else. Unknown names raise KeyError /
    ValueError listing the valid ones."""
    if name not in GRAPHS:
        raise KeyError(f"unknown graph {name!r} (graphs: {', '.join(MODES)})")
    base = GRAPHS[name]
    nodes = list(base.nodes)
    # Set as a parameter override it means the same (``--param planner.object_memory:=spatial``).
    object_memory = object_memory or str((extra or {}).get("planner", {}).get("object_memory", ""))
    if object_memory:
        from planner.agent_config import OBJECT_MEMORIES

        if object_memory not in OBJECT_MEMORIES:
            raise ValueError(f"unknown object memory {object_memory!r} (choose from {', '.join(OBJECT_MEMORIES)})")
        if not any(n.module == "planner_node" for n in nodes):
            raise ValueError(f"graph {name!r} has no planner: object_memory is the planner's")
        if not memory_node_runs(object_memory):
            nodes = [n for n in nodes if n.module != "memory_node"]
    if example_robot:
        if name != "robot":
            raise ValueError("the example robot adapter belongs to the robot graph")
        nodes.append(EXAMPLE_ROBOT)
    run: dict[str, dict[str, Any]] = {}
    for n in nodes:
        declared = param_defaults(n.module)
        p: dict[str, Any] = {}
        if episode and "episode" in declared:
            p["episode"] = episode
        if instruction and "instruction" in declared:
            p["instruction"] = instruction
        if agent and "agent" in declared:
            p["agent"] = agent
        if bag and "bag" in declared:
            p["bag"] = bag
        if out and n.module == "sim_bridge_node":
            p["out"] = out
        if object_memory and n.module == "planner_node":
            p["object_memory"] = object_memory
        run[n.name] = p
    for node_name, values in (extra or {}).items():
        spec = next((n for n in nodes if n.name == node_name), None)
        if spec is None and any(n.name == node_name and n.module == "memory_node" for n in base.nodes):
            raise ValueError(f"node {node_name}: not started with object_memory {object_memory!r} (the planner "
                             f"serves its own memory; set the planner's parameters instead)")
        if spec is None:
            raise KeyError(f"graph {name!r} has no node {node_name!r} (nodes: {', '.join(n.name for n in nodes)})")
        declared = param_defaults(spec.module)
        unknown = sorted(set(values) - set(declared))
        if unknown:
            raise ValueError(f"node {node_name}: unknown parameter(s) {', '.join(unknown)} "
                             f"(declared: {', '.join(declared)})")
        run[node_name].update(values)
    nodes = [replace(n, params={**dict(n.params), **run[n.name]}) for n in nodes]
    return Graph(base.name, base.description, tuple(nodes))


def _param_text(value: Any) -> str:
    """A value as a ``-p name:=value`` literal (YAML syntax, which is what rcl parses)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # Quote so "1.0" or "" stay strings; single quotes in YAML double themselves.
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def ros_args(spec: NodeSpec, params_file: str | Path | None = None,
             remaps: Sequence[tuple[str, str]] = ()) -> list[str]:
    """``--ros-args -r __node:=NAME [--params-file F] -p k:=v ... -r from:=to ...`` for one node."""
    out = ["--ros-args", "-r", f"__node:={spec.name}"]
    if params_file:
        out += ["--params-file", str(params_file)]
    for key, value in sorted(spec.params.items()):
        out += ["-p", f"{key}:={_param_text(value)}"]
    for src, dst in remaps:
        out += ["-r", f"{src}:={dst}"]
    return out
