"""L- and C-shaped counters are the union of their runs (sim_bridge/embedded/shapes.py, issue 30).

Dev house 0's kitchen has ``6|0``, a Countertop_C_10x8 (3.05 x 2.48 m, rotation.y 90), with
objects on all three runs; dev house 1's kitchen has ``8|1``, a Countertop_L_4x10 (rotation.y 180).
"""

from __future__ import annotations


import numpy as np
import pytest

from household.assets import default_catalog
from household.house_data import iter_house_lines, load_house, parse_house_line, resolve_data_file
from household.types import Action
from sim_bridge.embedded.env import AgentPose, EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.embedded.interactions import find_placement, find_spot
from sim_bridge.embedded.objects import SimObject, build_objects, support_under
from sim_bridge.embedded.shapes import RUN_DEPTH_M, compound_parts, shape_kind

DEV_FILE = "houses_dev.jsonl.gz"
C_COUNTER, L_COUNTER = "6|0", "8|1"


@pytest.fixture(scope="module")
def env0() -> EmbeddedEnvironment:
    environment = EmbeddedEnvironment(EmbeddedConfig(width=96, height=72))
    environment.reset(load_house(DEV_FILE, 0))
    return environment


@pytest.fixture(scope="module")
def env1() -> EmbeddedEnvironment:
    environment = EmbeddedEnvironment(EmbeddedConfig(render=False))
    environment.reset(load_house(DEV_FILE, 1))
    return environment


def _world(obj: SimObject, lx: float, lz: float) -> tuple[float, float]:
    """World (x, z) of a point given in the object's local frame."""
    p = obj.position + obj.rotation() @ np.array([lx, 0.0, lz])
    return float(p[0]), float(p[2])


def _in_bounding_footprint(obj: SimObject, x: float, z: float) -> bool:
    local = (np.array([x, obj.position[1], z]) - obj.position) @ obj.rotation()
    return abs(local[0]) <= obj.size[0] / 2.0 and abs(local[2]) <= obj.size[2] / 2.0


# ---- the shapes themselves -----------------------------------------------------------------

def test_shape_kind_comes_from_the_asset_id() -> None:
    assert shape_kind("Countertop_C_10x8") == "C"
    assert shape_kind("Countertop_L_4x10") == "L"
    assert shape_kind("Countertop_I_10x2") is None and shape_kind("Fridge_1") is None
    assert compound_parts("Countertop_I_10x2", np.array([3.05, 0.94, 0.61])) is None


def test_c_parts_are_three_runs_of_two_feet_that_tile_the_sides() -> None:
    size = np.array([3.048, 0.938, 2.48])
    parts = compound_parts("Countertop_C_10x8", size)
    assert parts is not None and len(parts) == 3
    back, *sides = parts
    assert back.size[0] == pytest.approx(size[0]) and back.size[2] == pytest.approx(RUN_DEPTH_M)
    assert back.center[2] == pytest.approx(-size[2] / 2.0 + RUN_DEPTH_M / 2.0)  # the back is local -z
    assert sorted(round(float(p.center[0]), 3) for p in sides) == pytest.approx(
        [-size[0] / 2.0 + RUN_DEPTH_M / 2.0, size[0] / 2.0 - RUN_DEPTH_M / 2.0], abs=1e-3)
    for p in parts:
        assert p.size[1] == pytest.approx(size[1])
    # The runs cover the three sides exactly once: area = box minus the open inside.
    area = sum(float(p.size[0] * p.size[2]) for p in parts)
    inside = (size[0] - 2 * RUN_DEPTH_M) * (size[2] - RUN_DEPTH_M)
    assert area == pytest.approx(size[0] * size[2] - inside)


