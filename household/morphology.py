"""Binary morphology on 2-D grids, the same arrays as ``scipy.ndimage``'s, by OpenCV's kernels.

Why: under ``--sensors realistic`` every frame changes the agent's map, so the free grid is
rebuilt on nearly every act, and its dilation by the robot's disc was the largest part of a slow
decision (dev-023-0 at step 1,200, a 363 x 684 cell window: scipy's ``binary_dilation`` by the
11 x 11 disc 13.4 ms, the doorway closing 7.6 ms, the near-body dilation 4.2 ms; OpenCV's
``dilate`` gives the same array in 0.27 ms). scipy tests every structuring element cell at every
pixel; OpenCV runs vectorised row passes.

Each function returns exactly what the scipy call named in its docstring returns, for the
structures used here (odd-sized and symmetric through their centre: a cross, a square, a disc)
and scipy's defaults otherwise (``border_value=0``, origin at the centre): whatever lies outside
the array counts as False, in every iteration. ``tests/test_morphology.py`` checks that on random
grids, views included.
"""

from __future__ import annotations

from typing import Callable

import cv2
import numpy as np

# One thread: these grids take a millisecond or two on one core, and evaluation runs a worker per
# core (OpenCV's default pool would start a thread per core in every worker, as BLAS did: see
# docs/PLATFORM.md, "Numerics on a shared 2-core machine").
cv2.setNumThreads(1)

# scipy's default structuring element in 2-D (``generate_binary_structure(2, 1)``): the cross.
CROSS = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=bool)


def _kernel(structure: np.ndarray | None) -> np.ndarray:
    s = CROSS if structure is None else np.asarray(structure, dtype=bool)
    if s.ndim != 2 or s.shape[0] % 2 == 0 or s.shape[1] % 2 == 0:
        raise ValueError(f"structure must be a 2-D array of odd sides, got shape {s.shape}")
    if not np.array_equal(s, s[::-1, ::-1]):
        # scipy reflects the structure for a dilation; with a symmetric one there is nothing to
        # reflect, so both libraries mean the same set
        raise ValueError("structure must be symmetric through its centre")
    return s.astype(np.uint8)


def _as_u8(mask: np.ndarray) -> np.ndarray:
    m = np.asarray(mask)
    if m.ndim != 2:
        raise ValueError(f"a 2-D grid is expected, got {m.ndim} dimension(s)")
    return np.ascontiguousarray(m, dtype=bool).view(np.uint8)


def _apply(op: Callable[..., np.ndarray], mask: np.ndarray, structure: np.ndarray | None,
           iterations: int) -> np.ndarray:
    """OpenCV's ``op`` (``cv2.dilate`` or ``cv2.erode``) ``iterations`` times, with nothing (0)
    outside the array, as a bool grid."""
    kernel, src = _kernel(structure), _as_u8(mask)
    if src.size == 0 or iterations < 1:
        return src.view(bool).copy()
    return op(src, kernel, iterations=iterations, borderType=cv2.BORDER_CONSTANT, borderValue=0).view(bool)


def dilate(mask: np.ndarray, structure: np.ndarray | None = None, iterations: int = 1) -> np.ndarray:
    """``scipy.ndimage.binary_dilation(mask, structure, iterations)`` (``iterations`` >= 1)."""
    return _apply(cv2.dilate, mask, structure, iterations)


def erode(mask: np.ndarray, structure: np.ndarray | None = None, iterations: int = 1) -> np.ndarray:
    """``scipy.ndimage.binary_erosion(mask, structure, iterations)`` (``iterations`` >= 1): cells
    whose structure reaches past the array's edge are eroded, as scipy's ``border_value=0`` does
    (OpenCV's own default border would keep them)."""
    return _apply(cv2.erode, mask, structure, iterations)


def close(mask: np.ndarray, structure: np.ndarray | None = None, iterations: int = 1) -> np.ndarray:
    """``scipy.ndimage.binary_closing(mask, structure, iterations)``: the dilation, then the
    erosion, each ``iterations`` times, each with nothing outside the array (so a closing can
    open cells at the array's edge, as scipy's does)."""
    return erode(dilate(mask, structure, iterations), structure, iterations)
