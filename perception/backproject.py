"""Pixels <-> optical camera frame <-> REP 103 world, and the voxel keys both perception and
memory share.

Frames (``household.types``): a pixel (u right, v down) at z-depth d is the optical-frame point
((u - cx) / fx * d, (v - cy) / fy * d, d); ``world_from_camera`` maps optical points into the
REP 103 world (x forward, y left, z up). Poses are built and split with transforms3d so the
conventions are a tested library's, and every pose is checked to be rigid before use: a skewed
or scaled matrix would silently bend the whole map.

Voxel keys pack the integer voxel coordinates (floor(p / voxel_size)) into one int64, 15 bits
per axis, so sets of voxels are sorted int64 arrays and set algebra is ``np.sort`` and
``np.searchsorted`` (numpy's ``np.unique`` is several times slower than sort + diff here). The
15-bit range is +-16384 voxels per axis (+-819 m at 5 cm), and the 18 bits left over are what
the memory's voxel index uses for the object number.
"""

from __future__ import annotations

import numpy as np
from transforms3d.affines import compose, decompose

from perception.observations import PerceptionError
from household.frames import is_rigid_transform
from household.types import CameraIntrinsics

KEY_BITS = 15
KEY_MASK = (1 << KEY_BITS) - 1
KEY_OFFSET = 1 << (KEY_BITS - 1)
KEY_LIMIT = KEY_OFFSET - 1  # largest |voxel coordinate| a key can hold


def check_pose(pose: np.ndarray, where: str = "world_from_camera") -> np.ndarray:
    """The pose as a float64 4x4 if it is a rigid transform; PerceptionError otherwise."""
    arr = np.asarray(pose, dtype=float)
    if arr.shape != (4, 4):
        raise PerceptionError(f"{where}: expected a 4x4 matrix, got shape {arr.shape}")
    if not is_rigid_transform(arr):
        raise PerceptionError(f"{where}: not a rigid transform (rotation must be orthonormal with det +1, "
                              f"last row [0, 0, 0, 1], all entries finite)")
    return arr