def test_every_object_placed_on_an_l_or_c_counter_of_the_dev_houses_lies_on_its_runs() -> None:
    """The derivation (shapes.py) checked on the data: ProcTHOR's placements on every L and C
    counter of the dev houses fall inside the runs, none inside the bend."""
    catalog = default_catalog()
    path = resolve_data_file(DEV_FILE)
    counters = placed = 0
    for lineno, line in iter_house_lines(path):
        house = parse_house_line(path, lineno, line)
        if not any(k in line for k in ("Countertop_L_", "Countertop_C_")):
            continue
        objects = build_objects(house, catalog)
        for counter in objects.values():
            if counter.parts is None:
                continue
            counters += 1
            for obj in objects.values():
                if obj.parent != counter.id:
                    continue
                placed += 1
                x, z = float(obj.position[0]), float(obj.position[2])
                assert counter.contains_xz(x, z, margin=1e-6), f"house {lineno}: {obj.id} off the runs of {counter.id}"
    assert counters >= 50 and placed >= 500


# ---- collision, reach, rendering -----------------------------------------------------------

def test_floor_inside_the_c_counters_bend_is_free(env0: EmbeddedEnvironment) -> None:
    counter = env0.table.objects[C_COUNTER]
    assert counter.parts is not None
    x, z = _world(counter, 0.0, 0.3)  # the middle of the open inside
    assert _in_bounding_footprint(counter, x, z)  # one solid box would cover it
    assert env0.collision.is_free(x, z)
    assert not counter.contains_xz(x, z)
    assert env0.collision.free_grid().is_free(x, z)


def test_each_run_of_the_c_counter_is_solid(env0: EmbeddedEnvironment) -> None:
    counter = env0.table.objects[C_COUNTER]
    hx, hz = counter.size[0] / 2.0, counter.size[2] / 2.0
    for lx, lz in ((0.0, -hz + 0.3), (-hx + 0.3, hz - 0.3), (hx - 0.3, hz - 0.3)):
        hit = env0.collision.collision(*_world(counter, lx, lz), radius=0.05)
        assert hit is not None and hit.id == C_COUNTER, (lx, lz, hit)


def test_l_counters_corner_is_solid_and_its_open_corner_is_not(env1: EmbeddedEnvironment) -> None:
    counter = env1.table.objects[L_COUNTER]
    assert counter.asset.asset_id.startswith("Countertop_L_")
    hx, hz = counter.size[0] / 2.0, counter.size[2] / 2.0
    corner = _world(counter, hx - 0.2, -hz + 0.2)  # where the back run meets the side run
    hit = env1.collision.collision(*corner, radius=0.05)
    assert hit is not None and hit.id == L_COUNTER
    assert counter.distance_to_point(np.array([corner[0], 0.5, corner[1]])) == 0.0
    open_corner = _world(counter, -hx + 0.2, hz - 0.2)  # the -x, +z corner of the box is floor
    assert _in_bounding_footprint(counter, *open_corner)
    assert not counter.contains_xz(*open_corner)
    hit = env1.collision.collision(*open_corner, radius=0.05)
    assert hit is None or hit.id != L_COUNTER


def test_floor_inside_the_bend_is_rendered_as_floor(env0: EmbeddedEnvironment) -> None:
    counter = env0.table.objects[C_COUNTER]
    x, z = _world(counter, 0.0, 0.45)
    back = counter.position + counter.rotation() @ np.array([0.0, 0.0, -counter.size[2] / 2.0])
    yaw = float(np.degrees(np.arctan2(back[0] - x, back[2] - z)))
    cam = env0.camera_position(AgentPose(x, z, yaw, 30.0))
    frame = env0.renderer.render(cam, yaw, 30.0)
    rays = env0.renderer.camera_rays(cam, yaw, 30.0)
    v, u = frame.depth.shape[0] - 1, frame.depth.shape[1] // 2  # bottom centre: the floor at the feet
    point = rays[v, u, :3] + frame.depth[v, u] * rays[v, u, 3:]
    assert frame.instance[v, u] == 0 and point[1] == pytest.approx(0.0, abs=0.02)
    assert _in_bounding_footprint(counter, float(point[0]), float(point[2]))
    # ... and the back run ahead is the counter, one instance for all its runs.
    counter_index = env0._render_index[C_COUNTER] + 1
    assert (frame.instance == counter_index).any()


