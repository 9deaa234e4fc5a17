"""A simulator that serves the skill-request contract over ROS: the core of ``sim_bridge_node``
(WorldMind's own topic names) and of ``example_robot_adapter`` (a robot's topic names).

Why the episode runs through ``evaluation.runner.run_episode``: the result over ROS must be the
same as in-process (same GC, same Steps, same IR), so the loop, the step counting and the scoring
are literally the in-process ones. The agent handed to ``run_episode`` is ``RemoteAgent``: its
``act(observation)`` publishes the observation on the sensor topics (and the result of the
previous request), then blocks until the next ``worldmind/skill_request`` arrives and returns it
as an ``Action``. The real planner lives in another process and never sees the simulator.

Thread model: the episode runs in a worker thread; ROS callbacks (the request subscription) run
in the node's executor and hand requests over through a queue. rclpy publishers are safe to use
from the worker thread.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from evaluation.episodes import Episode, load_episode
from sim_bridge.ros import payloads
from sim_bridge.ros.convert import MessageClasses, observation_to_messages
from household.types import ACTIONS, Action, Observation
from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.parameter import Parameter

from sim_bridge.ros.tf import base_matrix, robot_transforms
from worldmind_ros.runtime import WorldMindNode, topic_qos, message_class
from sim_bridge.ros import skills
from worldmind_ros.skill_action import SkillActionServer, SkillCancelled, SkillContext
from worldmind_ros.tf_io import TfPublisher, clock_publisher, frame_names, publish_clock


class EpisodeEnded(BaseException):
    """The node is shutting down while the episode waits for a request. A BaseException so that
    run_episode's guard against planner bugs does not record it as an agent error."""


SIM_EPOCH_NS = 1_000_000_000  # sim time of the first frame: 1 s, plainly not wall time
CLOCK_PERIOD_S = 0.05
REPUBLISH_S = 0.5  # sensor QoS is best-effort and volatile: a late subscriber gets the frame again


@dataclass
class Pending:
    request_id: str
    action: Action
    received: float


def load_episode_param(path: str) -> tuple[Episode, Path]:
    """The episode of the ``episode`` parameter, or the first committed dev episode."""
    if path:
        p = Path(path)
    else:
        from evaluation.dev_set import default_episode_file

        p = default_episode_file()
    return load_episode(p), p


def action_from_request(data: Mapping[str, Any], topic: str) -> Action:
    """A ``worldmind/skill_request`` as an atomic Action. ``skill`` is an ALFRED action name;
    ``args.object_id`` the target; other args pass through (e.g. ``degrees``)."""
    skill = data["skill"]
    if skill not in ACTIONS:
        raise payloads.PayloadError(topic, "skill", f"unknown skill {skill!r} (this server executes the "
                                                    f"atomic actions: {', '.join(ACTIONS)})")
    args = dict(data.get("args") or {})
    object_id = args.pop("object_id", None)
    if object_id is not None and not isinstance(object_id, str):
        raise payloads.PayloadError(topic, "args.object_id", f"must be a string, got {object_id!r}")
    return Action(skill, object_id, args)


class RemoteAgent:
    """The ``Agent`` run_episode drives; its decisions come from the skill request topic."""

    name = "ros"

    def __init__(self, server: "SimServer") -> None:
        self.server = server

    def reset(self, episode: Any, observation: Observation) -> None:
        self.server.step_index = 0

    def act(self, observation: Observation) -> Action:
        return self.server.exchange(observation)


