"""The RunTask action (worldmind_interfaces) on the planner node: a new instruction without a
relaunch, goal-DAG progress as feedback, cancellable.

Why a module of its own: ``planner_node`` stays the agent loop; this is the action's life cycle.
The execute callback is a coroutine awaiting an rclpy Future, so the planner's single-threaded
executor keeps serving observations and skill results while a task runs (no locks needed).

Rules:
- One task at a time. A goal that arrives while a task runs (including the one the planner started
  from its ``episode`` parameter) is ABORTED at once with ``message`` saying which task runs (ROS 2's
  action protocol cannot carry a reason with a rejection, so it is accepted and aborted).
- ``instruction`` (or ``episode``: a LongAct file, checklist stripped) must be given; an empty one,
  or an episode that cannot be read, is aborted naming the field.
- Feedback after every skill: the goal DAG with each goal's state (the agent's own
  ``goal_status`` where it keeps one), skills executed, the skill now running, the fraction of goals
  done. The result (success when the agent said Stop): goal_condition, steps, message.
- Cancel: the ExecuteSkill goal in flight is cancelled at once (the robot stops), the planner
  idles, the goal ends CANCELED.
"""

from __future__ import annotations

from typing import Any

from rclpy.action import ActionServer, CancelResponse
from rclpy.task import Future

TASK_ACTION = "worldmind/run_task"
_STATE = {"done": 2, "failed": 3, "active": 1}


class TaskServer:
    def __init__(self, planner: Any) -> None:
        from worldmind_ros.skill_action import accept_if_active, interfaces

        self.RunTask = interfaces().RunTask
        from worldmind_interfaces.msg import GoalStatus

        self.GoalStatus = GoalStatus
        self.planner = planner
        self.current: dict[str, Any] | None = None
        self.server = ActionServer(planner, self.RunTask, TASK_ACTION, execute_callback=self._execute,
                                   goal_callback=lambda _g: accept_if_active(planner),
                                   cancel_callback=lambda _h: CancelResponse.ACCEPT)
        planner.create_timer(0.01, self._watch_cancel)

    async def _execute(self, handle: Any) -> Any:
        p, log = self.planner, self.planner.get_logger()
        busy = p.busy_reason()
        if busy:
            log.error(f"action {TASK_ACTION}: new task refused: {busy}")
            handle.abort()
            return self.RunTask.Result(success=False, message=f"refused: {busy}")
        req = handle.request
        try:
            episode = p.episode_for_task(str(req.instruction), str(req.episode))
        except (ValueError, OSError) as exc:
            log.error(f"action {TASK_ACTION}: {exc}")
            handle.abort()
            return self.RunTask.Result(success=False, message=str(exc))
        fut: Future = Future()
        self.current = {"handle": handle, "future": fut}
        log.info(f"action {TASK_ACTION}: new task: {p.instruction_of(episode)!r}")
        p.begin_task(episode, int(req.max_steps))
        return await fut

    def goals(self) -> tuple[list[Any], float]:
        from planner.goal_dag import goal_dag_payload

        agent = self.planner.agent
        dag = goal_dag_payload(agent) or {"goals": []}
        status = getattr(agent, "goal_status", None)
        status = status if isinstance(status, dict) else {}
        out = [self.GoalStatus(id=str(g.get("id", "")), description=str(g.get("text", "")),
                               state=_STATE.get(str(status.get(g.get("id"), "")), 0)) for g in dag["goals"]]
        done = sum(1 for g in out if g.state == 2)
        return out, (done / len(out) if out else 0.0)

    def feedback(self, current_skill: str) -> None:
        if self.current is None:
            return
        goals, gc = self.goals()
        self.current["handle"].publish_feedback(self.RunTask.Feedback(
            goals=goals, step=int(self.planner.actions), current_skill=current_skill, goal_condition=float(gc)))

    def finish(self, success: bool, message: str) -> None:
        if self.current is None:
            return
        cur, self.current = self.current, None
        _, gc = self.goals()
        if success:
            cur["handle"].succeed()
        else:
            cur["handle"].abort()
        cur["future"].set_result(self.RunTask.Result(success=success, message=message, goal_condition=float(gc),
                                                     steps=int(self.planner.actions), report_path=""))

    def _watch_cancel(self) -> None:
        cur = self.current
        if cur is None or not cur["handle"].is_cancel_requested:
            return
        self.current = None
        n = self.planner.cancel_task()
        _, gc = self.goals()
        cur["handle"].canceled()
        msg = f"cancelled after {self.planner.actions} skill(s); {n} skill goal(s) in flight cancelled"
        self.planner.get_logger().info(f"action {TASK_ACTION}: {msg}")
        cur["future"].set_result(self.RunTask.Result(success=False, message=msg, goal_condition=float(gc),
                                                     steps=int(self.planner.actions)))
