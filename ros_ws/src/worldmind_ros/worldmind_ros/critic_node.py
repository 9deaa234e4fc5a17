"""``critic`` node: the one publisher of ``/worldmind/critic`` (``worldmind/critic_directive``).

Decision (where the critic lives): HoloMind's critic is part of the planner agent. It judges
every action against the agent's own context and its Refine fix must run before the next action,
so it stays in the planner process: a DDS round trip per step would add latency and make the
agent's behaviour depend on message timing (the ROS run must match the in-process run). This node
therefore
- relays the agent's own decisions, which ``planner_node`` publishes on
  ``/worldmind/planner/critic`` (``source: "planner"``), and
- judges every answered skill on the bus with the same deterministic rules
  (``planner.critic.RuleCritic``; ``source: "monitor"``), with a Replan after
  ``fail_streak_replan`` failures in a row. This covers planners that have no critic of their own
  (scripted ones, or an external planner) and gives operators one topic to watch.
Its directives are advisory: nothing in the graph is blocked on them.
"""

from __future__ import annotations

from typing import Any

from std_msgs.msg import String

from planner.critic import RuleCritic
from planner.roles import CriticEvent, PlannerContext, Subgoal
from sim_bridge.ros import payloads
from worldmind_ros.planner_node import PLANNER_CRITIC_TOPIC
from worldmind_ros.runtime import PendingRequests, WorldMindNode, main_for, topic_qos


class CriticNode(WorldMindNode):
    module = "critic_node"

    node_name = "critic"

    def configure(self) -> None:
        self.rules = RuleCritic()
        self.pub = self.publisher("critic")
        self.requests = PendingRequests()
        self.streak = 0
        self.held: str | None = None
        self.subscribe_json("skill_request", self._on_request)
        self.subscribe_json("skill_result", self._on_result)
        self.create_subscription(String, self.local_topic(PLANNER_CRITIC_TOPIC), self.guarded(PLANNER_CRITIC_TOPIC, self._on_planner),
                                 topic_qos("critic"))

    def _on_planner(self, msg: String) -> None:
        data = payloads.decode(msg.data, PLANNER_CRITIC_TOPIC, "critic_directive").data
        data["source"] = "planner"
        self.publish_json(self.pub, "critic", data)

    def _on_request(self, data: dict[str, Any]) -> None:
        self.requests.add(data)

    def _on_result(self, data: dict[str, Any]) -> None:
        req = self.requests.take(data["id"])
        if req is None or req["skill"] == "Stop":
            return
        ok = bool(data["success"])
        args = dict(req["args"])
        event = CriticEvent("action", Subgoal(req["skill"], args), req["skill"], ok, str(data.get("error", "")),
                            failure=str(data.get("failure", "")))
        context = PlannerContext(step=int(data.get("step", 0)), held_object_id=self.held, held_object_type=None,
                                 known_objects=[], rooms_seen=[], history=[], experience=[], object_types=[])
        decision = self.rules.critique(event, context)
        if ok and req["skill"] == "PickupObject":
            self.held = args.get("object_id")
        elif ok and req["skill"] == "PutObject":
            self.held = None
        self.streak = 0 if ok else self.streak + 1
        verdict, level = decision.verdict, decision.replan_level
        diagnosis = decision.diagnosis
        if self.streak >= int(self.params["fail_streak_replan"]) and verdict != "replan":
            verdict, level = "replan", "high"
            diagnosis = f"{self.streak} failed skills in a row ({diagnosis})"
        if verdict == "pass" and ok:
            return  # nothing to say about a success; keeps the topic readable
        self.publish_json(self.pub, "critic", {
            "verdict": verdict, "diagnosis": diagnosis, "fix": [s.to_dict() for s in decision.fix],
            "level": level, "step": int(data.get("step", 0)), "source": "monitor"})


main = main_for(CriticNode)

if __name__ == "__main__":
    main()
