"""CPU ray-cast renderer of the embedded simulator: RGB, z-depth and instance ids, plus THOR-like
object visibility, on open3d's Embree-backed ``RaycastingScene``.

Frames. Inputs are in THOR's frame (x, z on the floor, y up, left-handed), as the simulator keeps
them. The camera follows THOR: ``yaw_deg`` is ``rotation.y`` (0 faces +z, 90 faces +x) and
``horizon_deg`` is ``cameraHorizon`` (positive looks down). Images use the optical convention of
``household.types`` (u right, v down, row 0 at the top) with ``CameraIntrinsics.from_fov``, so
a pixel (u, v) at depth d is the camera point ((u-cx)/fx*d, (v-cy)/fy*d, d) and
``world_from_camera_thor`` maps it into THOR's frame. Converting to REP 103 is the caller's job.

Speed. Every ray direction is built with a forward component of exactly 1, so Embree's hit
distance *is* the z-depth and no per-pixel division is needed. Static geometry (floors, walls) is
meshed once; ``set_objects`` only re-meshes the boxes (vectorised) and rebuilds the BVH of one
scene. Measured on a 6-room house with 117 boxes, one thread: rebuilding the whole scene costs
~0.5 ms more per set_objects than rebuilding a boxes-only scene, while casting every frame
against a static and a dynamic scene costs ~2.3 ms more (plus merging their answers); frames
outnumber object changes, so one scene wins. All id -> colour and id -> instance mappings are
table lookups indexed by primitive id.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import open3d as o3d

from sim_bridge.embedded.house_geometry import HouseLayout
from sim_bridge.embedded.scene_mesh import TRIANGLES_PER_BOX, box_points, build_box_mesh, build_static_mesh
from household.types import CameraIntrinsics

# Lambert-like shading: ambient + diffuse * |cos(normal, ray)|; abs() because walls and floors
# are single-sided triangles seen from both sides.
AMBIENT = 0.35
DIFFUSE = 0.65
BACKGROUND_RGB = (0, 0, 0)

# open3d marks a miss with INVALID_ID = uint32 max in geometry_ids and primitive_ids; _cast relies
# on that reading as -1 once viewed as int32.
if o3d.t.geometry.RaycastingScene.INVALID_ID != np.iinfo(np.uint32).max:
    raise ImportError("sim_bridge.embedded.render expects open3d's RaycastingScene.INVALID_ID to be uint32 max")


def _tensor(array: np.ndarray) -> o3d.core.Tensor:
    """``o3d.core.Tensor(array)``, with open3d's default dtype and device."""
    # open3d's bundled stubs drop the defaults of dtype and device, so they reject the
    # one-argument form the library accepts (and this module has always used).
    return o3d.core.Tensor(array)  # type: ignore[call-overload]


# Visibility sample points in unit-box coordinates: the centre, the 8 corners and the 6 face
# centres, shrunk into the box so a ray aimed at them must cross this box's own surface (and
# none of a touching neighbour's) before reaching them.
_CORNER_SHRINK = 0.8
_FACE_SHRINK = 0.9
VISIBILITY_SAMPLES_UNIT = np.concatenate(
    [
        np.zeros((1, 3)),
        0.5 * _CORNER_SHRINK * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]),
        0.5 * _FACE_SHRINK * np.vstack([np.eye(3), -np.eye(3)]),
    ]
)


@dataclass
class RenderResult:
    """One rendered frame, all (H, W) images aligned pixel for pixel."""

    rgb: np.ndarray  # (H, W, 3) uint8
    depth: np.ndarray  # (H, W) float32 z-depth in metres along the camera's forward axis; 0 = no hit
    instance: np.ndarray  # (H, W) int32: k + 1 for object index k; 0 for walls, floors, nothing


