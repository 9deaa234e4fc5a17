"""2D collision of the round agent against walls (door holes cut out), objects and the house outline.

Most tests use a hand-built two-room layout (THOR frame, x and z on the floor):

    room A: x in [0, 4], z in [0, 3]        room B: x in [0, 4], z in [3, 6]
    shared wall z = 3 (one copy per room) with a door at x in [1.5, 2.5]
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from household.assets import default_catalog
from sim_bridge.embedded.collision import CollisionMap
from household.house_data import load_house
from sim_bridge.embedded.house_geometry import HouseLayout, Hole, Room, WallSegment, parse_layout
from sim_bridge.embedded.objects import SimObject, build_objects

RADIUS = 0.2
HEIGHT = 2.5
DOOR = Hole(s0=1.5, s1=2.5, y0=0.0, y1=2.1, kind="door", id="door|A|B")
Point = tuple[float, float]


def _walls(room_id: str, corners: list[Point], shared: tuple[Point, Point]) -> list[WallSegment]:
    walls = []
    for p0, p1 in zip(corners, corners[1:] + corners[:1]):
        is_shared = {p0, p1} == set(shared)
        a, b = shared if is_shared else (p0, p1)
        walls.append(WallSegment(f"wall|{room_id}|{a}|{b}", room_id, a, b, HEIGHT, [DOOR] if is_shared else []))
    return walls


@pytest.fixture(scope="module")
def layout() -> HouseLayout:
    a = [(0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0)]
    b = [(0.0, 3.0), (4.0, 3.0), (4.0, 6.0), (0.0, 6.0)]
    shared = ((0.0, 3.0), (4.0, 3.0))
    return HouseLayout("synthetic", [Room("room|A", "Kitchen", tuple(a)), Room("room|B", "Bedroom", tuple(b))],
                       _walls("room|A", a, shared) + _walls("room|B", b, shared))


@pytest.fixture()
def cmap(layout: HouseLayout) -> CollisionMap:
    return CollisionMap(layout, RADIUS)


def _box(object_id: str, center: tuple[float, float, float], size: tuple[float, float, float],
         yaw: float = 0.0, object_type: str = "Dresser") -> SimObject:
    asset = default_catalog().type_info(object_type)
    assert asset is not None
    return SimObject(object_id, object_type, asset, np.array(center, float), yaw, np.array(size, float))


# ---- walls, doors, outside -------------------------------------------------------------------

def test_open_floor_is_free(cmap: CollisionMap) -> None:
    assert cmap.collision(2.0, 1.5) is None
    assert cmap.is_free(2.0, 4.5)
    assert cmap.room_at(2.0, 1.5) == "room|A"
    assert cmap.room_at(2.0, 4.5) == "room|B"
    assert cmap.wall_clearance(2.0, 1.5) == pytest.approx(1.5)


@pytest.mark.parametrize("x, z, wall_id", [
    (2.0, 0.15, "wall|room|A|(0.0, 0.0)|(4.0, 0.0)"),
    (3.9, 1.5, "wall|room|A|(4.0, 0.0)|(4.0, 3.0)"),
    (1.0, 2.9, "wall|room|A|(0.0, 3.0)|(4.0, 3.0)"),  # shared wall, beside the door
    (3.0, 3.1, "wall|room|B|(0.0, 3.0)|(4.0, 3.0)"),
])
def test_touching_a_wall_names_it(cmap: CollisionMap, x: float, z: float, wall_id: str) -> None:
    hit = cmap.collision(x, z)
    assert hit is not None and hit.kind == "wall"
    # Either copy of the shared wall is a right answer; both have the same geometry.
    assert hit.id in {wall_id, wall_id.replace("room|A", "room|B"), wall_id.replace("room|B", "room|A")}
    assert not cmap.is_free(x, z)


def test_wall_contact_is_decided_by_the_radius(cmap: CollisionMap) -> None:
    assert cmap.is_free(2.0, RADIUS + 0.01)
    assert not cmap.is_free(2.0, RADIUS - 0.01)
    assert cmap.is_free(2.0, 0.1, radius=0.05)  # a thinner agent fits


def test_door_is_passable_and_its_jambs_are_not(cmap: CollisionMap) -> None:
    assert cmap.is_free(2.0, 3.0)  # in the doorway, 0.5 m from either jamb
    assert cmap.is_free(2.0, 2.9) and cmap.is_free(2.0, 3.1)
    jamb = cmap.collision(1.6, 3.0)  # 0.1 m from the jamb at x = 1.5
    assert jamb is not None and jamb.kind == "wall"
    assert not cmap.is_free(2.4, 3.0)


@pytest.mark.parametrize("x, z", [(-0.5, 1.0), (5.0, 1.0), (2.0, 6.5), (2.0, -0.01), (100.0, 100.0)])
def test_outside_the_house(cmap: CollisionMap, x: float, z: float) -> None:
    hit = cmap.collision(x, z)
    assert hit is not None and hit.kind == "outside"


# ---- objects ---------------------------------------------------------------------------------

def test_object_footprint_blocks(cmap: CollisionMap) -> None:
    cmap.set_objects([_box("dresser|1", (2.0, 0.4, 1.5), (1.0, 0.8, 0.5))])
    hit = cmap.collision(2.0, 1.5)
    assert hit is not None and (hit.kind, hit.id) == ("object", "dresser|1")
    assert not cmap.is_free(2.5 + RADIUS - 0.05, 1.5)  # disc overlaps the +x face
    assert cmap.is_free(2.5 + RADIUS + 0.05, 1.5)
    assert not cmap.is_free(2.0, 1.75 + RADIUS - 0.05)  # and the +z face (depth 0.5)
    assert cmap.is_free(2.0, 1.75 + RADIUS + 0.05)


def test_rotated_footprint(cmap: CollisionMap) -> None:
    """A 1 x 1 m box at 45 degrees reaches 0.707 m along x: a point 0.9 m out is 0.19 m from
    its corner (blocked), whereas the same box unrotated leaves it 0.4 m clear."""
    point = (2.0 + 0.9, 1.5)
    cmap.set_objects([_box("box|0", (2.0, 0.4, 1.5), (1.0, 0.8, 1.0), yaw=0.0)])
    assert cmap.is_free(*point)
    cmap.set_objects([_box("box|45", (2.0, 0.4, 1.5), (1.0, 0.8, 1.0), yaw=45.0)])
    assert not cmap.is_free(*point)
    # and the rotated box is thinner along its diagonal-free directions
    assert cmap.is_free(2.0 + 0.62, 1.5 + 0.62)


def test_objects_that_do_not_stand_on_the_floor_do_not_block(cmap: CollisionMap) -> None:
    on_table = _box("apple|1", (1.0, 0.9, 1.0), (0.1, 0.1, 0.1), object_type="Apple")
    on_table.parent = "table|1"
    held = _box("mug|1", (1.0, 1.0, 2.0), (0.1, 0.1, 0.1), object_type="Mug")
    held.is_picked_up = True
    gone = _box("bread|1", (3.0, 0.5, 1.0), (0.3, 0.3, 0.3), object_type="Bread")
    gone.active = False
    painting = _box("painting|1", (3.0, 1.8, 2.0), (0.6, 0.6, 0.03), object_type="Painting")
    cmap.set_objects([on_table, held, gone, painting])
    for x, z in [(1.0, 1.0), (1.0, 2.0), (3.0, 1.0), (3.0, 2.0)]:
        assert cmap.is_free(x, z), (x, z)


def test_set_objects_replaces_the_previous_table(cmap: CollisionMap) -> None:
    box = _box("chair|1", (2.0, 0.4, 1.5), (0.5, 0.8, 0.5))
    cmap.set_objects([box])
    assert not cmap.is_free(2.0, 1.5)
    box.position = np.array([1.0, 0.4, 1.0])  # moved
    cmap.set_objects([box])
    assert cmap.is_free(2.0, 1.5)
    assert not cmap.is_free(1.0, 1.0)
    box.is_picked_up = True
    cmap.set_objects([box])
    assert cmap.is_free(1.0, 1.0)
    cmap.set_objects([])
    assert cmap.is_free(1.0, 1.0)


# ---- vectorised and rasterised forms ---------------------------------------------------------

@pytest.fixture(scope="module")
def house_map() -> CollisionMap:
    house = load_house("houses_dev.jsonl.gz", 0)
    cmap = CollisionMap(parse_layout(house), RADIUS)
    cmap.set_objects(list(build_objects(house, default_catalog()).values()))
    return cmap


def _random_points(cmap: CollisionMap, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    x0, z0, x1, z1 = cmap.layout.bounds
    rng = np.random.default_rng(seed)
    return rng.uniform(x0 - 0.5, x1 + 0.5, n), rng.uniform(z0 - 0.5, z1 + 0.5, n)


def test_real_house_has_every_kind_of_answer(house_map: CollisionMap) -> None:
    xs, zs = _random_points(house_map, 3000, seed=7)
    kinds = {getattr(house_map.collision(x, z), "kind", "free") for x, z in zip(xs, zs)}
    assert kinds == {"free", "wall", "object", "outside"}
    assert house_map.is_free(4.25, 10.5)  # the house's agent start


def test_front_door_is_closed_as_in_thor(house_map: CollisionMap) -> None:
    """House 0's front door (exterior wall, openable false, openness 0) is a closed door leaf in
    AI2-THOR: no hole is cut for it, so its wall stays solid where the door is."""
    house = load_house("houses_dev.jsonl.gz", 0)
    exterior = [d for d in house["doors"] if "exterior" in d["wall0"] or "exterior" in d["wall1"]]
    assert exterior and exterior[0]["openness"] == 0
    assert not any(h.id == exterior[0]["id"] for w in house_map.layout.walls for h in w.holes)
    open_doors = {d["id"] for d in house["doors"] if d.get("openness") != 0}
    cut = {h.id for w in house_map.layout.walls for h in w.holes if h.kind == "door"}
    assert open_doors and open_doors <= cut  # open doorways and door frames are still holes


@pytest.mark.parametrize("radius", [None, 0.1, 0.35])
def test_free_mask_agrees_with_is_free(house_map: CollisionMap, radius: float | None) -> None:
    xs, zs = _random_points(house_map, 4000, seed=11)
    mask = house_map.free_mask(xs, zs, radius)
    expected = np.array([house_map.is_free(x, z, radius) for x, z in zip(xs, zs)])
    assert mask.dtype == bool and mask.shape == xs.shape
    assert 0 < expected.sum() < len(expected)
    mismatches = np.flatnonzero(mask != expected)
    assert len(mismatches) == 0, [(xs[i], zs[i], bool(mask[i])) for i in mismatches[:5]]


@pytest.mark.parametrize("radius", [None, 0.1, 0.35])
def test_the_windowed_free_mask_is_the_reference_bit_for_bit(house_map: CollisionMap, radius: float | None) -> None:
    """free_mask tests each wall and footprint only near it; on a whole-house grid and on random
    points it answers exactly as the every-point-against-everything reference."""
    x0, z0, x1, z1 = house_map.layout.bounds
    gx, gz = np.meshgrid(np.arange(x0, x1, 0.05), np.arange(z0, z1, 0.05), indexing="ij")
    assert np.array_equal(house_map.free_mask(gx, gz, radius), house_map.free_mask_everywhere(gx, gz, radius))
    xs, zs = _random_points(house_map, 3000, seed=17)
    assert np.array_equal(house_map.free_mask(xs, zs, radius), house_map.free_mask_everywhere(xs, zs, radius))


def test_free_mask_keeps_input_shape(house_map: CollisionMap) -> None:
    gx, gz = np.meshgrid(np.linspace(1, 9, 7), np.linspace(1, 11, 5), indexing="ij")
    mask = house_map.free_mask(gx, gz)
    assert mask.shape == (7, 5)
    assert mask[2, 3] == house_map.is_free(gx[2, 3], gz[2, 3])


def _free_cell_probes(cmap: CollisionMap, resolution: float, seed: int = 3, max_cells: int = 600) -> list[tuple[float, float]]:
    """Points of grid-free cells: centre, the four corners and three random interior points of
    (a sample of) every free cell."""
    grid = cmap.free_grid(resolution)
    free_cells = np.argwhere(grid.mask)
    assert len(free_cells) > 0.1 * grid.mask.size  # not trivially empty
    rng = np.random.default_rng(seed)
    offsets = np.vstack([[0.0, 0.0], [[sx, sz] for sx in (-0.5, 0.5) for sz in (-0.5, 0.5)],
                         rng.uniform(-0.5, 0.5, (3, 2))]) * resolution
    cells = free_cells[rng.choice(len(free_cells), size=min(max_cells, len(free_cells)), replace=False)]
    # always include the free cells on the house's outline, where the interesting cases are
    x0, z0, x1, z1 = cmap.layout.bounds
    centres = np.array([grid.x0, grid.z0]) + free_cells * resolution
    near_x = np.minimum(np.abs(centres[:, 0] - x0), np.abs(centres[:, 0] - x1)) < resolution
    near_z = np.minimum(np.abs(centres[:, 1] - z0), np.abs(centres[:, 1] - z1)) < resolution
    on_outline = free_cells[near_x | near_z]
    probes = []
    for i, j in np.vstack([cells, on_outline]):
        cx, cz = grid.x0 + i * resolution, grid.z0 + j * resolution
        assert grid.is_free(cx, cz)
        probes.extend((float(cx + dx), float(cz + dz)) for dx, dz in offsets)
    return probes


@pytest.mark.parametrize("resolution", [0.05, 0.1])
def test_free_grid_cells_touch_no_wall_or_object(house_map: CollisionMap, resolution: float) -> None:
    """Conservative against obstacles: every point of a free cell keeps the agent's disc off every
    wall and object footprint."""
    for x, z in _free_cell_probes(house_map, resolution):
        hit = house_map.collision(x, z)
        assert hit is None or hit.kind == "outside", (x, z, hit)


@pytest.mark.parametrize("resolution", [0.05, 0.1])
def test_free_grid_is_conservative(house_map: CollisionMap, resolution: float) -> None:
    """No point of a grid-free cell is blocked for the exact check (walls, objects or outside)."""
    blocked = [(x, z, house_map.collision(x, z).kind) for x, z in _free_cell_probes(house_map, resolution)
               if not house_map.is_free(x, z)]
    assert blocked == []


def test_free_grid_is_not_much_smaller_than_free_space(house_map: CollisionMap) -> None:
    """Conservative, but only by the cell's half-diagonal: most exactly free points are grid-free."""
    grid = house_map.free_grid(0.05)
    xs, zs = _random_points(house_map, 3000, seed=5)
    exact = house_map.free_mask(xs, zs)
    on_grid = np.array([grid.is_free(x, z) for x, z in zip(xs, zs)])
    inside = np.array([house_map.room_at(x, z) is not None for x, z in zip(xs, zs)])
    assert not np.any(on_grid & ~exact & inside)
    assert on_grid.sum() > 0.8 * exact.sum()


