"""Build a ``launch.LaunchDescription`` from ``worldmind_ros.graph``: what ``launch/*.launch.py``
return, on a ROS 2 Jazzy install (``ros2 launch launch/sim.launch.py episode:=...``).

Why the launch files are three lines each: the node list, parameters and robot topics are in
``graph.py``, which ``worldmind ros up`` reads too, so the two ways of starting the stack cannot
drift. This module imports launch/launch_ros (not installable from PyPI here), so only the
launch files import it; tests run it against stand-ins that apply launch_ros's own parameter
rules (tests/ros/test_ros_launch.py).

launch_ros's rules that shape this file (launch_ros/utilities/{normalize,evaluate}_parameters.py):
a substitution given as a parameter VALUE is evaluated to text and then read as YAML, so an
argument left at ``''`` becomes None (TypeError: "Allowed value types are ..."), ``'0'`` becomes
an int and ``'true'`` a bool, and the node then refuses it (its parameter is typed). String
parameters therefore get their argument wrapped in YAML quotes (``string_value``), which keeps
any text, the empty string included, a string; bool arguments are passed bare.

Arguments every graph takes: ``namespace`` (the nodes' ROS namespace; WorldMind's topic names
are relative, so they all move under it), ``use_sim_time``, ``log_level``, ``params_file``,
``autostart`` (false: the managed nodes wait, unconfigured, for a lifecycle manager);
``instruction`` (the task in words, for the planner), ``instruction_kind`` (detailed | concise),
and per graph ``episode``, ``agent``, ``bag``, ``out``, ``object_memory`` (where there is a planner:
with ``spatial`` the memory node is not started, ``graph.memory_node_runs``: the planner serves its
own memory) and, for the robot, one argument per robot topic. The Fast DDS profile (a
shared-memory segment large enough for a frame) is set unless the environment already names one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, RegisterEventHandler, SetEnvironmentVariable
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import EnvironmentVariable, LaunchConfiguration, NotEqualsSubstitution, TextSubstitution
from launch_ros.actions import Node

from worldmind_ros import graph as g

# Launch arguments that set a string node parameter: argument -> (parameter, description).
RUN_ARGS = {
    "episode": ("episode", "LongAct episode JSON file (sim bridge, example robot, planner)"),
    "agent": ("agent", "planner agent (make_agent name, or scripted:FILE)"),
    "instruction": ("instruction_text", "the task in words, for the planner (robot graph; a RunTask goal "
                                        "gives a new one without a relaunch)"),
    "instruction_kind": ("instruction", "instruction kind from an episode: detailed | concise"),
    "bag": ("bag", "bag to play (replay)"),
    "out": ("out", "folder for the episode report (sim)"),
    "object_memory": ("object_memory", "what the planner grounds objects through: tracker | spatial (spatial: the "
                                       "planner's memory is the graph's one memory, served by the planner; no "
                                       "memory node starts)"),
}
# Graph-wide arguments: name -> (default per mode, description).
COMMON_ARGS = {
    "namespace": ({}, "ROS namespace of every WorldMind node (their topics are relative names)"),
    "use_sim_time": ({"sim": "true", "replay": "true", "robot": "false"},
                     "take time from /clock (the simulator bridge and the bag player publish it)"),
    "log_level": ({}, "rcutils log level of every node: debug | info | warn | error | fatal"),
    "autostart": ({}, "configure and activate every node at start (false: leave them unconfigured for a "
                      "lifecycle manager, e.g. nav2_lifecycle_manager)"),
}
COMMON_DEFAULTS = {"namespace": "", "log_level": "info", "autostart": "true"}
DDS_PROFILE_ENV = "FASTRTPS_DEFAULT_PROFILES_FILE"


def _share_file(*parts: str, fallback: Path) -> str:
    try:
        from ament_index_python.packages import get_package_share_directory

        return str(Path(get_package_share_directory(g.PACKAGE)).joinpath(*parts))
    except Exception:  # noqa: BLE001 - not installed: the source tree's file
        return str(fallback)


def default_params_file() -> str:
    return _share_file("config", "worldmind.yaml", fallback=g.CONFIG_FILE)


def default_dds_profile() -> str:
    return _share_file("config", g.FASTDDS_PROFILE.name, fallback=g.FASTDDS_PROFILE)


def string_value(arg: str) -> list[Any]:
    """A launch argument as a STRING parameter value under launch_ros's YAML evaluation: quoted,
    with YAML's own escaping of single quotes done by the user (see the module docstring)."""
    return [TextSubstitution(text="'"), LaunchConfiguration(arg), TextSubstitution(text="'")]


