"""One ``Observation`` (RGB-D + instance ids + pose) -> ``FrameObservations``.

The geometry is one vectorised pass over the frame, never a loop over pixels or a full-size
mask per instance: pixels are grouped by instance with a radix argsort of a small int, per-
instance sums are ``np.bincount`` and extremes ``np.minimum.reduceat``, and the distinct
(instance, voxel) pairs come from one ``np.sort`` of packed int64 keys. That is what keeps a
320x240 frame with 30 instances at a few milliseconds on one core. Embeddings are batched: one
encoder call per frame for all crops, one for all labels.

Bad input is refused with ``PerceptionError`` before anything is computed (missing images,
shapes that do not match the intrinsics, a pose that is not rigid); NaN, inf, negative or
out-of-range depth only invalidates those pixels and is reported in ``warnings``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection

import numpy as np

from perception.backproject import KEY_BITS, PixelGrid, check_pose, pack_columns, sorted_unique, voxel_centers, yaw_box
from perception.encoders import Encoders
from perception.mask_edges import drop_depth_outliers
from perception.observations import FrameObservations, ObjectObservation, OrientedBox, PerceptionError
from household.types import Observation

BACKGROUND = -1  # instance_of_pixel: a measured pixel of no object (walls, floor: instance id 0)
UNKNOWN = -2  # no usable depth, or an instance that was filtered out (too small, unlabelled, ignored)
_KEY_MASK = (1 << (3 * KEY_BITS)) - 1


@dataclass
class PerceptionConfig:
    voxel_size: float = 0.05  # must equal the memory's
    min_depth: float = 0.1
    max_depth: float = 10.0  # beyond this, depth is too coarse to place objects
    min_pixels: int = 20  # smaller instances are too few pixels to trust (label or shape)
    crop_margin: int = 4  # pixels of context around a crop
    oriented_boxes: bool = False  # also fit a gravity-aligned yaw box per instance
    ignore_labels: tuple[str, ...] = ()  # e.g. ("Floor", "Wall") for segmenters that label them
    # A learned segmenter's masks are off by a pixel or two: drop mask pixels the depth puts
    # apart from their object (perception/mask_edges.py). Off for exact masks.
    mask_edge_check: bool = False


class Perception:
    """Stateless per frame except for caches keyed by image size and label."""

    def __init__(self, config: PerceptionConfig | None = None, encoders: Encoders | None = None) -> None:
        self.config = config or PerceptionConfig()
        if not self.config.voxel_size > 0:
            raise ValueError(f"voxel_size must be positive, got {self.config.voxel_size}")
        self.encoders = encoders
        self._grid: PixelGrid | None = None
        self._clip_text_cache: dict[str, np.ndarray] = {}

    def _pixel_grid(self, obs: Observation) -> PixelGrid:
        if self._grid is None or self._grid.intrinsics != obs.intrinsics:
            self._grid = PixelGrid(obs.intrinsics)
        return self._grid

    def _validate(self, obs: Observation) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        intr = obs.intrinsics
        shape = (intr.height, intr.width)
        where = f"observation step {obs.step}"
        if obs.depth is None or obs.instance_ids is None:
            raise PerceptionError(f"{where}: depth and instance_ids are required (was rendering switched off?)")
        depth = np.asarray(obs.depth)
        inst = np.asarray(obs.instance_ids)
        if depth.shape != shape:
            raise PerceptionError(f"{where}: depth has shape {depth.shape}, intrinsics say {shape}")
        if inst.shape != shape:
            raise PerceptionError(f"{where}: instance_ids (mask) has shape {inst.shape}, intrinsics say {shape}")
        if not np.issubdtype(depth.dtype, np.floating):
            raise PerceptionError(f"{where}: depth must be float metres, got dtype {depth.dtype}")
        if not np.issubdtype(inst.dtype, np.integer):
            raise PerceptionError(f"{where}: instance_ids must be integers, got dtype {inst.dtype}")
        rgb = None if obs.rgb is None else np.asarray(obs.rgb)
        if rgb is not None and (rgb.shape != shape + (3,) or rgb.dtype != np.uint8):
            raise PerceptionError(f"{where}: rgb must be {shape + (3,)} uint8, got {rgb.shape} {rgb.dtype}")
        pose = check_pose(obs.world_from_camera, f"{where}: world_from_camera")
        return depth, inst, rgb, pose

    def process(self, obs: Observation, ignore_ids: Collection[str] = ()) -> FrameObservations:
        """One observation's objects. ``ignore_ids``: segmenter ids (``InstanceLabel.object_id``)
        to leave out, their pixels unknown rather than background: the object in the robot's
        gripper moves with the camera, so a map must neither store it along the path nor read its
        pixels as space seen empty behind it."""
        cfg = self.config
        depth, inst, rgb, pose = self._validate(obs)
        intr = obs.intrinsics
        height, width = depth.shape
        warnings: list[str] = []
        with np.errstate(invalid="ignore"):
            finite = np.isfinite(depth)
            n_bad = int(depth.size - np.count_nonzero(finite) + np.count_nonzero(depth < 0))
            valid = finite & (depth >= cfg.min_depth) & (depth <= cfg.max_depth)
        if n_bad:
            warnings.append(f"step {obs.step}: {n_bad} depth pixels are NaN, inf or negative; ignored")
        clean_depth = np.where(valid, depth, 0.0).astype(np.float32, copy=False)
        if cfg.mask_edge_check:
            inst = drop_depth_outliers(inst, clean_depth)
        instance_of_pixel = np.full((height, width), UNKNOWN, dtype=np.int32)
        instance_of_pixel[valid & (inst == 0)] = BACKGROUND
        frame = FrameObservations(obs.step, intr, pose, cfg.voxel_size, clean_depth, instance_of_pixel, [], warnings)

        known = np.array(sorted(k for k, lab in obs.id_to_label.items()
                                if lab.object_type not in cfg.ignore_labels and lab.object_id not in ignore_ids),
                         dtype=np.int64)
        # flat pixel indices in raster order; rows and columns from the ones kept (a 2-D
        # np.nonzero is several times slower than a flat one and a division)
        flat = np.flatnonzero(valid & (inst > 0))
        if len(flat) == 0:
            return frame
        ids = inst.reshape(-1)[flat].astype(np.int64)
        pos = np.minimum(np.searchsorted(known, ids), max(len(known) - 1, 0))
        labelled = known[pos] == ids if len(known) else np.zeros(len(ids), dtype=bool)
        if not labelled.all():
            missing = sorted(set(np.unique(ids[~labelled]).tolist()))[:10]
            unlabelled = [m for m in missing if m not in obs.id_to_label]
            if unlabelled:
                warnings.append(f"step {obs.step}: instance ids {unlabelled} have no entry in id_to_label; ignored")
        counts = np.bincount(pos[labelled], minlength=len(known))
        keep_inst = np.flatnonzero(counts >= cfg.min_pixels)
        if len(keep_inst) == 0:
            return frame
        compact = np.full(len(known), -1, dtype=np.int64)
        compact[keep_inst] = np.arange(len(keep_inst))
        k_all = np.where(labelled, compact[pos], -1)
        sel = np.flatnonzero(k_all >= 0)
        flat, k = flat[sel], k_all[sel]
        rows = flat // width
        cols = flat - rows * width
        d = clean_depth.reshape(-1)[flat]
        n_inst = len(keep_inst)
        instance_of_pixel.reshape(-1)[flat] = k

        # world points by column: the voxel keys, sums and extremes read them one axis at a time
        px, py, pz = self._pixel_grid(obs).backproject(rows, cols, d, pose)
        size = np.float32(cfg.voxel_size)
        vx, vy, vz = (np.floor(c / size).astype(np.int64) for c in (px, py, pz))
        keys = pack_columns(vx, vy, vz, f"step {obs.step} points")
        codes = (k << (3 * KEY_BITS)) | keys
        # neighbours along an image row mostly fall in one voxel: drop a code equal to the one
        # before it (raster order) ahead of the sort, which then sorts a fraction of the pixels
        repeat = np.zeros(len(codes), dtype=bool)
        np.equal(codes[1:], codes[:-1], out=repeat[1:])
        pairs = sorted_unique(codes[~repeat])
        pair_inst = pairs >> (3 * KEY_BITS)
        vox_start = np.searchsorted(pair_inst, np.arange(n_inst + 1))
        pair_keys = pairs & _KEY_MASK
        pair_centres = voxel_centers(pair_keys, cfg.voxel_size).astype(np.float32)

        n_pix = np.bincount(k, minlength=n_inst)
        area = np.bincount(k, weights=d.astype(np.float64) ** 2, minlength=n_inst) / (intr.fx * intr.fy)
        mean_depth = np.bincount(k, weights=d, minlength=n_inst) / n_pix
        sums = [np.bincount(k, weights=c, minlength=n_inst) for c in (px, py, pz)]
        centroid = np.stack(sums, axis=1) / n_pix[:, None]
        order = np.argsort(k.astype(np.int16 if n_inst < 32768 else np.int64), kind="stable")
        starts = np.concatenate([[0], np.cumsum(n_pix)[:-1]])
        # a stable sort keeps each instance's pixels in raster order: its first row is its
        # top, its last its bottom
        r_sorted, c_sorted = rows[order], cols[order]
        r0 = r_sorted[starts]
        r1 = r_sorted[starts + n_pix - 1] + 1
        c0 = np.minimum.reduceat(c_sorted, starts)
        c1 = np.maximum.reduceat(c_sorted, starts) + 1
        by_instance = [c[order] for c in (px, py, pz)]
        lo = np.stack([np.minimum.reduceat(c, starts) for c in by_instance], axis=1)
        hi = np.stack([np.maximum.reduceat(c, starts) for c in by_instance], axis=1)

        m = cfg.crop_margin
        for i in range(n_inst):
            raw_id = int(known[keep_inst[i]])
            label = obs.id_to_label[raw_id]
            vk = pair_keys[vox_start[i]:vox_start[i + 1]]
            pts = pair_centres[vox_start[i]:vox_start[i + 1]]
            br0, bc0 = max(int(r0[i]) - m, 0), max(int(c0[i]) - m, 0)
            br1, bc1 = min(int(r1[i]) + m, height), min(int(c1[i]) + m, width)
            obb = None
            if cfg.oriented_boxes:
                centre, extents, yaw = yaw_box(pts)
                obb = OrientedBox(centre, extents + cfg.voxel_size, yaw)
            frame.objects.append(ObjectObservation(
                instance_id=raw_id, label=label.object_type, source_id=label.object_id,
                voxel_keys=vk, points=pts, centroid=centroid[i], aabb_min=lo[i].astype(float),
                aabb_max=hi[i].astype(float), n_pixels=int(n_pix[i]), surface_area=float(area[i]),
                bbox_2d=(br0, bc0, br1, bc1), mask=inst[br0:br1, bc0:bc1] == raw_id,
                touches_border=bool(r0[i] == 0 or c0[i] == 0 or r1[i] == height or c1[i] == width),
                mean_depth=float(mean_depth[i]),
                crop=None if rgb is None else rgb[br0:br1, bc0:bc1], obb=obb))
        if self.encoders is not None:
            self._embed(frame)
        return frame

    def _embed(self, frame: FrameObservations) -> None:
        """One batched call per encoder for the whole frame."""
        objs = frame.objects
        if not objs or self.encoders is None:
            return
        labels = [o.label for o in objs]
        text = self.encoders.text.encode_texts(labels)
        for o, t in zip(objs, text):
            o.text_embedding = t
        clip = self.encoders.clip
        if clip is None:
            return
        missing = sorted({lab for lab in labels if lab not in self._clip_text_cache})
        if missing:
            for lab, vec in zip(missing, clip.encode_texts(missing)):
                self._clip_text_cache[lab] = vec
        with_crop = [o for o in objs if o.crop is not None and o.crop.size]
        crops = [o.crop for o in with_crop if o.crop is not None]
        if not crops:
            frame.warnings.append(f"step {frame.step}: no RGB crops: CLIP image embeddings skipped")
            return
        images = clip.encode_images(crops)
        for o, img in zip(with_crop, images):
            o.image_embedding = img
            o.clip_text_embedding = self._clip_text_cache[o.label]
