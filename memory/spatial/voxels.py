"""The sparse voxel map and the spatial half of the dual index: object <-> voxels.

A voxel may hold several objects (an apple's lowest voxel is also the table top's), so the map
stores (object, voxel) pairs. Each pair is kept twice as a sorted int64 code - object-major
``(obj << 45) | voxel`` and voxel-major ``(voxel << 18) | obj`` - so both "the voxels of object
j" and "the objects in these voxels" are contiguous slices found with ``np.searchsorted``, and a
frame's update is a few vectorised merges instead of per-voxel dictionary work. Both arrays hold
exactly the same pairs; every mutation goes through one method that updates both.

Each pair carries a hit count (saturating at ``max_hits``): observing the voxel raises it, seeing
through the voxel (depth beyond it) lowers it, and a pair at zero is removed. An object observed
many times therefore needs several contradicting frames before its voxels go: one noisy frame
does not erase furniture.
"""

from __future__ import annotations

import numpy as np

from perception.backproject import KEY_BITS, sorted_unique

VOXEL_BITS = 3 * KEY_BITS  # 45
OBJ_BITS = 63 - VOXEL_BITS  # 18
MAX_OBJECTS = 1 << OBJ_BITS
VOXEL_MASK = (1 << VOXEL_BITS) - 1
OBJ_MASK = (1 << OBJ_BITS) - 1


def _insert_sorted(base: np.ndarray, new_sorted: np.ndarray) -> np.ndarray:
    return np.insert(base, np.searchsorted(base, new_sorted), new_sorted)


