"""What perception hands the memory: one ``ObjectObservation`` per instance seen in a frame, and a
``FrameObservations`` that also carries the frame's depth and instance images, because the memory
needs to see *through* the frame too (space observed empty retires objects that moved away).

All positions are REP 103 world coordinates in metres (x forward, y left, z up).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from household.types import CameraIntrinsics


class PerceptionError(ValueError):
    """An observation perception cannot use; the message names the field and what was wrong."""


@dataclass
class OrientedBox:
    """A gravity-aligned box: centre, extents along its own (x, y, z) axes, yaw about +z."""

    center: np.ndarray  # (3,)
    extents: np.ndarray  # (3,) full lengths
    yaw: float  # radians


@dataclass
class ObjectObservation:
    """One instance in one frame.

    ``voxel_keys`` (sorted, distinct) are what association and the voxel map use; ``points`` are
    the same voxels' centres, the voxel-downsampled cloud. ``centroid`` is the mean of all
    back-projected pixels (not quantised). ``surface_area`` is the area the instance shows the
    camera: each pixel counts d^2 / (fx fy) square metres, its footprint perpendicular to the
    ray, so grazing views weigh less, as they should when views are blended.
    ``source_id`` is whatever id the segmenter gave (the simulator's object id); it is kept for
    provenance and debugging and never used to associate.
    """

    instance_id: int
    label: str
    source_id: str
    voxel_keys: np.ndarray  # (V,) int64
    points: np.ndarray  # (V, 3) float32 voxel centres
    centroid: np.ndarray  # (3,) float64
    aabb_min: np.ndarray  # (3,) float64, voxel-cell bounds
    aabb_max: np.ndarray  # (3,)
    n_pixels: int
    surface_area: float  # m^2
    bbox_2d: tuple[int, int, int, int]  # (row0, col0, row1, col1), ends exclusive
    mask: np.ndarray  # (row1 - row0, col1 - col0) bool, the instance inside bbox_2d
    touches_border: bool  # cut by the image edge: a partial view
    mean_depth: float
    crop: np.ndarray | None = None  # (h, w, 3) uint8 RGB inside bbox_2d (a view of the frame)
    obb: OrientedBox | None = None
    image_embedding: np.ndarray | None = None  # (Dc,) float32 unit, CLIP image space
    clip_text_embedding: np.ndarray | None = None  # (Dc,) float32 unit, CLIP text of the label
    text_embedding: np.ndarray | None = None  # (Dt,) float32 unit, label/caption encoder

    def full_mask(self, height: int, width: int) -> np.ndarray:
        """The instance mask at full image size."""
        out = np.zeros((height, width), dtype=bool)
        r0, c0, r1, c1 = self.bbox_2d
        out[r0:r1, c0:c1] = self.mask
        return out


@dataclass
class FrameObservations:
    """Perception's output for one frame. ``depth`` is sanitised (NaN, inf, negative and
    out-of-range values are 0 = no measurement); ``instance_of_pixel`` maps every pixel to the
    index of its entry in ``objects`` or -1 (background, filtered instance, no depth)."""

    step: int
    intrinsics: CameraIntrinsics
    world_from_camera: np.ndarray
    voxel_size: float  # of every ObjectObservation's voxel keys
    depth: np.ndarray  # (H, W) float32
    instance_of_pixel: np.ndarray  # (H, W) int32
    objects: list[ObjectObservation] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
