"""Behaviour of the embedded simulator's CPU renderer (sim_bridge.embedded.render).

Most tests use a hand-built two-room layout whose geometry is known exactly (THOR frame, x and z
on the floor, y up):

    room A: x in [-5, 5], z in [0, 4]       room B: x in [-5, 5], z in [4, 8]
    shared wall z = 4 (one copy per room), 3 m high, with a door at x in [-0.5, 0.5] (y 0..2.1)
    and a window at x in [1, 2] (y 1..2).
"""

from __future__ import annotations

import numpy as np
import pytest

from household.house_data import load_house
from sim_bridge.embedded.house_geometry import HouseLayout, Hole, Room, WallSegment, parse_layout
from sim_bridge.embedded.render import RenderResult, SceneRenderer
from sim_bridge.embedded.scene_mesh import triangulate_polygon, wall_solid_rectangles, yaw_rotation
from household.types import CameraIntrinsics

W, H, FOV = 320, 240, 90.0
HEIGHT = 3.0
DOOR = Hole(s0=4.5, s1=5.5, y0=0.0, y1=2.1, kind="door", id="door|A|B")
WINDOW = Hole(s0=6.0, s1=7.0, y0=1.0, y1=2.0, kind="window", id="window|A|B")
TOL = 0.005  # walls are inset 2 mm into their room; everything else is exact up to float32


Point = tuple[float, float]


def _room_walls(room_id: str, corners: list[Point], shared: tuple[Point, Point]) -> list[WallSegment]:
    """One wall per polygon edge; the shared edge is written in ``shared``'s order (as ProcTHOR
    does for both copies of a wall) and carries the door and the window."""
    walls = []
    for p0, p1 in zip(corners, corners[1:] + corners[:1]):
        is_shared = {p0, p1} == set(shared)
        a, b = shared if is_shared else (p0, p1)
        walls.append(WallSegment(f"wall|{room_id}|{a}|{b}", room_id, a, b, HEIGHT, [DOOR, WINDOW] if is_shared else []))
    return walls


@pytest.fixture(scope="module")
def layout() -> HouseLayout:
    a = [(-5.0, 0.0), (5.0, 0.0), (5.0, 4.0), (-5.0, 4.0)]
    b = [(-5.0, 4.0), (5.0, 4.0), (5.0, 8.0), (-5.0, 8.0)]
    shared = ((-5.0, 4.0), (5.0, 4.0))  # both copies measure holes from x = -5
    return HouseLayout(
        "synthetic",
        [Room("room|A", "Kitchen", tuple(a)), Room("room|B", "LivingRoom", tuple(b))],
        _room_walls("room|A", a, shared) + _room_walls("room|B", b, shared),
    )


@pytest.fixture()
def renderer(layout: HouseLayout) -> SceneRenderer:
    return SceneRenderer(layout, W, H, FOV, nthreads=1)


def _set_boxes(r: SceneRenderer, centers, sizes, yaws=None, colors=None) -> None:
    centers = np.asarray(centers, dtype=float).reshape(-1, 3)
    n = len(centers)
    sizes = np.broadcast_to(np.asarray(sizes, dtype=float), (n, 3))
    yaws = np.zeros(n) if yaws is None else np.asarray(yaws, dtype=float)
    colors = np.full((n, 3), 200, np.uint8) if colors is None else np.asarray(colors, np.uint8)
    r.set_objects(centers, sizes, yaws, colors)


def _pixel(r: SceneRenderer, x_cam: float, y_cam: float, z_cam: float) -> tuple[int, int]:
    """(row, column) of an optical-frame point."""
    k = r.intrinsics
    return int(round(k.fy * y_cam / z_cam + k.cy)), int(round(k.fx * x_cam / z_cam + k.cx))