class VoxelIndex:
    """(object, voxel) pairs with hit counts, indexed both ways."""

    def __init__(self, max_hits: int = 3) -> None:
        if not 1 <= max_hits <= 127:
            raise ValueError(f"max_hits must be in 1..127, got {max_hits}")
        self.max_hits = int(max_hits)
        self.by_object = np.zeros(0, dtype=np.int64)
        self.hits = np.zeros(0, dtype=np.int8)  # aligned with by_object
        self.by_voxel = np.zeros(0, dtype=np.int64)

    # ---- reading -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.by_object)

    def voxels_of(self, obj: int) -> np.ndarray:
        """Sorted voxel keys of one object."""
        lo, hi = np.searchsorted(self.by_object, [obj << VOXEL_BITS, (obj + 1) << VOXEL_BITS])
        return self.by_object[lo:hi] & VOXEL_MASK

    def voxels_of_many(self, objs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(object, voxel key) of every pair of the given objects, object by object."""
        obj, keys, _ = self.pairs_of_many(objs)
        return obj, keys

    def pairs_of_many(self, objs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(object, voxel key, hit count) of every pair of the given objects, object by object
        (the counts read where the pairs lie, not looked up again as ``hits_of`` does)."""
        objs = np.asarray(objs, dtype=np.int64)
        lo = np.searchsorted(self.by_object, objs << VOXEL_BITS)
        hi = np.searchsorted(self.by_object, (objs + 1) << VOXEL_BITS)
        idx = _ranges(lo, hi)
        codes = self.by_object[idx]
        return codes >> VOXEL_BITS, codes & VOXEL_MASK, self.hits[idx]

    def counts(self, n_objects: int) -> np.ndarray:
        """Voxel count per object 0..n_objects-1."""
        return np.bincount(self.by_object >> VOXEL_BITS, minlength=n_objects)[:n_objects]

    def objects_at(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For query voxels ``keys``: (query position, object) of every object found there."""
        keys = np.asarray(keys, dtype=np.int64)
        lo = np.searchsorted(self.by_voxel, keys << OBJ_BITS)
        hi = np.searchsorted(self.by_voxel, (keys + 1) << OBJ_BITS)
        n = hi - lo
        idx = _ranges(lo, hi)
        return np.repeat(np.arange(len(keys)), n), self.by_voxel[idx] & OBJ_MASK

    def hits_of(self, objs: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Hit counts of existing (object, voxel) pairs (0 where the pair does not exist)."""
        codes = (np.asarray(objs, np.int64) << VOXEL_BITS) | np.asarray(keys, np.int64)
        pos = np.minimum(np.searchsorted(self.by_object, codes), max(len(self.by_object) - 1, 0))
        found = self.by_object[pos] == codes if len(self.by_object) else np.zeros(len(codes), bool)
        return np.where(found, self.hits[pos] if len(self.hits) else 0, 0).astype(np.int8)

    # ---- writing -------------------------------------------------------------------------
    def observe(self, objs: np.ndarray, keys: np.ndarray) -> None:
        """Record one observation of (object, voxel) pairs: +1 hit (saturating), new pairs at 1."""
        codes = sorted_unique((np.asarray(objs, np.int64) << VOXEL_BITS) | np.asarray(keys, np.int64))
        if len(codes) == 0:
            return
        pos = np.searchsorted(self.by_object, codes)
        inside = pos < len(self.by_object)
        found = np.zeros(len(codes), dtype=bool)
        found[inside] = self.by_object[pos[inside]] == codes[inside]
        hp = pos[found]
        self.hits[hp] = np.minimum(self.hits[hp].astype(np.int16) + 1, self.max_hits).astype(np.int8)
        new = codes[~found]
        if len(new):
            at = pos[~found]  # where the new codes go: the search above, on the same array
            self.by_object = np.insert(self.by_object, at, new)
            self.hits = np.insert(self.hits, at, np.int8(1))
            self.by_voxel = _insert_sorted(self.by_voxel, np.sort(_swap(new)))

    def weaken(self, objs: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """-1 hit for existing pairs (each pair once); pairs reaching 0 are removed. Returns the
        objects that lost at least one voxel."""
        codes = sorted_unique((np.asarray(objs, np.int64) << VOXEL_BITS) | np.asarray(keys, np.int64))
        if len(codes) == 0 or len(self.by_object) == 0:
            return np.zeros(0, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.by_object, codes), len(self.by_object) - 1)
        pos = pos[self.by_object[pos] == codes]
        self.hits[pos] -= 1
        gone = pos[self.hits[pos] <= 0]
        if len(gone) == 0:
            return np.zeros(0, dtype=np.int64)
        removed = self.by_object[gone]
        self._remove_positions(gone, removed)
        return sorted_unique(removed >> VOXEL_BITS)

    def remove_objects(self, objs: np.ndarray) -> None:
        """Drop every pair of the given objects (retired or merged away)."""
        objs = np.asarray(objs, dtype=np.int64)
        lo = np.searchsorted(self.by_object, objs << VOXEL_BITS)
        hi = np.searchsorted(self.by_object, (objs + 1) << VOXEL_BITS)
        gone = _ranges(lo, hi)
        if len(gone):
            self._remove_positions(gone, self.by_object[gone])

    def merge_object(self, src: int, dst: int) -> None:
        """Move all of src's pairs to dst; where both had the voxel, keep the larger hit count."""
        lo, hi = np.searchsorted(self.by_object, [src << VOXEL_BITS, (src + 1) << VOXEL_BITS])
        keys = self.by_object[lo:hi] & VOXEL_MASK
        hits = self.hits[lo:hi].copy()
        self.remove_objects(np.array([src]))
        if len(keys) == 0:
            return
        before = self.hits_of(np.full(len(keys), dst), keys)
        self.observe(np.full(len(keys), dst), keys)
        codes = (np.int64(dst) << VOXEL_BITS) | keys
        pos = np.searchsorted(self.by_object, codes)
        self.hits[pos] = np.maximum(before, hits)

    def restore(self, by_object: np.ndarray, hits: np.ndarray) -> None:
        """Load saved pairs (object-major, sorted) and rebuild the voxel-major copy."""
        self.by_object = np.ascontiguousarray(by_object, dtype=np.int64)
        self.hits = np.ascontiguousarray(hits, dtype=np.int8)
        self.by_voxel = np.sort(_swap(self.by_object))

    def _remove_positions(self, positions: np.ndarray, codes: np.ndarray) -> None:
        keep = np.ones(len(self.by_object), dtype=bool)
        keep[positions] = False
        self.by_object = self.by_object[keep]
        self.hits = self.hits[keep]
        vpos = np.searchsorted(self.by_voxel, np.sort(_swap(codes)))
        keep_v = np.ones(len(self.by_voxel), dtype=bool)
        keep_v[vpos] = False
        self.by_voxel = self.by_voxel[keep_v]

    def nbytes(self) -> int:
        return self.by_object.nbytes + self.hits.nbytes + self.by_voxel.nbytes


def _swap(obj_major: np.ndarray) -> np.ndarray:
    """Object-major codes -> voxel-major codes."""
    return ((obj_major & VOXEL_MASK) << OBJ_BITS) | (obj_major >> VOXEL_BITS)


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Concatenation of arange(lo[i], hi[i]) for all i, without a Python loop."""
    n = np.maximum(hi - lo, 0)
    total = int(n.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(lo - np.concatenate([[0], np.cumsum(n)[:-1]]), n)
    return starts + np.arange(total)
