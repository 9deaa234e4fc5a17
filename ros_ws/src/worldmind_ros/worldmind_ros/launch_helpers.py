"""Build a ``launch.LaunchDescription`` from ``worldmind_ros.graph``: what ``launch/*.launch.py``
return, on a ROS 2 Jazzy install (``ros2 launch launch/sim.launch.py episode:=...``).

Why the launch files are three lines each: the node list, parameters and robot topics are in
``graph.py``, which ``worldmind ros up`` reads too, so the two ways of starting the stack cannot
drift. This module imports launch/launch_ros (not installable from PyPI here), so only the
launch files import it; tests run it against recording stand-ins of those modules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, RegisterEventHandler
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from worldmind_ros import graph as g

# Launch arguments that set a node parameter: argument -> (parameter, description).
RUN_ARGS = {
    "episode": ("episode", "LongAct episode JSON file (sim bridge, example robot, planner)"),
    "agent": ("agent", "planner agent (make_agent name, or scripted:FILE)"),
    "instruction": ("instruction", "instruction kind: detailed | concise"),
    "bag": ("bag", "bag to play (replay)"),
    "out": ("out", "folder for the episode report (sim)"),
}


def default_params_file() -> str:
    try:
        from ament_index_python.packages import get_package_share_directory

        return str(Path(get_package_share_directory(g.PACKAGE)) / "config" / "worldmind.yaml")
    except Exception:  # noqa: BLE001 - not installed: the source tree's file
        return str(g.CONFIG_FILE)


def _run_arg_default(arg: str, nodes: tuple[g.NodeSpec, ...]) -> str:
    """The parameter default of the first node that declares it (so an unset argument changes nothing)."""
    param = RUN_ARGS[arg][0]
    for n in nodes:
        defaults = g.param_defaults(n.module)
        if param in defaults:
            return str(defaults[param])
    return ""


def launch_description(mode: str) -> Any:
    graph = g.GRAPHS[mode]
    nodes = graph.nodes + ((g.EXAMPLE_ROBOT,) if mode == "robot" else ())
    actions: list[Any] = [DeclareLaunchArgument("params_file", default_value=default_params_file(),
                                                description="parameter YAML of the WorldMind nodes")]
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
        overrides = {RUN_ARGS[a][0]: LaunchConfiguration(a) for a in used_args if RUN_ARGS[a][0] in declared}
        remappings = [(t.default, LaunchConfiguration(t.launch_arg)) for t in g.ROBOT_TOPICS] if spec.robot_side else []
        kwargs: dict[str, Any] = {}
        if spec is g.EXAMPLE_ROBOT:
            kwargs["condition"] = IfCondition(LaunchConfiguration("example_robot"))
        node = Node(package=g.PACKAGE, executable=spec.executable, name=spec.name, output="screen",
                    parameters=[LaunchConfiguration("params_file"), {**dict(spec.params), **overrides}],
                    remappings=remappings, **kwargs)
        actions.append(node)
        if spec.ends_graph:
            actions.append(RegisterEventHandler(OnProcessExit(
                target_action=node,
                on_exit=[EmitEvent(event=Shutdown(reason=f"{spec.name} finished: the {mode} graph ends"))])))
    return LaunchDescription(actions)
