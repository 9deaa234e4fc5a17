"""Geodesic distance fields over a free-space raster, used as A* heuristics.

Straight-line distance badly underestimates the way through a door, so a lattice search guided
by it floods whole rooms. A multi-source Dijkstra over a coarsened copy of the free grid gives
the walking distance to the goal region instead; coarsening is optimistic (a coarse cell is free
if any of its fine cells is), so the field stays a lower bound up to one coarse cell diagonal,
which the caller subtracts.

The same coarse graph answers "can the search reach that region at all?" (``connected``) before
any search starts: coarsening only adds connections, so a region in another component of the
coarse graph cannot be reached on the fine grid either, and a search towards it would run to its
expansion cap (seconds, in pure Python) to find that out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage, sparse
from scipy.sparse.csgraph import dijkstra

from household.free_grid import FreeGrid


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


def nearest_cell(mask: np.ndarray, i: int, j: int, r: int) -> tuple[int, int] | None:
    """The True cell of ``mask`` nearest (i, j) within the square of half-side ``r`` cells (the
    first in row order among equals); None where there is none. Where an agent's own cell is
    not on a component its neighbours are: start from the nearest one that is."""
    i0, j0 = max(i - r, 0), max(j - r, 0)
    ii, jj = np.nonzero(mask[i0:i + r + 1, j0:j + r + 1])
    if ii.size == 0:
        return None
    k = int(np.argmin((ii + i0 - i) ** 2 + (jj + j0 - j) ** 2))
    return int(ii[k] + i0), int(jj[k] + j0)


def true_window(mask: np.ndarray, grow: int = 0, align: int = 1) -> tuple[slice, slice] | None:
    """The rows and columns of the smallest box holding every True cell of a 2-D mask, grown by
    ``grow`` cells and widened outwards to multiples of ``align`` (clipped to the mask); None
    where the mask is all False. The maps are 960 x 960 cells and a goal region a few hundred:
    work on the box costs a fraction of a millisecond where the whole grid cost several."""
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero(mask.any(axis=0))
    i0, j0 = max(int(rows[0]) - grow, 0) // align * align, max(int(cols[0]) - grow, 0) // align * align
    i1 = min(-(-(int(rows[-1]) + grow + 1) // align) * align, mask.shape[0])
    j1 = min(-(-(int(cols[-1]) + grow + 1) // align) * align, mask.shape[1])
    return slice(i0, i1), slice(j0, j1)


def coarsen_any(mask: np.ndarray, factor: int) -> np.ndarray:
    """factor x factor blocks of a boolean grid -> one cell, True where any cell of the block is.
    Only the blocks over the mask's True cells are reduced (``true_window``); the rest are False."""
    nx, nz = -(-mask.shape[0] // factor), -(-mask.shape[1] // factor)
    out = np.zeros((nx, nz), dtype=bool)
    window = true_window(mask, align=factor)
    if window is None:
        return out
    rows, cols = window
    part = mask[rows, cols]
    bx, bz = -(-part.shape[0] // factor), -(-part.shape[1] // factor)
    padded = np.zeros((bx * factor, bz * factor), dtype=bool)
    padded[: part.shape[0], : part.shape[1]] = part
    i0, j0 = rows.start // factor, cols.start // factor
    out[i0:i0 + bx, j0:j0 + bz] = padded.reshape(bx, factor, bz, factor).any(axis=(1, 3))
    return out


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
        r, c, wts = (np.concatenate(v) for v in (rows, cols, weights))
        self.graph = sparse.csr_matrix((wts, (r, c)), shape=(nx * nz, nx * nz))
        self._labels: np.ndarray | None = None

    @property
    def labels(self) -> np.ndarray:
        """8-connected component labels of the coarse free cells (0 = blocked): the components
        of ``graph``, whose edges join 8-neighbouring free cells."""
        if self._labels is None:
            self._labels, _ = ndimage.label(self.mask, structure=np.ones((3, 3), dtype=bool))
        return self._labels

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


# The coarse graph of the current free grid, rebuilt when the grid changes (a grid's mask is
# replaced, never edited in place, whenever the map changes).
_GRAPH: list[tuple[np.ndarray, CoarseGraph]] = []
COARSE = 4  # fine free-grid cells per coarse cell, per axis (0.2 m cells on a 5 cm grid)


def coarse_graph(grid: FreeGrid) -> CoarseGraph:
    if _GRAPH and _GRAPH[0][0] is grid.mask:
        return _GRAPH[0][1]
    graph = CoarseGraph(grid.mask, grid.resolution, grid.x0, grid.z0, COARSE)
    _GRAPH[:] = [(grid.mask, graph)]
    return graph


def walking_distance_to(region: np.ndarray, grid: FreeGrid) -> DistanceField:
    """Geodesic distance (metres, coarse cells) from anywhere to the given fine-grid region."""
    return coarse_graph(grid).field(coarsen_any(region, COARSE))


def connected(region: np.ndarray, grid: FreeGrid, x: float, z: float, radius: float) -> bool:
    """Whether some free cell within ``radius`` of (x, z) lies in the same coarse component as
    some cell of ``region`` (a fine-grid mask). False means no path exists on the fine grid from
    any free cell that near: a lattice search's first move lands within one move step of its
    start, and every later state is on a free cell."""
    graph = coarse_graph(grid)
    labels = graph.labels
    ci = int((x - graph.x0) / graph.resolution)
    cj = int((z - graph.z0) / graph.resolution)
    r = int(np.ceil(radius / graph.resolution)) + 1
    window = labels[max(ci - r, 0):max(ci + r + 1, 0), max(cj - r, 0):max(cj + r + 1, 0)]
    near = np.unique(window[window > 0])
    if near.size == 0:
        return False
    there = labels[coarsen_any(region, COARSE)]
    return bool(np.isin(there[there > 0], near).any())
