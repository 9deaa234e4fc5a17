"""``robot_bridge`` node: the ``ros`` backend for a live robot.

Robot side (names in ``graph.ROBOT_TOPICS``, remapped onto the robot's drivers by the robot
launch arguments or ``worldmind ros up robot --remap color_topic:=/my/camera``):
- sensors: color, depth (32FC1 m or 16UC1 mm), camera_info, instance ids (32SC1, the segmenter),
  the label table (``worldmind/label_table`` with ``stamp_ns``), odometry, camera pose, and
  optionally a status (``worldmind/agent_status``: held object, camera horizon). They are matched
  with ``sim_bridge.ros.sync.FrameSynchronizer`` (approximate time, ``sync_slop_s``); a required
  sensor silent for ``stale_after_s`` -- or never heard from within ``stale_after_s`` of the start --
  is reported (logged as an error naming the topic, once per silence, and as STALE on
  ``/diagnostics``, diagnostic_msgs) and no frames go out until it is back. Inputs are subscribed
  with QoS any ordinary publisher matches: best-effort for the sensor streams, reliable VOLATILE
  for the label table and status (a transient-local subscription refuses a volatile publisher);
- skills: ``worldmind/skill_request`` out, ``worldmind/skill_result`` back (README.md, "Skill-request
  contract"); a request unanswered within ``skill_timeout_s`` is answered as failed.

WorldMind side: each matched frame is converted to an ``Observation`` (``convert``) and published
on WorldMind's own topics with ONE stamp (the anchor's), the step being the number of skills
answered so far, so perception, memory, belief and the planner run unchanged from the sim graph.
Skill requests from the planner are forwarded to the robot, results forwarded back.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from std_msgs.msg import String

from sim_bridge.ros import payloads
from sim_bridge.ros.convert import (MessageClasses, check_frame_ids, messages_to_observation,
                                    observation_to_messages, stamp_ns_of)
from sim_bridge.ros.sync import FrameSynchronizer, SyncConfig
from household.types import ActionFeedback
from worldmind_ros.graph import ROBOT_TOPICS
from worldmind_ros.diagnostics import DIAGNOSTICS_TOPIC, topic_health, to_msg
from worldmind_ros.runtime import WorldMindNode, main_for, message_class, qos, topic_qos
from worldmind_ros.tf_io import PoseGate, TfListener, frame_names

ROBOT_NAMES = {t.key: t.default for t in ROBOT_TOPICS}
ROBOT_SENSORS = ("color", "depth", "camera_info", "instance_ids", "instance_labels", "odom", "camera_pose")


def input_qos(key: str) -> Any:
    """QoS of a robot-side subscription: what any ordinary publisher of that stream matches.
    Sensor streams stay best-effort (matches reliable and best-effort publishers); the others are
    reliable but volatile (matches volatile and transient-local reliable publishers)."""
    return topic_qos(key) if topic_qos(key).reliability.name == "BEST_EFFORT" else qos("reliable")


class RobotBridgeNode(WorldMindNode):
    module = "robot_bridge_node"
    executor_threads = 4  # a relayed ExecuteSkill goal blocks one thread until the robot answers

    node_name = "robot_bridge"

    def configure(self) -> None:
        p = self.params
        self.robot = dict(ROBOT_NAMES)  # remapped by ROS (-r) at the process level
        # Poses from the robot's own TF (map -> odom -> base -> camera, at each frame's stamp) unless
        # pose_source is 'topic' (then a camera pose PoseStamped topic is needed, as before).
        self.frame_ids = frame_names(dict(p))
        self.sensors = ROBOT_SENSORS if p["pose_source"] == "topic" else tuple(
            k for k in ROBOT_SENSORS if k != "camera_pose")
        self.gate = None
        if p["pose_source"] == "tf":
            self.gate = PoseGate(TfListener(self).buffer, self.frame_ids, float(p["tf_timeout_s"]),
                                 lambda frame, poses: self._publish_frame(frame, poses), self._reject)
        elif p["pose_source"] != "topic":
            raise ValueError(f"parameter pose_source: 'tf' or 'topic', got {p['pose_source']!r}")
        self.sync = FrameSynchronizer(SyncConfig(required=self.sensors, optional=(), latched=(),
                                                 slop_ns=int(float(p["sync_slop_s"]) * 1e9),
                                                 stale_after_s=float(p["stale_after_s"])),
                                      {k: self.robot[k] for k in self.sensors}, start_ns=self._now())
        self.classes = MessageClasses.from_modules()
        self.step = 0
        self.status_msg: String | None = None
        self.last_feedback = ActionFeedback(None, True, "")
        self.pending: dict[str, tuple[float, dict[str, Any]]] = {}
        self.stale_reported: set[str] = set()
        for key in self.sensors:
            topic = self.robot[key]
            if key == "instance_labels":
                self.create_subscription(String, topic, self.guarded(topic, self._on_labels), input_qos(key))
            else:
                self.create_subscription(message_class(key), topic, self.guarded(topic, self._sensor_cb(key)),
                                         input_qos(key))
        self.create_subscription(String, self.robot["agent_status"],
                                 self.guarded(self.robot["agent_status"], self._on_status), input_qos("agent_status"))
        self.diag_pub = self.create_publisher(message_class_diag(), DIAGNOSTICS_TOPIC, qos("reliable"))
        keys = ("color", "depth", "camera_info", "instance_ids", "instance_labels", "odom", "camera_pose",
                "agent_status", "skill_result")
        self.out = {k: self.publisher(k) for k in keys}
        self.to_robot = self.create_publisher(String, self.robot["skill_request"], topic_qos("skill_request"))
        self.subscribe_json("skill_request", self._on_request)
        self.subscribe_json("skill_result", self._on_robot_result, name=self.robot["skill_result"])
        self.create_timer(0.5, self._watch)
        # ExecuteSkill relay: WorldMind's action (the planner's goals) -> the robot's action server.
        from rclpy.action import ActionClient

        from worldmind_ros.skill_action import SKILL_ACTION, SkillActionServer, interfaces

        self.robot_action = str(p["robot_skill_action"])
        self.robot_client = ActionClient(self, interfaces().ExecuteSkill, self.robot_action)
        self.skill_server = SkillActionServer(self, SKILL_ACTION, self._relay_goal)
        self.get_logger().info("robot topics: " + ", ".join(f"{k}={self.robot[k]}" for k in ROBOT_SENSORS))

    @staticmethod
    def _now() -> int:
        """Arrival time for staleness: a steady clock (sim time may stand still or jump)."""
        return time.monotonic_ns()

    # -- sensors --------------------------------------------------------------------------------
    def _sensor_cb(self, key: str) -> Any:
        def cb(msg: Any) -> None:
            self._frames(self.sync.push(key, stamp_ns_of(msg), msg, self._now()))
        return cb

    def _on_labels(self, msg: String) -> None:
        topic = self.robot["instance_labels"]
        data = payloads.decode(msg.data, topic, "label_table").data
        if "stamp_ns" not in data:
            raise payloads.PayloadError(topic, "stamp_ns", "the label table must carry the stamp of its ids image")
        self._frames(self.sync.push("instance_labels", int(data["stamp_ns"]), msg, self._now()))

    def _on_status(self, msg: String) -> None:
        payloads.decode(msg.data, self.robot["agent_status"], "agent_status")  # validate now, not at use
        self.status_msg = msg

    def _frames(self, frames: list[Any]) -> None:
        f = self.frame_ids
        for frame in frames:
            problems = check_frame_ids(frame.messages, f.camera, f.odom, f.base, self.robot)
            if problems:
                self._reject(frame, "; ".join(problems))
            elif self.gate is not None:
                self.gate.push(frame, frame.stamp_ns)
            else:
                self._publish_frame(frame, None)

    def _reject(self, frame: Any, why: str) -> None:
        self.get_logger().error(f"robot frame at {frame.stamp_ns / 1e9:.3f} dropped: {why}")

    def _publish_frame(self, frame: Any, poses: Any) -> None:
        """One robot frame on WorldMind's topics, all with the anchor's stamp (the robot's TF holds
        at that stamp, so downstream nodes look the same poses up)."""
        msgs = dict(frame.messages)
        if self.status_msg is not None:
            msgs["agent_status"] = self.status_msg
        obs = messages_to_observation(msgs, topic_of=self.robot, step=self.step,
                                      world_from_camera=poses.map_from_camera if poses else None,
                                      map_from_base=poses.map_from_base if poses else None)
        obs.step = self.step
        obs.feedback = self.last_feedback
        for key, out in observation_to_messages(obs, self.classes, frame.stamp_ns, frames=self.frame_ids).items():
            pub = self.out.get(key)
            if pub is not None:
                pub.publish(out)

    def _watch(self) -> None:
        status = self.sync.status(self._now())
        for topic in status.stale:
            if topic not in self.stale_reported:
                silent = status.silent_s[topic]
                self.get_logger().error(f"topic {topic}: stale sensor ("
                                        + ("never received" if silent == float("inf") else f"silent {silent:.1f} s")
                                        + "); no frames until it is back")
                self.stale_reported.add(topic)
        self.stale_reported &= set(status.stale)
        rows = topic_health(self.get_fully_qualified_name(), status, [self.robot[k] for k in self.sensors])
        if self.gate is not None:
            self.gate.poll()
        self.diag_pub.publish(to_msg(rows, self.get_fully_qualified_name(), self.get_clock().now().to_msg()))
        deadline = time.monotonic() - float(self.params["skill_timeout_s"])
        for rid, (sent, _req) in list(self.pending.items()):
            if sent < deadline:
                del self.pending[rid]
                self._answer({"id": rid, "success": False, "step": self.step,
                              "error": f"timeout: the robot did not answer on {self.robot['skill_result']} within "
                                       f"{self.params['skill_timeout_s']:g} s"})

    # -- skills ---------------------------------------------------------------------------------
    def _on_request(self, data: dict[str, Any]) -> None:
        self.pending[data["id"]] = (time.monotonic(), data)
        self.to_robot.publish(String(data=payloads.encode("skill_request", data, self.robot["skill_request"])))

    def _on_robot_result(self, data: dict[str, Any]) -> None:
        entry = self.pending.pop(data["id"], None)
        if entry is None:
            self.get_logger().error(f"topic {self.robot['skill_result']}: result for unknown request id "
                                    f"{data['id']!r}; dropped")
            return
        req = entry[1]
        self.step += 1
        self.last_feedback = ActionFeedback(req["skill"], bool(data["success"]), str(data.get("error", "")),
                                            str(data.get("failure", "")))
        self._answer({**data, "step": self.step})

    def _relay_goal(self, rid: str, goal: Any, ctx: Any) -> dict[str, Any]:
        """One planner goal on the robot: feedback relayed, a cancel passed on, no answer within
        skill_timeout_s (or no robot server within it) cancels the robot's goal and aborts ours."""
        from sim_bridge.ros import skills
        from worldmind_ros.skill_action import SkillCancelled

        timeout = float(self.params["skill_timeout_s"])
        start = time.monotonic()
        while not self.robot_client.server_is_ready():
            if time.monotonic() - start > timeout or ctx.cancelled():
                return self._relay_done(goal, {"success": False, "aborted": True, "step": self.step,
                                               "error": f"timeout: no ExecuteSkill server on {self.robot_action}"})
            time.sleep(0.05)
        box: dict[str, Any] = {}
        done = threading.Event()
        sent = self.robot_client.send_goal_async(skills.goal_to_msg(goal, interfaces_goal()),
                                                 feedback_callback=lambda m: ctx.handle.publish_feedback(m.feedback))
        sent.add_done_callback(lambda f: box.__setitem__("handle", f.result()))
        while True:
            handle = box.get("handle")
            if handle is not None and "result" not in box and not box.get("asked"):
                box["asked"] = True
                if not handle.accepted:
                    return self._relay_done(goal, {"success": False, "aborted": True, "step": self.step,
                                                   "error": f"goal rejected by {self.robot_action}"})
                handle.get_result_async().add_done_callback(lambda f: (box.__setitem__("result", f.result()),
                                                                       done.set()))
            if done.wait(0.01):
                r = box["result"].result
                data = {"success": bool(r.success), "error": str(r.error), "failure": str(r.failure),
                        "actions": int(r.actions)}
                if ctx.cancelled():
                    raise SkillCancelled(f"the robot stopped ({r.error})")
                return self._relay_done(goal, data)
            if ctx.cancelled() and handle is not None and not box.get("cancel_sent"):
                box["cancel_sent"] = True
                handle.cancel_goal_async()
            if time.monotonic() - start > timeout:
                # The robot must stop, also when its acceptance is still on the way: cancel on arrival.
                sent.add_done_callback(lambda f: f.result().accepted and f.result().cancel_goal_async())
                return self._relay_done(goal, {"success": False, "aborted": True, "step": self.step,
                                               "error": f"timeout: the robot did not answer on {self.robot_action} "
                                                        f"within {timeout:g} s (its goal was cancelled)"})

    def _relay_done(self, goal: Any, data: dict[str, Any]) -> dict[str, Any]:
        """Count the step (a skill the robot answered), publish the result record for observers."""
        if "step" not in data:
            self.step += 1
            data["step"] = self.step
            self.last_feedback = ActionFeedback(goal.skill, bool(data["success"]), str(data.get("error", "")),
                                                str(data.get("failure", "")))
        self._answer({"id": goal.request_id or "goal", **{k: v for k, v in data.items() if k != "aborted"}})
        return data

    def _answer(self, data: dict[str, Any]) -> None:
        self.publish_json(self.out["skill_result"], "skill_result", data)


def interfaces_goal() -> type:
    from worldmind_ros.skill_action import interfaces

    return interfaces().ExecuteSkill.Goal


def message_class_diag() -> type:
    from diagnostic_msgs.msg import DiagnosticArray

    return DiagnosticArray


main = main_for(RobotBridgeNode)

if __name__ == "__main__":
    main()
