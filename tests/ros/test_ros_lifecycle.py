"""Managed (lifecycle) nodes (issue 15): a lifecycle manager drives a WorldMind node through the
standard lifecycle services, as nav2_lifecycle_manager or `ros2 lifecycle set` would. Unconfigured,
the node has no topics; configured but inactive, it drops what it receives; active, it answers;
cleaned up, its topics are gone and it can be configured again; a bad parameter fails configure
with the reason and leaves nothing behind. Real rclpy, in a private network namespace."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from conftest import isolated

QUERY, ANSWER = "/worldmind/memory/query", "/worldmind/memory/answer"


class Manager:
    """The client side of the lifecycle services, and a probe on the memory topics."""

    def __init__(self, node: Any, target: str) -> None:
        from lifecycle_msgs.srv import ChangeState, GetState
        from std_msgs.msg import String

        self.node, self.ChangeState = node, ChangeState
        self.change = node.create_client(ChangeState, f"/{target}/change_state")
        self.get = node.create_client(GetState, f"/{target}/get_state")
        self.GetState = GetState
        self.answers: list[dict] = []
        node.create_subscription(String, ANSWER, lambda m: self.answers.append(json.loads(m.data)), 10)
        self.query_pub = node.create_publisher(String, QUERY, 10)
        assert self.change.wait_for_service(timeout_sec=10) and self.get.wait_for_service(timeout_sec=10)

    def _call(self, client: Any, request: Any) -> Any:
        future = client.call_async(request)
        end = time.monotonic() + 10
        while not future.done() and time.monotonic() < end:
            time.sleep(0.01)
        assert future.done(), f"no answer from {client.srv_name}"
        return future.result()

    def state(self) -> str:
        return self._call(self.get, self.GetState.Request()).current_state.label

    def transition(self, label: str) -> bool:
        from lifecycle_msgs.msg import Transition

        ids = {"configure": Transition.TRANSITION_CONFIGURE, "activate": Transition.TRANSITION_ACTIVATE,
               "deactivate": Transition.TRANSITION_DEACTIVATE, "cleanup": Transition.TRANSITION_CLEANUP}
        req = self.ChangeState.Request()
        req.transition.id = ids[label]
        return bool(self._call(self.change, req).success)

    def ask(self, qid: str, wait_s: float = 1.5) -> dict | None:
        from std_msgs.msg import String

        end = time.monotonic() + wait_s
        while time.monotonic() < end:
            self.query_pub.publish(String(data=json.dumps({"schema": "worldmind/memory_query", "version": 1,
                                                           "id": qid, "text": "apple"})))
            time.sleep(0.1)
            hit = next((a for a in self.answers if a.get("id") == qid), None)
            if hit is not None:
                return hit
        return None


def _spin(nodes: list[Any]) -> tuple[Any, threading.Thread]:
    from rclpy.executors import MultiThreadedExecutor

    ex = MultiThreadedExecutor(num_threads=4)
    for n in nodes:
        ex.add_node(n)
    t = threading.Thread(target=ex.spin, daemon=True)
    t.start()
    return ex, t


@pytest.mark.timeout(200)
@isolated(timeout=180)
def test_a_lifecycle_manager_brings_the_memory_node_up_and_down():
    import rclpy
    from rclpy.parameter import Parameter

    from worldmind_ros.memory_node import MemoryNode

    rclpy.init()
    node = MemoryNode(parameter_overrides=[Parameter("autostart", value=False)])
    probe = rclpy.create_node("lifecycle_manager")
    ex, _ = _spin([node, probe])
    try:
        m = Manager(probe, "memory")
        assert m.state() == "unconfigured" and node.lifecycle_state == "unconfigured"
        assert probe.count_subscribers(QUERY) == 0  # nothing created before configure

        assert m.transition("configure") and m.state() == "inactive"
        deadline = time.monotonic() + 5
        while probe.count_subscribers(QUERY) == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert probe.count_subscribers(QUERY) == 1
        assert m.ask("q-inactive") is None and node.inactive_drops > 0  # inactive: received, dropped

        assert m.transition("activate") and m.state() == "active"
        answer = m.ask("q-active", wait_s=5)
        assert answer is not None and answer["status"] == "ok"

        assert m.transition("deactivate") and m.state() == "inactive"
        assert m.transition("cleanup") and m.state() == "unconfigured"
        deadline = time.monotonic() + 5
        while probe.count_subscribers(QUERY) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert probe.count_subscribers(QUERY) == 0  # cleanup destroyed what configure made

        assert m.transition("configure") and m.transition("activate")  # and it comes back fresh
        assert m.ask("q-again", wait_s=5) is not None
    finally:
        ex.shutdown(timeout_sec=2)
        node.release()
        node.destroy_node()
        probe.destroy_node()
        rclpy.shutdown()


@pytest.mark.timeout(200)
@isolated(timeout=180)
def test_a_bad_parameter_fails_configure_with_the_reason_and_leaves_nothing():
    import rclpy
    from rclpy.parameter import Parameter

    from worldmind_ros.planner_node import PlannerNode
    from worldmind_ros.runtime import NodeSetupError

    rclpy.init()
    probe = rclpy.create_node("probe")
    try:
        bad = [Parameter("skill_interface", value="carrier-pigeon")]
        with pytest.raises(NodeSetupError, match="skill_interface"):  # autostart: the process ends, one line
            PlannerNode(parameter_overrides=bad)
        node = PlannerNode(parameter_overrides=bad + [Parameter("autostart", value=False)])
        entities = {kind: len(list(getattr(node, kind))) for kind in ("publishers", "subscriptions", "timers",
                                                                     "waitables")}
        assert node.trigger_configure().name != "SUCCESS"
        assert node.lifecycle_state == "unconfigured" and "skill_interface" in (node.setup_error or "")
        # the publishers made before the check failed are gone again
        assert {kind: len(list(getattr(node, kind))) for kind in entities} == entities
        # the parameter fixed, the same node configures
        node.set_parameters([Parameter("skill_interface", value="topic")])
        assert node.trigger_configure().name == "SUCCESS" and node.lifecycle_state == "inactive"
        assert any(p.topic_name.endswith("/worldmind/plan") for p in node.publishers)
        node.release()
        node.destroy_node()
    finally:
        probe.destroy_node()
        rclpy.shutdown()
