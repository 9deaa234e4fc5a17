"""The ``ros`` backend's pure-Python core (no rclpy here; docs/ARCHITECTURE.md).

- ``topics``: the topic contract (names, message types, QoS classes, frame ids).
- ``convert``: project types <-> ROS message fields, for rosbags' and rclpy's message classes alike.
- ``payloads``: versioned JSON payloads (``worldmind/<kind>`` v1) carried in std_msgs/String.
- ``sync``: approximate-time frame synchroniser with stale-sensor detection, fed by ``push``.
"""
