"""The free-space grid: which floor cells a round agent can stand on.

Shared by the simulator (which computes it from the true house) and the robot-side planner (which
builds its own from depth): the same cell convention on both sides, so the oracle's lattice and the
agent's occupancy map line up cell for cell.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class FreeGrid:
    x0: float
    z0: float
    resolution: float
    mask: np.ndarray  # (nx, nz) bool, cell (i, j) centred at (x0 + i*res, z0 + j*res)

    def is_free(self, x: float, z: float) -> bool:
        i = int(round((x - self.x0) / self.resolution))
        j = int(round((z - self.z0) / self.resolution))
        if i < 0 or j < 0 or i >= self.mask.shape[0] or j >= self.mask.shape[1]:
            return False
        return bool(self.mask[i, j])
