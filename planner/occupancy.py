"""The agent's own 2D map, built from its depth frames only (never from the house file).

Every frame's depth is back-projected with the camera intrinsics and the world-from-camera pose
(a subsample of pixels; depth is dense, the floor does not need every pixel) and binned into a
grid on the floor plane, in THOR (x, z) so the lattice planner (``planner.lattice_nav``) and the
geodesic heuristic (``planner.geodesic``) work on it unchanged. Three layers, by point height:

- floor: points within a few cm of the floor: the agent has SEEN free floor there;
- obstacle: points between ankle and head height: something the body would hit;
- wall band: points between the top of every doorway and the top of the lowest wall (2.2-2.55 m
  in ProcTHOR houses: door holes end by 2.11 m, walls are at least 2.59 m high). Only walls and
  the lintels over doorways reach that band, so it draws closed room outlines that
  ``planner.rooms`` floods to find rooms.

A cell is traversable for the agent's centre when it is seen floor (or a pose the agent stood
on) and no obstacle lies within the agent's radius plus a margin.

A real depth camera is noisy (stereo error grows as k z^2, ``depth_noise_k`` from its datasheet or
the sensor profile): far floor scatters a few centimetres above and below the floor, and with
one-return-is-an-obstacle every far floor cell sooner or later gets one; dilated by the body
radius they walled the agent in (GC 0.11 on dev-097-1 with depth noise alone, stopped at step 94
with no path to any frontier). With noise, a point is floor or obstacle by its height against
three sigma of ITS height error (a point at depth z seen from camera height h_c moves by
k z |h - h_c| per unit noise), and a cell is an obstacle only while obstacle returns are at
least ``obstacle_share`` of all its returns, counted over every frame: one frame's outlier no
longer outvotes a hundred floor returns, and what is seen again as floor stops blocking. With a
noise-free sensor (k = 0) this is exactly the one-return rule. The frontier (traversable cells
next to never-observed cells) drives exploration. A blocked move marks the cell ahead as an
obstacle, so the next plan goes around what depth did not show. What the agent opens (a drawer,
a fridge door) draws obstacles while it is open; shut again, the cells it drew round its box are
cleared (``mark_opening``, ``clear_opening``) and the next frames draw what really stands there.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy import ndimage

from household import morphology
from household.free_grid import FreeGrid
from household.frames import ros_to_thor_points
from household.types import Observation
from perception.backproject import camera_to_world


@dataclass
class OccupancyConfig:
    resolution: float = 0.05  # metres per cell
    size: float = 48.0  # metres per side, centred on the first pose
    floor_max: float = 0.04  # points below this height are floor
    obstacle_min: float = 0.06
    obstacle_max: float = 1.9  # the agent's height (camera at 1.5 m)
    wall_min: float = 2.2  # above every doorway's top
    wall_max: float = 2.55  # below every wall's top
    robot_radius: float = 0.2
    margin: float = 0.04  # extra clearance beyond the radius
    stride: int = 1  # pixel subsampling (far floor needs every pixel to be mapped without holes)
    max_range: float = 7.0  # depth beyond this is ignored (too coarse per pixel)
    depth_noise_k: float = 0.0  # the depth camera's noise, sigma(z) = k z^2 (0: noise-free)
    noise_sigmas: float = 3.0  # how far outside its own noise a point must lie to count
    obstacle_share: float = 0.2  # with noise: obstacle returns needed, as a share of a cell's returns
    # How far obstacles may stand off their true place on this map because each frame is laid down
    # at a pose with its own error (a localiser's few centimetres; 0: exact pose). Where no plan
    # exists at the full clearance, ``free_grid(tight=True)`` clears obstacles by this much less.
    pose_tolerance: float = 0.0


# A move blocked again from within this far of a bump's pose, within this many degrees of its
# direction, counts as the same bump repeated (``OccupancyMap.repeated_bumps``): a turn between
# the two moves the localised pose by its jitter, at most 2.5 cm and 0.6 degrees under
# ``--sensors realistic`` (``sim_bridge/sensors/profiles.py``).
SAME_BUMP_M = 0.1
SAME_BUMP_DEG = 10.0
BUMPS_KEPT = 32  # the latest bumps compared against (a loop repeats within a few)
# How far past an openable's box its open part may reach on the floor: a fridge or cabinet door
# swings its own width, up to about 0.8 m in ProcTHOR's assets; a drawer pulls out less.
OPENING_SWING_M = 0.9


class OccupancyMap:
    def __init__(self, origin_xz: tuple[float, float], config: OccupancyConfig | None = None) -> None:
        self.config = config or OccupancyConfig()
        c = self.config
        self.n = int(math.ceil(c.size / c.resolution))
        self.x0 = origin_xz[0] - c.size / 2.0
        self.z0 = origin_xz[1] - c.size / 2.0
        shape = (self.n, self.n)
        self.floor = np.zeros(shape, dtype=bool)
        self.obstacle = np.zeros(shape, dtype=bool)
        self.wall = np.zeros(shape, dtype=bool)
        self.stood = np.zeros(shape, dtype=bool)  # cells under the agent's body (known free floor)
        self.centers = np.zeros(shape, dtype=bool)  # cells the agent's centre occupied (valid poses)
        if c.depth_noise_k > 0:  # returns per cell, over every frame (see the module docstring)
            self.floor_hits = np.zeros(shape, dtype=np.int32)
            self.obstacle_hits = np.zeros(shape, dtype=np.int32)
            self.bumped = np.zeros(shape, dtype=bool)  # blocked moves (not from depth)
        # Bumps so far under an uncertain pose, (x, z, world direction in degrees), the latest
        # last: a move blocked again from where one was blocked before (``mark_blocked``).
        self._bumps: deque[tuple[float, float, float]] = deque(maxlen=BUMPS_KEPT)
        self.repeated_bumps = 0  # moves blocked again where they were blocked before (``mark_blocked``)
        # Openings under way: key (the opened object's id) -> the window round it and its obstacle
        # cells just before it opened (``mark_opening``, ``clear_opening``)
        self._openings: dict[str, tuple[tuple[slice, slice], np.ndarray]] = {}
        self._grid: FreeGrid | None = None
        self._tight_grid: FreeGrid | None = None
        self._tight_for: FreeGrid | None = None  # the usual grid of the map the tight one was made from
        self._pixel_cache: dict[tuple[float, ...], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        # ``frontier``'s last answer and what it was computed from (see there)
        self._frontier_for: tuple[FreeGrid, int, int, int] | None = None
        self._frontier: list[tuple[float, float, int, float, float]] = []
        self.version = 0
        r = int(math.ceil((c.robot_radius + c.margin) / c.resolution))
        yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
        self._disc = (xx * xx + yy * yy) * c.resolution ** 2 <= (c.robot_radius + c.margin) ** 2
        tight = max(c.robot_radius + c.margin - c.pose_tolerance, c.resolution)
        self._tight_disc = (xx * xx + yy * yy) * c.resolution ** 2 <= tight ** 2
        rs = int(math.ceil(c.robot_radius / c.resolution))
        yy, xx = np.mgrid[-rs:rs + 1, -rs:rs + 1]
        self._body = (xx * xx + yy * yy) * c.resolution ** 2 <= c.robot_radius ** 2

    # ---- cells -----------------------------------------------------------------------------
    def cell(self, x: float, z: float) -> tuple[int, int]:
        return int(round((x - self.x0) / self.config.resolution)), int(round((z - self.z0) / self.config.resolution))

    def center(self, i: int, j: int) -> tuple[float, float]:
        return self.x0 + i * self.config.resolution, self.z0 + j * self.config.resolution

    def inside(self, i: int, j: int) -> bool:
        return 0 <= i < self.n and 0 <= j < self.n

    # ---- updates ---------------------------------------------------------------------------
    def _pixels(self, obs: Observation) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The sampled pixels (u, v) and their optical-ray factors (u - cx) / fx and (v - cy) / fy,
        cached per image size, stride and intrinsics (the same float64 values
        ``perception.backproject.pixel_to_camera`` computes every frame)."""
        h, w = cast(np.ndarray, obs.depth).shape  # integrate() calls this only with a depth frame
        k = obs.intrinsics
        key = (h, w, self.config.stride, float(k.fx), float(k.fy), float(k.cx), float(k.cy))
        if key not in self._pixel_cache:
            v, u = np.mgrid[0:h:self.config.stride, 0:w:self.config.stride]
            u, v = u.ravel(), v.ravel()
            self._pixel_cache[key] = (u, v, (u - k.cx) / k.fx, (v - k.cy) / k.fy)
        return self._pixel_cache[key]

    def integrate(self, obs: Observation) -> None:
        """Add one frame's depth; also marks the agent's own footprint as free floor.

        The work is done once per valid pixel and read through masks (a frame's floor, wall and
        obstacle cells from one cell index; the far-floor fill on flat pixel indices), with the
        same arithmetic, in the same order, as the per-layer passes it replaced: the maps are
        bit for bit the same (``tests/test_occupancy_integrate.py``), in 0.6 to 0.85 of the time
        (the one matmul over every pixel, kept for those bits, is the largest part left)."""
        self.mark_stood(obs)
        if obs.depth is None:
            return
        c = self.config
        depth = np.asarray(obs.depth)
        h, w = depth.shape
        u, v, x_of_u, y_of_v = self._pixels(obs)
        d = (depth.reshape(-1) if c.stride == 1 else depth[v, u]).astype(np.float64)
        ok = (d > 0.05) & (d < c.max_range) & np.isfinite(d)
        if not ok.any():
            return
        # every pixel in one matmul, as before (each row's product is its own: a NaN or inf pixel,
        # zeroed here, changes no other row, and no longer warns every frame)
        ray_depth = np.where(ok, d, 0.0)
        cam = np.empty((len(d), 3))
        np.multiply(x_of_u, ray_depth, out=cam[:, 0])
        np.multiply(y_of_v, ray_depth, out=cam[:, 1])
        cam[:, 2] = ray_depth
        ros = camera_to_world(cam, obs.world_from_camera)
        valid = np.flatnonzero(ok)
        height = ros[valid, 2]
        # THOR x = -ROS y, z = ROS x (household.frames.ros_to_thor_points, the same operations)
        x_thor = 0.0 - ros[:, 1]
        z_thor = ros[:, 0] + 0.0
        slack: np.ndarray | float
        if c.depth_noise_k > 0:
            # three sigma of each point's height error: depth error k d^2 along a ray whose
            # height changes by (h - h_cam) / d per metre of depth
            slack = c.noise_sigmas * c.depth_noise_k * d[valid] * np.abs(
                height - float(obs.world_from_camera[2, 3]))
        else:
            slack = 0.0
        floor = height < c.floor_max + slack
        obst = (height >= c.obstacle_min + slack) & (height <= c.obstacle_max)
        wall = (height >= c.wall_min) & (height <= c.wall_max)
        cells, inside = self._cell_index(x_thor[valid], z_thor[valid])
        floor_cells = cells[floor & inside]
        self.floor.reshape(-1)[floor_cells] = True
        self.wall.reshape(-1)[cells[wall & inside]] = True
        if c.depth_noise_k > 0:
            self._count(floor_cells, cells[obst & inside])
        else:
            self.obstacle.reshape(-1)[cells[obst & inside]] = True
        if c.stride == 1:
            # Far floor lands sparser than the cells along the viewing ray. Two floor pixels
            # stacked in one image column see the floor between them too (nothing can hide
            # between adjacent pixels), so fill the segment between their floor points.
            is_floor = np.zeros(h * w, dtype=bool)
            is_floor[valid[floor]] = True
            upper = np.flatnonzero(is_floor[:-w] & is_floor[w:])  # pixel p and p + w, the one below
            lower = upper + w
            ax, az = x_thor[upper], z_thor[upper]
            dx, dz = x_thor[lower] - ax, z_thor[lower] - az
            far = np.hypot(dx, dz) > c.resolution  # |b - a| is |a - b| exactly
            if far.any():
                t = np.linspace(0.0, 1.0, 9)[1:-1, None]
                fill_x = ax[far][None] + t * dx[far][None]
                fill_z = az[far][None] + t * dz[far][None]
                fill, fill_inside = self._cell_index(fill_x.reshape(-1), fill_z.reshape(-1))
                self.floor.reshape(-1)[fill[fill_inside]] = True
        self._grid = None
        self.version += 1

    def _cell_index(self, x: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flat cell indices (i * n + j) of THOR (x, z) points and which lie on the map (the
        others' indices are meaningless)."""
        c = self.config
        i = np.rint((x - self.x0) / c.resolution).astype(np.int64)
        j = np.rint((z - self.z0) / c.resolution).astype(np.int64)
        inside = (i >= 0) & (j >= 0) & (i < self.n) & (j < self.n)
        return i * self.n + j, inside

    def _count(self, floor_cells: np.ndarray, obstacle_cells: np.ndarray) -> None:
        """Add this frame's returns (flat cell indices, one per return) to the per-cell counts
        and redraw the obstacle layer where they changed: an obstacle while its returns are
        ``obstacle_share`` of the cell's."""
        c = self.config
        both = np.concatenate([floor_cells, obstacle_cells])
        if both.size == 0:
            return
        # Returns per cell by a count over the box round this frame's cells (a few metres of
        # the map): the same sums as np.add.at, and as the np.unique counts that replaced it,
        # without their sort (4 of the 13 ms a realistic frame's integration took, issue 31).
        i, j = np.divmod(both, self.n)
        i0, j0 = int(i.min()), int(j.min())
        rows, cols = int(i.max()) - i0 + 1, int(j.max()) - j0 + 1
        local = (i - i0) * cols + (j - j0)
        touched = np.zeros(rows * cols, dtype=bool)
        for part, hits in ((local[:floor_cells.size], self.floor_hits), (local[floor_cells.size:], self.obstacle_hits)):
            count = np.bincount(part, minlength=rows * cols)
            seen = np.flatnonzero(count)
            hits[seen // cols + i0, seen % cols + j0] += count[seen].astype(hits.dtype)
            touched[seen] = True
        cells = np.flatnonzero(touched)
        ij = (cells // cols + i0, cells % cols + j0)
        ob, fl = self.obstacle_hits[ij], self.floor_hits[ij]
        self.obstacle[ij] = self.bumped[ij] | ((ob > 0) & (ob >= c.obstacle_share * (ob + fl)))

    def mark_stood(self, obs: Observation) -> None:
        p = ros_to_thor_points(np.array(obs.agent.position))
        i, j = self.cell(float(p[0]), float(p[2]))
        if self.inside(i, j) and not self.centers[i, j]:
            self.centers[i, j] = True
            self._grid = None
        r = self._body.shape[0] // 2
        if self.inside(i - r, j - r) and self.inside(i + r, j + r):
            window = self.stood[i - r:i + r + 1, j - r:j + r + 1]
            if not window[self._body].all():
                window |= self._body
                self._grid = None
                self.version += 1

    def mark_blocked(self, x: float, z: float, yaw_deg: float, heading_deg: float, distance: float) -> None:
        """A move from (x, z) failed: something stands where the body would have gone.

        With an uncertain pose (``pose_tolerance`` > 0) it also counts a move blocked again from
        where the same move was blocked before (within ``SAME_BUMP_M`` and ``SAME_BUMP_DEG``;
        ``repeated_bumps``, in the episode report): the map keeps the agent's own centre cells
        free whatever else it holds (``centers``), and with an uncertain pose those are poses
        it believed it stood at; drawn while the pose was off, they can keep open a way a bump
        has shut, and the next plan begins with the move just blocked (dev-032-0 under
        ``--sensors realistic`` in one run: the same ``MoveRight`` into a wall 49 times in a
        row). Counted, not acted on: taking those centres back at every bump (48c9065) and at
        a repeated bump only (2026-11-29, seventh session) were both measured on four realistic
        shards and neither helped (README, "A bump against a believed pose")."""
        a = math.radians(yaw_deg + heading_deg)
        reach = self.config.robot_radius + distance
        bx, bz = x + reach * math.sin(a), z + reach * math.cos(a)
        i, j = self.cell(bx, bz)
        if self.inside(i, j):
            self.obstacle[max(i - 1, 0):i + 2, max(j - 1, 0):j + 2] = True
            if self.config.depth_noise_k > 0:
                self.bumped[max(i - 1, 0):i + 2, max(j - 1, 0):j + 2] = True
            if self.config.pose_tolerance > 0:
                direction = (yaw_deg + heading_deg) % 360.0
                if self._bumped_here_before(x, z, direction):
                    self.repeated_bumps += 1
                self._bumps.append((x, z, direction))
            self._grid = None
            self.version += 1

    def _bumped_here_before(self, x: float, z: float, direction: float) -> bool:
        for bx, bz, bd in self._bumps:
            turn = abs((direction - bd + 180.0) % 360.0 - 180.0)
            if turn <= SAME_BUMP_DEG and math.hypot(x - bx, z - bz) <= SAME_BUMP_M:
                return True
        return False

    def clear_around(self, x: float, z: float, radius: float) -> int:
        """Forget what made cells within ``radius`` of (x, z) obstacles (depth returns and bumps);
        the number of obstacle cells cleared. For an agent shut in on its map by a pose that
        jumped: the frames and bumps laid down at the wrong pose drew walls round it where there
        are none; what is really there returns with the next frames (and the next bump)."""
        i, j = self.cell(x, z)
        r = int(math.ceil(radius / self.config.resolution))
        i0, i1, j0, j1 = max(i - r, 0), min(i + r + 1, self.n), max(j - r, 0), min(j + r + 1, self.n)
        if i0 >= i1 or j0 >= j1:
            return 0
        ii, jj = np.mgrid[i0:i1, j0:j1]
        near = (ii - i) ** 2 + (jj - j) ** 2 <= r * r
        window = (slice(i0, i1), slice(j0, j1))
        cleared = int((self.obstacle[window] & near).sum())
        self._forget_obstacles(window, near)
        return cleared

    def _forget_obstacles(self, window: tuple[slice, slice], cells: np.ndarray) -> None:
        """Make ``cells`` (a mask over ``window``) no obstacles: the depth returns and bumps that
        made them so are forgotten, and what depends on the map is redrawn."""
        self.obstacle[window][cells] = False
        if self.config.depth_noise_k > 0:
            self.obstacle_hits[window][cells] = 0
            self.bumped[window][cells] = False
        self._grid = None
        self.version += 1

    def mark_opening(self, key: str, box_min: tuple[float, float], box_max: tuple[float, float],
                     swing: float = OPENING_SWING_M) -> None:
        """Something is about to open: a drawer, a door of a cabinet or fridge. Keep the
        obstacle cells round its box (THOR (x, z) corners), grown by ``swing``, as they are
        before the frame that shows it open, so ``clear_opening`` can tell what the open part
        drew. Call before integrating that frame; a second call for the same key keeps the first
        (the part is open already)."""
        if key in self._openings:
            return
        i0, j0 = self.cell(box_min[0] - swing, box_min[1] - swing)
        i1, j1 = self.cell(box_max[0] + swing, box_max[1] + swing)
        window = (slice(max(i0, 0), min(i1 + 1, self.n)), slice(max(j0, 0), min(j1 + 1, self.n)))
        if window[0].start >= window[0].stop or window[1].start >= window[1].stop:
            return
        self._openings[key] = (window, self.obstacle[window].copy())

    def clear_opening(self, key: str) -> int:
        """What ``key`` opened is closed again: forget the obstacle cells that appeared round it
        while it was open (depth returns and bumps), the number cleared. An open drawer fills
        the floor in front of its dresser; with one return an obstacle (exact depth), nothing
        ever cleared those cells once it was shut, and a search that opened a dresser's drawers
        by the only way out of a bedroom shut the agent in on its map (dev-022-1 in people's
        wording). Call before integrating the frame that shows it closed: that frame, and the
        next ones, draw again whatever really stands there (as after ``clear_around``)."""
        opening = self._openings.pop(key, None)
        if opening is None:
            return 0
        window, before = opening
        drawn = self.obstacle[window] & ~before
        cleared = int(drawn.sum())
        if cleared:
            self._forget_obstacles(window, drawn)
        return cleared

    # ---- derived ---------------------------------------------------------------------------
    def free_grid(self, tight: bool = False) -> FreeGrid:
        """Cells the agent's centre may occupy: seen floor or stood-on, clear of obstacles.

        ``tight``: clear of obstacles by ``pose_tolerance`` less. Each frame's pose error moves
        what it sees by a few centimetres, so the map's obstacles grow by about that much on
        every side, and a way 0.5 m wide for a body 0.4 m wide (a nook by the bed, a gap
        between two tables) closes on the map while it is open in the house (dev-045-1 under
        the realistic profile's localiser, walled in at the first pose). The simulator or the
        robot's bumper still stops a move into what is really there, and a blocked move marks
        the map. With ``pose_tolerance`` 0 it is the usual grid.

        Computed on the window around everything observed (plus the reach of every dilation),
        not the whole 48 m map: the morphology is local and everything outside that window is
        False either way, so the result is the same array, at a tenth of the cost."""
        if self._grid is None:
            self._grid = self._make_grid(self._disc)
        if tight and self.config.pose_tolerance > 0:
            if self._tight_grid is None or self._tight_for is not self._grid:  # made for an older map
                self._tight_grid, self._tight_for = self._make_grid(self._tight_disc), self._grid
            return self._tight_grid
        return self._grid

    def _make_grid(self, disc: np.ndarray) -> FreeGrid:
        mask = np.zeros((self.n, self.n), dtype=bool)
        window = self._window()
        if window is not None:
            mask[window] = self._free_mask(window, disc)
        return FreeGrid(self.x0, self.z0, self.config.resolution, mask)

    def _window(self) -> tuple[slice, slice] | None:
        """The slices around every observed or stood-on cell, grown by the farthest any step of
        ``_free_mask`` reaches (the near-body dilation, the body disc, the closing) plus two."""
        seen = self.floor | self.obstacle | self.wall | self.stood | self.centers
        rows = np.flatnonzero(seen.any(axis=1))
        if rows.size == 0:
            return None
        cols = np.flatnonzero(seen[rows[0]:rows[-1] + 1].any(axis=0))
        grow = int(0.45 / self.config.resolution) + self._disc.shape[0] // 2 + 3 + 2
        return (slice(max(rows[0] - grow, 0), min(rows[-1] + grow + 1, self.n)),
                slice(max(cols[0] - grow, 0), min(cols[-1] + grow + 1, self.n)))

    def _free_mask(self, w: tuple[slice, slice], disc: np.ndarray) -> np.ndarray:
        obstacle, wall, floor, stood = self.obstacle[w], self.wall[w], self.floor[w], self.stood[w]
        # Not the wall band: over a doorway it is the lintel, which the body passes under (the
        # wall itself shows in the obstacle band too).
        blocked = morphology.dilate(obstacle, disc)
        # Far floor is sampled sparser than the cells: close the pinholes between samples.
        # Under a lintel with nothing at body height is a doorway: walkable, though its
        # floor (the wall's footprint) is seen at a grazing angle if at all.
        doorway = wall & ~obstacle
        known = morphology.close(floor | doorway, iterations=3) | stood
        # The floor right around the body is below the camera's view at the usual pitch:
        # assume it free (a blocked move marks it) or the agent could never take a first step.
        near_body = morphology.dilate(stood, iterations=int(0.45 / self.config.resolution))
        return ((known | near_body) & ~blocked) | self.centers[w]

    def observed(self) -> np.ndarray:
        return self.floor | self.obstacle | self.wall | self.stood

    def frontier(self, block: int = 5, min_open_blocks: int = 12) -> list[tuple[float, float, int, float, float]]:
        """Frontier clusters as (x, z, open_size, ox, oz): a traversable point next to a sizable
        unexplored area (``open_size`` blocks, centred at ox, oz), judged per block of ``block``
        cells, because far floor is seen in sparse samples and every gap between them would
        otherwise count as unexplored. Small unexplored pockets (floor hidden under a table,
        behind a bed) are not worth the walk and are ignored.

        Kept until the map changes: one act that tries several goals asks it for each (dev-045-1
        under ``--sensors realistic``, step 1,605: 29 times, 7.6 ms each, on one map). What it
        reads changes only with a new free grid (``free_grid`` makes one whenever a cell it
        depends on changes, the agent's own centres included) or a new ``version`` (the obstacle
        and wall bands)."""
        grid = self.free_grid()
        key = (grid, self.version, block, min_open_blocks)
        if self._frontier_for is not None and self._frontier_for[0] is grid and self._frontier_for[1:] == key[1:]:
            return list(self._frontier)
        self._frontier = self._frontier_uncached(grid, block, min_open_blocks)
        self._frontier_for = key
        return list(self._frontier)

    def _frontier_uncached(self, grid: FreeGrid, block: int,
                           min_open_blocks: int) -> list[tuple[float, float, int, float, float]]:
        nb = self.n // block
        n = nb * block
        free = grid.mask[:n, :n].reshape(nb, block, nb, block)
        # per block: any free cell, and how many obstacle or wall cells. Only the blocks over the
        # window round everything observed can have either (outside it the free grid and both
        # bands are False): the same arrays as reducing the whole 960 x 960 map, which was 5.7 of
        # the 6.9 ms a frontier took on dev-023-0's map at step 1,200 under realistic sensors
        free_any = np.zeros((nb, nb), dtype=bool)
        hard = np.zeros((nb, nb), dtype=np.int64)
        window = self._window()
        if window is not None:
            b0, b1 = window[0].start // block, min(-(-window[0].stop // block), nb)
            c0, c1 = window[1].start // block, min(-(-window[1].stop // block), nb)
            cells = (slice(b0 * block, b1 * block), slice(c0 * block, c1 * block))
            shape = (b1 - b0, block, c1 - c0, block)
            free_any[b0:b1, c0:c1] = grid.mask[cells].reshape(shape).any(axis=(1, 3))
            hard[b0:b1, c0:c1] = (self.obstacle[cells] | self.wall[cells]).reshape(shape).sum(axis=(1, 3))
        # Open to exploration: neither traversable nor mostly obstacle (never seen, or floor
        # seen too sparsely to plan on yet).
        open_ = ~free_any & (hard < block)
        open_labels, n_open = ndimage.label(open_)
        sizes = np.bincount(open_labels.ravel(), minlength=n_open + 1)
        big = sizes >= min_open_blocks
        big[0] = False
        open_big = big[open_labels]
        cross = morphology.CROSS
        front = free_any & morphology.dilate(open_big, cross)
        labels, count = ndimage.label(front, structure=np.ones((3, 3)))
        out: list[tuple[float, float, int, float, float]] = []
        for k in range(1, count + 1):
            cluster = labels == k
            bi, bj = np.nonzero(cluster)
            ci, cj = bi.mean(), bj.mean()
            m = int(np.argmin((bi - ci) ** 2 + (bj - cj) ** 2))
            fi, fj = np.nonzero(free[bi[m], :, bj[m], :])
            i, j = bi[m] * block + fi[len(fi) // 2], bj[m] * block + fj[len(fj) // 2]
            x, z = self.center(int(i), int(j))
            # look towards the unexplored blocks this cluster touches (not the far centroid of
            # the whole unexplored component, which may be the outside of the house)
            touch = morphology.dilate(cluster, cross, iterations=2) & open_big
            ti, tj = np.nonzero(touch)
            oi, oj = (ti.mean(), tj.mean()) if len(ti) else (ci, cj)
            ox, oz = self.center(int(oi * block + block // 2), int(oj * block + block // 2))
            comp = int(open_labels[ti[0], tj[0]]) if len(ti) else 0
            out.append((x, z, int(sizes[comp]) if comp else 0, ox, oz))
        return out
