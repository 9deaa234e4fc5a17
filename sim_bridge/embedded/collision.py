"""2D collision for a round agent: wall segments (door holes cut out) and object footprints.

The agent is a disc of ``radius`` on the floor plane (THOR x, z). A pose is free when the disc is
inside the house (its centre inside some room polygon), touches no solid wall interval and no
footprint of an object standing on the floor. Everything is arrays so one check costs a few
microseconds of numpy, which keeps the simulator above 1,000 steps/s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.path import Path as MplPath

from sim_bridge.embedded.house_geometry import HouseLayout
from sim_bridge.embedded.objects import SimObject
from household.free_grid import FreeGrid
from household.types import point_in_polygon

# Wall heights probed for solidity: door holes start at the floor, windows higher up.
_PROBE_HEIGHT = 0.3
# Objects whose bottom is above this do not block the agent (paintings, wall shelves).
_MAX_OBSTACLE_BOTTOM = 1.2


@dataclass
class Collision:
    kind: str  # "wall", "object", "outside"
    id: str


class CollisionMap:
    def __init__(self, layout: HouseLayout, radius: float = 0.2) -> None:
        self.radius = radius
        self.layout = layout
        starts, ends, ids = [], [], []
        for wall in layout.walls:
            p0 = np.array(wall.p0)
            d = np.array(wall.p1) - p0
            length = wall.length
            if length <= 0:
                continue
            d /= length
            for s0, s1 in wall.solid_intervals(_PROBE_HEIGHT):
                starts.append(p0 + d * s0)
                ends.append(p0 + d * s1)
                ids.append(wall.id)
        self._a = np.array(starts, dtype=float).reshape(-1, 2)
        self._ab = np.array(ends, dtype=float).reshape(-1, 2) - self._a
        self._ab_len2 = np.maximum((self._ab ** 2).sum(axis=1), 1e-12)
        self._wall_ids = ids
        self._rooms = [(r.id, list(r.polygon)) for r in layout.rooms]
        self._obj_ids: list[str] = []
        self._obj_center = np.zeros((0, 2))
        self._obj_rot = np.zeros((0, 2, 2))
        self._obj_half = np.zeros((0, 2))
        self._grids: dict[float, FreeGrid] = {}

    def set_objects(self, objects: list[SimObject]) -> None:
        """Rebuild the obstacle table from the objects standing on the floor."""
        ids, centers, rots, halves = [], [], [], []
        for obj in objects:
            if not obj.active or obj.is_picked_up or obj.parent is not None or obj.part_of is not None:
                continue
            lo, _ = obj.aabb()
            if lo[1] > _MAX_OBSTACLE_BOTTOM:
                continue
            yaw = np.radians(obj.yaw_deg)
            # columns: world (x, z) directions of the local x and local z axes
            rot = np.array([[np.cos(yaw), np.sin(yaw)], [-np.sin(yaw), np.cos(yaw)]])
            # One footprint per box of the body: a C-shaped counter is three, so the floor
            # inside its bend is free (shapes.py).
            part_centers, part_sizes = obj.local_boxes()
            for pc, ps in zip(part_centers, part_sizes):
                rots.append(rot)
                centers.append((obj.position[0] + rot[0] @ (pc[0], pc[2]), obj.position[2] + rot[1] @ (pc[0], pc[2])))
                halves.append((float(ps[0] / 2.0), float(ps[2] / 2.0)))
                ids.append(obj.id)
        center = np.array(centers, dtype=float).reshape(-1, 2)
        if ids == self._obj_ids and np.array_equal(center, self._obj_center):
            return  # nothing on the floor moved: keep the cached free grid
        self._obj_ids = ids
        self._obj_center = center
        self._obj_rot = np.array(rots, dtype=float).reshape(-1, 2, 2)
        self._obj_half = np.array(halves, dtype=float).reshape(-1, 2)
        self._grids = {}

    def reuse_grids(self, other: "CollisionMap") -> bool:
        """Take ``other``'s cached free grids when it describes exactly the same walls, rooms,
        radius and floor obstacles (a house reset again, as ``worldmind audit houses --act``
        does per object): a free grid costs about a second per house. True when taken."""
        same = (other.radius == self.radius and other._rooms == self._rooms and other._obj_ids == self._obj_ids
                and all(np.array_equal(a, b) for a, b in (
                    (other._a, self._a), (other._ab, self._ab), (other._obj_center, self._obj_center),
                    (other._obj_rot, self._obj_rot), (other._obj_half, self._obj_half))))
        if same:
            self._grids.update(other._grids)
        return same

    def room_at(self, x: float, z: float) -> str | None:
        for rid, poly in self._rooms:
            if point_in_polygon(x, z, poly):
                return rid
        return None

    def wall_clearance(self, x: float, z: float) -> float:
        if len(self._a) == 0:
            return float("inf")
        p = np.array([x, z])
        t = np.clip(((p - self._a) * self._ab).sum(axis=1) / self._ab_len2, 0.0, 1.0)
        closest = self._a + self._ab * t[:, None]
        return float(np.sqrt(((closest - p) ** 2).sum(axis=1)).min())

    def collision(self, x: float, z: float, radius: float | None = None) -> Collision | None:
        """The first thing a disc at (x, z) would hit, or None when the pose is free."""
        r = self.radius if radius is None else radius
        if self.room_at(x, z) is None:
            return Collision("outside", "house")
        p = np.array([x, z])
        if len(self._a):
            t = np.clip(((p - self._a) * self._ab).sum(axis=1) / self._ab_len2, 0.0, 1.0)
            d2 = ((self._a + self._ab * t[:, None] - p) ** 2).sum(axis=1)
            hit = np.flatnonzero(d2 < r * r)
            if len(hit):
                return Collision("wall", self._wall_ids[int(hit[0])])
        if len(self._obj_ids):
            local = np.einsum("kij,ki->kj", self._obj_rot, p - self._obj_center)
            excess = np.maximum(np.abs(local) - self._obj_half, 0.0)
            hit = np.flatnonzero((excess ** 2).sum(axis=1) < r * r)
            if len(hit):
                return Collision("object", self._obj_ids[int(hit[0])])
        return None

    def is_free(self, x: float, z: float, radius: float | None = None) -> bool:
        return self.collision(x, z, radius) is None

    def free_mask(self, xs: np.ndarray, zs: np.ndarray, radius: float | None = None) -> np.ndarray:
        """Vectorised ``is_free`` over many points (same geometry, same answer). Each wall interval
        and footprint is tested only against the points inside its bounding box grown by the
        radius (found through the points sorted by x), not against every point: a house's free
        grid went from every cell against every wall and object (about 3 s a house, paid by the
        oracle on each reset) to the cells near each. The per-pair arithmetic is the same as
        ``free_mask_everywhere``'s, so the answer is the same bit for bit."""
        r = self.radius if radius is None else radius
        px = np.asarray(xs, float).ravel()
        pz = np.asarray(zs, float).ravel()
        free = self._inside_mask(px, pz).ravel()
        order = np.argsort(px, kind="stable")
        sx = px[order]

        def near(lo_x: float, hi_x: float, lo_z: float, hi_z: float) -> np.ndarray:
            """Indices of the still-free points inside the box [lo_x, hi_x] x [lo_z, hi_z]."""
            idx = order[np.searchsorted(sx, lo_x, side="left"):np.searchsorted(sx, hi_x, side="right")]
            z = pz[idx]
            idx = idx[(z >= lo_z) & (z <= hi_z)]
            return idx[free[idx]]

        for k in range(len(self._a)):
            a, ab = self._a[k], self._ab[k]
            lo, hi = np.minimum(a, a + ab) - r, np.maximum(a, a + ab) + r
            idx = near(lo[0], hi[0], lo[1], hi[1])
            if len(idx) == 0:
                continue
            p = np.stack([px[idx], pz[idx]], axis=1)
            t = np.clip(((p - a) * ab).sum(-1) / self._ab_len2[k], 0.0, 1.0)
            d2 = ((a + ab * t[:, None] - p) ** 2).sum(-1)
            free[idx[d2 < r * r]] = False
        for k in range(len(self._obj_ids)):
            c, rot, half = self._obj_center[k], self._obj_rot[k], self._obj_half[k]
            reach = np.abs(rot) @ half + r  # the footprint's world-axis half extents, grown by r
            idx = near(c[0] - reach[0], c[0] + reach[0], c[1] - reach[1], c[1] + reach[1])
            if len(idx) == 0:
                continue
            rel = np.stack([px[idx], pz[idx]], axis=1)[:, None, :] - c
            local = np.einsum("kij,nki->nkj", rot[None], rel)
            excess = np.maximum(np.abs(local) - half, 0.0)
            free[idx[((excess ** 2).sum(-1) < r * r)[:, 0]]] = False
        return free.reshape(np.shape(xs))

    def free_mask_everywhere(self, xs: np.ndarray, zs: np.ndarray, radius: float | None = None,
                             chunk: int = 8192) -> np.ndarray:
        """The reference ``free_mask``: every point against every wall interval and footprint
        (kept for the tests that hold the windowed one to it)."""
        r = self.radius if radius is None else radius
        pts = np.stack([np.asarray(xs, float).ravel(), np.asarray(zs, float).ravel()], axis=1)
        free = self._inside_mask(pts[:, 0], pts[:, 1]).ravel()
        for lo in range(0, len(pts), chunk):
            p = pts[lo:lo + chunk]
            ok = free[lo:lo + chunk]
            if len(self._a):
                t = np.clip(((p[:, None, :] - self._a) * self._ab).sum(-1) / self._ab_len2, 0.0, 1.0)
                d2 = ((self._a + self._ab * t[..., None] - p[:, None, :]) ** 2).sum(-1)
                ok &= (d2 >= r * r).all(axis=1)
            if len(self._obj_ids):
                rel = p[:, None, :] - self._obj_center
                local = np.einsum("kij,nki->nkj", self._obj_rot, rel)
                excess = np.maximum(np.abs(local) - self._obj_half, 0.0)
                ok &= ((excess ** 2).sum(-1) >= r * r).all(axis=1)
            free[lo:lo + chunk] = ok
        return free.reshape(np.shape(xs))

    def _inside_mask(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """Which points lie inside some room (shape of xs)."""
        pts = np.stack([np.asarray(xs, float).ravel(), np.asarray(zs, float).ravel()], axis=1)
        inside = np.zeros(len(pts), dtype=bool)
        for _, poly in self._rooms:
            # Points on a shared room edge belong to both rooms; matplotlib's sign of `radius`
            # grows or shrinks depending on winding, so both are asked.
            path = MplPath(np.array(poly))
            inside |= path.contains_points(pts, radius=1e-6) | path.contains_points(pts, radius=-1e-6)
        return inside.reshape(np.shape(xs))

    def free_grid(self, resolution: float = 0.025) -> "FreeGrid":
        """A conservative raster of free space: a cell is free only if a disc grown by the cell's
        half-diagonal is free at its centre, so every point of a free cell is free exactly."""
        if resolution in self._grids:
            return self._grids[resolution]
        x0, z0, x1, z1 = self.layout.bounds
        xs = np.arange(x0, x1 + resolution, resolution)
        zs = np.arange(z0, z1 + resolution, resolution)
        gx, gz = np.meshgrid(xs, zs, indexing="ij")
        mask = self.free_mask(gx, gz, self.radius + resolution * 0.7072)
        # The inside-the-house test looks at one point: ask it at the cell corners too, so a cell
        # half outside an exterior doorway is not called free.
        half = resolution / 2.0
        for dx, dz in ((-half, -half), (-half, half), (half, -half), (half, half)):
            mask &= self._inside_mask(gx + dx, gz + dz)
        self._grids[resolution] = FreeGrid(x0, z0, resolution, mask)
        return self._grids[resolution]
