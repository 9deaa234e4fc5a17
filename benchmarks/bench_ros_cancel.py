"""RunTask cancel -> robot-side skill stopped, through real rclpy actions.

What it measures: ``sim_bridge_node`` (embedded simulator as the robot, each skill taking
``--skill-s`` seconds with feedback, cancellable) and ``planner_node`` (``wait_for_task``) run as
their own processes, as ``worldmind ros up`` starts them. Per trial this process sends a RunTask
goal, waits until the planner's ExecuteSkill goal is running on the simulator (RunTask feedback
names the skill), waits a random 0.1-1.0 s into the skill, cancels the RunTask, and takes the time
until the simulator's ExecuteSkill goal is reported CANCELED on that action's own status topic
(``worldmind/execute_skill/_action/status``): RunTask cancel -> planner -> skill cancel -> the
simulator stops before moving -> status. Target: every trial within 200 ms.

DDS stays off the network: unless already inside a private network namespace (WORLDMIND_NETNS=1)
the script re-executes itself under ``unshare -n`` (root needed, as for the ROS tests).

    .venv/bin/python benchmarks/bench_ros_cancel.py [--trials 20] [--skill-s 2.0]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "benchmarks"), str(REPO / "ros_ws" / "src" / "worldmind_ros"), str(REPO)]
from bench_ros_latency import pct, reexec_isolated  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--skill-s", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if os.environ.get("WORLDMIND_NETNS") != "1":
        return reexec_isolated()

    import rclpy
    from action_msgs.msg import GoalStatus, GoalStatusArray
    from rclpy.action import ActionClient
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    from worldmind_interfaces.action import RunTask

    script = Path(tempfile.mkdtemp()) / "moves.json"
    script.write_text(json.dumps({"actions": [{"action": a} for a in ["MoveAhead", "RotateLeft"] * 500]}))

    def start(module: str, *params: str) -> subprocess.Popen:
        argv = [sys.executable, "-u", "-m", f"worldmind_ros.{module}", "--ros-args"]
        for p in params:
            argv += ["-p", p]
        return subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    sim = start("sim_bridge_node", f"skill_duration_s:={args.skill_s}", "request_timeout_s:=600.0")
    planner = start("planner_node", f"agent:=scripted:{script}", "wait_for_task:=true")
    rclpy.init()
    node = rclpy.create_node("bench_ros_cancel")
    canceled: dict[bytes, float] = {}

    def on_status(msg: GoalStatusArray) -> None:
        now = time.monotonic()
        for s in msg.status_list:
            if s.status == GoalStatus.STATUS_CANCELED:
                canceled.setdefault(bytes(s.goal_info.goal_id.uuid), now)

    node.create_subscription(GoalStatusArray, "/worldmind/execute_skill/_action/status", on_status,
                             QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                        durability=DurabilityPolicy.TRANSIENT_LOCAL))
    client = ActionClient(node, RunTask, "/worldmind/run_task")
    ex = MultiThreadedExecutor(num_threads=4)
    ex.add_node(node)
    threading.Thread(target=ex.spin, daemon=True).start()

    def wait(fut, timeout=60.0):
        end = time.monotonic() + timeout
        while not fut.done() and time.monotonic() < end:
            time.sleep(0.001)
        if not fut.done():
            raise TimeoutError("no answer")
        return fut.result()

    rng = random.Random(args.seed)
    latencies: list[float] = []
    failures: list[str] = []
    try:
        if not client.wait_for_server(timeout_sec=60):
            print("no RunTask server; planner log:\n" + planner.stdout.read()[-2000:] if planner.poll() else "")
            return 1
        for trial in range(args.trials):
            feedback: list = []
            gh = wait(client.send_goal_async(RunTask.Goal(instruction=f"trial {trial}"),
                                             feedback_callback=lambda m: feedback.append(time.monotonic())))  # noqa: B023 (awaited within this trial)
            end = time.monotonic() + 60
            while not feedback and time.monotonic() < end:
                time.sleep(0.001)
            if not feedback:
                failures.append(f"trial {trial}: no feedback")
                continue
            time.sleep(rng.uniform(0.1, min(1.0, args.skill_s * 0.8)))
            seen = set(canceled)
            t0 = time.monotonic()
            wait(gh.cancel_goal_async())
            res = wait(gh.get_result_async())
            end = time.monotonic() + 5
            while not (set(canceled) - seen) and time.monotonic() < end:
                time.sleep(0.001)
            new = set(canceled) - seen
            if res.status != GoalStatus.STATUS_CANCELED or not new:
                failures.append(f"trial {trial}: RunTask status {res.status}, robot goal canceled: {bool(new)}")
                continue
            latencies.append((canceled[new.pop()] - t0) * 1000)
    finally:
        ex.shutdown()
        node.destroy_node()
        rclpy.shutdown()
        for p in (planner, sim):
            p.send_signal(2)
            p.communicate(timeout=30)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpu(s), python {platform.python_version()}, rclpy (Fast DDS), "
          f"sim_bridge and planner in their own processes, skills of {args.skill_s:g} s")
    print(f"trials: {args.trials}, cancelled mid-skill and measured: {len(latencies)}; failures: {failures or 'none'}")
    if latencies:
        print(f"RunTask cancel -> robot-side skill CANCELED: p50 {pct(latencies, 50):.1f} ms   p95 {pct(latencies, 95):.1f} ms"
              f"   max {max(latencies):.1f} ms   (target <= 200 ms: {'met' if max(latencies) <= 200 else 'NOT met'})")
    return 0 if latencies and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
