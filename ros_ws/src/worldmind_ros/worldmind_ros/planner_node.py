"""``planner`` node: a non-privileged Agent (``planner.factory.make_agent``) driven by ROS topics.

Receives synchronised observations (``ObservationStream``), calls ``agent.act(observation)`` once
per new step, sends the chosen atomic action on ``/worldmind/skill/request`` and waits for its
``/worldmind/skill/result`` and the next frame. Publishes the agent's goal DAG on
``/worldmind/plan`` whenever it changes, and the decisions of the agent's own critic on
``/worldmind/planner/critic`` (relayed by ``critic_node``).

Why the planner is non-privileged by construction here: this process has no simulator; the
episode file gives only the instruction (its checklist, goals and oracle plan are removed before
the agent sees it), and the privileged ``oracle`` planner is refused. ``agent`` is a planner name
for ``make_agent`` or ``scripted:FILE`` (``scripted_agent``: a recorded action list).

With ``pose_correction`` (a robot without a localiser) the planner reads poses in ``odom``,
the agent registers each depth frame against its own map (``perception.pose_correction``), and
the node publishes the correction as ``map -> odom`` on ``/tf`` at each acted-on frame's stamp
(REP 105), so the other nodes' ``map`` lookups see the corrected pose.

With ``object_memory`` ``spatial`` the agent grounds through an in-process spatial semantic
memory, and that memory is the graph's one memory: this node serves its topics and services
(``memory_server.MemoryServer``: updates after each frame the agent integrated, markers, typed
objects, JSON queries, ``QueryObjects``, ``GetObject``) and the graph starts no memory node
(``graph.memory_node_runs``). ``memory_save_path`` saves it on shutdown.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from types import SimpleNamespace
from typing import Any

from std_msgs.msg import String

from household.heap import settle_heap
from household.step_budget import StepBudget
from household.types import Action, ActionFeedback, Observation
from planner.goal_dag import goal_dag_payload
from sim_bridge.ros import payloads
from sim_bridge.ros.tf import FrameNames, StampedTransform, transform_of
from worldmind_ros.graph import memory_node_runs
from worldmind_ros.observation_stream import ObservationStream, pose_options
from worldmind_ros.tf_io import frame_names
from worldmind_ros.runtime import WorldMindNode, main_for, topic_qos

PRIVILEGED = ("oracle",)
MAP_TOPIC = "worldmind/map"  # nav_msgs/OccupancyGrid of the agent's own map
PLANNER_CRITIC_TOPIC = "worldmind/planner/critic"  # the agent's own critic decisions (critic_node relays)


def public_episode(episode: Any) -> Any:
    """The episode as a non-privileged agent may see it: the instruction, id, house reference,
    start pose and budget; never the checklist, the goal list or the oracle's plan."""
    return dataclasses.replace(episode, checklist=[], goals=None, oracle=None)


def make_planner_agent(spec: str, move_step: float, depth_noise_k: float = 0.0, pose_tolerance: float = 0.0,
                       confirm_views: int = 1, mask_edge_check: bool = False, pose_correction: bool = False,
                       object_memory: str = "tracker", detector_min_pixels: int = 0) -> Any:
    if spec.startswith("scripted:"):
        from worldmind_ros.scripted_agent import ScriptedAgent

        return ScriptedAgent.from_file(spec.split(":", 1)[1])
    if spec in PRIVILEGED:
        raise ValueError(f"agent {spec!r} is privileged (it reads the simulator); the planner node runs only "
                         "agents that see observations (e.g. deterministic, or scripted:FILE)")
    from planner.factory import make_agent

    # Non-privileged agents take the environment only for its settings; there is none here.
    env_info = SimpleNamespace(config=SimpleNamespace(move_step=move_step, data_dir=None))
    return make_agent(spec, env_info, depth_noise_k=depth_noise_k, pose_tolerance=pose_tolerance,
                      confirm_views=confirm_views, mask_edge_check=mask_edge_check, pose_correction=pose_correction,
                      object_memory=object_memory, detector_min_pixels=detector_min_pixels)


def stream_pose_options(params: dict[str, Any]) -> dict[str, Any]:
    """The observation stream's pose options: as every sensor consumer's, except that with
    ``pose_correction`` the poses are looked up in ``odom_frame`` (no localiser publishes
    ``map -> odom``; the planner itself does, from its correction)."""
    options = pose_options(params)
    if params.get("pose_correction"):
        frames = options["frames"]
        options["frames"] = dataclasses.replace(frames, map=frames.odom)
    return options


def map_to_odom(agent: Any, frames: FrameNames, stamp_ns: int) -> StampedTransform | None:
    """The agent's ``map -> odom`` correction at ``stamp_ns`` as a transform to publish; None for
    an agent that does not correct its pose (duck-typed: ``agent.localiser.map_from_odom``)."""
    localiser = getattr(agent, "localiser", None)
    matrix = getattr(localiser, "map_from_odom", None)
    if matrix is None:
        return None
    return StampedTransform(frames.map, frames.odom, int(stamp_ns), transform_of(matrix))


