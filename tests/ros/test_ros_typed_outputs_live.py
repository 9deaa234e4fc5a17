"""Typed outputs live (rclpy in a private network namespace): with the sim bridge, memory and the
deterministic (HoloMind) planner running, the agent's map arrives on /worldmind/map as a
transient-local nav_msgs/OccupancyGrid in `map` with known cells, and the memory's objects on
/worldmind/memory/objects as worldmind_interfaces/MemoryObjectArray with headers; the memory node
answers its QueryObjects and GetObject services about them, bad requests with the field named."""

from __future__ import annotations

import time

import numpy as np
import pytest

from conftest import isolated
from test_ros_memory_services_live import _check_services
from test_ros_skill_actions import Probe, _start, _stop


@pytest.mark.timeout(200)
@isolated(timeout=180)
def test_agent_map_and_memory_objects_are_published_typed():
    from nav_msgs.msg import OccupancyGrid
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    from worldmind_interfaces.msg import MemoryObjectArray

    sim = _start("sim_bridge_node", "width:=160", "height:=120")
    memory = _start("memory_node", "marker_period_s:=0.5")
    planner = _start("planner_node", "agent:=deterministic")
    probe = Probe()
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    maps: list = []
    objects: list = []
    probe.node.create_subscription(OccupancyGrid, "/worldmind/map", maps.append, latched)
    probe.node.create_subscription(MemoryObjectArray, "/worldmind/memory/objects", objects.append, latched)
    probe.start()
    try:
        end = time.monotonic() + 120
        while (not maps or not any(o.objects for o in objects)) and time.monotonic() < end:
            time.sleep(0.1)
        assert maps, "no OccupancyGrid on /worldmind/map"
        m = maps[-1]
        data = np.asarray(m.data, dtype=np.int8)
        assert m.header.frame_id == "map" and m.info.resolution > 0 and data.size == m.info.width * m.info.height
        assert (data == 0).any() and (data == -1).any()  # seen floor, and not-yet-seen cells
        assert objects and any(o.objects for o in objects), "no memory objects"
        arr = next(o for o in objects if o.objects)
        assert arr.header.frame_id == "map" and arr.objects[0].header.frame_id == "map"
        assert arr.header.stamp.sec >= 1  # sim time (the bridge's clock starts at 1 s)
        _check_services(probe, arr)
        assert all(p.poll() is None for p in (sim, memory, planner))
    finally:
        probe.close()
        outs = {name: _stop(p)[1] for name, p in (("planner", planner), ("memory", memory), ("sim", sim))}
    for name, out in outs.items():
        assert "Traceback" not in out, f"{name}: {out[-3000:]}"
    assert "field 'id': unknown object id '99999'" in outs["memory"]  # logged, naming the field
