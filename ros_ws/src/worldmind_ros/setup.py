"""ament_python build of worldmind_ros (``colcon build`` in ros_ws/).

The console scripts are the nodes (``ros2 run worldmind_ros sim_bridge_node``); the launch files
live in the repository's top-level ``launch/`` (the product's layout) and are installed into
share/worldmind_ros/launch when that folder is next to this workspace, so ``ros2 launch
worldmind_ros sim.launch.py`` works as well as ``ros2 launch launch/sim.launch.py``.
"""

from glob import glob
from pathlib import Path

from setuptools import setup

PACKAGE = "worldmind_ros"
NODES = ("sim_bridge_node", "example_robot_adapter", "robot_bridge_node", "perception_node", "memory_node",
         "belief_node", "planner_node", "critic_node", "bag_player_node")
HERE = Path(__file__).resolve().parent
LAUNCH = HERE.parents[2] / "launch"  # <repo>/launch

data_files = [
    ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
    (f"share/{PACKAGE}", ["package.xml", "README.md"]),
    (f"share/{PACKAGE}/config", sorted(glob("config/*"))),
]
if LAUNCH.is_dir():
    data_files.append((f"share/{PACKAGE}/launch", sorted(str(p) for p in LAUNCH.glob("*.launch.py"))))

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=[PACKAGE],
    data_files=data_files,
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="WorldMind maintainers",
    maintainer_email="worldmind@example.org",
    description="WorldMind ROS 2 nodes around the worldmind libraries",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={"console_scripts": [f"{n} = {PACKAGE}.{n}:main" for n in NODES]},
)