def _world_points(r: SceneRenderer, result: RenderResult, position, yaw: float, horizon: float) -> np.ndarray:
    """Back-project every pixel with the public intrinsics and pose: (H, W, 3) THOR points."""
    k = CameraIntrinsics.from_fov(W, H, FOV)
    v, u = np.mgrid[0:H, 0:W]
    d = result.depth
    cam = np.stack([(u - k.cx) / k.fx * d, (v - k.cy) / k.fy * d, d, np.ones_like(d)], axis=-1)
    return (cam @ r.world_from_camera_thor(np.asarray(position, float), yaw, horizon).T)[..., :3]


def test_render_shapes_and_types(renderer: SceneRenderer) -> None:
    res = renderer.render(np.array([0.0, 1.0, 2.0]), 0.0, 0.0)
    assert res.rgb.shape == (H, W, 3) and res.rgb.dtype == np.uint8
    assert res.depth.shape == (H, W) and res.depth.dtype == np.float32
    assert res.instance.shape == (H, W) and res.instance.dtype == np.int32
    assert (res.instance == 0).all()  # no objects yet


def test_wall_depth_is_z_depth_at_known_distance(renderer: SceneRenderer) -> None:
    # Camera 2 m in front of the solid part of the shared wall: every pixel on that wall, even
    # far off-axis, has z-depth 2 (a range image would grow towards the edges).
    res = renderer.render(np.array([-3.0, 1.0, 2.0]), 0.0, 0.0)
    band = res.depth[70:170, 70:250]  # back-projects to x in [-4.5, -1.5], y in [0.2, 1.8]
    np.testing.assert_allclose(band, 2.0, atol=TOL)
    assert res.depth[H // 2, 0] < 2.0 - 0.1  # the left image edge sees the side wall x = -5 closer


def test_door_and_window_holes_let_rays_through(renderer: SceneRenderer) -> None:
    pos = np.array([0.0, 1.0, 2.0])
    res = renderer.render(pos, 0.0, 0.0)
    # Through the door (x = 0, y = 1): room B's far wall at z = 8, 6 m away.
    row, col = _pixel(renderer, 0.0, 0.0, 2.0)
    assert res.depth[row, col] == pytest.approx(6.0, abs=TOL)
    # Above the door (y = 2.6, same wall, solid): stopped at 2 m.
    row, col = _pixel(renderer, 0.0, -1.6, 2.0)
    assert res.depth[row, col] == pytest.approx(2.0, abs=TOL)
    # Through the window (x = 1.5, y = 1.5).
    row, col = _pixel(renderer, 1.5, -0.5, 2.0)
    assert res.depth[row, col] == pytest.approx(6.0, abs=TOL)
    # Below the window (x = 1.5, y = 0.5): solid.
    row, col = _pixel(renderer, 1.5, 0.5, 2.0)
    assert res.depth[row, col] == pytest.approx(2.0, abs=TOL)


def test_instance_ids_hit_the_right_box(renderer: SceneRenderer) -> None:
    centers = [[-1.0, 1.0, 3.0], [0.0, 1.0, 3.0], [1.0, 1.0, 3.0]]
    colors = [[255, 0, 0], [0, 255, 0], [0, 0, 255]]
    _set_boxes(renderer, centers, [0.4, 0.4, 0.4], colors=colors)
    res = renderer.render(np.array([0.0, 1.0, 2.0]), 0.0, 0.0)
    for k, (x, _, _) in enumerate(centers):
        row, col = _pixel(renderer, x, 0.0, 0.8)  # the box's front face at z = 2.8
        assert res.instance[row, col] == k + 1
        assert res.depth[row, col] == pytest.approx(0.8, abs=1e-3)
        assert int(np.argmax(res.rgb[row, col])) == k  # shaded, but still its own colour
    assert set(np.unique(res.instance)) == {0, 1, 2, 3}
    assert res.instance[5, W // 2] == 0  # wall above the boxes


def test_yaw_convention(renderer: SceneRenderer) -> None:
    pos = np.array([0.0, 1.0, 2.0])
    _set_boxes(renderer, [[1.5, 1.0, 2.0]], [0.4, 0.4, 0.4])  # 1.5 m towards +x
    assert (renderer.render(pos, 90.0, 0.0).instance[H // 2, W // 2 - 10 : W // 2 + 10] == 1).all()
    assert not (renderer.render(pos, 270.0, 0.0).instance == 1).any()
    # Facing +z, +x is to the right (THOR is left-handed): the box is in the right half.
    _set_boxes(renderer, [[0.8, 1.0, 3.0]], [0.3, 0.3, 0.3])
    cols = np.nonzero((renderer.render(pos, 0.0, 0.0).instance == 1).any(axis=0))[0]
    assert len(cols) and cols.min() > W // 2


def test_object_yaw_rotates_local_z_to_world_x() -> None:
    np.testing.assert_allclose(yaw_rotation(np.array([90.0]))[0] @ [0, 0, 1], [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(yaw_rotation(np.array([90.0]))[0] @ [1, 0, 0], [0, 0, -1], atol=1e-12)


def test_positive_horizon_looks_down(renderer: SceneRenderer) -> None:
    pos = [-3.0, 1.0, 2.0]

    def floor_fraction(horizon: float) -> float:
        res = renderer.render(np.array(pos), 0.0, horizon)
        pts = _world_points(renderer, res, pos, 0.0, horizon)
        return float(np.mean((res.depth > 0) & (np.abs(pts[..., 1]) < 0.01)))

    down, level, up = floor_fraction(30.0), floor_fraction(0.0), floor_fraction(-30.0)
    assert down > level > up
    # The centre ray at horizon 30 hits 1 m below the camera at 1 / tan(30 deg) = 1.73 m ahead.
    res = renderer.render(np.array(pos), 0.0, 30.0)
    centre = _world_points(renderer, res, pos, 0.0, 30.0)[H // 2 - 1 : H // 2 + 1, W // 2 - 1 : W // 2 + 1]
    np.testing.assert_allclose(centre[..., 1], 0.0, atol=1e-3)
    np.testing.assert_allclose(centre[..., 2].mean(), 2.0 + 1.0 / np.tan(np.radians(30.0)), atol=0.03)


def test_back_projection_with_intrinsics_lands_on_box_surfaces(renderer: SceneRenderer) -> None:
    centers = np.array([[-0.6, 0.5, 3.2], [0.7, 0.8, 3.0], [0.0, 0.2, 3.4]])
    sizes = np.array([[0.5, 1.0, 0.3], [0.4, 0.3, 0.6], [0.8, 0.4, 0.5]])
    yaws = np.array([30.0, -50.0, 100.0])
    _set_boxes(renderer, centers, sizes, yaws)
    pos, yaw, horizon = [0.1, 1.4, 1.9], 12.0, 25.0
    res = renderer.render(np.array(pos), yaw, horizon)
    pts = _world_points(renderer, res, pos, yaw, horizon)
    rot = yaw_rotation(yaws)
    for k in range(len(centers)):
        mask = res.instance == k + 1
        assert mask.sum() > 200, f"box {k} barely visible ({mask.sum()} pixels)"
        local = (pts[mask] - centers[k]) @ rot[k]  # world -> box frame (R is orthonormal)
        excess = np.abs(local) - sizes[k] / 2.0  # <= 0 inside; max over axes == 0 on the surface
        assert (excess <= 3e-3).all(), f"box {k}: points outside the box"
        np.testing.assert_allclose(excess.max(axis=1), 0.0, atol=3e-3, err_msg=f"box {k}: points off the surface")
    # Every other hit lands on the floor (y = 0) or a wall plane (x = +-5; z = 0, 4 or 8).
    static = pts[(res.instance == 0) & (res.depth > 0)]
    x, y, z = static.T
    off_plane = np.abs(np.stack([y, np.abs(x) - 5.0, z, z - 4.0, z - 8.0])).min(axis=0)
    assert len(static) > 1000 and off_plane.max() < TOL


def test_set_objects_after_moving_a_box_changes_the_image(renderer: SceneRenderer) -> None:
    pos = np.array([0.0, 1.0, 2.0])
    _set_boxes(renderer, [[-1.0, 1.0, 3.0], [1.0, 1.0, 3.0]], [0.4, 0.4, 0.4])
    left, right = _pixel(renderer, -1.0, 0.0, 0.8), _pixel(renderer, 1.0, 0.0, 0.8)
    before = renderer.render(pos, 0.0, 0.0)
    assert before.instance[left] == 1 and before.instance[right] == 2
    _set_boxes(renderer, [[-1.0, 1.0, 3.0], [1.0, 1.0, 9.0]], [0.4, 0.4, 0.4])  # box 1 leaves the house
    after = renderer.render(pos, 0.0, 0.0)
    assert after.instance[left] == 1 and after.instance[right] == 0
    assert after.depth[right] == pytest.approx(2.0, abs=TOL)  # now the wall behind it
    assert not (after.instance == 2).any()
    renderer.set_objects(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3), np.uint8))
    assert (renderer.render(pos, 0.0, 0.0).instance == 0).all()


def test_visible_objects(renderer: SceneRenderer) -> None:
    pos = np.array([-3.0, 1.0, 3.3])  # 0.7 m in front of the solid part of the shared wall
    centers = [
        [-3.0, 1.0, 4.5],  # 0: behind the wall, 1.2 m away: hidden
        [-3.0, 1.0, 3.8],  # 1: in front, 0.5 m: visible
        [-3.0, 1.0, 2.3],  # 2: 1 m behind the camera: outside the frustum
        [-3.0, 0.1, 3.95],  # 3: 54 deg below the view axis: outside the 90 deg vertical fov ...
    ]
    _set_boxes(renderer, centers, [0.1, 0.1, 0.1])
    assert renderer.visible_objects(pos, 0.0, 0.0).tolist() == [False, True, False, False]
    # ... until the camera looks 40 deg down (box 1, 40 deg above the new axis, stays in view).
    assert renderer.visible_objects(pos, 0.0, 40.0).tolist() == [False, True, False, True]
    # Beyond max_distance is not visible; within a larger one it is.
    far_pos = np.array([-2.0, 1.0, 1.8])  # 2.2 m from box 1 (27 deg left), nothing in between
    assert not renderer.visible_objects(far_pos, 0.0, 0.0, indices=np.array([1]))[0]
    assert renderer.visible_objects(far_pos, 0.0, 0.0, indices=np.array([1]), max_distance=3.0)[0]
    # Frustum: box 2 behind the camera becomes visible when turning round, and box 1 does not.
    assert renderer.visible_objects(pos, 180.0, 0.0, indices=np.array([2, 1])).tolist() == [True, False]
    # Occlusion by another object: box 1 hides a box right behind it.
    _set_boxes(renderer, [[-3.0, 1.0, 3.8], [-3.0, 1.0, 3.95]], [[0.3, 0.3, 0.05], [0.1, 0.1, 0.05]])
    assert renderer.visible_objects(pos, 0.0, 0.0).tolist() == [True, False]


def test_open_front_shows_what_is_inside_a_container(renderer: SceneRenderer) -> None:
    # A 'fridge' whose front (local +z) faces the camera after yaw 180, with an 'apple' inside.
    pos = np.array([0.0, 1.0, 1.0])
    centers, sizes, yaws = [[0.0, 1.0, 2.5], [0.0, 1.0, 2.6]], [[0.8, 1.2, 0.6], [0.1, 0.1, 0.1]], [180.0, 0.0]
    apple = _pixel(renderer, 0.0, 0.0, 1.6)
    for opened in (False, True):
        renderer.set_objects(np.array(centers), np.array(sizes), np.array(yaws), np.full((2, 3), 200, np.uint8),
                             open_front=np.array([opened, False]))
        res = renderer.render(pos, 0.0, 0.0)
        assert res.instance[apple] == (2 if opened else 1)
        assert renderer.visible_objects(pos, 0.0, 0.0, max_distance=5.0).tolist() == [True, opened]
        if opened:  # beside the apple: the fridge's inside back wall, at z = 2.8
            beside = _pixel(renderer, 0.2, 0.0, 1.8)
            assert res.instance[beside] == 1 and res.depth[beside] == pytest.approx(1.8, abs=1e-3)


def test_visible_objects_agrees_with_render(renderer: SceneRenderer) -> None:
    rng = np.random.default_rng(3)
    centers = np.column_stack([rng.uniform(-4.5, 4.5, 60), rng.uniform(0.1, 1.5, 60), rng.uniform(0.5, 7.5, 60)])
    _set_boxes(renderer, centers, [0.25, 0.25, 0.25], rng.uniform(0, 360, 60))
    pos = np.array([0.0, 1.2, 2.0])
    for yaw in (0.0, 90.0, 200.0):
        visible = renderer.visible_objects(pos, yaw, 10.0, max_distance=100.0)
        seen = np.zeros(60, bool)
        seen[np.unique(renderer.render(pos, yaw, 10.0).instance)[1:] - 1] = True
        assert not (visible & ~seen).any()  # whatever is visible is in the image
        big_in_image = np.bincount(renderer.render(pos, yaw, 10.0).instance.ravel(), minlength=61)[1:] > 150
        assert not (big_in_image & ~visible).any()  # and anything prominent in the image is visible


@pytest.mark.parametrize(
    ("poly", "area"),
    [
        ([(0, 0), (4, 0), (4, 1), (4, 2), (1, 2), (1, 5), (0, 5)], 11.0),  # L, (4, 1) collinear
        ([(0, 0), (6, 0), (6, 4), (4, 4), (4, 1), (2, 1), (2, 4), (0, 4)], 24.0 - 6.0),  # U
    ],
)
def test_ear_clipping_triangulates_non_convex_rooms(poly: list[tuple[int, int]], area: float) -> None:
    base = np.array(poly, dtype=float)
    for start in range(len(base)):  # every starting vertex and both windings
        for p in (np.roll(base, start, axis=0), np.roll(base, start, axis=0)[::-1]):
            tris = triangulate_polygon(p)
            a, b, c = p[tris[:, 0]], p[tris[:, 1]], p[tris[:, 2]]
            areas = 0.5 * ((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))
            assert (areas > 0).all()
            assert areas.sum() == pytest.approx(area)  # positive and summing to the area: no overlap


def test_l_shaped_floor_is_rendered_only_inside_the_polygon() -> None:
    poly = ((0.0, 0.0), (4.0, 0.0), (4.0, 2.0), (1.0, 2.0), (1.0, 5.0), (0.0, 5.0))
    r = SceneRenderer(HouseLayout("L", [Room("room|L", "Kitchen", poly)], []), W, H, FOV, nthreads=1)
    pos, horizon = [2.5, 3.0, 3.5], 90.0  # above the notch, looking straight down
    res = r.render(np.array(pos), 0.0, horizon)
    pts = _world_points(r, res, pos, 0.0, horizon)
    hit = res.depth > 0
    assert hit.any() and (~hit).any()
    x, z = pts[hit][:, 0], pts[hit][:, 2]
    assert not ((x > 1.0 + 1e-3) & (z > 2.0 + 1e-3)).any()


def test_wall_rectangles_remove_exactly_the_holes() -> None:
    wall = WallSegment("w", "room|A", (0.0, 0.0), (10.0, 0.0), HEIGHT, [DOOR, WINDOW])
    rects = np.array(wall_solid_rectangles(wall))
    area = ((rects[:, 1] - rects[:, 0]) * (rects[:, 3] - rects[:, 2])).sum()
    assert area == pytest.approx(10 * HEIGHT - 1.0 * 2.1 - 1.0 * 1.0)
    for s0, s1, y0, y1 in rects:  # no rectangle overlaps a hole
        for h in (DOOR, WINDOW):
            assert min(s1, h.s1) - max(s0, h.s0) <= 1e-9 or min(y1, h.y1) - max(y0, h.y0) <= 1e-9


def test_set_objects_rejects_mismatched_lengths(renderer: SceneRenderer) -> None:
    with pytest.raises(ValueError, match="same length"):
        renderer.set_objects(np.zeros((2, 3)), np.ones((1, 3)), np.zeros(2), np.zeros((2, 3), np.uint8))


def test_smoke_real_dev_house() -> None:
    house = load_house("houses_dev.jsonl.gz", 0)
    layout = parse_layout(house)
    centers = np.array([[o["position"][a] for a in "xyz"] for o in house["objects"]])
    yaws = np.array([o["rotation"]["y"] for o in house["objects"]])
    r = SceneRenderer(layout, W, H, FOV, nthreads=1)
    r.set_objects(centers, np.full((len(centers), 3), 0.5), yaws, np.full((len(centers), 3), 180, np.uint8))
    room = layout.rooms[0]
    cx, cz = np.mean(np.array(room.polygon), axis=0)
    pos = np.array([cx, 1.5, cz])
    for yaw in (0.0, 90.0, 180.0, 270.0):
        res = r.render(pos, yaw, 30.0)
        assert (res.depth > 0).mean() > 0.9  # walls and floor all round, only the missing ceiling is void
        assert res.depth.max() < 20.0
        assert 0 <= res.instance.min() and res.instance.max() <= len(centers)
    assert r.visible_objects(pos, 0.0, 30.0).shape == (len(centers),)


def test_boxes_owned_by_one_object_share_its_instance_and_visibility(renderer: SceneRenderer) -> None:
    """An object drawn as several boxes (an L counter, shapes.py): object 0 is two boxes, the
    near one hidden behind object 1 and the far one in view to the side; object 2 is one box."""
    pos = np.array([0.0, 1.5, 0.5])
    centers = np.array([[0.0, 1.5, 3.0], [1.5, 1.5, 3.0], [0.0, 1.5, 1.5], [-1.5, 1.5, 3.0]])
    sizes = np.full((4, 3), 0.4)
    renderer.set_objects(centers, sizes, np.zeros(4), np.full((4, 3), 200, np.uint8), owner=np.array([0, 0, 1, 2]))
    res = renderer.render(pos, 0.0, 0.0)
    assert set(np.unique(res.instance)) == {0, 1, 2, 3}  # background, then objects 0, 1, 2 (+1)
    assert res.instance[_pixel(renderer, 1.5, 0.0, 2.5)] == 1  # object 0's second box
    assert renderer.visible_objects(pos, 0.0, 0.0, max_distance=10.0).tolist() == [True, True, True]
    # Hide the second box of object 0 behind a wall of object 1: object 0 is then not visible.
    renderer.set_objects(np.array([[0.0, 1.5, 3.0], [0.5, 1.5, 3.0], [0.0, 1.5, 1.5]]),
                         np.array([[0.4] * 3, [0.4] * 3, [3.0, 3.0, 0.2]]), np.zeros(3),
                         np.full((3, 3), 200, np.uint8), owner=np.array([0, 0, 1]))
    assert renderer.visible_objects(pos, 0.0, 0.0, max_distance=10.0).tolist() == [False, True]


def test_set_objects_rejects_a_bad_owner(renderer: SceneRenderer) -> None:
    with pytest.raises(ValueError, match="owner"):
        renderer.set_objects(np.zeros((2, 3)), np.ones((2, 3)), np.zeros(2), np.zeros((2, 3), np.uint8),
                             owner=np.array([1, 0]))