class SimServer:
    """Publishes observations on ``names`` and executes requests from ``names['skill_request']``."""

    def __init__(self, node: WorldMindNode, names: Mapping[str, str], *, episode_path: str, data_dir: str,
                 width: int, height: int, move_step: float, max_steps: int, request_timeout_s: float,
                 publish_ground_truth: bool = False, instruction: str = "detailed", out: str = "",
                 result_file: str = "", skill_action: str = "", skill_duration_s: float = 0.0) -> None:
        from sim_bridge.factory import make_environment

        self.node = node
        self.log = node.get_logger()
        self.names = dict(names)
        self.episode, self.episode_path = load_episode_param(episode_path)
        self.instruction = instruction
        options: dict[str, Any] = {"width": int(width), "height": int(height), "move_step": float(move_step)}
        if data_dir:
            options["data_dir"] = data_dir
        self.env = make_environment("embedded", **options)
        self.max_steps = int(max_steps) or None
        self.request_timeout_s = float(request_timeout_s)
        self.publish_ground_truth = publish_ground_truth
        self.out = out
        self.result_file = result_file
        self.classes = MessageClasses.from_modules()
        keys = ("color", "depth", "camera_info", "instance_ids", "instance_labels", "odom", "camera_pose",
                "agent_status", "skill_result") + (("ground_truth",) if publish_ground_truth else ())
        self.pubs = {k: node.create_publisher(message_class(k), self.names[k], topic_qos(k)) for k in keys}
        # The simulator is the clock: sim time starts at SIM_EPOCH_NS and runs at wall speed; it
        # never follows /clock itself, and its clock timer runs on the steady clock.
        node.set_parameters([Parameter("use_sim_time", value=False)])
        self.frames = frame_names(dict(node.params))
        self.tf = TfPublisher(node)
        self.clock_pub = clock_publisher(node)
        self._t0 = time.monotonic_ns()
        node.create_timer(CLOCK_PERIOD_S, lambda: publish_clock(self.clock_pub, self.sim_now()),
                          clock=RosClock(clock_type=ClockType.STEADY_TIME))
        node.subscribe_json("skill_request", self._on_request, name=self.names["skill_request"])
        self.requests: "queue.Queue[Pending]" = queue.Queue()
        self.pending: Pending | None = None
        self.step_index = 0
        self.closing = threading.Event()
        self.result: Any = None
        self.worker = threading.Thread(target=self._run, name="episode", daemon=True)
        # ExecuteSkill (worldmind_interfaces): the same steps as the JSON requests, with feedback and
        # cancel; skill_duration_s > 0 makes each skill take that long (a robot's motion), so a
        # cancel can arrive mid-skill: the skill then stops before the simulator moves.
        self.skill_duration_s = float(skill_duration_s)
        self.waiters: dict[str, tuple[threading.Event, dict[str, Any]]] = {}
        self.action_server = SkillActionServer(node, skill_action, self._execute_goal) if skill_action else None

    def start(self) -> None:
        self.log.info(f"episode {self.episode.id} ({self.episode_path}), house {self.episode.house_label}: "
                      f"serving skill requests on {self.names['skill_request']}")
        self.worker.start()

    # -- ROS side -------------------------------------------------------------------------------
    def _on_request(self, data: dict[str, Any]) -> None:
        if data.get("record"):
            return  # a record of a goal sent over ExecuteSkill, for observers: not to be run twice
        topic = self.names["skill_request"]
        try:
            action = action_from_request(data, topic)
        except payloads.PayloadError as exc:
            self.log.error(f"{exc}; answered as failed")
            self._publish_result({"id": data["id"], "success": False, "error": str(exc), "step": self.step_index})
            return
        self.requests.put(Pending(data["id"], action, time.monotonic()))

    def _publish_result(self, data: dict[str, Any]) -> None:
        self.node.publish_json(self.pubs["skill_result"], "skill_result", data)
        waiter = self.waiters.pop(str(data.get("id")), None)
        if waiter is not None:
            waiter[1].update(data)
            waiter[0].set()

    def _execute_goal(self, rid: str, goal: skills.SkillGoal, ctx: SkillContext) -> dict[str, Any]:
        """One ExecuteSkill goal: the atomic action it stands for, executed by the episode loop."""
        try:
            name, object_id, args = skills.action_for_goal(goal)
        except skills.SkillError as exc:
            self.log.error(f"action {self.action_server.name}: goal {rid}: {exc}; aborted")
            return {"success": False, "error": str(exc), "step": self.step_index, "aborted": True}
        if self.skill_duration_s > 0 and name != "Stop":
            start = time.monotonic()
            while (elapsed := time.monotonic() - start) < self.skill_duration_s:
                if ctx.cancelled():
                    raise SkillCancelled(f"{name} stopped after {elapsed * 1000:.0f} ms, before the robot moved")
                if self.closing.is_set():
                    return {"success": False, "error": "simulator shutting down", "aborted": True}
                ctx.feedback("executing", elapsed / self.skill_duration_s)
                time.sleep(0.005)
        event: threading.Event = threading.Event()
        box: dict[str, Any] = {}
        self.waiters[rid] = (event, box)
        self.requests.put(Pending(rid, Action(name, object_id, args), time.monotonic()))
        while not event.wait(0.05):
            if self.closing.is_set():
                self.waiters.pop(rid, None)
                return {"success": False, "error": "simulator shutting down", "aborted": True}
        return box

    def sim_now(self) -> int:
        return SIM_EPOCH_NS + time.monotonic_ns() - self._t0

    def publish_observation(self, obs: Observation) -> None:
        """/clock, then the TF tree at the frame's stamp, then the frame: a subscriber that looks
        the camera pose up at the image stamp finds it (or waits for it, tf_timeout_s)."""
        stamp = self.sim_now()
        publish_clock(self.clock_pub, stamp)
        self.tf.send(robot_transforms(base_matrix(obs.agent.position, obs.agent.yaw_deg), obs.world_from_camera,
                                      stamp, self.frames))
        world = self.env.ground_truth() if self.publish_ground_truth else None
        msgs = observation_to_messages(obs, self.classes, stamp, world, self.frames)
        for key, msg in msgs.items():
            pub = self.pubs.get(key)
            if pub is not None:
                pub.publish(msg)

    # -- the episode ----------------------------------------------------------------------------
    def exchange(self, observation: Observation) -> Action:
        """Answer the request that led to this observation, publish the observation, then wait
        for the next request (republishing the frame every REPUBLISH_S for late subscribers)."""
        obs = dataclasses.replace(observation, step=self.step_index)
        if self.pending is not None:  # the result first, as a robot answers when the skill is done
            self._publish_result({"id": self.pending.request_id, "success": bool(obs.feedback.success),
                                  "error": obs.feedback.error, "failure": obs.feedback.failure,
                                  "step": self.step_index, "actions": 1})
            self.pending = None
        self.publish_observation(obs)
        deadline = time.monotonic() + self.request_timeout_s
        republish = time.monotonic() + REPUBLISH_S
        while True:
            if self.closing.is_set():
                raise EpisodeEnded("node shutting down")
            try:
                pending = self.requests.get(timeout=0.05)
                break
            except queue.Empty:
                now = time.monotonic()
                if now > republish:  # same step, new stamp: subscribers dedup by step
                    self.publish_observation(obs)
                    republish = now + REPUBLISH_S
                if now > deadline:
                    raise TimeoutError(f"no skill request on {self.names['skill_request']} for "
                                       f"{self.request_timeout_s:g} s") from None
        self._check_object(pending)
        self.pending = pending
        self.step_index += 1
        return pending.action

    def _check_object(self, pending: Pending) -> None:
        """An unknown object id is the planner's mistake: log it naming the topic; the step still
        runs (and fails in the simulator), exactly as it would in-process."""
        oid = pending.action.object_id
        if oid is None:
            return
        if not any(o.get("objectId") == oid for o in self.env.ground_truth().objects):
            self.log.error(f"topic {self.names['skill_request']}: request {pending.request_id}: unknown object id "
                           f"{oid!r} for {pending.action.name}")

    def _run(self) -> None:
        from evaluation import runner

        try:
            result, world = runner.run_episode(self.env, RemoteAgent(self), self.episode,
                                               instruction_kind=self.instruction, max_steps=self.max_steps)
        except EpisodeEnded:
            return
        except Exception as exc:  # noqa: BLE001 - report, end the node with a failure status
            self.log.error(f"episode {self.episode.id} failed: {type(exc).__name__}: {exc}")
            self.node.exit_code = 1
            self.node.done = True
            return
        if self.pending is not None:  # the Stop request (or the last one before the budget ran out)
            self._publish_result({"id": self.pending.request_id, "success": True, "error": "",
                                  "step": self.step_index, "actions": 0})
            self.pending = None
        self.result = result
        self._write(result, world)
        extra = result.extra or {}
        self.log.info(f"episode {result.episode_id} done: GC {result.gc:.3f} SR {result.sr:.0f} "
                      f"steps {result.steps_total:.2f} actions {result.num_actions} "
                      f"stop reason {extra.get('stop_reason', '?')}")
        time.sleep(0.3)  # let the reliable result reach the planner before the node goes away
        self.node.done = True

    def _write(self, result: Any, world: Any) -> None:
        if self.result_file:
            path = Path(self.result_file)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(result.to_dict(), indent=2), encoding="utf-8")
            self.log.info(f"result: {path}")
        if self.out:
            from evaluation.report import write_episode_report
            from evaluation.layout import report_layout

            paths = write_episode_report(self.out, result, report_layout(self.env, world), world)
            self.log.info(f"report: {paths['json']}")

    def close(self) -> None:
        self.closing.set()
        if self.worker.is_alive():
            self.worker.join(timeout=5.0)