def _run_arg_default(arg: str, nodes: tuple[g.NodeSpec, ...]) -> str:
    """The parameter default of the first node that declares it (so an unset argument changes nothing)."""
    param = RUN_ARGS[arg][0]
    for n in nodes:
        defaults = g.param_defaults(n.module)
        if param in defaults:
            return str(defaults[param])
    return ""


def memory_node_condition() -> Any:
    """The memory node starts unless the planner holds the graph's memory (``graph.memory_node_runs``
    as a launch condition: launch evaluates it, so it is written with substitutions)."""
    (kind,) = g.PLANNER_HOLDS_MEMORY  # one kind today; a second needs an AndSubstitution here
    return IfCondition(NotEqualsSubstitution(LaunchConfiguration("object_memory"), kind))


def launch_description(mode: str) -> Any:
    graph = g.GRAPHS[mode]
    nodes = graph.nodes + ((g.EXAMPLE_ROBOT,) if mode == "robot" else ())
    actions: list[Any] = [
        DeclareLaunchArgument("params_file", default_value=default_params_file(),
                              description="parameter YAML of the WorldMind nodes"),
        SetEnvironmentVariable(DDS_PROFILE_ENV, EnvironmentVariable(DDS_PROFILE_ENV,
                                                                    default_value=default_dds_profile())),
    ]
    for arg, (per_mode, description) in COMMON_ARGS.items():
        actions.append(DeclareLaunchArgument(arg, default_value=per_mode.get(mode, COMMON_DEFAULTS.get(arg, "")),
                                             description=description))
    used_args = [a for a in RUN_ARGS if any(RUN_ARGS[a][0] in g.param_defaults(n.module) for n in nodes)]
    for arg in used_args:
        actions.append(DeclareLaunchArgument(arg, default_value=_run_arg_default(arg, nodes),
                                             description=RUN_ARGS[arg][1]))
    if mode == "robot":
        actions.append(DeclareLaunchArgument("example_robot", default_value="false",
                                             description="also start the example robot adapter (the embedded "
                                                         "simulator as the robot)"))
        for t in g.ROBOT_TOPICS:
            actions.append(DeclareLaunchArgument(t.launch_arg, default_value=t.default,
                                                 description=f"robot topic: {t.description}"))
    for spec in nodes:
        declared = g.param_defaults(spec.module)
        overrides: dict[str, Any] = {RUN_ARGS[a][0]: string_value(a) for a in used_args if RUN_ARGS[a][0] in declared}
        overrides["use_sim_time"] = LaunchConfiguration("use_sim_time")
        overrides["autostart"] = LaunchConfiguration("autostart")
        remappings = [(t.default, LaunchConfiguration(t.launch_arg)) for t in g.ROBOT_TOPICS] if spec.robot_side else []
        kwargs: dict[str, Any] = {}
        if spec is g.EXAMPLE_ROBOT:
            kwargs["condition"] = IfCondition(LaunchConfiguration("example_robot"))
        elif spec.module == "memory_node" and "object_memory" in used_args:
            kwargs["condition"] = memory_node_condition()
        node = Node(package=g.PACKAGE, executable=spec.executable, name=spec.name,
                    namespace=LaunchConfiguration("namespace"), output="screen",
                    parameters=[LaunchConfiguration("params_file"), {**dict(spec.params), **overrides}],
                    remappings=remappings, ros_arguments=["--log-level", LaunchConfiguration("log_level")],
                    **kwargs)
        actions.append(node)
        if spec.ends_graph:
            actions.append(RegisterEventHandler(OnProcessExit(
                target_action=node,
                on_exit=[EmitEvent(event=Shutdown(reason=f"{spec.name} finished: the {mode} graph ends"))])))
    return LaunchDescription(actions)
