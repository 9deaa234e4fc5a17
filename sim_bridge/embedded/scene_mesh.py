"""Triangle meshes for the embedded simulator's ray caster, in THOR's frame (x, z floor, y up).

The house's static part (floors and walls) is meshed once per house; object boxes are meshed on
every ``set_objects`` call, so that path is fully vectorised (no Python loop per box). Each mesh
carries one colour per triangle, which is all the flat-shaded renderer needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim_bridge.embedded.house_geometry import HouseLayout, Room, WallSegment
from household.types import point_in_polygon

# Muted palettes (RGB uint8); rooms take colours in layout order so a house always looks the same.
WALL_PALETTE = np.array(
    [[196, 186, 168], [170, 184, 196], [190, 176, 186], [176, 192, 170], [200, 194, 160], [168, 172, 190]],
    dtype=np.uint8,
)
FLOOR_PALETTE = np.array(
    [[140, 110, 80], [120, 120, 116], [150, 128, 96], [104, 96, 88], [132, 116, 100], [112, 104, 120]],
    dtype=np.uint8,
)
EXTERIOR_WALL_COLOR = np.array([150, 150, 150], dtype=np.uint8)

# ProcTHOR writes each wall twice, once per room side, on the same plane. Each copy is pushed this
# far into its own room so the first hit from inside a room is that room's wall (a stable colour
# rather than whichever coincident triangle the BVH reports); 2 mm is far below depth noise.
WALL_INSET_M = 0.002

TRIANGLES_PER_BOX = 12
VERTICES_PER_BOX = 8

# Unit cube corners (x, y, z in -0.5..0.5) and its 12 triangles, two per face.
_CUBE_CORNERS = np.array(
    [[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)], dtype=np.float32
)
_CUBE_TRIANGLES = np.array(
    [
        [0, 1, 3], [0, 3, 2],  # -x
        [4, 6, 7], [4, 7, 5],  # +x
        [0, 4, 5], [0, 5, 1],  # -y
        [2, 3, 7], [2, 7, 6],  # +y
        [0, 2, 6], [0, 6, 4],  # -z
        [1, 5, 7], [1, 7, 3],  # +z: the front (objects.py: an asset's local +z is its front)
    ],
    dtype=np.uint32,
)
_FRONT_TRIANGLES = slice(10, 12)
_TOP_TRIANGLES = slice(6, 8)


@dataclass(frozen=True)
class ColoredMesh:
    """Triangles with one RGB colour each (uint8), ready for ``RaycastingScene.add_triangles``."""

    vertices: np.ndarray  # (V, 3) float32, THOR frame
    triangles: np.ndarray  # (T, 3) uint32
    colors: np.ndarray  # (T, 3) uint8


def _cross2(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """z of (a - o) x (b - o): > 0 when o -> a -> b turns counter-clockwise in the (x, z) plane."""
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def _clean_polygon(points: np.ndarray, eps: float = 1e-9) -> list[int]:
    """Indices of the polygon's vertices without repeats and collinear points (ear clipping
    needs strictly convex ears, and ProcTHOR polygons do carry collinear vertices). ``eps`` is
    a cross product in square metres: far below any real room corner."""
    idx = list(range(len(points)))
    changed = True
    while changed and len(idx) > 3:
        changed = False
        for k in range(len(idx)):
            a, b, c = points[idx[k - 1]], points[idx[k]], points[idx[(k + 1) % len(idx)]]
            if abs(_cross2(a, b, c)) <= eps:
                del idx[k]
                changed = True
                break
    return idx


def _in_triangle(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> bool:
    """p inside or on the boundary of the counter-clockwise triangle abc."""
    return _cross2(a, b, p) >= 0.0 and _cross2(b, c, p) >= 0.0 and _cross2(c, a, p) >= 0.0


def triangulate_polygon(polygon: np.ndarray) -> np.ndarray:
    """Ear-clipping triangulation of a simple polygon (any winding, convex or not, e.g. an L).

    Returns (n_tri, 3) indices into ``polygon`` ((n, 2) array), triangles wound counter-clockwise.
    O(n^3) worst case, which is irrelevant for room outlines of a dozen vertices built once.
    """
    pts = np.asarray(polygon, dtype=np.float64)
    idx = _clean_polygon(pts)
    signed_area = sum(_cross2(np.zeros(2), pts[idx[k - 1]], pts[idx[k]]) for k in range(len(idx)))
    if signed_area < 0:
        idx.reverse()
    tris: list[tuple[int, int, int]] = []
    while len(idx) > 3:
        best_k, best_turn = -1, 0.0
        for k in range(len(idx)):
            i0, i1, i2 = idx[k - 1], idx[k], idx[(k + 1) % len(idx)]
            a, b, c = pts[i0], pts[i1], pts[i2]
            turn = _cross2(a, b, c)
            if turn <= 0.0:
                continue  # reflex vertex: never an ear
            if turn > best_turn:
                best_k, best_turn = k, turn  # fallback if rounding leaves no clean ear
            if not any(_in_triangle(pts[j], a, b, c) for j in idx if j not in (i0, i1, i2)):
                best_k = k
                break
        if best_k < 0:  # only reflex/collinear vertices left: a degenerate remainder
            break
        tris.append((idx[best_k - 1], idx[best_k], idx[(best_k + 1) % len(idx)]))
        del idx[best_k]
    if len(idx) == 3:
        tris.append((idx[0], idx[1], idx[2]))
    return np.array(tris, dtype=np.int64).reshape(-1, 3)


def wall_solid_rectangles(wall: WallSegment) -> list[tuple[float, float, float, float]]:
    """The wall minus its holes, as (s0, s1, y0, y1) rectangles (s along the wall from p0).

    The wall is cut into columns at every hole edge; within a column the holes that span it are
    removed from [0, height]. This handles doors, windows, and several holes per wall.
    """
    if wall.empty:  # an open-plan connection: THOR builds no wall there
        return []
    length, height = wall.length, wall.height
    holes = []
    for h in wall.holes:
        s0, s1 = max(0.0, h.s0), min(length, h.s1)
        y0, y1 = max(0.0, h.y0), min(height, h.y1)
        if s1 > s0 and y1 > y0:
            holes.append((s0, s1, y0, y1))
    cuts = sorted({0.0, length, *(h[0] for h in holes), *(h[1] for h in holes)})
    rects: list[tuple[float, float, float, float]] = []
    for a, b in zip(cuts, cuts[1:]):
        if b - a < 1e-6:
            continue
        y = 0.0
        for _, _, y0, y1 in sorted((h for h in holes if h[0] <= a and h[1] >= b), key=lambda h: h[2]):
            if y0 > y:
                rects.append((a, b, y, y0))
            y = max(y, y1)
        if y < height:
            rects.append((a, b, y, height))
    return rects


def _wall_inward_normal(wall: WallSegment, rooms: dict[str, Room]) -> np.ndarray:
    """Unit (x, z) normal pointing into the wall's own room, or zero if that is unknown (exterior
    walls, walls of unknown rooms): those are not inset."""
    room = rooms.get(wall.room_id)
    if room is None or wall.length < 1e-9:
        return np.zeros(2)
    p0, p1 = np.asarray(wall.p0, dtype=float), np.asarray(wall.p1, dtype=float)
    d = (p1 - p0) / wall.length
    n = np.array([-d[1], d[0]])
    mid = 0.5 * (p0 + p1)
    poly = list(room.polygon)
    for sign in (1.0, -1.0):
        probe = mid + sign * 0.05 * n
        if point_in_polygon(float(probe[0]), float(probe[1]), poly):
            return sign * n
    return np.zeros(2)


def build_static_mesh(layout: HouseLayout) -> ColoredMesh:
    """Floors (ear-clipped room polygons at y=0) and walls with door and window holes cut out."""
    verts: list[np.ndarray] = []
    tris: list[np.ndarray] = []
    colors: list[np.ndarray] = []
    n_verts = 0
    room_index = {room.id: i for i, room in enumerate(layout.rooms)}
    rooms = {room.id: room for room in layout.rooms}

    for i, room in enumerate(layout.rooms):
        poly = np.asarray(room.polygon, dtype=np.float64)
        t = triangulate_polygon(poly)
        verts.append(np.column_stack([poly[:, 0], np.zeros(len(poly)), poly[:, 1]]))
        tris.append(t + n_verts)
        colors.append(np.repeat(FLOOR_PALETTE[i % len(FLOOR_PALETTE)][None], len(t), axis=0))
        n_verts += len(poly)

    for wall in layout.walls:
        rects = np.asarray(wall_solid_rectangles(wall), dtype=np.float64).reshape(-1, 4)
        if len(rects) == 0:
            continue
        p0 = np.asarray(wall.p0, dtype=np.float64)
        along = (np.asarray(wall.p1, dtype=np.float64) - p0) / max(wall.length, 1e-12)
        base = p0 + WALL_INSET_M * _wall_inward_normal(wall, rooms)
        # Four corners per rectangle: (s0,y0), (s1,y0), (s1,y1), (s0,y1).
        s = rects[:, [0, 1, 1, 0]]
        y = rects[:, [2, 2, 3, 3]]
        xz = base + s[..., None] * along
        quad = np.stack([xz[..., 0], y, xz[..., 1]], axis=-1).reshape(-1, 3)
        first = n_verts + 4 * np.arange(len(rects))[:, None]
        quad_tris = np.concatenate([first + [0, 1, 2], first + [0, 2, 3]], axis=0)
        verts.append(quad)
        tris.append(quad_tris)
        ri = room_index.get(wall.room_id)
        color = EXTERIOR_WALL_COLOR if ri is None else WALL_PALETTE[ri % len(WALL_PALETTE)]
        colors.append(np.repeat(color[None], len(quad_tris), axis=0))
        n_verts += len(quad)

    return ColoredMesh(
        vertices=np.concatenate(verts).astype(np.float32),
        triangles=np.concatenate(tris).astype(np.uint32),
        colors=np.concatenate(colors).astype(np.uint8),
    )


def yaw_rotation(yaw_deg: np.ndarray | float) -> np.ndarray:
    """(N, 3, 3) rotations about +y (one (3, 3) for a scalar yaw) with THOR's convention: yaw 90
    turns local +z into world +x (and local +x into world -z), i.e. world = R @ local."""
    y = np.radians(np.asarray(yaw_deg, dtype=np.float64))
    c, s = np.cos(y), np.sin(y)
    zero, one = np.zeros_like(y), np.ones_like(y)
    return np.stack(
        [np.stack([c, zero, s], -1), np.stack([zero, one, zero], -1), np.stack([-s, zero, c], -1)], axis=-2
    )


def box_points(centers: np.ndarray, sizes: np.ndarray, yaw_deg: np.ndarray, local_unit: np.ndarray) -> np.ndarray:
    """World positions (N, K, 3) of K points given in unit-box coordinates (-0.5..0.5 per axis)
    on each of N yawed boxes (full extents ``sizes``)."""
    local = local_unit[None, :, :] * np.asarray(sizes, dtype=np.float64)[:, None, :]
    return np.einsum("nij,nkj->nki", yaw_rotation(yaw_deg), local) + np.asarray(centers, dtype=np.float64)[:, None, :]


def build_box_mesh(
    centers: np.ndarray, sizes: np.ndarray, yaw_deg: np.ndarray, open_front: np.ndarray | None = None,
    open_top: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (8N, 3) float32 and triangles (12N, 3) uint32 of N boxes; triangle t belongs to
    box t // TRIANGLES_PER_BOX, which is how hits map back to object indices.

    Boxes flagged in ``open_front`` (open fridges, cabinets) lose their front (local +z) face so
    rays reach what is inside; its two triangles are collapsed to a point rather than removed,
    which keeps the t // 12 mapping (a zero-area triangle is never hit). Boxes flagged in
    ``open_top`` (sinks, bowls, mugs: containers with no lid) lose their top face the same way."""
    n = len(centers)
    verts = box_points(centers, sizes, yaw_deg, _CUBE_CORNERS).reshape(-1, 3).astype(np.float32)
    offsets = (VERTICES_PER_BOX * np.arange(n, dtype=np.uint32))[:, None, None]
    tris = _CUBE_TRIANGLES[None] + offsets
    if open_front is not None:
        opened = np.asarray(open_front, dtype=bool)
        tris[opened, _FRONT_TRIANGLES] = tris[opened, _FRONT_TRIANGLES, :1]
    if open_top is not None:
        lidless = np.asarray(open_top, dtype=bool)
        tris[lidless, _TOP_TRIANGLES] = tris[lidless, _TOP_TRIANGLES, :1]
    return verts, tris.reshape(-1, 3)
