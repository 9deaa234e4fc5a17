"""``sim_bridge`` node: the embedded simulator behind WorldMind's topic contract.

Publishes one frame per step (color, depth, camera_info, instance ids + label table, odometry,
camera pose, agent status; ground truth only when ``publish_ground_truth`` is set, for
evaluation) and executes the atomic skills arriving on ``/worldmind/skill/request``, answering
each on ``/worldmind/skill/result``. The episode is run and scored by
``evaluation.runner.run_episode`` (see ``sim_server``), so GC/SR/Steps over ROS equal the
in-process figures. When the episode ends (the planner said Stop, or the budget is spent) the
node writes its report (``out``/``result_file``) and exits with status 0, which ends the graph.
"""

from __future__ import annotations


from worldmind_ros.runtime import WorldMindNode, main_for
from worldmind_ros.sim_server import SimServer


class SimBridgeNode(WorldMindNode):
    module = "sim_bridge_node"
    executor_threads = 4  # a running ExecuteSkill goal blocks one thread while the executor serves cancels

    node_name = "sim_bridge"

    def configure(self) -> None:
        p = self.params
        if p["sim"] != "embedded":
            raise ValueError(f"parameter sim={p['sim']!r}: the ROS sim bridge serves the embedded simulator "
                             "(thor/habitat: run them through `worldmind run --sim`)")
        self.server = SimServer(self, self.names, episode_path=p["episode"], data_dir=p["data_dir"],
                                width=p["width"], height=p["height"], move_step=p["move_step"],
                                max_steps=p["max_steps"], request_timeout_s=p["request_timeout_s"],
                                publish_ground_truth=p["publish_ground_truth"], instruction=p["instruction"],
                                out=p["out"], result_file=p["result_file"], skill_action=p["skill_action"],
                                skill_duration_s=p["skill_duration_s"])
        self.server.start()

    def close(self) -> None:
        self.server.close()


main = main_for(SimBridgeNode)

if __name__ == "__main__":
    main()