def pose_from_rt(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """4x4 pose from a 3x3 rotation and a translation (transforms3d's affine compose)."""
    return compose(np.asarray(translation, dtype=float), np.asarray(rotation, dtype=float), np.ones(3))


def split_pose(pose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rotation, translation) of a rigid 4x4 pose; raises if it scales or shears."""
    translation, rotation, zooms, shears = decompose(check_pose(pose))
    if not (np.allclose(zooms, 1.0, atol=1e-6) and np.allclose(shears, 0.0, atol=1e-6)):
        raise PerceptionError(f"pose scales ({zooms}) or shears ({shears}); expected a rigid transform")
    return rotation, translation


def invert_pose(pose: np.ndarray) -> np.ndarray:
    """camera_from_world from world_from_camera (exact for rigid transforms: R^T, -R^T t)."""
    rotation, translation = split_pose(pose)
    return pose_from_rt(rotation.T, -rotation.T @ translation)


def invert_rigid(pose: np.ndarray) -> np.ndarray:
    """``invert_pose`` without the checks, for poses already validated (hot paths)."""
    out = np.eye(4)
    out[:3, :3] = pose[:3, :3].T
    out[:3, 3] = -pose[:3, :3].T @ pose[:3, 3]
    return out


def pixel_to_camera(u: np.ndarray, v: np.ndarray, depth: np.ndarray, intr: CameraIntrinsics) -> np.ndarray:
    """(N, 3) optical-frame points of pixels (u, v) at z-depths ``depth``."""
    d = np.asarray(depth, dtype=float)
    return np.stack([(np.asarray(u) - intr.cx) / intr.fx * d, (np.asarray(v) - intr.cy) / intr.fy * d, d], axis=-1)


def camera_to_world(points_cam: np.ndarray, world_from_camera: np.ndarray) -> np.ndarray:
    """(N, 3) float64 world points of optical-frame points (one BLAS matmul: for the planner's
    maps, where exactness across runs matters more than the last millisecond)."""
    return points_cam @ world_from_camera[:3, :3].T + world_from_camera[:3, 3]


def backproject_pixels(u: np.ndarray, v: np.ndarray, depth: np.ndarray, intr: CameraIntrinsics,
                       world_from_camera: np.ndarray) -> np.ndarray:
    """(N, 3) world points (ROS frame) of pixels (u, v) at z-depths ``depth``: the one
    back-projection the occupancy map and the object memory share."""
    return camera_to_world(pixel_to_camera(u, v, depth, intr), world_from_camera)


def camera_to_pixel(points_cam: np.ndarray, intr: CameraIntrinsics) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(u, v, z) of optical-frame points; u, v are meaningless where z <= 0 (check z)."""
    p = np.asarray(points_cam, dtype=float).reshape(-1, 3)
    z = p[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = intr.fx * p[:, 0] / z + intr.cx
        v = intr.fy * p[:, 1] / z + intr.cy
    return u, v, z


def transform_points(pose: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Apply a 4x4 pose to (N, 3) points (written out, not through a BLAS matmul, so one
    frame's work stays on one core). Each output column is ((x r0 + y r1) + z r2) + t on
    contiguous copies of the input columns: the same operations in the same order as the
    broadcast (N, 1) x (3,) form it replaced, so the same bits, at a seventh of the time for
    float32 (the broadcasts walked the (N, 3) array by strides, four times)."""
    p = np.asarray(points)
    out = np.empty((len(p), 3), dtype=np.result_type(p.dtype, np.float32 if p.dtype == np.float32 else np.float64))
    for j, col in enumerate(transform_columns(pose, *(np.ascontiguousarray(p[:, k]) for k in range(3)))):
        out[:, j] = col
    return out


def transform_columns(pose: np.ndarray, x: np.ndarray, y: np.ndarray, z: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``transform_points`` on points given as three 1-D columns, returning three columns: the
    same operations in the same order, so the same bits, for callers that read the result by
    column (no (N, 3) array built or scattered into). float32 columns stay float32."""
    r = pose[:3, :3].astype(np.float32 if x.dtype == np.float32 else np.float64)
    t = pose[:3, 3].astype(r.dtype)
    cols = []
    for j in range(3):
        col = x * r[j, 0]
        col += y * r[j, 1]
        col += z * r[j, 2]
        col += t[j]
        cols.append(col)
    return cols[0], cols[1], cols[2]


def world_to_pixel(points_world: np.ndarray, intr: CameraIntrinsics, world_from_camera: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(u, v, z-depth) of world points seen by a camera at ``world_from_camera``."""
    return camera_to_pixel(transform_points(invert_pose(world_from_camera), points_world), intr)


class PixelGrid:
    """Per-column x/fx and per-row y/fy factors of one image size, cached so a frame's
    back-projection is two broadcasts and a multiply."""

    def __init__(self, intr: CameraIntrinsics) -> None:
        self.intrinsics = intr
        self.x_of_u = ((np.arange(intr.width) - intr.cx) / intr.fx).astype(np.float32)
        self.y_of_v = ((np.arange(intr.height) - intr.cy) / intr.fy).astype(np.float32)

    def backproject(self, rows: np.ndarray, cols: np.ndarray, depth: np.ndarray, pose: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """float32 world x, y and z columns of the pixels (rows, cols) with z-depths ``depth``
        (columns: what perception reads them by; the values of ``transform_points`` on them)."""
        d = depth.astype(np.float32, copy=False)
        return transform_columns(pose.astype(np.float32), self.x_of_u[cols] * d, self.y_of_v[rows] * d, d)


def voxel_coords(points: np.ndarray, voxel_size: float) -> np.ndarray:
    """(N, 3) int64 voxel coordinates floor(p / voxel_size)."""
    return np.floor(np.asarray(points) / voxel_size).astype(np.int64)


def pack_coords(coords: np.ndarray, where: str = "points") -> np.ndarray:
    """(N, 3) int voxel coordinates -> (N,) int64 keys; raises when out of the key range."""
    c = np.asarray(coords, dtype=np.int64).reshape(-1, 3)
    return pack_columns(c[:, 0], c[:, 1], c[:, 2], where)


def pack_columns(x: np.ndarray, y: np.ndarray, z: np.ndarray, where: str = "points") -> np.ndarray:
    """``pack_coords`` on int64 voxel coordinates given as three 1-D columns."""
    cols = (x, y, z)
    if len(x) and (min(int(c.min()) for c in cols) < -KEY_LIMIT or max(int(c.max()) for c in cols) > KEY_LIMIT):
        reach = max(int(np.abs(c).max()) for c in cols)
        raise PerceptionError(f"{where}: voxel coordinates reach {reach}, beyond the key range "
                              f"+-{KEY_LIMIT}; the world frame's origin is too far away for this voxel size")
    keys = (x + KEY_OFFSET) << (2 * KEY_BITS)
    keys |= (y + KEY_OFFSET) << KEY_BITS
    keys |= z + KEY_OFFSET
    return keys


def voxel_keys(points: np.ndarray, voxel_size: float) -> np.ndarray:
    """(N,) int64 keys of the voxels holding (N, 3) points (not deduplicated)."""
    return pack_coords(voxel_coords(points, voxel_size))


def unpack_keys(keys: np.ndarray) -> np.ndarray:
    """(N,) int64 keys -> (N, 3) int64 voxel coordinates."""
    return np.stack(unpack_columns(keys), axis=-1)


def unpack_columns(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``unpack_keys`` as three 1-D int64 columns (x, y, z)."""
    k = np.asarray(keys, dtype=np.int64)
    return (((k >> (2 * KEY_BITS)) & KEY_MASK) - KEY_OFFSET, ((k >> KEY_BITS) & KEY_MASK) - KEY_OFFSET,
            (k & KEY_MASK) - KEY_OFFSET)


def voxel_centers(keys: np.ndarray, voxel_size: float) -> np.ndarray:
    """(N, 3) float64 world centres of voxels."""
    return (unpack_keys(keys) + 0.5) * voxel_size


def voxel_center_columns(keys: np.ndarray, voxel_size: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``voxel_centers`` as three 1-D float64 columns (x, y, z), the same values."""
    x, y, z = unpack_columns(keys)
    return (x + 0.5) * voxel_size, (y + 0.5) * voxel_size, (z + 0.5) * voxel_size


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values of an int array (sort + diff: faster than np.unique here)."""
    s = np.sort(np.asarray(values).ravel())
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def yaw_box(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Gravity-aligned oriented box of (N, 3) points: (centre, extents (length, width, height),
    yaw in radians about +z). The footprint axis comes from the principal direction of the xy
    spread: household objects stand upright, so only their yaw is free, and a full 3D OBB
    (open3d's) tilts on partial views of a single face."""
    p = np.asarray(points, dtype=float).reshape(-1, 3)
    if len(p) == 0:
        raise PerceptionError("yaw_box: no points")
    xy = p[:, :2] - p[:, :2].mean(axis=0)
    cov = xy.T @ xy
    if len(p) > 1 and np.trace(cov) > 0:
        evals, evecs = np.linalg.eigh(cov)
        axis = evecs[:, int(np.argmax(evals))]
    else:
        axis = np.array([1.0, 0.0])
    yaw = float(np.arctan2(axis[1], axis[0]))
    c, s = np.cos(yaw), np.sin(yaw)
    local = np.stack([xy[:, 0] * c + xy[:, 1] * s, -xy[:, 0] * s + xy[:, 1] * c], axis=1)
    lo, hi = local.min(axis=0), local.max(axis=0)
    mid = 0.5 * (lo + hi)
    centre_xy = p[:, :2].mean(axis=0) + np.array([mid[0] * c - mid[1] * s, mid[0] * s + mid[1] * c])
    zlo, zhi = p[:, 2].min(), p[:, 2].max()
    centre = np.array([centre_xy[0], centre_xy[1], 0.5 * (zlo + zhi)])
    return centre, np.array([hi[0] - lo[0], hi[1] - lo[1], zhi - zlo]), yaw
