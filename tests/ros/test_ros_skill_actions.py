"""ExecuteSkill end to end with real rclpy (private network namespace):
- the simulator's server: feedback while a skill runs, a cancel mid-skill stops it (CANCELED,
  the simulator did not move: the next step is step 1; the cancel's latency is a figure of
  benchmarks/bench_ros_cancel.py), an unknown skill is ABORTED naming the field, an
  unknown object is executed and fails as in-process, with the typed outcome in ``result.failure``;
- the planner's client: a robot that never answers is cancelled after result_timeout_s and the
  planner retries, told the skill failed; on shutdown the goal in flight is cancelled, also one
  whose acceptance has not arrived yet; the planner stays up throughout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import REPO, isolated


def _start(module: str, *params: str) -> subprocess.Popen:
    argv = [sys.executable, "-u", "-m", f"worldmind_ros.{module}", "--ros-args"]
    for p in params:
        argv += ["-p", p]
    return subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))


def _stop(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    return proc.returncode, out


class Probe:
    def __init__(self) -> None:
        import rclpy
        from rclpy.executors import MultiThreadedExecutor

        from worldmind_interfaces.action import ExecuteSkill

        self.rclpy, self.ExecuteSkill = rclpy, ExecuteSkill
        rclpy.init()
        self.node = rclpy.create_node("probe")
        self.ex = MultiThreadedExecutor(num_threads=4)
        self.ex.add_node(self.node)
        self.thread = threading.Thread(target=self.ex.spin, daemon=True)
        self.closing = threading.Event()  # a "robot that never answers" lets go when the test ends

    def never_answer(self, handle, cancels: list[str]):
        """An execute callback for a robot that never answers: it waits until a cancel arrives
        (recorded in ``cancels``, the goal ends CANCELED) or the test ends (ABORTED)."""
        while not handle.is_cancel_requested and not self.closing.is_set():
            time.sleep(0.01)
        if not handle.is_cancel_requested:  # the test ended first
            handle.abort()
            return self.ExecuteSkill.Result(success=False, error="test over")
        cancels.append(handle.request.request_id)
        handle.canceled()
        return self.ExecuteSkill.Result(success=False, error="stopped")

    def start(self) -> None:
        self.thread.start()

    def wait(self, fut, timeout: float = 20.0):
        end = time.monotonic() + timeout
        while not fut.done() and time.monotonic() < end:
            time.sleep(0.005)
        assert fut.done(), "no answer in time"
        return fut.result()

    def close(self) -> None:
        self.closing.set()
        self.ex.shutdown()
        self.node.destroy_node()
        self.rclpy.shutdown()


@pytest.mark.timeout(200)
@isolated(timeout=180)
def test_simulator_skill_server_feedback_cancel_and_bad_goals():
    from action_msgs.msg import GoalStatus
    from rclpy.action import ActionClient

    from sim_bridge.ros import skills

    sim = _start("sim_bridge_node", "skill_duration_s:=1.0", "width:=160", "height:=120")
    probe = Probe()
    client = ActionClient(probe.node, probe.ExecuteSkill, "/worldmind/execute_skill")
    probe.start()
    try:
        assert client.wait_for_server(timeout_sec=30)
        Goal = probe.ExecuteSkill.Goal
        # 1. cancel mid-skill
        feedback: list = []
        gh = probe.wait(client.send_goal_async(skills.goal_to_msg(skills.goal_for_action("MoveAhead", request_id="a"),
                                                                  Goal), feedback_callback=feedback.append))
        time.sleep(0.4)
        assert feedback, "no feedback while the skill runs"
        probe.wait(gh.cancel_goal_async())
        res = probe.wait(gh.get_result_async())
        assert res.status == GoalStatus.STATUS_CANCELED and "cancelled" in res.result.error
        # 2. unknown skill: aborted, the reason names the field
        res = probe.wait(probe.wait(client.send_goal_async(Goal(skill="fly", request_id="b"))).get_result_async())
        assert res.status == GoalStatus.STATUS_ABORTED and "field 'skill'" in res.result.error
        assert res.result.failure == "bad_request"
        # 3. a real step, then an unknown object: executed, fails in the simulator, as in-process
        res = probe.wait(probe.wait(client.send_goal_async(
            skills.goal_to_msg(skills.goal_for_action("RotateLeft", request_id="c"), Goal))).get_result_async(), 60)
        assert res.status == GoalStatus.STATUS_SUCCEEDED and res.result.success and res.result.step == 1
        res = probe.wait(probe.wait(client.send_goal_async(skills.goal_to_msg(
            skills.goal_for_action("PickupObject", "NoSuchThing|1", request_id="d"), Goal))).get_result_async(), 60)
        assert not res.result.success and res.result.step == 2
        assert res.result.failure == "unknown_object", res.result  # the simulator's typed outcome, like Nav2's codes
        assert sim.poll() is None
    finally:
        probe.close()
        code, out = _stop(sim)
    assert code == 0 and "Traceback" not in out, out[-3000:]
    assert "goal b: field 'skill': unknown skill 'fly'" in out, out[-3000:]


@pytest.mark.timeout(200)
@isolated(timeout=180)
def test_planner_cancels_a_goal_nobody_answers_and_cancels_on_shutdown(tmp_path):
    from rclpy.action import ActionServer, CancelResponse
    from rclpy.callback_groups import ReentrantCallbackGroup

    script = tmp_path / "a.json"
    script.write_text(json.dumps({"actions": [{"action": "MoveAhead"}] * 50}))
    # The simulator publishes frames but serves its skills elsewhere: the probe is the "robot".
    sim = _start("sim_bridge_node", "skill_action:=unused/execute_skill", "width:=160", "height:=120")
    planner = _start("planner_node", f"agent:=scripted:{script}", "result_timeout_s:=1.5")
    probe = Probe()
    goals: list[str] = []
    cancels: list[str] = []

    def execute(handle):
        goals.append(handle.request.request_id)
        return probe.never_answer(handle, cancels)

    ActionServer(probe.node, probe.ExecuteSkill, "/worldmind/execute_skill", execute_callback=execute,
                 cancel_callback=lambda _h: CancelResponse.ACCEPT, callback_group=ReentrantCallbackGroup())
    probe.start()
    try:
        end = time.monotonic() + 90
        while len(cancels) < 2 and time.monotonic() < end:
            time.sleep(0.05)
        assert len(cancels) >= 2 and cancels[0] == goals[0], (goals, cancels)  # timed out, cancelled, retried
        assert planner.poll() is None
        n = len(goals)
        end = time.monotonic() + 10
        while len(goals) == n and time.monotonic() < end:
            time.sleep(0.05)
        code, out = _stop(planner)  # a goal is in flight now
        time.sleep(1.0)
        assert goals[-1] in cancels, (goals, cancels)
    finally:
        probe.close()
        _stop(sim)
    assert code == 0 and "Traceback" not in out, out[-3000:]
    assert "not answered within 1.5 s: cancelled" in out and "shutdown: cancelled 1 ExecuteSkill goal" in out, \
        out[-3000:]


@pytest.mark.timeout(120)
@isolated(timeout=100)
def test_client_cancels_a_goal_whose_acceptance_was_still_on_its_way():
    """The planner's shutdown race: the robot has the goal, its acceptance has not reached the
    planner yet (no handle to cancel through). cancel_all counts it and cancels it on arrival."""
    from action_msgs.msg import GoalStatus
    from rclpy.action import ActionServer, CancelResponse, GoalResponse
    from rclpy.callback_groups import ReentrantCallbackGroup

    from sim_bridge.ros import skills
    from worldmind_ros.skill_action import SkillActionClient

    probe = Probe()
    entered, release = threading.Event(), threading.Event()
    cancels: list[str] = []
    results: list[dict] = []

    def accept_late(_goal):
        entered.set()
        release.wait(20)
        return GoalResponse.ACCEPT

    group = ReentrantCallbackGroup()
    ActionServer(probe.node, probe.ExecuteSkill, "/late/execute_skill",
                 execute_callback=lambda h: probe.never_answer(h, cancels),
                 goal_callback=accept_late, cancel_callback=lambda _h: CancelResponse.ACCEPT, callback_group=group)
    client = SkillActionClient(probe.node, "/late/execute_skill", timeout_s=60.0)
    probe.start()
    try:
        assert client.client.wait_for_server(timeout_sec=30)
        client.send(skills.goal_for_action("MoveAhead", request_id="late-1"), results.append)
        assert entered.wait(20), "the goal never reached the server"
        assert client.cancel_all() == 1 and client.awaiting_acceptance()
        release.set()
        end = time.monotonic() + 20
        while not results and time.monotonic() < end:
            time.sleep(0.02)
        assert cancels == ["late-1"], cancels  # the robot was told to stop
        assert results and results[0]["status"] == GoalStatus.STATUS_CANCELED, results
        assert not client.awaiting_acceptance()
    finally:
        release.set()
        probe.close()


@pytest.mark.timeout(300)
@isolated(timeout=280)
def test_robot_graph_runs_skills_through_the_bridge_relay(tmp_path):
    """planner -> worldmind/execute_skill (robot_bridge) -> /robot/execute_skill (example robot)."""
    script = tmp_path / "a.json"
    script.write_text(json.dumps({"actions": [{"action": "RotateLeft"}, {"action": "MoveAhead"},
                                              {"action": "LookDown"}, {"action": "Stop"}]}))
    result = tmp_path / "r.json"
    r = subprocess.run([sys.executable, "-m", "worldmind.cli", "ros", "up", "robot", "--example-robot", "--agent",
                        f"scripted:{script}", "--param", f"example_robot.result_file:={result}",
                        "--max-runtime", "150"], cwd=REPO, capture_output=True, text=True, timeout=200)
    log = r.stdout + r.stderr
    assert r.returncode == 0 and "Traceback" not in log, log[-4000:]
    assert json.loads(result.read_text())["num_actions"] == 3 and "Stop acknowledged after 3 action(s)" in log


@pytest.mark.timeout(200)
@isolated(timeout=180)
def test_bridge_relay_aborts_and_cancels_when_the_robot_never_answers():
    from action_msgs.msg import GoalStatus
    from rclpy.action import ActionClient, ActionServer, CancelResponse
    from rclpy.callback_groups import ReentrantCallbackGroup

    from sim_bridge.ros import skills

    bridge = _start("robot_bridge_node", "skill_timeout_s:=1.0")
    probe = Probe()
    cancels: list[str] = []

    ActionServer(probe.node, probe.ExecuteSkill, "/robot/execute_skill",
                 execute_callback=lambda h: probe.never_answer(h, cancels),
                 cancel_callback=lambda _h: CancelResponse.ACCEPT, callback_group=ReentrantCallbackGroup())
    client = ActionClient(probe.node, probe.ExecuteSkill, "/worldmind/execute_skill")
    probe.start()
    try:
        assert client.wait_for_server(timeout_sec=30)
        goal = skills.goal_to_msg(skills.goal_for_action("MoveAhead", request_id="m1"), probe.ExecuteSkill.Goal)
        res = probe.wait(probe.wait(client.send_goal_async(goal)).get_result_async(), 30)
        assert res.status == GoalStatus.STATUS_ABORTED and res.result.error.startswith("timeout:"), res.result.error
        time.sleep(0.5)
        assert cancels == ["m1"]  # the robot was told to stop
        res = probe.wait(probe.wait(client.send_goal_async(probe.ExecuteSkill.Goal(skill="teleport")))
                         .get_result_async(), 30)
        assert res.status == GoalStatus.STATUS_ABORTED and "unknown skill 'teleport'" in res.result.error
        assert bridge.poll() is None
    finally:
        probe.close()
        code, out = _stop(bridge)
    assert code == 0 and "Traceback" not in out, out[-3000:]