@dataclass(frozen=True)
class CameraPose:
    """A THOR camera pose as a rotation whose columns are the optical axes in THOR world
    coordinates (right, down, forward) and the camera position."""

    rotation: np.ndarray  # (3, 3) float64: columns right, down, forward
    position: np.ndarray  # (3,) float64

    @classmethod
    def from_thor(cls, position: np.ndarray, yaw_deg: float, horizon_deg: float) -> "CameraPose":
        """Unity's camera rotation Ry(yaw) * Rx(horizon) applied to the axes right (+x),
        up (+y) and forward (+z); positive horizon pitches the forward axis down."""
        yaw, pitch = np.radians(yaw_deg), np.radians(horizon_deg)
        sy, cy, sp, cp = np.sin(yaw), np.cos(yaw), np.sin(pitch), np.cos(pitch)
        right = np.array([cy, 0.0, -sy])
        up = np.array([sp * sy, cp, sp * cy])
        forward = np.array([cp * sy, -sp, cp * cy])
        return cls(np.column_stack([right, -up, forward]), np.asarray(position, dtype=np.float64).reshape(3))

    def matrix(self) -> np.ndarray:
        """4x4 world_from_camera (optical camera frame -> THOR world). Its rotation block has
        determinant -1 because THOR's frame is left-handed and the optical frame right-handed."""
        m = np.eye(4)
        m[:3, :3] = self.rotation
        m[:3, 3] = self.position
        return m


