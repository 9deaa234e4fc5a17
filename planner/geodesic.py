"""Geodesic distance fields over a free-space raster, used as A* heuristics.

Straight-line distance badly underestimates the way through a door, so a lattice search guided
by it floods whole rooms. A multi-source Dijkstra over a coarsened copy of the free grid gives
the walking distance to the goal region instead; coarsening is optimistic (a coarse cell is free
if any of its fine cells is), so the field stays a lower bound up to one coarse cell diagonal,
which the caller subtracts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import dijkstra


@dataclass
class DistanceField:
    x0: float
    z0: float
    resolution: float
    dist: np.ndarray  # (nx, nz) metres to the nearest source cell; inf where unreachable

    def at(self, x: float, z: float) -> float:
        i = int((x - self.x0) / self.resolution)
        j = int((z - self.z0) / self.resolution)
        if i < 0 or j < 0 or i >= self.dist.shape[0] or j >= self.dist.shape[1]:
            return float("inf")
        return float(self.dist[i, j])

    @property
    def slack(self) -> float:
        """How much the field may overestimate the true distance (one coarse cell diagonal)."""
        return self.resolution * 1.4143


def coarsen_any(mask: np.ndarray, factor: int) -> np.ndarray:
    """factor x factor blocks of a boolean grid -> one cell, True where any cell of the block is."""
    nx, nz = -(-mask.shape[0] // factor), -(-mask.shape[1] // factor)
    padded = np.zeros((nx * factor, nz * factor), dtype=bool)
    padded[: mask.shape[0], : mask.shape[1]] = mask
    return padded.reshape(nx, factor, nz, factor).any(axis=(1, 3))


class CoarseGraph:
    """An 8-connected graph over a coarsened free mask; built once per free grid."""

    def __init__(self, fine_mask: np.ndarray, fine_res: float, x0: float, z0: float, factor: int = 4) -> None:
        self.mask = coarsen_any(fine_mask, factor)
        nx, nz = self.mask.shape
        # Fine cell (i, j) is centred at x0 + i*fine_res, so coarse cell k spans fine cells
        # k*factor .. k*factor+factor-1, starting half a fine cell before the first centre.
        self.x0 = x0 - fine_res / 2.0
        self.z0 = z0 - fine_res / 2.0
        self.resolution = fine_res * factor
        self.shape = (nx, nz)
        idx = np.arange(nx * nz).reshape(nx, nz)
        rows, cols, weights = [], [], []
        for di, dj in ((1, 0), (0, 1), (1, 1), (1, -1)):
            j_lo, j_hi = (0, nz - dj) if dj >= 0 else (-dj, nz)
            a = idx[0: nx - di, j_lo:j_hi]
            b = idx[di:nx, j_lo + dj: j_hi + dj]
            ok = self.mask.ravel()[a.ravel()] & self.mask.ravel()[b.ravel()]
            w = self.resolution * (1.4142 if di and dj else 1.0)
            rows.append(a.ravel()[ok])
            cols.append(b.ravel()[ok])
            weights.append(np.full(int(ok.sum()), w))
        r, c, w = (np.concatenate(v) for v in (rows, cols, weights))
        self.graph = sparse.csr_matrix((w, (r, c)), shape=(nx * nz, nx * nz))

    def field(self, sources: np.ndarray) -> DistanceField:
        """Distances from the coarse cells flagged in ``sources`` (a (nx, nz) bool array)."""
        src = np.flatnonzero(sources.ravel() & self.mask.ravel())
        if len(src) == 0:
            dist = np.full(self.shape, np.inf)
        else:
            dist = dijkstra(self.graph, directed=False, indices=src, min_only=True).reshape(self.shape)
        return DistanceField(self.x0, self.z0, self.resolution, dist)

    def cell_centres(self) -> tuple[np.ndarray, np.ndarray]:
        xs = self.x0 + self.resolution * (np.arange(self.shape[0]) + 0.5)
        zs = self.z0 + self.resolution * (np.arange(self.shape[1]) + 0.5)
        return np.meshgrid(xs, zs, indexing="ij")
