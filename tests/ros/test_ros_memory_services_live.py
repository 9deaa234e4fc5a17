"""The memory's services and one memory per graph, live (rclpy in a private network namespace).

- ``_check_services``: ``worldmind/memory/query_objects`` (QueryObjects) and
  ``worldmind/memory/get_object`` (GetObject) answer about an object the memory published; bad
  requests (both fields empty, an id that is no integer, an unknown id) get success/found false and
  a message naming the field. The memory node's are checked in ``test_ros_typed_outputs_live.py``
  (the same graph it runs).
- With ``object_memory:=spatial`` (issue 31, item 3) the planner's own memory is the graph's one
  memory: no memory node runs, and the planner node publishes the memory's updates and typed
  objects and answers the same services and JSON queries from the memory it grounds through; on
  shutdown it saves that memory where ``memory_save_path`` says."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from conftest import isolated
from test_ros_skill_actions import Probe, _start, _stop


def _services(probe: Probe) -> tuple[Any, Any, Any, Any]:
    from worldmind_interfaces.srv import GetObject, QueryObjects

    query = probe.node.create_client(QueryObjects, "/worldmind/memory/query_objects")
    get = probe.node.create_client(GetObject, "/worldmind/memory/get_object")
    return query, get, QueryObjects, GetObject


def _wait_for_objects(objects: list, timeout: float = 120.0) -> Any:
    end = time.monotonic() + timeout
    while not any(o.objects for o in objects) and time.monotonic() < end:
        time.sleep(0.1)
    assert any(o.objects for o in objects), "no memory objects published"
    return next(o for o in reversed(objects) if o.objects)


def _check_services(probe: Probe, seen: Any) -> None:
    """QueryObjects and GetObject about an object the memory published, then bad requests."""
    query, get, QueryObjects, GetObject = _services(probe)
    assert query.wait_for_service(timeout_sec=20) and get.wait_for_service(timeout_sec=20)
    first = seen.objects[0]
    by_type = probe.wait(query.call_async(QueryObjects.Request(object_type=first.object_type, k=3)))
    assert by_type.success and by_type.objects and len(by_type.objects) == len(by_type.scores) <= 3
    assert all(o.object_type == first.object_type and o.header.frame_id == "map" for o in by_type.objects)
    by_text = probe.wait(query.call_async(QueryObjects.Request(text=first.object_type, k=2)))
    assert by_text.success and by_text.objects and by_text.objects[0].object_type == first.object_type
    assert list(by_text.scores) == sorted(by_text.scores, reverse=True)
    one = probe.wait(get.call_async(GetObject.Request(id=first.id)))
    assert one.found and one.object.id == first.id and one.object.object_type == first.object_type
    assert one.message.startswith("status ")
    empty = probe.wait(query.call_async(QueryObjects.Request()))
    assert not empty.success and "fields 'text' and 'object_type' are both empty" in empty.message
    bad = probe.wait(get.call_async(GetObject.Request(id="the mug")))
    assert not bad.found and "field 'id': 'the mug' is not a memory object id" in bad.message
    unknown = probe.wait(get.call_async(GetObject.Request(id="99999")))
    assert not unknown.found and "unknown object id '99999'" in unknown.message


@pytest.mark.timeout(240)
@isolated(timeout=220)
def test_a_planner_on_the_spatial_memory_serves_it_and_saves_it(tmp_path):
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    from memory.spatial.store import load_memory
    from worldmind_interfaces.msg import MemoryObjectArray

    saved = tmp_path / "agent-memory"
    sim = _start("sim_bridge_node", "width:=160", "height:=120")
    planner = _start("planner_node", "agent:=deterministic", "object_memory:=spatial", "marker_period_s:=0.3",
                     f"memory_save_path:={saved}")
    probe = Probe()
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    objects: list = []
    updates: list[dict] = []
    answers: list[dict] = []
    probe.node.create_subscription(MemoryObjectArray, "/worldmind/memory/objects", objects.append, latched)
    probe.node.create_subscription(String, "/worldmind/memory/updates", lambda m: updates.append(json.loads(m.data)), 10)
    probe.node.create_subscription(String, "/worldmind/memory/answer", lambda m: answers.append(json.loads(m.data)), 10)
    ask = probe.node.create_publisher(String, "/worldmind/memory/query", 10)
    probe.start()
    try:
        seen = _wait_for_objects(objects)
        assert probe.node.count_publishers("/worldmind/memory/objects") == 1  # the planner alone holds a memory
        # The objects array is latched, the updates are not: updates published before this probe's
        # subscription matched are gone, so wait for the next frame the agent integrates.
        end = time.monotonic() + 60
        while not updates and time.monotonic() < end:
            time.sleep(0.1)
        assert updates and updates[-1]["schema"] == "worldmind/memory_update" and updates[-1]["objects"] >= 1
        steps = [u["step"] for u in updates]
        assert steps == sorted(steps) and updates[-1]["stamp_ns"] > 0  # each frame the agent acted on
        _check_services(probe, seen)
        end = time.monotonic() + 20
        while not answers and time.monotonic() < end:
            ask.publish(String(data=json.dumps({"schema": "worldmind/memory_query", "version": 1, "id": "q1",
                                                "text": seen.objects[0].object_type, "k": 2})))
            time.sleep(0.5)
        assert answers and answers[0]["id"] == "q1" and answers[0]["status"] == "ok" and answers[0]["hits"]
        assert planner.poll() is None and sim.poll() is None
    finally:
        probe.close()
        code, out = _stop(planner)
        _, sim_out = _stop(sim)
    assert "Traceback" not in out and "Traceback" not in sim_out, out[-3000:]
    assert "the agent's memory saved to" in out, out[-3000:]
    restored = load_memory(saved)
    assert len(restored) >= len(seen.objects)  # what it had published, and what it saw after