class SceneRenderer:
    """Renders one house (static layout from ``parse_layout``) plus a set of object boxes."""

    def __init__(
        self,
        layout: HouseLayout,
        width: int = 320,
        height: int = 240,
        vertical_fov_deg: float = 90.0,
        nthreads: int = 0,
    ) -> None:
        """Mesh the static house once. ``nthreads`` is passed to Embree for BVH builds and ray
        casts (0 = all cores); the simulator uses 1 so parallel episodes do not oversubscribe."""
        self.layout = layout
        self.intrinsics = CameraIntrinsics.from_fov(width, height, vertical_fov_deg)
        self.nthreads = int(nthreads)
        static = build_static_mesh(layout)
        self._static_vertices = _tensor(static.vertices)
        self._static_triangles = _tensor(static.triangles)
        self._static_colors = static.colors.astype(np.float32)
        self._n_static = len(static.triangles)

        k = self.intrinsics
        # Optical-frame ray direction of pixel (u, v) is (x_u, y_v, 1): unit forward component,
        # so t_hit is z-depth. Kept separable so world rays are two broadcasts, not a matmul
        # (BLAS would spin extra threads and break the one-core budget).
        self._x_of_u = ((np.arange(width) - k.cx) / k.fx).astype(np.float32)
        self._y_of_v = ((np.arange(height) - k.cy) / k.fy).astype(np.float32)
        norm = np.sqrt(self._x_of_u[None, :] ** 2 + self._y_of_v[:, None] ** 2 + 1.0)
        self._inv_dir_norm = (1.0 / norm).reshape(-1).astype(np.float32)

        self.set_objects(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3), dtype=np.uint8))

    def set_objects(
        self,
        centers: np.ndarray,
        sizes: np.ndarray,
        yaw_deg: np.ndarray,
        colors: np.ndarray,
        *,
        open_front: np.ndarray | None = None,
        open_top: np.ndarray | None = None,
        owner: np.ndarray | None = None,
    ) -> None:
        """Replace all object boxes: centres (N, 3) THOR, full extents (N, 3) in the object's
        local frame, yaw about +y in degrees (THOR rotation.y), colours (N, 3) uint8, and
        optionally ``open_front`` (N,) bool: open containers, drawn without their front (local
        +z) face so that what is inside can be seen and is visible, and ``open_top`` (N,) bool:
        lidless containers (sinks, bowls, mugs), drawn without their top face.

        ``owner`` (N,) int, non-decreasing from 0: the object each box belongs to, for objects
        drawn as several boxes (an L- or C-shaped counter, shapes.py). Instance ids, colours'
        owners and ``visible_objects`` indices are per object; default: one box per object.

        open3d cannot remove geometry from a scene, so a new scene gets the cached static
        tensors plus one freshly built box mesh. The BVH build is forced here (a one-ray cast)
        so its cost lands on this call rather than silently on the next frame."""
        centers = np.asarray(centers, dtype=np.float64).reshape(-1, 3)
        sizes = np.asarray(sizes, dtype=np.float64).reshape(-1, 3)
        yaw_deg = np.asarray(yaw_deg, dtype=np.float64).reshape(-1)
        colors = np.asarray(colors).reshape(-1, 3)
        open_front = np.zeros(len(centers), bool) if open_front is None else np.asarray(open_front, bool).reshape(-1)
        open_top = np.zeros(len(centers), bool) if open_top is None else np.asarray(open_top, bool).reshape(-1)
        n = len(centers)
        if not (len(sizes) == len(yaw_deg) == len(colors) == len(open_front) == len(open_top) == n):
            raise ValueError(
                f"set_objects: centers, sizes, yaw_deg, colors, open_front and open_top must have the same "
                f"length, got {n}, {len(sizes)}, {len(yaw_deg)}, {len(colors)}, {len(open_front)}, {len(open_top)}"
            )
        owner = np.arange(n, dtype=np.int32) if owner is None else np.asarray(owner, np.int32).reshape(-1)
        if len(owner) != n or (n and (owner[0] != 0 or np.any(np.diff(owner) < 0) or np.any(np.diff(owner) > 1))):
            raise ValueError("set_objects: owner must give one object index per box, non-decreasing from 0 in steps of 0 or 1")
        scene = o3d.t.geometry.RaycastingScene(nthreads=self.nthreads)
        static_id = scene.add_triangles(self._static_vertices, self._static_triangles)
        if n:
            verts, tris = build_box_mesh(centers, sizes, yaw_deg, open_front, open_top)
            self._box_geometry_id = scene.add_triangles(_tensor(verts), _tensor(tris))
        else:
            self._box_geometry_id = static_id + 1  # an id no geometry has: nothing is a box hit
        scene.cast_rays(_tensor(np.zeros((1, 6), dtype=np.float32)), nthreads=self.nthreads)
        self._scene = scene
        self._n_objects = int(owner[-1]) + 1 if n else 0
        self._box_owner = owner
        # boxes of object k: _box_start[k] .. _box_start[k + 1]
        self._box_start = np.searchsorted(owner, np.arange(self._n_objects + 1)).astype(np.int64)

        # Per-primitive lookup tables over [static triangles, box triangles, background]; a
        # miss indexes the last row via -1.
        box_tri = np.repeat(np.arange(n, dtype=np.int32), TRIANGLES_PER_BOX)
        self._color_table = np.concatenate(
            [self._static_colors, colors.astype(np.float32)[box_tri], np.array([BACKGROUND_RGB], np.float32)]
        )
        self._instance_table = np.concatenate(
            [np.zeros(self._n_static, np.int32), owner[box_tri] + 1, np.zeros(1, np.int32)]
        )
        self._visibility_points = box_points(centers, sizes, yaw_deg, VISIBILITY_SAMPLES_UNIT)

    def world_from_camera_thor(self, position: np.ndarray, yaw_deg: float, horizon_deg: float) -> np.ndarray:
        """4x4 map from the optical camera frame (x right, y down, z forward) to THOR world."""
        return CameraPose.from_thor(position, yaw_deg, horizon_deg).matrix()

    def camera_rays(self, position: np.ndarray, yaw_deg: float, horizon_deg: float) -> np.ndarray:
        """(H, W, 6) float32 rays in THOR world: origin, then direction scaled so its component
        along the camera's forward axis is 1 (so a hit at parameter t lies at z-depth t)."""
        pose = CameraPose.from_thor(position, yaw_deg, horizon_deg)
        right, down, forward = pose.rotation.T.astype(np.float32)
        # ray[v, u] = per_row[v] + per_column[u], written in one contiguous pass.
        origins = np.broadcast_to(pose.position.astype(np.float32), (len(self._y_of_v), 3))
        per_row = np.concatenate([origins, self._y_of_v[:, None] * down + forward], axis=1)
        zeros = np.zeros((len(self._x_of_u), 3), np.float32)
        per_column = np.concatenate([zeros, self._x_of_u[:, None] * right], axis=1)
        return per_row[:, None, :] + per_column[None, :, :]

    def _cast(self, rays: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """t_hit, global primitive index and hit normals for (R, 6) rays.

        The global index runs over the static triangles, then the box triangles; it is -1 on a
        miss because open3d reports misses as INVALID_ID (uint32 max), which reads as -1 as int32
        and is never a box hit. Staying in 32-bit ints keeps this a few passes over memory."""
        rays_tensor = o3d.core.Tensor.from_numpy(np.ascontiguousarray(rays))
        ans = self._scene.cast_rays(rays_tensor, nthreads=self.nthreads)
        is_box = ans["geometry_ids"].numpy() == np.uint32(self._box_geometry_id)
        box_offset = is_box.astype(np.int32) * np.int32(self._n_static)
        global_index = ans["primitive_ids"].numpy().view(np.int32) + box_offset
        return ans["t_hit"].numpy(), global_index, ans["primitive_normals"].numpy()

    def render(self, position: np.ndarray, yaw_deg: float, horizon_deg: float) -> RenderResult:
        """RGB (flat colour x Lambert + ambient), z-depth and instance ids from a THOR pose."""
        k = self.intrinsics
        rays = self.camera_rays(position, yaw_deg, horizon_deg).reshape(-1, 6)
        t_hit, prim, normals = self._cast(rays)
        hit = prim >= 0
        depth = np.where(hit, t_hit, np.float32(0.0)).astype(np.float32, copy=False)
        cos = np.abs(np.einsum("ij,ij->i", normals, rays[:, 3:])) * self._inv_dir_norm
        shade = AMBIENT + DIFFUSE * cos
        rgb = (self._color_table[prim] * shade[:, None]).astype(np.uint8)
        instance = self._instance_table[prim]
        return RenderResult(
            rgb=rgb.reshape(k.height, k.width, 3),
            depth=depth.reshape(k.height, k.width),
            instance=instance.reshape(k.height, k.width),
        )

    def visible_objects(
        self,
        position: np.ndarray,
        yaw_deg: float,
        horizon_deg: float,
        indices: np.ndarray | None = None,
        max_distance: float = 1.5,
    ) -> np.ndarray:
        """THOR-like visibility without rendering: a boolean per entry of ``indices`` (default:
        all objects, in order).

        For each box of each candidate object, rays go from the camera to 15 sample points inside
        the box (centre, shrunken corners, face centres); only points inside the image frustum
        count. The object is visible if some such ray's first hit is a box of that same object
        (a counter's run may hide its other run) and the hit lies
        within ``max_distance`` (Euclidean, camera to the hit point on the box's surface). THOR
        measures camera to its per-object visibility points, which lie on the object's surface,
        so the two agree up to where the sample points sit on the object.
        """
        idx = np.arange(self._n_objects) if indices is None else np.asarray(indices, dtype=np.int64).reshape(-1)
        visible = np.zeros(len(idx), dtype=bool)
        if len(idx) == 0:
            return visible
        if idx.min() < 0 or idx.max() >= self._n_objects:
            raise IndexError(
                f"visible_objects: indices must lie in [0, {self._n_objects}), got {idx.min()}..{idx.max()}"
            )
        pose = CameraPose.from_thor(position, yaw_deg, horizon_deg)
        k = self.intrinsics
        # Every box of every asked object: entry m owns boxes _box_start[idx[m]] .. _box_start[idx[m] + 1].
        counts = self._box_start[idx + 1] - self._box_start[idx]
        entry = np.repeat(np.arange(len(idx)), counts)
        boxes = np.repeat(self._box_start[idx] - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        rel = self._visibility_points[boxes] - pose.position  # (B, S, 3) camera -> sample point
        cam = np.einsum("msj,jc->msc", rel, pose.rotation)  # optical-frame coordinates (no BLAS)
        z = cam[..., 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            u = k.fx * cam[..., 0] / z + k.cx
            v = k.fy * cam[..., 1] / z + k.cy
        in_view = (z > 0) & (u >= -0.5) & (u <= k.width - 0.5) & (v >= -0.5) & (v <= k.height - 0.5)
        row, sample = np.nonzero(in_view)
        if len(row) == 0:
            return visible
        dirs = rel[row, sample]
        rays = np.empty((len(row), 6), dtype=np.float32)
        rays[:, :3] = pose.position
        rays[:, 3:] = dirs
        t_hit, prim, _ = self._cast(rays)
        box_hit = np.where(prim >= self._n_static, (prim - self._n_static) // TRIANGLES_PER_BOX, -1)
        object_hit = np.where(box_hit >= 0, self._box_owner[np.maximum(box_hit, 0)], -1)
        hit_distance = t_hit * np.linalg.norm(dirs, axis=1)
        seen = (object_hit == idx[entry[row]]) & (hit_distance <= max_distance)
        visible[entry[row[seen]]] = True
        return visible
