"""The spatial memory's per-frame arithmetic against references written from its definitions:
the column forms of the back-projection and voxel helpers give the bits of their (N, 3) forms;
a frame's perceived instances are what per-instance masks over the same points give; the
association's box contact, the voxel index's hit counts and the free-space check for dropped
instances are what their direct forms give. The maps, memory rows and committed results were
all measured with the direct forms, so these equalities are exact, not approximate."""

from __future__ import annotations

import numpy as np
import pytest
from transforms3d.euler import euler2mat

from household.types import ActionFeedback, AgentStatus, CameraIntrinsics, InstanceLabel, Observation
from memory.spatial.association import FrameQuery, candidates
from memory.spatial.freespace import _dropped_nearby
from memory.spatial.voxels import VoxelIndex
from perception.backproject import (
    KEY_LIMIT,
    PixelGrid,
    pack_columns,
    pack_coords,
    pose_from_rt,
    transform_columns,
    transform_points,
    voxel_center_columns,
    voxel_centers,
)
from perception.observations import FrameObservations, PerceptionError
from perception.perceive import UNKNOWN, Perception, PerceptionConfig


def _pose(rng: np.random.Generator) -> np.ndarray:
    return pose_from_rt(euler2mat(*rng.uniform(-np.pi, np.pi, 3)), rng.uniform(-5, 5, 3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_transform_columns_gives_the_bits_of_transform_points(dtype: type) -> None:
    rng = np.random.default_rng(11)
    for n in (0, 1, 9, 4000):
        pose = _pose(rng)
        points = (rng.normal(0, 4, (n, 3)) * (100 if dtype is np.int64 else 1)).astype(dtype)
        want = transform_points(pose, points)
        got = transform_columns(pose, *(np.ascontiguousarray(points[:, k]) for k in range(3)))
        for k in range(3):
            assert got[k].dtype == want.dtype and np.array_equal(got[k], want[:, k])


def test_voxel_center_and_pack_columns_give_the_bits_of_their_row_forms() -> None:
    rng = np.random.default_rng(12)
    coords = rng.integers(-KEY_LIMIT, KEY_LIMIT + 1, size=(3000, 3))
    keys = pack_coords(coords)
    assert np.array_equal(pack_columns(*(np.ascontiguousarray(coords[:, k]) for k in range(3))), keys)
    centres = voxel_centers(keys, 0.05)
    for k, col in enumerate(voxel_center_columns(keys, 0.05)):
        assert col.dtype == np.float64 and np.array_equal(col, centres[:, k])
    for axis in range(3):  # either end of the range, on any axis, names the points
        for bad in (KEY_LIMIT + 1, -KEY_LIMIT - 1):
            cols = [np.zeros(2, dtype=np.int64) for _ in range(3)]
            cols[axis][1] = bad
            with pytest.raises(PerceptionError, match="step 7 points: voxel coordinates reach"):
                pack_columns(*cols, "step 7 points")
    assert len(pack_columns(*(np.zeros(0, dtype=np.int64) for _ in range(3)))) == 0


def _blob_frame(rng: np.random.Generator, h: int = 48, w: int = 64) -> Observation:
    """Random rectangles and discs of instance ids over a noisy depth image with holes, NaNs and
    far pixels; ids 1..6 labelled, id 9 not (a segmenter id with no label)."""
    inst = np.zeros((h, w), dtype=np.int32)
    for i in (1, 2, 3, 4, 5, 6, 9, 2):  # id 2 twice: one instance in two parts
        r0, c0 = rng.integers(0, h - 4), rng.integers(0, w - 4)
        r1, c1 = r0 + rng.integers(2, 20), c0 + rng.integers(2, 24)
        inst[r0:r1, c0:c1] = i
    inst[rng.random((h, w)) < 0.03] = 0  # ragged masks
    depth = rng.uniform(0.3, 6.0, (h, w)).astype(np.float32)
    depth[rng.random((h, w)) < 0.05] = 0.0
    depth[rng.random((h, w)) < 0.01] = np.nan
    depth[rng.random((h, w)) < 0.01] = 12.0  # beyond max_depth
    intr = CameraIntrinsics(width=w, height=h, fx=w / 2.0, fy=w / 2.0, cx=w / 2.0 - 0.5, cy=h / 2.0 - 0.5)
    labels = {i: InstanceLabel(object_id=f"Obj|{i}", object_type=f"Type{i}") for i in range(1, 7)}
    return Observation(step=3, intrinsics=intr, world_from_camera=_pose(rng),
                       agent=AgentStatus(position=(0.0, 0.0, 0.0), yaw_deg=0.0, horizon_deg=0.0),
                       feedback=ActionFeedback(action=None, success=True), depth=depth, instance_ids=inst,
                       id_to_label=labels)


@pytest.mark.parametrize("seed", range(5))
def test_perceived_instances_are_what_per_instance_masks_give(seed: int) -> None:
    """Each instance's pixels, box, extremes, sums and voxel set, from its own mask over the
    frame's valid pixels, against what the one vectorised pass made of the frame."""
    rng = np.random.default_rng(seed)
    obs = _blob_frame(rng)
    cfg = PerceptionConfig(min_pixels=6)
    frame = Perception(cfg).process(obs)
    h, w = obs.depth.shape
    with np.errstate(invalid="ignore"):
        valid = np.isfinite(obs.depth) & (obs.depth >= cfg.min_depth) & (obs.depth <= cfg.max_depth)
    grid = PixelGrid(obs.intrinsics)
    seen = {}
    for raw in sorted(obs.id_to_label):
        rows, cols = np.nonzero(valid & (obs.instance_ids == raw))
        if len(rows) < cfg.min_pixels:
            continue
        d = obs.depth[rows, cols].astype(np.float32)
        cam = np.stack([grid.x_of_u[cols] * d, grid.y_of_v[rows] * d, d], axis=1)
        pts = transform_points(obs.world_from_camera.astype(np.float32), cam)
        keys = np.unique(pack_coords(np.floor(pts / np.float32(cfg.voxel_size)).astype(np.int64)))
        seen[raw] = (rows, cols, pts, keys)
    assert [o.instance_id for o in frame.objects] == sorted(seen)  # the unlabelled id 9 left out
    assert len(seen) >= 3
    m = cfg.crop_margin
    for o in frame.objects:
        rows, cols, pts, keys = seen[o.instance_id]
        assert o.n_pixels == len(rows)
        assert np.array_equal(o.voxel_keys, keys)
        assert np.array_equal(o.aabb_min, pts.min(axis=0).astype(float))
        assert np.array_equal(o.aabb_max, pts.max(axis=0).astype(float))
        sums = [np.bincount(np.zeros(len(pts), dtype=np.int64), weights=pts[:, j])[0] for j in range(3)]
        assert np.array_equal(o.centroid, np.array(sums) / len(rows))
        box = (max(rows.min() - m, 0), max(cols.min() - m, 0), min(rows.max() + 1 + m, h), min(cols.max() + 1 + m, w))
        assert o.bbox_2d == box
        assert o.touches_border == bool(rows.min() == 0 or cols.min() == 0 or rows.max() == h - 1 or cols.max() == w - 1)
        k = frame.objects.index(o)
        assert np.array_equal(np.flatnonzero(frame.instance_of_pixel.ravel() == k), np.sort(rows * w + cols))


def test_pairs_of_many_reads_the_hit_counts_hits_of_looks_up() -> None:
    rng = np.random.default_rng(13)
    vi = VoxelIndex(max_hits=5)
    for _ in range(30):
        n = int(rng.integers(1, 60))
        vi.observe(rng.integers(0, 12, n), rng.integers(0, 400, n))
    objs = np.array([0, 3, 4, 7, 11, 15])  # 15: never observed
    obj, keys, hits = vi.pairs_of_many(objs)
    assert len(obj) > 50 and set(np.unique(hits).tolist()) > {1, 2}
    assert np.array_equal(hits, vi.hits_of(obj, keys))
    assert all(np.array_equal(keys[obj == j], vi.voxels_of(int(j))) for j in objs)


def test_association_box_contact_is_the_direct_share_of_voxels_inside() -> None:
    """``near_obs``: the share of an observation's voxel centres inside the object's box grown
    by the margin, here computed point by point."""
    rng = np.random.default_rng(14)
    n_rows, margin = 12, 0.075
    row_min = rng.uniform(-1, 1, (n_rows, 3))
    row_max = row_min + rng.uniform(0.05, 0.8, (n_rows, 3))
    vi = VoxelIndex()
    sizes = rng.integers(1, 40, 6)
    centres = rng.uniform(-1, 1.5, (int(sizes.sum()), 3))
    keys = pack_coords(np.floor(centres / 0.05).astype(np.int64))
    starts = np.concatenate([[0], np.cumsum(sizes)])
    lo = np.stack([centres[a:b].min(axis=0) for a, b in zip(starts[:-1], starts[1:])])
    hi = np.stack([centres[a:b].max(axis=0) for a, b in zip(starts[:-1], starts[1:])])
    fq = FrameQuery(keys=keys, centers=centres, starts=starts, aabb_min=lo, aabb_max=hi,
                    label_ids=np.zeros(6, dtype=np.int64), text=np.ones((6, 4)) / 2, clip=None)
    c = candidates(fq, vi, np.arange(n_rows), row_min, row_max, np.ones(n_rows), np.zeros((n_rows, 2), dtype=np.int64),
                   np.ones((n_rows, 2)), np.ones((n_rows, 4)) / 2, None, None, margin, 0.2)
    assert len(c.obs) >= 6
    for o, j, near in zip(c.obs, c.row, c.near_obs):
        pts = centres[starts[o]:starts[o + 1]]
        inside = np.all((pts >= row_min[j] - margin) & (pts <= row_max[j] + margin), axis=1)
        assert near == inside.sum() / len(pts)
    assert 0 < (c.near_obs > 0).sum() < len(c.obs) or (c.near_obs > 0).all()


def _dropped_reference(frame: FrameObservations, cand: np.ndarray, ui: np.ndarray, vi: np.ndarray, z: np.ndarray,
                       m: np.ndarray, voxel_size: float, max_window: int) -> list[int]:
    """The definition: within the voxel's window (clipped to the image), a measured pixel of
    a dropped instance at the voxel's depth."""
    intr = frame.intrinsics
    out = []
    for c in cand:
        r = int(min(np.ceil(0.866 * voxel_size * intr.fx / z[c]), max_window))
        v0, v1 = max(vi[c] - r, 0), min(vi[c] + r, intr.height - 1) + 1
        u0, u1 = max(ui[c] - r, 0), min(ui[c] + r, intr.width - 1) + 1
        d = frame.depth[v0:v1, u0:u1]
        hit = (frame.instance_of_pixel[v0:v1, u0:u1] == UNKNOWN) & (d > 0) & (np.abs(d - z[c]) <= m[c])
        if hit.any():
            out.append(int(c))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_dropped_nearby_finds_what_the_definition_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    h, w = 30, 40
    depth = rng.choice(np.array([0.0, 1.0, 1.5, 2.5, 4.0], dtype=np.float32), size=(h, w))
    instance = rng.choice(np.array([-1, 0, 1, UNKNOWN]), size=(h, w), p=[0.4, 0.3, 0.2, 0.1]).astype(np.int32)
    if seed == 5:
        instance[instance == UNKNOWN] = -1  # no dropped instance anywhere: nothing is excused
    intr = CameraIntrinsics(width=w, height=h, fx=w / 2.0, fy=w / 2.0, cx=w / 2.0, cy=h / 2.0)
    frame = FrameObservations(step=0, intrinsics=intr, world_from_camera=np.eye(4), voxel_size=0.05,
                              depth=depth, instance_of_pixel=instance)
    n = 300
    ui, vi = rng.integers(0, w, n), rng.integers(0, h, n)
    z = rng.choice(np.array([0.2, 1.0, 1.5, 2.5, 4.0, 6.0]), n) + rng.normal(0, 0.02, n)
    m = np.full(n, 0.08)
    cand = np.sort(rng.choice(n, 200, replace=False))
    got = _dropped_nearby(frame, cand, ui, vi, z, m, 0.05, 6)
    want = _dropped_reference(frame, cand, ui, vi, z, m, 0.05, 6)
    assert got.tolist() == want
    if seed == 5:
        assert want == []
    else:
        assert 0 < len(want) < len(cand)
