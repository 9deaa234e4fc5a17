"""ROS 2 launch file: the WorldMind nodes against a live robot through robot_bridge; remap the robot's topics with the
*_topic arguments. Usage: ros2 launch launch/robot.launch.py color_topic:=/camera/color/image_raw
depth_topic:=/camera/aligned_depth_to_color/image_raw odom_topic:=/odom skill_request_topic:=/my_robot/skill
(example_robot:=true runs the embedded simulator as the robot, for a test of the contract)

The node list, parameters and remappable topics come from worldmind_ros.graph, the same
description `worldmind ros up robot` starts as plain processes where launch is not installed.
"""

from worldmind_ros.launch_helpers import launch_description


def generate_launch_description():
    return launch_description("robot")
