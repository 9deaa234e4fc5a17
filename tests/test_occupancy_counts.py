"""The noisy-depth map's per-cell return counts (``OccupancyMap._count``): the sums np.add.at
gives, and the obstacle layer redrawn exactly where this frame's returns fell (by the share rule),
whatever cells the frame touches: none, one, a map corner, cells far apart."""

from __future__ import annotations

import numpy as np

from planner.occupancy import OccupancyConfig, OccupancyMap


def _map() -> OccupancyMap:
    return OccupancyMap((0.0, 0.0), OccupancyConfig(size=6.0, depth_noise_k=0.0036))


def _cells(rng: np.random.Generator, n: int, ci: int, cj: int, spread: int) -> np.ndarray:
    """Up to 300 flat cell indices round (ci, cj), repeats among them, clipped to the map."""
    k = int(rng.integers(0, 300))
    i = np.clip(ci + rng.integers(-spread, spread + 1, k), 0, n - 1)
    j = np.clip(cj + rng.integers(-spread, spread + 1, k), 0, n - 1)
    return i * n + j


def test_counts_are_the_sums_of_the_returns_and_the_obstacle_rule_is_redrawn_where_they_fell() -> None:
    rng = np.random.default_rng(7)
    occ = _map()
    n = occ.n
    floor_hits = np.zeros((n, n), dtype=occ.floor_hits.dtype)
    obstacle_hits = np.zeros((n, n), dtype=occ.obstacle_hits.dtype)
    occ.bumped[5, 5] = True
    for frame in range(40):
        # a frame's returns: a cluster somewhere, with repeats, sometimes spread or at the edges
        ci, cj = rng.integers(0, n, 2)
        spread = int(rng.choice([0, 2, 10, n]))
        fl = _cells(rng, n, ci, cj, spread) if frame % 7 else np.zeros(0, dtype=np.int64)
        ob = _cells(rng, n, ci, cj, spread) if frame % 5 else np.zeros(0, dtype=np.int64)
        if frame == 3:
            fl, ob = np.array([0, n * n - 1]), np.array([n * n - 1, 5 * n + 5])  # corners, the bumped cell
        before = occ.obstacle.copy()
        occ._count(fl, ob)
        np.add.at(floor_hits, np.divmod(fl, n), 1)
        np.add.at(obstacle_hits, np.divmod(ob, n), 1)
        assert np.array_equal(occ.floor_hits, floor_hits) and np.array_equal(occ.obstacle_hits, obstacle_hits)
        fell = np.zeros((n, n), dtype=bool)
        fell[np.divmod(np.concatenate([fl, ob]), n)] = True
        rule = occ.bumped | ((obstacle_hits > 0) & (obstacle_hits >= occ.config.obstacle_share * (obstacle_hits + floor_hits)))
        assert np.array_equal(occ.obstacle[fell], rule[fell])  # redrawn where returns fell
        assert np.array_equal(occ.obstacle[~fell], before[~fell])  # and nowhere else
