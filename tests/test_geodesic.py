"""Walking-distance fields used as the lattice search heuristic."""

from __future__ import annotations

import numpy as np
import pytest

from planner.geodesic import CoarseGraph, coarsen_any


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
