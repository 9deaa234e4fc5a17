"""``example_robot``: the ROBOT side of the skill-request contract, played by the embedded simulator.

What a robot integrator writes, shown on the simulator so the contract runs end to end in tests:
publish the robot's sensors on its own topic names (``graph.ROBOT_TOPICS``: camera color, depth,
camera info, the segmenter's instance ids + label table, odometry, the camera pose, a status with
the held object) and serve ``worldmind/skill_request`` on the robot's request topic, answering
each with one ``worldmind/skill_result`` on the robot's result topic when the skill is done.
``robot_bridge_node`` turns these into WorldMind's topics. See README.md, "Skill-request contract".
"""

from __future__ import annotations


from worldmind_ros.graph import ROBOT_TOPICS
from worldmind_ros.runtime import WorldMindNode, main_for
from worldmind_ros.sim_server import SimServer

ROBOT_NAMES = {t.key: t.default for t in ROBOT_TOPICS}


class ExampleRobotAdapter(WorldMindNode):
    module = "example_robot_adapter"
    executor_threads = 4

    node_name = "example_robot"

    def configure(self) -> None:
        p = self.params
        self.server = SimServer(self, ROBOT_NAMES, episode_path=p["episode"], data_dir=p["data_dir"],
                                width=p["width"], height=p["height"], move_step=p["move_step"],
                                max_steps=p["max_steps"], request_timeout_s=p["request_timeout_s"],
                                result_file=p["result_file"], skill_action=p["skill_action"],
                                skill_duration_s=p["skill_duration_s"])
        self.server.start()

    def close(self) -> None:
        self.server.close()


main = main_for(ExampleRobotAdapter)

if __name__ == "__main__":
    main()
