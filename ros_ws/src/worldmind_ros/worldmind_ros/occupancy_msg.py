"""The planner agent's own 2D map as ``nav_msgs/OccupancyGrid`` (frame ``map``, REP 103).

Why: the agent navigates on a map it built from its depth frames (``planner.occupancy``); an
operator (RViz, Foxglove) and Nav2 tooling should see the same map. The agent's grid is indexed
``[i, j]`` over THOR ``(x, z)``; REP 103 is ``(x, y) = (z, -x)``, so a grid row (map +y) is a
reversed ``i`` and a column (map +x) is ``j``. Values: 100 where depth showed an obstacle or a
wall, 0 on floor the agent saw or stood on, -1 never observed. ``grid_of`` is pure (tested
without DDS); ``to_msg`` builds the message. Duck-typed: an agent without ``occupancy`` has no map.
"""

from __future__ import annotations

import array
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Grid:
    data: np.ndarray  # int8, rows = map +y, columns = map +x
    resolution: float
    origin_xy: tuple[float, float]  # map position of cell (0, 0)'s corner


def grid_of(occ: Any) -> Grid:
    res = float(occ.config.resolution)
    values = np.full(occ.floor.shape, -1, dtype=np.int8)
    values[occ.floor | occ.stood] = 0
    values[occ.obstacle | occ.wall] = 100
    data = np.ascontiguousarray(np.flipud(values))
    n = values.shape[0]
    origin = (float(occ.z0) - res / 2.0, -float(occ.x0) - (n - 1) * res - res / 2.0)
    return Grid(data, res, origin)


def cell_center(grid: Grid, row: int, col: int) -> tuple[float, float]:
    return grid.origin_xy[0] + (col + 0.5) * grid.resolution, grid.origin_xy[1] + (row + 0.5) * grid.resolution


def to_msg(grid: Grid, frame_id: str, stamp: Any) -> Any:
    from nav_msgs.msg import OccupancyGrid

    msg = OccupancyGrid()
    msg.header.frame_id, msg.header.stamp = frame_id, stamp
    msg.info.resolution = grid.resolution
    msg.info.height, msg.info.width = int(grid.data.shape[0]), int(grid.data.shape[1])
    msg.info.origin.position.x, msg.info.origin.position.y = grid.origin_xy
    msg.info.origin.orientation.w = 1.0
    msg.data = array.array("b", grid.data.ravel().tobytes())
    return msg
