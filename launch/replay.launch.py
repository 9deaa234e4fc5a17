"""ROS 2 launch file: a recorded bag (MCAP or sqlite3) through perception, memory and belief.
Usage: ros2 launch launch/replay.launch.py bag:=/path/run.mcap

The node list, parameters and remappable topics come from worldmind_ros.graph, the same
description `worldmind ros up replay` starts as plain processes where launch is not installed.
"""

from worldmind_ros.launch_helpers import launch_description


def generate_launch_description():
    return launch_description("replay")
