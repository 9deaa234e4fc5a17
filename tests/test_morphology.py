"""household.morphology gives scipy.ndimage's binary morphology arrays, by OpenCV.

Checked two ways: against a reference written out from the definition here (each structure cell
a shifted copy of the grid, nothing outside the array), on every size down to one cell; and
against scipy itself on grids at least as large as the structure. scipy 1.17.1's
``binary_dilation`` with ``iterations`` > 1 and the 11 x 11 disc on a grid smaller than the disc
corrupted the heap in a probe here (``double free or corruption`` at exit), so those sizes are
compared with the reference only."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from household import morphology
from planner.occupancy import OccupancyConfig, OccupancyMap


def _disc(r: int) -> np.ndarray:
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    return xx * xx + yy * yy <= r * r


STRUCTURES = [None, np.ones((3, 3), dtype=bool), _disc(5), _disc(4), np.ones((1, 3), dtype=bool)]


def _shifted(mask: np.ndarray, di: int, dj: int) -> np.ndarray:
    """mask moved by (di, dj); what comes in from outside is False."""
    h, w = mask.shape
    out = np.zeros_like(mask)
    if abs(di) >= h or abs(dj) >= w:
        return out  # moved off the array altogether
    out[max(di, 0):h + min(di, 0), max(dj, 0):w + min(dj, 0)] = mask[max(-di, 0):h + min(-di, 0),
                                                                      max(-dj, 0):w + min(-dj, 0)]
    return out


def _reference(mask: np.ndarray, structure: np.ndarray | None, iterations: int, op: str) -> np.ndarray:
    s = morphology.CROSS if structure is None else structure
    ci, cj = s.shape[0] // 2, s.shape[1] // 2
    offsets = [(i - ci, j - cj) for i, j in zip(*np.nonzero(s))]
    out = mask.copy()
    for _ in range(iterations):
        if op == "dilate":  # any structure cell lands on a True cell
            out = np.logical_or.reduce([_shifted(out, di, dj) for di, dj in offsets])
        else:  # every structure cell lies on a True cell inside the array
            out = np.logical_and.reduce([_shifted(out, -di, -dj) for di, dj in offsets])
    return out


@pytest.mark.parametrize("k", range(len(STRUCTURES)))
def test_dilate_erode_close_equal_the_definition_on_every_size(k: int) -> None:
    rng = np.random.default_rng(k)
    structure = STRUCTURES[k]
    for _ in range(60):
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        grid = rng.random((h + 3, w + 5)) < rng.uniform(0.05, 0.9)
        mask = grid[1:1 + h, 2:2 + w]  # a view, as the callers pass windows of the map
        it = int(rng.integers(1, 6))
        dilated = _reference(mask, structure, it, "dilate")
        assert np.array_equal(morphology.dilate(mask, structure, it), dilated)
        assert np.array_equal(morphology.erode(mask, structure, it), _reference(mask, structure, it, "erode"))
        assert np.array_equal(morphology.close(mask, structure, it), _reference(dilated, structure, it, "erode"))


@pytest.mark.parametrize("k", range(len(STRUCTURES)))
def test_dilate_erode_close_equal_scipy(k: int) -> None:
    rng = np.random.default_rng(100 + k)
    structure = STRUCTURES[k]
    for _ in range(40):
        h, w = (int(v) for v in rng.integers(11, 80, 2))
        mask = rng.random((h, w)) < rng.uniform(0.02, 0.95)
        it = int(rng.integers(1, 10))
        for ours, theirs in ((morphology.dilate, ndimage.binary_dilation), (morphology.erode, ndimage.binary_erosion),
                             (morphology.close, ndimage.binary_closing)):
            got = ours(mask, structure, it)
            assert got.dtype == bool and got.shape == mask.shape
            assert np.array_equal(got, theirs(mask, structure=structure, iterations=it)), (ours.__name__, h, w, it)


def test_the_input_is_left_as_it_was_and_empty_grids_pass_through() -> None:
    mask = np.zeros((9, 9), dtype=bool)
    mask[4, 4] = True
    before = mask.copy()
    assert morphology.dilate(mask, _disc(2)).sum() == _disc(2).sum()
    assert np.array_equal(mask, before)
    assert morphology.erode(np.zeros((0, 4), dtype=bool)).shape == (0, 4)


def test_structures_it_cannot_mean_the_same_by_are_refused() -> None:
    with pytest.raises(ValueError, match="odd"):
        morphology.dilate(np.ones((5, 5), dtype=bool), np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="symmetric"):
        morphology.dilate(np.ones((5, 5), dtype=bool), np.array([[1, 1, 0]], dtype=bool))
    with pytest.raises(ValueError, match="2-D"):
        morphology.erode(np.ones(5, dtype=bool))


def test_the_frontier_is_kept_until_the_map_changes() -> None:
    """``OccupancyMap.frontier`` answers from its last computation while neither the free grid
    nor the map's version changed, and computes anew when either does."""
    m = OccupancyMap((0.0, 0.0), OccupancyConfig(size=12.0))
    i, j = m.cell(0.0, 0.0)
    m.floor[i - 30:i + 30, j - 30:j + 30] = True
    m.obstacle[i - 30:i + 30, j + 29] = True
    first = m.frontier()
    assert first and m.frontier() == first
    calls: list[int] = []
    real = m._frontier_uncached
    m._frontier_uncached = lambda *a: calls.append(1) or real(*a)  # type: ignore[method-assign]
    assert m.frontier() == first and not calls  # same map: no recomputation
    m.clear_around(0.0, 0.0, 0.3)  # a new version and a new free grid
    m.frontier()
    assert calls == [1]
    m.floor[i - 30:i + 30, j - 60:j - 30] = True  # written behind the map's back: ...
    m._grid = None  # ... a new free grid is what tells the cache (as every map update makes one)
    assert m.frontier() != first and calls == [1, 1]