def critic_decisions(agent: Any, since: int) -> tuple[list[dict[str, Any]], int]:
    """New critic decisions of the agent (duck-typed ``agent.critic_log``: a list of dicts or
    ``CriticDecision``s), from index ``since``."""
    log = getattr(agent, "critic_log", None)
    if not isinstance(log, list):
        return [], since
    out = []
    for d in log[since:]:
        if dataclasses.is_dataclass(d):
            from planner.critic import to_dict

            d = to_dict(d)
        if isinstance(d, dict) and "verdict" in d:
            out.append({"verdict": str(d["verdict"]), "diagnosis": str(d.get("diagnosis", "")),
                        "fix": list(d.get("fix", [])), "level": str(d.get("replan_level", d.get("level", "low")))})
    return out, len(log)


class PlannerNode(WorldMindNode):
    module = "planner_node"

    node_name = "planner"

    def configure(self) -> None:
        p = self.params
        self.agent = make_planner_agent(p["agent"], p["move_step"], p["depth_noise_k"], p["pose_tolerance"],
                                        p["confirm_views"], bool(p["mask_edge_check"]), bool(p["pose_correction"]),
                                        str(p["object_memory"]), int(p["detector_min_pixels"]))
        # Without a localiser the planner corrects its pose and publishes map -> odom (REP 105).
        self.tf_pub = None
        self._stamps: dict[int, int] = {}  # step -> stamp of the frames not yet acted on
        self.memory_server = None
        if not memory_node_runs(str(p["object_memory"])):
            if getattr(self.agent, "object_memory", None) is None:  # the factory of its memory (HoloMindAgent)
                raise ValueError(f"parameter object_memory: {p['object_memory']!r} makes this node serve the agent's "
                                 f"memory, and agent {p['agent']!r} keeps none (use a planner such as deterministic)")
            from worldmind_ros.memory_server import MemoryServer

            self.memory_server = MemoryServer(self, self._agent_memory, map_frame=p["map_frame"],
                                              marker_period_s=p["marker_period_s"], default_k=p["default_k"],
                                              owner="the planner makes its memory with its first task's first frame")
        if p["pose_correction"]:
            from worldmind_ros.tf_io import TfPublisher

            self.tf_pub = TfPublisher(self)
        self.episode = self._episode(p)
        self.instruction = self.episode.instruction(p["instruction"]) if self.episode.instructions else ""
        budget = int(p["max_steps"]) or int(self.episode.max_steps or 0)
        self.budget = budget or None
        self.run_id = uuid.uuid4().hex[:8]
        self.req_pub = self.publisher("skill_request")
        self.plan_pub = self.publisher("plan")
        self.critic_pub = self.create_publisher(String, self.local_topic(PLANNER_CRITIC_TOPIC), topic_qos("critic"))
        # Skills go out as ExecuteSkill goals (feedback, cancel on timeout and on shutdown); a record of
        # each goal still goes on worldmind/skill_request (record: true) for the belief and critic
        # nodes, and the executor publishes each result on worldmind/skill_result.
        if p["skill_interface"] not in ("action", "topic"):
            raise ValueError(f"parameter skill_interface: 'action' or 'topic', got {p['skill_interface']!r}")
        self.skill_client = None
        if p["skill_interface"] == "action":
            from worldmind_ros.skill_action import SkillActionClient

            self.skill_client = SkillActionClient(self, p["skill_action"], float(p["result_timeout_s"]))
        else:
            self.subscribe_json("skill_result", self._on_result)
        self.stream = ObservationStream(self, self.names, self._on_observation, **stream_pose_options(self.params))
        self.started = False
        self.next_step = 0  # the step of the observation we act on next
        self.pending: tuple[str, Action, int] | None = None  # request id, action, step it was chosen at
        self.held: Observation | None = None  # newest observation not yet acted on
        self.last_obs: Observation | None = None
        self.actions = 0
        # the episode's step budget (None: unbounded); a new one with each episode
        self.steps: StepBudget | None = StepBudget(self.budget) if self.budget is not None else None
        self.stopped = False
        self._plan_text = ""
        self._critic_seen = 0
        self.latest: Observation | None = None
        # The agent's own 2D map (planner.occupancy), for RViz/Foxglove/Nav2 tools: latched, sent
        # at most once per second when it changed.
        from nav_msgs.msg import OccupancyGrid
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        self.map_pub = self.create_publisher(OccupancyGrid, self.local_topic(MAP_TOPIC), QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self._map_version = -1
        self._map_stamp = None
        self.create_timer(1.0, self._publish_map)
        self.tasks = None
        if p["skill_interface"] == "action":
            from worldmind_ros.run_task import TaskServer

            self.tasks = TaskServer(self)
        if p["wait_for_task"]:
            self.stopped = True  # idle until a RunTask goal gives the task
            self.get_logger().info(f"agent {getattr(self.agent, 'name', p['agent'])}: waiting for a RunTask goal")
        else:
            self.get_logger().info(f"agent {getattr(self.agent, 'name', p['agent'])}: {self.instruction!r}")

    def _episode(self, p: dict[str, Any]) -> Any:
        from evaluation.episodes import Episode
        from worldmind_ros.sim_server import load_episode_param

        if p["episode"]:
            return public_episode(load_episode_param(p["episode"])[0])
        if p["instruction_text"]:
            return Episode(id="live", house={"id": "live"}, scenario="live",
                           instructions={p["instruction"]: p["instruction_text"]}, checklist=[], max_steps=0)
        return public_episode(load_episode_param("")[0])

    # -- tasks (RunTask, run_task.py) -------------------------------------------------------------
    def busy_reason(self) -> str | None:
        if self.stopped:
            return None
        return f"a task is running: {self.instruction!r} ({self.actions} skill(s) so far)"

    @staticmethod
    def instruction_of(episode: Any) -> str:
        kinds = episode.instructions or {}
        return next(iter(kinds.values()), "")

    def episode_for_task(self, instruction: str, episode_path: str) -> Any:
        from evaluation.episodes import Episode
        from worldmind_ros.sim_server import load_episode_param

        if episode_path:
            try:
                return public_episode(load_episode_param(episode_path)[0])
            except Exception as exc:  # noqa: BLE001 - any unreadable file is the same bad input
                raise ValueError(f"field 'episode': {episode_path}: {exc}") from None
        if not instruction.strip():
            raise ValueError("field 'instruction': empty (give an instruction or an episode file)")
        return Episode(id="task", house={"id": "live"}, scenario="live",
                       instructions={self.params["instruction"]: instruction.strip()}, checklist=[], max_steps=0)

    def begin_task(self, episode: Any, max_steps: int) -> None:
        """Start a task on the newest frame (the agent is reset with the new episode)."""
        self.episode = episode
        self.instruction = episode.instruction(self.params["instruction"]) if episode.instructions else ""
        self.budget = int(max_steps) or int(episode.max_steps or 0) or None
        self.started, self.stopped, self.actions, self.pending = False, False, 0, None
        self.steps = StepBudget(self.budget) if self.budget is not None else None
        if self.latest is not None:
            self.next_step = self.latest.step
            self.held = self.latest
        self._maybe_act()

    def cancel_task(self) -> int:
        self.stopped = True
        self.pending = None
        return self.skill_client.cancel_all() if self.skill_client is not None else 0

    # -- observations and results -----------------------------------------------------------------
    def _publish_map(self) -> None:
        occ = getattr(self.agent, "occupancy", None)
        if occ is None or getattr(occ, "version", None) == self._map_version or self._map_stamp is None:
            return
        from worldmind_ros.occupancy_msg import grid_of, to_msg

        self._map_version = occ.version
        self.map_pub.publish(to_msg(grid_of(occ), str(self.params["map_frame"]), self._map_stamp))

    def _on_observation(self, obs: Observation, stamp_ns: int) -> None:
        from builtin_interfaces.msg import Time

        sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
        self._map_stamp = Time(sec=sec, nanosec=nanosec)
        self._stamps[obs.step] = int(stamp_ns)
        for old in [k for k in self._stamps if k < obs.step - 64]:
            del self._stamps[old]
        self.latest = obs
        if self.stopped or obs.step < self.next_step:
            return
        self.held = obs
        self._maybe_act()

    def _on_result(self, data: dict[str, Any]) -> None:
        if self.pending is None or data["id"] != self.pending[0]:
            return  # someone else's request, or a late duplicate
        rid, action, step = self.pending
        self.pending = None
        if action.name == "Stop":
            self.get_logger().info(f"Stop acknowledged after {self.actions} action(s)")
            self.stopped = True
            if self.tasks is not None:
                self.tasks.finish(True, f"done: Stop after {self.actions} skill(s)")
            if self.params["exit_on_stop"] and not self.params["wait_for_task"]:
                self.done = True
            return
        if not data["success"] and int(data.get("step", step + 1)) <= step and self.last_obs is not None:
            # Refused without a step (e.g. a skill the robot does not know): the agent tries again
            # on the same frame, told that its action failed.
            self.get_logger().error(f"topic {self.topic('skill_result')}: {action.name} refused: {data.get('error', '')}")
            self.next_step = step
            self.held = dataclasses.replace(self.last_obs, feedback=ActionFeedback(action.name, False,
                                                                                   str(data.get("error", "")),
                                                                                   str(data.get("failure", ""))))
        self._maybe_act()

    def _maybe_act(self) -> None:
        obs = self.held
        if obs is None or self.pending is not None or self.stopped or obs.step < self.next_step:
            return
        self.held = None
        if not self.started:
            self.agent.reset(self.episode, obs)
            settle_heap()  # the collector's full walks before the first decision, not in one
            self.started = True
        # The budget counts the actions other than Pass, and Passes as many again, as the
        # evaluation runner does (household.step_budget).
        if self.steps is not None and self.steps.spent():
            action = Action("Stop")
        else:
            action = self.agent.act(obs)
            if self.steps is not None and action.name != "Stop" and not self.steps.take(action.name):
                action = Action("Stop")  # a Pass past as many as the budget
        if self.tf_pub is not None and obs.step in self._stamps:
            correction = map_to_odom(self.agent, frame_names(self.params), self._stamps[obs.step])
            if correction is not None:
                self.tf_pub.send([correction])
        self._memory_update(obs)
        self.last_obs = obs
        self._publish_plan_and_critic(obs.step)
        rid = f"{self.run_id}-{obs.step}-{self.actions}"
        args = dict(action.args)
        if action.object_id is not None:
            args["object_id"] = action.object_id
        self.pending = (rid, action, obs.step)
        self.next_step = obs.step + 1
        if action.name != "Stop":
            self.actions += 1
        request = {"id": rid, "skill": action.name, "args": args, "step": obs.step}
        if self.skill_client is None:
            self.publish_json(self.req_pub, "skill_request", request)
            return
        from sim_bridge.ros import skills

        try:
            goal = skills.goal_for_action(action.name, action.object_id, action.args, step=obs.step, request_id=rid)
        except skills.SkillError as exc:  # an action the contract has no skill for: refused, no step
            self._on_result({"id": rid, "success": False, "error": str(exc), "step": obs.step})
            return
        self.publish_json(self.req_pub, "skill_request", {**request, "record": True})
        if self.tasks is not None:
            self.tasks.feedback(goal.skill)
        # A result without a step (timeout, no server) means the robot did not act: the agent
        # retries on the same frame, told that the skill failed.
        self.skill_client.send(goal, lambda data, step=obs.step: self._on_result({"step": step, **data}))

    # -- the agent's memory, when it is the graph's (object_memory 'spatial') -------------------------
    def _agent_memory(self) -> Any:
        return getattr(getattr(self.agent, "tracker", None), "memory", None)

    def _memory_update(self, obs: Observation) -> None:
        """``worldmind/memory/updates`` for the frame the agent just integrated (none for a frame
        it did not: a stopped agent's)."""
        frame = getattr(getattr(self.agent, "tracker", None), "last_frame", None)
        if self.memory_server is None or frame is None or frame.step != obs.step:
            return
        if frame.skipped:
            self.get_logger().error(f"frame {obs.step} skipped by the memory: {'; '.join(frame.report.warnings)}")
        self.memory_server.frame_integrated(obs.step, self._stamps.get(obs.step, 0), frame.report,
                                            (frame.perception_s + frame.memory_s) * 1e3)

    def close(self) -> None:
        """Shutdown: a skill still running on the robot is cancelled (the robot must not go on); the
        agent's memory is saved where ``memory_save_path`` says (object_memory 'spatial')."""
        memory = self._agent_memory() if self.memory_server is not None else None
        if memory is not None and self.params["memory_save_path"]:
            from memory.spatial.store import save_memory

            path = save_memory(memory, self.params["memory_save_path"])
            self.get_logger().info(f"the agent's memory saved to {path}")
        self.stopped, self.pending = True, None  # a result arriving while the run loop drains starts nothing
        if self.tasks is not None:
            self.tasks.finish(False, "aborted: the planner is shutting down")
        if self.skill_client is not None:
            n = self.skill_client.cancel_all()
            if n:
                self.get_logger().info(f"shutdown: cancelled {n} ExecuteSkill goal(s) in flight")

    def finishing_close(self) -> bool:
        return self.skill_client is not None and self.skill_client.awaiting_acceptance()

    def _publish_plan_and_critic(self, step: int) -> None:
        dag = goal_dag_payload(self.agent)
        if dag is not None:
            dag.update(instruction=self.instruction, step=step)
            text = json.dumps(dag["goals"], sort_keys=True) + json.dumps(dag["edges"])
            if text != self._plan_text:
                self._plan_text = text
                self.publish_json(self.plan_pub, "plan", dag)
        decisions, self._critic_seen = critic_decisions(self.agent, self._critic_seen)
        for d in decisions:
            d["step"] = step
            self.critic_pub.publish(String(data=payloads.encode("critic_directive", d, PLANNER_CRITIC_TOPIC)))


main = main_for(PlannerNode)

if __name__ == "__main__":
    main()
