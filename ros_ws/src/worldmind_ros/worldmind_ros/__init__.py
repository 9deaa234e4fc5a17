"""WorldMind's ROS 2 layer: thin nodes around the libraries, and the node-graph description.

Only this package imports rclpy (the libraries never do). ``graph`` is rclpy-free: the
``worldmind ros`` command imports it to build process command lines. Every other module is a
node (``python -m worldmind_ros.<node> --ros-args ...``) or node support (``runtime``,
``observation_stream``, ``sim_server``, ``scripted_agent``, ``launch_helpers``).
"""
