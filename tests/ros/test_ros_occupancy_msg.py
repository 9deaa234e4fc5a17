"""The agent's occupancy map as nav_msgs/OccupancyGrid: THOR (x, z) cells land at REP 103
(x, y) = (z, -x), values 100/0/-1, and the message survives CDR."""

from __future__ import annotations

import numpy as np
import pytest

from planner.occupancy import OccupancyConfig, OccupancyMap
from worldmind_ros import occupancy_msg as om


def test_cells_land_where_rep_103_puts_them():
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=2.0, resolution=0.05))
    i, j = occ.cell(0.5, -0.25)
    occ.floor[i, j] = True
    k, m = occ.cell(-0.3, 0.7)
    occ.obstacle[k, m] = True
    g = om.grid_of(occ)
    assert g.data.dtype == np.int8 and g.data.shape == occ.floor.shape
    (r, c), = np.argwhere(g.data == 0)
    assert om.cell_center(g, r, c) == pytest.approx((-0.25, -0.5), abs=1e-9)  # (z, -x)
    (r, c), = np.argwhere(g.data == 100)
    assert om.cell_center(g, r, c) == pytest.approx((0.7, 0.3), abs=1e-9)
    assert (g.data == -1).sum() == g.data.size - 2


def test_message_round_trip():
    pytest.importorskip("rclpy")
    from nav_msgs.msg import OccupancyGrid
    from rclpy.serialization import deserialize_message, serialize_message

    occ = OccupancyMap((1.0, 2.0), OccupancyConfig(size=1.0, resolution=0.1))
    occ.wall[3, 4] = True
    g = om.grid_of(occ)
    from builtin_interfaces.msg import Time

    msg = deserialize_message(serialize_message(om.to_msg(g, "map", Time(sec=3))), OccupancyGrid)
    assert msg.header.frame_id == "map" and msg.info.width == g.data.shape[1]
    assert np.array_equal(np.asarray(msg.data, dtype=np.int8).reshape(g.data.shape), g.data)


def test_memory_objects_as_typed_messages_with_headers():
    pytest.importorskip("worldmind_interfaces.msg", reason="worldmind_interfaces not built: `make setup` builds it")
    from builtin_interfaces.msg import Time
    from rclpy.serialization import deserialize_message, serialize_message

    from evaluation.episodes import load_episode
    from memory.pipeline import MemoryPipeline
    from sim_bridge.factory import make_environment
    from evaluation.dev_set import default_episode_file
    from worldmind_interfaces.msg import MemoryObjectArray
    from worldmind_ros.memory_server import objects_msg

    env = make_environment("embedded", width=160, height=120)
    obs = env.reset(load_episode(default_episode_file()))
    pipeline = MemoryPipeline.build()
    pipeline.process(obs)
    memory = pipeline.memory
    assert len(memory) > 0
    msg = deserialize_message(serialize_message(objects_msg(memory, "map", Time(sec=7))), MemoryObjectArray)
    assert msg.header.frame_id == "map" and msg.header.stamp.sec == 7
    assert len(msg.objects) == len(memory.objects())
    rec = memory.objects()[0]
    o = next(o for o in msg.objects if o.id == str(rec.object_id))
    assert o.object_type == rec.label and o.header.frame_id == "map"
    assert (o.position.x, o.position.y, o.position.z) == pytest.approx(tuple(float(v) for v in rec.center))
    assert 0.0 <= o.confidence <= 1.0 and o.observations >= 1 and o.voxels > 0