# ---- placement ------------------------------------------------------------------------------

def test_objects_on_every_run_rest_on_the_counter(env0: EmbeddedEnvironment) -> None:
    counter = env0.table.objects[C_COUNTER]
    on_it = [o for o in env0.table.objects.values() if o.parent == C_COUNTER]
    runs = set()
    for obj in on_it:
        local = (obj.position - counter.position) @ counter.rotation()
        hits = [k for k, (pc, ps) in enumerate(zip(*counter.local_boxes()))
                if abs(local[0] - pc[0]) <= ps[0] / 2.0 and abs(local[2] - pc[2]) <= ps[2] / 2.0]
        assert hits, f"{obj.id} is not on a run of {C_COUNTER}"
        runs.add(hits[0])
        # On the top (a few asset boxes, cups and bottles, sit up to 6 cm above their pivot).
        bottom = obj.position[1] - obj.size[1] / 2.0
        assert counter.surface_y() - 0.01 <= bottom <= counter.surface_y() + 0.08, obj.id
        assert support_under(obj, env0.table.objects.values()) == C_COUNTER, obj.id
    assert runs == {0, 1, 2}


def test_put_on_a_c_counter_lands_on_a_run_not_in_the_bend(env0: EmbeddedEnvironment) -> None:
    counter = env0.table.objects[C_COUNTER]
    potato = env0.table.objects["small|6|20"]
    spot = find_placement(potato, counter, [])  # no siblings: the bounding box's centre would win
    assert spot is not None
    assert counter.contains_xz(float(spot[0]), float(spot[2]))
    assert spot[1] == pytest.approx(counter.surface_y() + potato.size[1] / 2.0)


def test_potato_is_picked_up_from_inside_the_bend_and_put_back() -> None:
    environment = EmbeddedEnvironment(EmbeddedConfig(width=96, height=72))
    environment.reset(load_house(DEV_FILE, 0))
    counter = environment.table.objects[C_COUNTER]
    potato = "small|6|20"
    target = environment.table.objects[potato].position
    x, z = _world(counter, 0.0, 0.2)
    yaw = float(np.degrees(np.arctan2(target[0] - x, target[2] - z))) % 360.0
    environment.pose = AgentPose(x, z, yaw, 30.0)
    assert environment.collision.is_free(x, z)
    result = environment.step(Action("PickupObject", potato))
    assert result.success, result.error
    result = environment.step(Action("PutObject", C_COUNTER))
    assert result.success, result.error
    put = environment.table.objects[potato]
    assert put.parent == C_COUNTER and counter.contains_xz(float(put.position[0]), float(put.position[2]))


def test_put_on_a_crowded_counter_finds_a_gap_between_the_footprints(env0: EmbeddedEnvironment) -> None:
    """With everything ProcTHOR put on the C counter still there, a laptop-sized object lands
    where its whole footprint is on the runs and clear of every other footprint."""
    counter = env0.table.objects[C_COUNTER]
    siblings = env0.table.children(C_COUNTER)
    book = SimObject("test|book", "Book", counter.asset, np.array([0.0, 0.0, 0.0]), 0.0, np.array([0.36, 0.03, 0.28]))
    spot = find_spot(book, counter, siblings)
    assert spot is not None
    book.position, book.yaw_deg = spot  # turned square to the counter, as THOR places
    corners = book.corners()
    assert all(counter.contains_xz(float(c[0]), float(c[2])) for c in corners)
    x0, x1, z0, z1 = corners[:, 0].min(), corners[:, 0].max(), corners[:, 2].min(), corners[:, 2].max()
    for s in siblings:
        c = s.corners()
        assert (x1 <= c[:, 0].min() or c[:, 0].max() <= x0 or z1 <= c[:, 2].min() or c[:, 2].max() <= z0), s.id
