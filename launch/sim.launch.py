"""ROS 2 launch file: the WorldMind nodes against the embedded simulator (sim_bridge serves skills, publishes sensors).
Usage: ros2 launch launch/sim.launch.py episode:=/path/episode.json agent:=deterministic

The node list, parameters and remappable topics come from worldmind_ros.graph, the same
description `worldmind ros up sim` starts as plain processes where launch is not installed.
"""

from worldmind_ros.launch_helpers import launch_description


def generate_launch_description():
    return launch_description("sim")
