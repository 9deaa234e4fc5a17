"""The agent's free grid is computed on the window around what it has observed (issue 27: the
whole 48 m map cost 16 ms a call, a hundred calls an episode); the result must be the very array
the whole-map computation gives, wherever the observed cells lie (near the map's edge too)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from planner.occupancy import OccupancyConfig, OccupancyMap


def _whole_map(occ: OccupancyMap) -> np.ndarray:
    """The free grid as computed before the window (the reference)."""
    blocked = ndimage.binary_dilation(occ.obstacle, structure=occ._disc)
    doorway = occ.wall & ~occ.obstacle
    known = ndimage.binary_closing(occ.floor | doorway, iterations=3) | occ.stood
    near_body = ndimage.binary_dilation(occ.stood, iterations=int(0.45 / occ.config.resolution))
    return ((known | near_body) & ~blocked) | occ.centers


@pytest.mark.parametrize("seed", range(6))
def test_the_window_gives_the_whole_maps_free_grid(seed: int) -> None:
    rng = np.random.default_rng(seed)
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=12.0))
    n = occ.n
    # a blob of observations somewhere, at the map's edge for some seeds
    ci, cj = (rng.integers(0, n), rng.integers(0, n)) if seed % 2 else (rng.integers(0, 20), n - rng.integers(1, 20))
    span = int(rng.integers(5, 60))
    sl = (slice(max(ci - span, 0), min(ci + span, n)), slice(max(cj - span, 0), min(cj + span, n)))
    for layer, p in ((occ.floor, 0.6), (occ.obstacle, 0.05), (occ.wall, 0.03), (occ.stood, 0.01), (occ.centers, 0.005)):
        layer[sl] = rng.random(layer[sl].shape) < p
    assert np.array_equal(occ.free_grid().mask, _whole_map(occ))


def test_an_empty_map_has_no_free_cell() -> None:
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=12.0))
    assert not occ.free_grid().mask.any() and occ.free_grid().mask.shape == (occ.n, occ.n)
