"""Walking-distance fields used as the lattice search heuristic."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from planner.geodesic import CoarseGraph, coarsen_any, true_window
from planner.navigation import grown_by_a_cell


def test_field_goes_around_a_wall_instead_of_through_it():
    free = np.ones((40, 40), dtype=bool)
    free[20, :35] = False  # a wall with a gap at high j
    graph = CoarseGraph(free, 0.1, 0.0, 0.0, factor=1)
    sources = np.zeros(graph.shape, dtype=bool)
    sources[30, 5] = True
    field = graph.field(sources)
    straight = 2.0  # 20 cells of 0.1 m
    assert field.dist[30, 5] == 0.0
    assert field.dist[10, 5] > 2.5 * straight  # must detour through the gap
    assert field.at(1.0, 0.5) == pytest.approx(field.dist[10, 5])


def test_unreachable_cells_are_infinite_and_outside_points_too():
    free = np.ones((10, 10), dtype=bool)
    free[5, :] = False  # a complete wall
    graph = CoarseGraph(free, 0.1, 0.0, 0.0, factor=1)
    sources = np.zeros(graph.shape, dtype=bool)
    sources[8, 8] = True
    field = graph.field(sources)
    assert np.isinf(field.dist[2, 2]) and np.isfinite(field.dist[9, 9])
    assert np.isinf(field.at(-5.0, 0.0))


def test_coarsening_keeps_any_free_cell_and_pads_odd_sizes():
    fine = np.zeros((5, 3), dtype=bool)
    fine[4, 2] = True
    coarse = coarsen_any(fine, 2)
    assert coarse.shape == (3, 2)
    assert coarse.tolist() == [[False, False], [False, False], [False, True]]


def _coarsen_whole(mask: np.ndarray, factor: int) -> np.ndarray:
    """coarsen_any as it was: every block of the whole grid reduced."""
    nx, nz = -(-mask.shape[0] // factor), -(-mask.shape[1] // factor)
    padded = np.zeros((nx * factor, nz * factor), dtype=bool)
    padded[: mask.shape[0], : mask.shape[1]] = mask
    return padded.reshape(nx, factor, nz, factor).any(axis=(1, 3))


def _masks():
    """Random masks of odd sizes: empty, full, a few cells, blobs touching every edge."""
    rng = np.random.default_rng(7)
    yield np.zeros((37, 41), dtype=bool)
    yield np.ones((37, 41), dtype=bool)
    for _ in range(60):
        shape = (int(rng.integers(1, 50)), int(rng.integers(1, 50)))
        mask = np.zeros(shape, dtype=bool)
        for _ in range(int(rng.integers(1, 4))):
            i, j = int(rng.integers(0, shape[0])), int(rng.integers(0, shape[1]))
            mask[max(i - 2, 0):i + int(rng.integers(1, 6)), max(j - 2, 0):j + int(rng.integers(1, 6))] = True
        yield mask
        yield rng.random(shape) < 0.02


@pytest.mark.parametrize("factor", [1, 3, 4])
def test_coarsening_the_box_of_true_cells_equals_coarsening_the_whole_grid(factor: int) -> None:
    """Issue 27: the goal regions are a few hundred cells of a 960 x 960 map; reducing only the
    blocks over them must give exactly the whole grid's coarse mask, edges and odd sizes included."""
    for mask in _masks():
        assert np.array_equal(coarsen_any(mask, factor), _coarsen_whole(mask, factor))


def test_true_window_holds_every_true_cell_grown_and_aligned() -> None:
    for mask in _masks():
        window = true_window(mask, grow=1, align=4)
        if not mask.any():
            assert window is None
            continue
        assert window is not None
        rows, cols = window
        assert rows.start % 4 == 0 and cols.start % 4 == 0
        assert rows.stop == mask.shape[0] or rows.stop % 4 == 0
        assert cols.stop == mask.shape[1] or cols.stop % 4 == 0
        inside = np.zeros_like(mask)
        inside[window] = True
        grown = ndimage.binary_dilation(mask, structure=np.ones((3, 3), dtype=bool))
        assert not (grown & ~inside).any()  # the cells one step from a true cell are in the box


def test_growing_by_a_cell_on_the_box_equals_dilating_the_whole_grid() -> None:
    for mask in _masks():
        whole = ndimage.binary_dilation(mask, structure=np.ones((3, 3), dtype=bool))
        assert np.array_equal(grown_by_a_cell(mask), whole)
