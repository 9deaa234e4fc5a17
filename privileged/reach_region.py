"""Where the agent can stand to act on an object, and how far it has to walk to get there.

Both are computed on the simulator's conservative free-space grid (privileged): the region is
the free floor, in the object's own room and connected to the agent, within reach of the
object's box; the walking distance to it is a geodesic field that guides the lattice search.
Derived grids (component labels, room labels) are cached per free grid here, the heuristic's
coarse graph in ``planner.geodesic``.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from matplotlib.path import Path as MplPath
from scipy import ndimage

from planner.geodesic import walking_distance_to  # noqa: F401  (re-exported for the oracle)
from household.free_grid import FreeGrid
from sim_bridge.embedded.collision import CollisionMap
from sim_bridge.embedded.env import EmbeddedEnvironment
from sim_bridge.embedded.objects import SimObject, upright_distances


def _components(mask: np.ndarray) -> np.ndarray:
    """4-connected component labels of a boolean grid (0 = blocked), cached per grid."""
    cached = _CACHE.get("labels")
    if cached is not None and cached[0] is mask:
        return cached[1]
    labels, _ = ndimage.label(mask)
    _CACHE["labels"] = (mask, labels)
    return labels


def _room_labels(grid: FreeGrid, collision: CollisionMap) -> np.ndarray:
    """Room id per free-grid cell ('' outside every room)."""
    cached = _CACHE.get("rooms")
    if cached is not None and cached[0] is grid.mask:
        return cached[1]
    xs = grid.x0 + grid.resolution * np.arange(grid.mask.shape[0])
    zs = grid.z0 + grid.resolution * np.arange(grid.mask.shape[1])
    gx, gz = np.meshgrid(xs, zs, indexing="ij")
    pts = np.stack([gx.ravel(), gz.ravel()], axis=1)
    labels: np.ndarray = np.full(len(pts), "", dtype=object)
    for room in collision.layout.rooms:
        inside = MplPath(np.array(room.polygon)).contains_points(pts)
        labels[inside & (labels == "")] = room.id
    labels = labels.reshape(grid.mask.shape)
    _CACHE["rooms"] = (grid.mask, labels)
    return labels


# Data derived from the current free grid (component labels, room labels): one
# entry per kind, tagged with the grid mask it was built from and rebuilt when the grid changes.
_CACHE: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def reachable_region(env: EmbeddedEnvironment, obj: SimObject, grid: FreeGrid, reach: float) -> np.ndarray | None:
    """Free floor cells, connected to the agent, within the simulator's interaction range of the
    object (None if there are none): saves a full lattice search for objects that cannot be
    reached at all, and seeds the walking-distance heuristic."""
    mask = grid.mask
    # Only a window around the object can be within reach: keeps this to a few ms.
    span = reach + float(np.linalg.norm(obj.size)) / 2.0
    c = obj.position
    i0 = max(int((c[0] - span - grid.x0) / grid.resolution), 0)
    i1 = min(int((c[0] + span - grid.x0) / grid.resolution) + 2, mask.shape[0])
    j0 = max(int((c[2] - span - grid.z0) / grid.resolution), 0)
    j1 = min(int((c[2] + span - grid.z0) / grid.resolution) + 2, mask.shape[1])
    xs = grid.x0 + grid.resolution * np.arange(i0, i1)
    zs = grid.z0 + grid.resolution * np.arange(j0, j1)
    gx, gz = np.meshgrid(xs, zs, indexing="ij")
    # THOR's range: from the agent's upright capsule to the nearest box of the body (one, or the
    # runs of an L or C counter); the same for a crouched camera, which only changes what is seen.
    lo, hi = env.range_span()
    dist = upright_distances(obj, np.stack([gx.ravel(), gz.ravel()], axis=1), lo, hi)
    near = np.zeros_like(mask)
    near[i0:i1, j0:j1] = dist.reshape(len(xs), len(zs)) <= reach
    near &= mask
    # Only floor in the object's own room: through a wall an object is near but never seen,
    # and counting such floor would make the heuristic lure the search to the wrong side.
    collision = cast(CollisionMap, env.collision)  # the env was reset (grid is its free grid)
    room = collision.room_at(float(obj.position[0]), float(obj.position[2]))
    if room is not None:
        near &= (_room_labels(grid, collision) == room)
    if not near.any():
        return None
    labels = _components(mask)
    i = int(round((env.pose.x - grid.x0) / grid.resolution))
    j = int(round((env.pose.z - grid.z0) / grid.resolution))
    if not (0 <= i < mask.shape[0] and 0 <= j < mask.shape[1]) or labels[i, j] == 0:
        return near  # the start is off the conservative grid: let the search decide
    connected = near & (labels == labels[i, j])
    return connected if connected.any() else None
