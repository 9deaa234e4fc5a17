"""The ExecuteSkill action (worldmind_interfaces) on the node side: a server around an executor
function, and the client the planner uses.

Why a module: the simulator (sim bridge, example robot) and the robot bridge serve the same
action with the same rules, and the planner must handle a robot that never answers:

Server (``SkillActionServer``): every goal is accepted (a reason cannot travel with a rejection
in ROS 2's action protocol), checked with ``skills.SkillGoal.validate`` and, when it cannot run
(unknown skill, missing object id, bad direction), ABORTED with ``result.error`` naming the
field. Otherwise ``execute(request_id, goal, ctx)`` runs in its own thread (reentrant callback
group; the node uses a multi-threaded executor) and returns the result fields; ``ctx.feedback``
publishes feedback, ``ctx.cancelled()`` says a cancel was requested (the executor stops the
skill and raises ``SkillCancelled``: the goal ends CANCELED). Node shutdown aborts running goals.

Client (``SkillActionClient``): ``send(goal, request_id, on_result, on_feedback)``; ``on_result``
gets the result as a ``worldmind/skill_result``-shaped dict (``id, success, error, actions, step``)
exactly once: from the server, or synthesised on rejection, on ``timeout_s`` (the goal is then
cancelled, so the robot stops) or when no server is available. ``cancel_all()`` on shutdown,
also for a goal whose acceptance is still on its way (cancelled as soon as it is accepted).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup

from household.outcomes import Failure
from sim_bridge.ros import skills

SKILL_ACTION = "worldmind/execute_skill"  # relative: moves with the namespace


class SkillCancelled(Exception):
    """The executor stopped the skill because a cancel was requested."""


@dataclass
class SkillContext:
    handle: Any
    feedback_cls: Any

    def cancelled(self) -> bool:
        return bool(self.handle.is_cancel_requested)

    def feedback(self, state: str, progress: float, actions: int = 0) -> None:
        fb = self.feedback_cls()
        fb.state, fb.progress, fb.actions = state, float(progress), int(actions)
        self.handle.publish_feedback(fb)


def interfaces() -> Any:
    """``worldmind_interfaces.action`` or a clear error (built by ``make setup``)."""
    try:
        from worldmind_interfaces import action
    except ImportError as exc:
        raise RuntimeError("worldmind_interfaces is not built: run `make setup` (ros_ws/build_interfaces.sh) or "
                           f"`colcon build` on a ROS install ({exc})") from None
    return action


def accept_if_active(node: Any) -> GoalResponse:
    """A managed node takes goals only while active (worldmind_ros.runtime: the lifecycle)."""
    return GoalResponse.ACCEPT if getattr(node, "active", True) else GoalResponse.REJECT


class SkillActionServer:
    def __init__(self, node: Any, name: str,
                 execute: Callable[[str, skills.SkillGoal, SkillContext], dict[str, Any]]) -> None:
        action = interfaces()
        self.ExecuteSkill = action.ExecuteSkill
        self.node, self.execute, self.name = node, execute, name
        self.closing = threading.Event()
        self.server = ActionServer(node, action.ExecuteSkill, name, execute_callback=self._execute,
                                   goal_callback=lambda _g: accept_if_active(node),
                                   cancel_callback=lambda _h: CancelResponse.ACCEPT,
                                   callback_group=ReentrantCallbackGroup())

    def _result(self, request_id: str, data: dict[str, Any]) -> Any:
        return self.ExecuteSkill.Result(success=bool(data.get("success")), error=str(data.get("error", "")),
                                        failure=str(data.get("failure", "")),
                                        actions=int(data.get("actions", 0)), step=int(data.get("step", -1)))

    def _execute(self, handle: Any) -> Any:
        goal = skills.goal_from_msg(handle.request)
        rid = goal.request_id or f"goal-{bytes(handle.goal_id.uuid).hex()[:8]}"
        log = self.node.get_logger()
        try:
            goal.validate()
        except skills.SkillError as exc:
            log.error(f"action {self.name}: goal {rid}: {exc}; aborted")
            handle.abort()
            return self._result(rid, {"success": False, "error": str(exc), "failure": Failure.BAD_REQUEST.value})
        try:
            data = self.execute(rid, goal, SkillContext(handle, self.ExecuteSkill.Feedback))
        except SkillCancelled as exc:
            handle.canceled()
            return self._result(rid, {"success": False, "error": f"cancelled: {exc}"})
        except Exception as exc:  # noqa: BLE001 - the goal ends, the node lives
            log.error(f"goal {rid} ({goal.skill}): {type(exc).__name__}: {exc}; aborted")
            handle.abort()
            return self._result(rid, {"success": False, "error": f"{type(exc).__name__}: {exc}"})
        if handle.is_cancel_requested and not data.get("success"):
            handle.canceled()
        elif data.get("aborted"):
            handle.abort()
        else:
            handle.succeed()
        return self._result(rid, data)

    def close(self) -> None:
        self.closing.set()
        self.server.destroy()


class SkillActionClient:
    def __init__(self, node: Any, name: str, timeout_s: float, server_wait_s: float = 10.0) -> None:
        action = interfaces()
        self.ExecuteSkill = action.ExecuteSkill
        self.node, self.name, self.timeout_s, self.server_wait_s = node, name, float(timeout_s), server_wait_s
        self.client = ActionClient(node, action.ExecuteSkill, name)
        self.active: dict[str, dict[str, Any]] = {}  # request id -> {sent, handle, on_result, answered}
        self._lock = threading.Lock()
        node.create_timer(0.05, self._watch)

    def send(self, goal: skills.SkillGoal, on_result: Callable[[dict[str, Any]], None],
             on_feedback: Callable[[Any], None] | None = None) -> None:
        rid = goal.request_id
        entry = {"sent": time.monotonic(), "handle": None, "on_result": on_result, "skill": goal.skill,
                 "waiting_server": not self.client.server_is_ready(), "pending_goal": goal,
                 "pending_feedback": on_feedback}
        with self._lock:
            self.active[rid] = entry
        if entry["waiting_server"]:
            return  # _watch sends it once the server shows up (or fails it after server_wait_s)
        self._send(rid, goal, on_feedback)

    def _send(self, rid: str, goal: skills.SkillGoal, on_feedback: Callable[[Any], None] | None) -> None:
        entry = self.active.get(rid)
        if entry is None:
            return
        entry["goal"], entry["on_feedback"] = goal, on_feedback
        entry["waiting_server"] = False
        entry["sent"] = time.monotonic()
        fut = self.client.send_goal_async(skills.goal_to_msg(goal, self.ExecuteSkill.Goal),
                                          feedback_callback=(lambda m: on_feedback(m.feedback)) if on_feedback else None)
        fut.add_done_callback(lambda f: self._accepted(rid, f))

    def _accepted(self, rid: str, fut: Any) -> None:
        handle = fut.result()
        entry = self.active.get(rid)
        if entry is None:  # timed out meanwhile: tell the robot to stop
            if handle.accepted:
                handle.cancel_goal_async()
            return
        if not handle.accepted:
            self._answer(rid, {"success": False, "error": f"goal rejected by {self.name}"})
            return
        entry["handle"] = handle
        if entry.get("cancel_on_accept"):  # cancel_all ran while the acceptance was on its way
            handle.cancel_goal_async()
        handle.get_result_async().add_done_callback(lambda f: self._done(rid, f))

    def _done(self, rid: str, fut: Any) -> None:
        res = fut.result()
        r = res.result
        self._answer(rid, {"success": bool(r.success), "error": str(r.error), "failure": str(r.failure),
                           "actions": int(r.actions),
                           "step": int(r.step), "status": int(res.status)})

    def _answer(self, rid: str, data: dict[str, Any]) -> None:
        with self._lock:
            entry = self.active.pop(rid, None)
        if entry is not None:
            entry["on_result"]({"id": rid, **data})

    def _watch(self) -> None:
        now = time.monotonic()
        for rid, entry in list(self.active.items()):
            if entry["waiting_server"]:
                if self.client.server_is_ready():
                    self._send(rid, entry["pending_goal"], entry.get("pending_feedback"))
                elif now - entry["sent"] > self.server_wait_s:
                    self._answer(rid, {"success": False, "error": f"no ExecuteSkill server on {self.name} "
                                                                  f"within {self.server_wait_s:g} s"})
                continue
            if now - entry["sent"] > self.timeout_s:
                handle = entry["handle"]
                if handle is not None:
                    handle.cancel_goal_async()  # the robot must stop what it is doing
                self.node.get_logger().error(f"action {self.name}: goal {rid} ({entry['skill']}) not answered "
                                             f"within {self.timeout_s:g} s: cancelled")
                self._answer(rid, {"success": False, "error": f"timeout: no result from {self.name} within "
                                                              f"{self.timeout_s:g} s (goal cancelled)"})

    def cancel_all(self) -> int:
        """Cancel every goal in flight (task cancelled, node shutdown); returns how many.

        A goal the server may already be running but whose acceptance has not reached us yet
        has no handle to cancel through: it is marked, and cancelled the moment the acceptance
        arrives (``awaiting_acceptance`` says whether the executor must still spin for that).
        A goal still waiting for a server was never sent and is dropped."""
        n = 0
        for rid, entry in list(self.active.items()):
            if entry["waiting_server"]:
                with self._lock:
                    self.active.pop(rid, None)
            elif entry["handle"] is not None:
                entry["handle"].cancel_goal_async()
                n += 1
            else:
                entry["cancel_on_accept"] = True
                n += 1
        return n

    def awaiting_acceptance(self) -> bool:
        """A goal cancel_all marked is still waiting for the server's acceptance."""
        return any(e.get("cancel_on_accept") and e["handle"] is None for e in list(self.active.values()))
