"""``memory.spatial.freespace._depth_nearby`` (a voxel with a pixel at its depth near its
projection is no evidence of absence) against a reference written from its definition: one
clipped pixel per offset, every offset of the sparse grid within the voxel's radius."""

from __future__ import annotations

import numpy as np
import pytest

from household.types import CameraIntrinsics
from memory.spatial.freespace import _depth_nearby
from perception.observations import FrameObservations


def _reference(depth: np.ndarray, cand: np.ndarray, ui: np.ndarray, vi: np.ndarray, z: np.ndarray,
               m: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """The definition: offsets 0, 1, then every second pixel up to the radius and the radius
    itself, per axis and sign; an index past the border reads the border pixel."""
    h, w = depth.shape
    out = []
    for c in cand:
        r = int(radius[c])
        steps = {k for k in (0, 1, *range(2, r + 1, 2), r) if k <= r}
        signed = sorted({s * k for k in steps for s in (-1, 1)})
        found = False
        for dv in signed:
            for du in signed:
                d = depth[min(max(vi[c] + dv, 0), h - 1), min(max(ui[c] + du, 0), w - 1)]
                if d > 0 and abs(float(d) - z[c]) <= m[c]:
                    found = True
        if found:
            out.append(c)
    return np.array(sorted(out), dtype=np.int64)


def _frame(depth: np.ndarray) -> FrameObservations:
    h, w = depth.shape
    intr = CameraIntrinsics(width=w, height=h, fx=w / 2.0, fy=w / 2.0, cx=w / 2.0, cy=h / 2.0)
    return FrameObservations(step=0, intrinsics=intr, world_from_camera=np.eye(4), voxel_size=0.05,
                             depth=depth, instance_of_pixel=np.full((h, w), -1, dtype=np.int32))


@pytest.mark.parametrize("seed", range(6))
def test_depth_nearby_finds_what_the_definition_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    h, w = 30, 40
    # A depth image of patches at a few depths, with holes (0: no measurement).
    depth = rng.choice(np.array([0.0, 1.0, 1.5, 2.5, 4.0], dtype=np.float32), size=(h, w)).astype(np.float32)
    n = 200
    ui, vi = rng.integers(0, w, n), rng.integers(0, h, n)  # projections, border pixels included
    z = rng.choice(np.array([1.0, 1.5, 2.0, 2.5, 3.2, 4.0]), n) + rng.normal(0, 0.02, n)
    m = np.full(n, 0.08)
    radius = rng.integers(0, 9, n)  # some voxels have no window at all
    cand = np.sort(rng.choice(n, 120, replace=False))
    got = _depth_nearby(_frame(depth), cand, ui, vi, z, m, radius)
    want = _reference(depth, cand, ui, vi, z, m, radius)
    assert got.tolist() == want.tolist()
    assert 0 < len(want) < len(cand)  # both answers occur, or the comparison says little


def test_depth_nearby_reads_the_border_pixel_past_the_edge() -> None:
    depth = np.zeros((10, 10), dtype=np.float32)
    depth[0, 0] = 2.0  # only the corner pixel at 2 m
    ui, vi = np.array([1, 5]), np.array([1, 5])
    z, m = np.array([2.0, 2.0]), np.array([0.05, 0.05])
    radius = np.array([4, 4])
    # From (1, 1) the offsets -2 and -4 clip onto row 0 and column 0: the corner is found. From
    # (5, 5) the window reaches (1, 1) at most: nothing.
    got = _depth_nearby(_frame(depth), np.array([0, 1]), ui, vi, z, m, radius)
    assert got.tolist() == [0]


def test_no_candidates_or_no_window_finds_nothing() -> None:
    depth = np.ones((5, 5), dtype=np.float32)
    args = (np.array([2]), np.array([2]), np.array([1.0]), np.array([0.1]))
    assert _depth_nearby(_frame(depth), np.zeros(0, dtype=np.int64), *args, np.array([3])).tolist() == []
    assert _depth_nearby(_frame(depth), np.array([0]), *args, np.array([0])).tolist() == []
