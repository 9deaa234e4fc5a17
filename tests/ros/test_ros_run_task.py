"""RunTask on the planner node, live (rclpy in a private network namespace): bad goals aborted
naming the field, feedback with the goal DAG while it runs, a second task refused with the
reason, and a cancel mid-skill that stops the simulator-side ExecuteSkill goal (it ends CANCELED,
seen on the skill action's own status topic, instead of running its 2 s to the end) while the
planner stays up. How fast the cancel arrives is a figure of benchmarks/bench_ros_cancel.py, not
a test."""

from __future__ import annotations

import json
import time

import pytest

from conftest import isolated
from test_ros_skill_actions import Probe, _start, _stop


@pytest.mark.timeout(200)
@isolated(timeout=180)
def test_run_task_feedback_refusal_and_cancel_stops_the_robot_skill(tmp_path):
    from action_msgs.msg import GoalStatus, GoalStatusArray
    from rclpy.action import ActionClient
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    from worldmind_interfaces.action import RunTask

    script = tmp_path / "a.json"
    script.write_text(json.dumps({"actions": [{"action": "MoveAhead"}] * 50}))
    sim = _start("sim_bridge_node", "skill_duration_s:=2.0", "width:=160", "height:=120")
    planner = _start("planner_node", f"agent:=scripted:{script}", "wait_for_task:=true")
    probe = Probe()
    canceled_at: list[float] = []

    def on_status(msg):
        if any(s.status == GoalStatus.STATUS_CANCELED for s in msg.status_list) and not canceled_at:
            canceled_at.append(time.monotonic())

    probe.node.create_subscription(GoalStatusArray, "/worldmind/execute_skill/_action/status", on_status,
                                   QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                              durability=DurabilityPolicy.TRANSIENT_LOCAL))
    client = ActionClient(probe.node, RunTask, "/worldmind/run_task")
    probe.start()
    try:
        assert client.wait_for_server(timeout_sec=30)
        res = probe.wait(probe.wait(client.send_goal_async(RunTask.Goal(instruction="  "))).get_result_async())
        assert res.status == GoalStatus.STATUS_ABORTED and "field 'instruction'" in res.result.message
        feedback: list = []
        gh = probe.wait(client.send_goal_async(RunTask.Goal(instruction="put the mug in the sink"),
                                               feedback_callback=lambda m: feedback.append(m.feedback)))
        assert gh.accepted
        end = time.monotonic() + 60
        while not feedback and time.monotonic() < end:
            time.sleep(0.01)
        assert feedback and feedback[0].current_skill == "move"
        second = probe.wait(probe.wait(client.send_goal_async(RunTask.Goal(instruction="another")))
                            .get_result_async())
        assert second.status == GoalStatus.STATUS_ABORTED and "refused: a task is running" in second.result.message
        time.sleep(0.3)  # mid-skill (each takes 2 s)
        probe.wait(gh.cancel_goal_async())
        res = probe.wait(gh.get_result_async())
        end = time.monotonic() + 5
        while not canceled_at and time.monotonic() < end:
            time.sleep(0.005)
        assert res.status == GoalStatus.STATUS_CANCELED and "cancelled after" in res.result.message
        assert canceled_at, "the robot-side skill goal never ended CANCELED"
        assert planner.poll() is None and sim.poll() is None
    finally:
        probe.close()
        code, out = _stop(planner)
        _stop(sim)
    assert code == 0 and "Traceback" not in out, out[-3000:]
