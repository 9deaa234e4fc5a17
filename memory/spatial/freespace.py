"""Seeing where objects are *not*: a frame's depth and instance images judge every stored voxel
that falls in view.

Each stored voxel of an object in the view frustum is projected into the frame and its depth z
compared with the measured depth D at that pixel (margin m = ``margin + margin_per_m * z``):
- D < z - m: something is in front of it: occluded, no evidence;
- D > z + m: the ray passed through the voxel: *seen through* - the voxel is empty;
- |D - z| <= m on a pixel of this very object: present;
- |D - z| <= m on a pixel of the background (walls, floor) or of another object this frame
  associated: another surface is where the object was: absent (an apple taken off a table
  leaves table top at the apple's lowest voxels, so "seen through" alone misses small things);
- on an unknown pixel (no depth, or an instance perception dropped): no evidence.
An object whose judged voxels are mostly absent, in a frame where it was not itself observed and
where it would have covered enough pixels to be detected, collects one absence; ``absent_frames``
of them retire it (memory.py). Voxels of objects that *were* observed this frame but are seen
through are weakened one hit (voxels.py), so an object nudged a few centimetres sheds its old
voxels instead of stretching.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perception.backproject import invert_pose, transform_points, voxel_centers
from perception.observations import FrameObservations
from perception.perceive import BACKGROUND
from memory.spatial.voxels import VoxelIndex


@dataclass
class FreeSpaceConfig:
    margin: float = 0.1  # metres; about two 5 cm voxels (a voxel centre is up to 4.3 cm off its surface)
    margin_per_m: float = 0.01  # depth noise grows with range
    min_depth: float = 0.2
    max_depth: float = 6.0  # beyond this a few centimetres of depth error decide nothing
    absent_share: float = 0.6
    min_judged: int = 3  # voxels that must be judged before the object is
    min_expected_pixels: float = 60.0  # an object this small in view may just be missed by the segmenter
    absent_frames: int = 2


@dataclass
class FreeSpaceEvidence:
    rows: np.ndarray  # objects judged
    judged: np.ndarray  # voxels judged per row
    absent: np.ndarray  # of which absent
    expected_pixels: np.ndarray  # pixels the judged voxels would cover
    weaken_rows: np.ndarray  # (row, key) pairs seen through on observed objects
    weaken_keys: np.ndarray


def rows_in_view(frame: FrameObservations, rows: np.ndarray, aabb_min: np.ndarray, aabb_max: np.ndarray,
                 cfg: FreeSpaceConfig) -> np.ndarray:
    """Objects whose bounding sphere reaches into the view frustum and depth range."""
    if len(rows) == 0:
        return rows
    intr = frame.intrinsics
    centre = 0.5 * (aabb_min[rows] + aabb_max[rows])
    radius = 0.5 * np.linalg.norm(aabb_max[rows] - aabb_min[rows], axis=1)
    cam = transform_points(invert_pose(frame.world_from_camera), centre)
    x, y, z = np.abs(cam[:, 0]), np.abs(cam[:, 1]), cam[:, 2]
    tan_h = max(intr.cx, intr.width - 1 - intr.cx) / intr.fx
    tan_v = max(intr.cy, intr.height - 1 - intr.cy) / intr.fy
    sec_h, sec_v = np.sqrt(1 + tan_h ** 2), np.sqrt(1 + tan_v ** 2)
    ok = (z + radius > cfg.min_depth) & (z - radius < cfg.max_depth)
    ok &= (x - tan_h * z <= radius * sec_h) & (y - tan_v * z <= radius * sec_v)
    return rows[ok]


def judge(frame: FrameObservations, voxels: VoxelIndex, rows: np.ndarray, row_of_instance: np.ndarray,
          voxel_size: float, cfg: FreeSpaceConfig) -> FreeSpaceEvidence:
    """Evidence for the given (in-view) rows; ``row_of_instance[k]`` is the object row the
    frame's k-th observation was assigned to."""
    empty = np.zeros(0, dtype=np.int64)
    obj, keys = voxels.voxels_of_many(rows)
    if len(obj) == 0:
        return FreeSpaceEvidence(rows, np.zeros(len(rows), np.int64), np.zeros(len(rows), np.int64),
                                 np.zeros(len(rows)), empty, empty)
    intr = frame.intrinsics
    cam = transform_points(invert_pose(frame.world_from_camera), voxel_centers(keys, voxel_size))
    z = cam[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.rint(intr.fx * cam[:, 0] / z + intr.cx)
        v = np.rint(intr.fy * cam[:, 1] / z + intr.cy)
    inside = (z >= cfg.min_depth) & (z <= cfg.max_depth) & (u >= 0) & (u < intr.width) & (v >= 0) & (v < intr.height)
    sel = np.flatnonzero(inside)
    obj, keys, z = obj[sel], keys[sel], z[sel]
    ui, vi = u[sel].astype(np.int64), v[sel].astype(np.int64)
    d = frame.depth[vi, ui].astype(np.float64)
    inst = frame.instance_of_pixel[vi, ui]
    pix_row = np.where(inst >= 0, row_of_instance[np.maximum(inst, 0)] if len(row_of_instance) else -3, -3)
    m = cfg.margin + cfg.margin_per_m * z
    measured = d > 0
    occluded = measured & (d < z - m)
    through = measured & (d > z + m)
    own = pix_row == obj
    other = (inst == BACKGROUND) | ((pix_row >= 0) & ~own)
    judged = measured & ~occluded & (through | own | other)
    absent = judged & ~own & (through | other)
    where = np.searchsorted(rows, obj) if np.all(rows[:-1] <= rows[1:]) else _position(rows, obj)
    n = len(rows)
    observed = np.isin(obj, row_of_instance[row_of_instance >= 0])
    weaken = through & ~own & observed
    pixel_area = (voxel_size * intr.fx / np.maximum(z, 1e-6)) * (voxel_size * intr.fy / np.maximum(z, 1e-6))
    return FreeSpaceEvidence(
        rows=rows,
        judged=np.bincount(where, weights=judged, minlength=n).astype(np.int64),
        absent=np.bincount(where, weights=absent, minlength=n).astype(np.int64),
        expected_pixels=np.bincount(where, weights=judged * pixel_area, minlength=n),
        weaken_rows=obj[weaken], weaken_keys=keys[weaken])


def _position(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    order = np.argsort(rows)
    return order[np.searchsorted(rows[order], values)]