def test_free_grid_outside_its_extent(house_map: CollisionMap) -> None:
    grid = house_map.free_grid(0.1)
    assert not grid.is_free(-5.0, -5.0)
    assert not grid.is_free(1e3, 1e3)


def test_free_grid_follows_object_changes(layout: HouseLayout) -> None:
    cmap = CollisionMap(layout, RADIUS)
    assert cmap.free_grid(0.1).is_free(2.0, 1.5)
    cmap.set_objects([_box("table|1", (2.0, 0.4, 1.5), (1.0, 0.8, 1.0))])
    assert not cmap.free_grid(0.1).is_free(2.0, 1.5)


def test_radius_is_respected_in_door_gap() -> None:
    """A 1 m door lets a 0.4 m agent through but not a 1.2 m one."""
    a = [(0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0)]
    b = [(0.0, 3.0), (4.0, 3.0), (4.0, 6.0), (0.0, 6.0)]
    shared = ((0.0, 3.0), (4.0, 3.0))
    layout = HouseLayout("synthetic", [Room("A", "Kitchen", tuple(a)), Room("B", "Bedroom", tuple(b))],
                         _walls("A", a, shared) + _walls("B", b, shared))
    assert CollisionMap(layout, 0.2).is_free(2.0, 3.0)
    assert not CollisionMap(layout, 0.6).is_free(2.0, 3.0)
    assert math.isfinite(CollisionMap(layout, 0.2).wall_clearance(2.0, 3.0))


def test_a_house_reset_again_reuses_its_free_grid_only_while_nothing_on_the_floor_moved() -> None:
    from household.house_data import load_house
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    house = load_house("houses_dev.jsonl.gz", 0)
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    env.reset(house)
    grid = env.collision.free_grid()
    env.reset(house)
    assert env.collision.free_grid() is grid  # same walls, same floor obstacles
    stool = env.table.objects["6|3"]
    moved = CollisionMap(env.layout, env.config.agent_radius)
    stool.position = stool.position + np.array([0.3, 0.0, 0.0])
    moved.set_objects(list(env.table.objects.values()))
    assert not moved.reuse_grids(env.collision)
    assert moved.free_grid() is not grid
