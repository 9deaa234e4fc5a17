"""Loading ProcTHOR houses: jsonl(.gz) files, the static layout, and the object table.

Errors must name where the problem is (file:line, house id, field path, offending value) so a
broken house in a 10,000-house file can be found without a debugger.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from household.assets import default_catalog
from household.house_data import HouseError, load_house, load_houses_file, resolve_data_file
from sim_bridge.embedded.house_geometry import HouseLayout, parse_layout
from sim_bridge.embedded.objects import build_objects, iter_house_objects

DEV_FILE = "houses_dev.jsonl.gz"


@pytest.fixture(scope="module")
def house0() -> dict[str, Any]:
    return load_house(DEV_FILE, 0)


@pytest.fixture()
def house(house0: dict[str, Any]) -> dict[str, Any]:
    """A private copy to break."""
    return copy.deepcopy(house0)


def _tiny_house(house_id: str) -> dict[str, Any]:
    """A one-room house: 4 x 3 m, no objects."""
    corners = [(0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0)]
    walls = []
    for (x0, z0), (x1, z1) in zip(corners, corners[1:] + corners[:1]):
        walls.append({
            "id": f"wall|{house_id}|{x0}|{z0}|{x1}|{z1}",
            "roomId": "room|0",
            "polygon": [{"x": x0, "y": 0.0, "z": z0}, {"x": x1, "y": 0.0, "z": z1},
                        {"x": x1, "y": 2.5, "z": z1}, {"x": x0, "y": 2.5, "z": z0}],
        })
    return {
        "id": house_id,
        "rooms": [{"id": "room|0", "roomType": "Kitchen",
                   "floorPolygon": [{"x": x, "y": 0.0, "z": z} for x, z in corners]}],
        "walls": walls,
        "objects": [],
    }


def _write_lines(path: Path, lines: list[str]) -> Path:
    text = "".join(line + "\n" for line in lines)
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# ---- house files -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["houses.jsonl", "houses.jsonl.gz"])
def test_malformed_line_is_reported_and_others_load(tmp_path: Path, name: str) -> None:
    path = _write_lines(tmp_path / name, [
        json.dumps(_tiny_house("h-a")),
        '{"id": "broken", "rooms": [',  # line 2: truncated JSON
        json.dumps(_tiny_house("h-c")),
        "[1, 2, 3]",  # line 4: JSON, but not a house object
        json.dumps(_tiny_house("h-e")),
    ])
    report = load_houses_file(path)
    assert [h["id"] for h in report.houses] == ["h-a", "h-c", "h-e"]
    assert len(report.errors) == 2
    assert f"{path}:2:" in report.errors[0]
    assert f"{path}:4:" in report.errors[1]
    for h in report.houses:
        parse_layout(h)  # the survivors are complete houses


def test_blank_lines_are_skipped_silently(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "houses.jsonl", [json.dumps(_tiny_house("a")), "", "   ", json.dumps(_tiny_house("b"))])
    report = load_houses_file(path)
    assert [h["id"] for h in report.houses] == ["a", "b"]
    assert report.errors == []


def test_house_without_id_gets_file_and_index(tmp_path: Path) -> None:
    anonymous = _tiny_house("x")
    del anonymous["id"]
    path = _write_lines(tmp_path / "houses.jsonl.gz", [json.dumps(_tiny_house("first")), json.dumps(anonymous)])
    report = load_houses_file(path)
    assert report.houses[1]["id"] == "houses.jsonl.gz#1"
    # load_house gives the same id for the same 0-based line index
    assert load_house(path, 1)["id"] == "houses.jsonl.gz#1"
    assert load_house(path, 0)["id"] == "first"


def test_load_house_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "houses.jsonl", [json.dumps(_tiny_house("ok")), "{not json"])
    with pytest.raises(HouseError, match=rf"{path}:2:"):
        load_house(path, 1)
    assert load_house(path, 0)["id"] == "ok"  # the good line still loads by index


def test_load_house_index_past_end(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "houses.jsonl", [json.dumps(_tiny_house("only"))])
    with pytest.raises(HouseError, match="no house at index 5"):
        load_house(path, 5)


def test_missing_file_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no_such_houses.jsonl.gz"):
        resolve_data_file("no_such_houses.jsonl.gz", tmp_path)
    with pytest.raises(FileNotFoundError):
        load_houses_file(tmp_path / "absent.jsonl")


def test_data_dir_is_searched(tmp_path: Path) -> None:
    _write_lines(tmp_path / "mine.jsonl", [json.dumps(_tiny_house("from-data-dir"))])
    assert load_house("mine.jsonl", 0, data_dir=tmp_path)["id"] == "from-data-dir"


def test_packaged_dev_houses_load(house0: dict[str, Any]) -> None:
    assert house0["id"] == f"{DEV_FILE}#0"
    report = load_houses_file(DEV_FILE)
    assert report.errors == []
    assert len(report.houses) >= 10
    assert report.houses[0]["id"] == house0["id"]


# ---- layout ----------------------------------------------------------------------------------

def test_layout_of_real_house(house0: dict[str, Any]) -> None:
    layout = parse_layout(house0)
    assert layout.house_id == house0["id"]
    assert {r.id for r in layout.rooms} == {r["id"] for r in house0["rooms"]}
    assert len(layout.walls) == len(house0["walls"])
    min_x, min_z, max_x, max_z = layout.bounds
    assert max_x - min_x > 3.0 and max_z - min_z > 3.0
    for room in layout.rooms:
        for x, z in room.polygon:
            assert min_x <= x <= max_x and min_z <= z <= max_z
    assert all(w.height > 2.0 for w in layout.walls)


def _hole_world_span(layout: HouseLayout, wall_id: str, hole_id: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """World (x, z) ends of a hole in every copy of a wall."""
    spans = []
    for wall in layout.walls:
        if wall.id != wall_id:
            continue
        p0, p1 = np.array(wall.p0), np.array(wall.p1)
        direction = (p1 - p0) / wall.length
        for hole in wall.holes:
            if hole.id == hole_id:
                a, b = p0 + direction * hole.s0, p0 + direction * hole.s1
                spans.append(tuple(sorted((a, b), key=lambda p: (p[0], p[1]))))
    return spans


def test_door_holes_cut_both_wall_copies_at_the_same_place(house0: dict[str, Any]) -> None:
    layout = parse_layout(house0)
    assert house0["doors"], "house 0 has doors"
    for door in (d for d in house0["doors"] if d.get("openness") != 0):  # a closed door is cut nowhere
        spans = _hole_world_span(layout, door["wall0"], door["id"]) + _hole_world_span(layout, door["wall1"], door["id"])
        assert len(spans) >= 2, f"door {door['id']} not cut in both walls"
        for a, b in spans[1:]:
            np.testing.assert_allclose(a, spans[0][0], atol=1e-6)
            np.testing.assert_allclose(b, spans[0][1], atol=1e-6)
        hp = door["holePolygon"]
        width = abs(hp[1]["x"] - hp[0]["x"])
        assert np.linalg.norm(spans[0][1] - spans[0][0]) == pytest.approx(width, abs=1e-6)


def test_door_hole_is_open_at_floor_height_only(house0: dict[str, Any]) -> None:
    layout = parse_layout(house0)
    door = house0["doors"][0]
    wall = next(w for w in layout.walls if w.id == door["wall0"])
    hole = next(h for h in wall.holes if h.id == door["id"])
    low = wall.solid_intervals(0.3)
    mid_hole = 0.5 * (hole.s0 + hole.s1)
    assert not any(a <= mid_hole <= b for a, b in low), "the door is passable at 0.3 m"
    assert any(a <= mid_hole <= b for a, b in wall.solid_intervals(hole.y1 + 0.05)), "wall above the door is solid"


@pytest.mark.parametrize("key", ["rooms", "walls", "objects"])
def test_missing_key_names_house_and_field(house: dict[str, Any], key: str) -> None:
    del house[key]
    with pytest.raises(HouseError) as info:
        parse_layout(house)
    assert house["id"] in str(info.value)
    assert key in str(info.value)


def test_degenerate_floor_polygon(house: dict[str, Any]) -> None:
    room = house["rooms"][1]
    room["floorPolygon"] = [{"x": 0.0, "y": 0.0, "z": 0.0}, {"x": 1.0, "y": 0.0, "z": 1.0}, {"x": 2.0, "y": 0.0, "z": 2.0}]
    with pytest.raises(HouseError) as info:
        parse_layout(house)
    message = str(info.value)
    assert house["id"] in message and "rooms[1]" in message and room["id"] in message
    assert "floorPolygon" in message


def test_floor_polygon_with_bad_point(house: dict[str, Any]) -> None:
    house["rooms"][0]["floorPolygon"][2] = {"x": 1.0, "z": 2.0}  # no y
    with pytest.raises(HouseError, match=r"rooms\[0\]\.floorPolygon"):
        parse_layout(house)


def test_door_with_unknown_wall0(house: dict[str, Any]) -> None:
    house["doors"][0]["wall0"] = "wall|nowhere"
    with pytest.raises(HouseError) as info:
        parse_layout(house)
    message = str(info.value)
    assert house["id"] in message
    assert "doors[0]" in message and "wall0" in message and "wall|nowhere" in message
    assert house["doors"][0]["id"] in message


def test_degenerate_wall(house: dict[str, Any]) -> None:
    wall = house["walls"][3]
    wall["polygon"] = [{"x": 1.0, "y": 0.0, "z": 1.0}, {"x": 1.0, "y": 2.0, "z": 1.0}, {"x": 1.0, "y": 1.0, "z": 1.0}]
    with pytest.raises(HouseError, match=r"walls\[3\]") as info:
        parse_layout(house)
    assert wall["id"] in str(info.value)


# ---- objects ---------------------------------------------------------------------------------

def test_build_objects_covers_every_nested_object(house0: dict[str, Any]) -> None:
    objects = build_objects(house0, default_catalog())
    raw = [obj for obj, _, _ in iter_house_objects(house0["objects"])]
    # plus the drawers derived from what rests inside dressers and side tables (levels.py)
    derived = {oid for oid, o in objects.items() if o.part_of is not None}
    assert derived and all(objects[oid].type == "Drawer" for oid in derived)
    assert set(objects) - derived == {o["id"] for o in raw}
    for o in raw:
        sim = objects[o["id"]]
        np.testing.assert_allclose(sim.position, [o["position"][k] for k in "xyz"])
        assert sim.type == default_catalog().get(o["assetId"]).object_type
        assert 0.0 <= sim.yaw_deg < 360.0


def test_pickupable_children_of_receptacles_have_that_parent(house0: dict[str, Any]) -> None:
    objects = build_objects(house0, default_catalog())
    nested = [(child, parent) for child, parent, _ in iter_house_objects(house0["objects"]) if parent is not None]
    assert nested
    for child, parent in nested:
        sim_child, sim_parent = objects[child["id"]], objects[parent["id"]]
        if sim_child.affords("pickupable") and sim_parent.affords("receptacle"):
            # on it, or in one of its drawers (levels.py)
            holder = objects[sim_child.parent] if sim_child.parent else None
            assert sim_child.parent == parent["id"] or (holder is not None and holder.part_of == parent["id"])
    # Non-pickupable things never get a parent (a TV on its stand stands on its own).
    assert all(o.parent is None for o in objects.values() if not o.affords("pickupable"))


def _nested_path(house: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Some object nested under another one, and its field path."""
    for obj, parent, where in iter_house_objects(house["objects"]):
        if parent is not None:
            return obj, where
    raise AssertionError("house has no nested objects")


def test_unknown_asset_names_house_field_and_asset(house: dict[str, Any]) -> None:
    obj, where = _nested_path(house)
    assert ".children[" in where
    obj["assetId"] = "No_Such_Asset_42"
    with pytest.raises(HouseError) as info:
        build_objects(house, default_catalog())
    message = str(info.value)
    assert house["id"] in message
    assert where in message
    assert "No_Such_Asset_42" in message
    assert obj["id"] in message


def test_duplicate_object_id(house: dict[str, Any]) -> None:
    first, second = house["objects"][0], house["objects"][1]
    second["id"] = first["id"]
    with pytest.raises(HouseError) as info:
        build_objects(house, default_catalog())
    message = str(info.value)
    assert "duplicate" in message and first["id"] in message and house["id"] in message
    assert "objects[1]" in message


@pytest.mark.parametrize("key", ["id", "assetId", "position"])
def test_object_missing_key(house: dict[str, Any], key: str) -> None:
    del house["objects"][2][key]
    with pytest.raises(HouseError) as info:
        build_objects(house, default_catalog())
    assert "objects[2]" in str(info.value) and key in str(info.value) and house["id"] in str(info.value)


def test_object_with_bad_position(house: dict[str, Any]) -> None:
    house["objects"][0]["position"] = {"x": 1.0, "y": "high", "z": 0.0}
    with pytest.raises(HouseError, match=r"objects\[0\]\.position"):
        build_objects(house, default_catalog())


def _with_empty_wall(house: dict[str, Any]) -> tuple[dict[str, Any], str]:
    house = json.loads(json.dumps(house))
    door = next(d for d in house["doors"] if d.get("openness") == 1)
    for w in house["walls"]:
        if w["id"] in (door["wall0"], door["wall1"]):
            w["empty"] = True
    house["doors"] = [d for d in house["doors"] if d["id"] != door["id"]]  # the empty wall is the only link
    return house, door["wall0"]


def test_an_empty_wall_is_not_there(house0: dict[str, Any]) -> None:
    """ProcTHOR's "empty": true (open-plan rooms): AI2-THOR builds no wall, so neither do we."""
    from sim_bridge.embedded.scene_mesh import wall_solid_rectangles

    house, wall_id = _with_empty_wall(house0)
    layout = parse_layout(house)
    wall = next(w for w in layout.walls if w.id == wall_id)
    assert wall.empty and wall.solid_intervals(0.3) == [] and wall_solid_rectangles(wall) == []
    solid = next(w for w in layout.walls if not w.empty)
    assert solid.solid_intervals(0.3) and wall_solid_rectangles(solid)


def test_a_house_linked_only_by_an_empty_wall_loads_and_is_walkable(house0: dict[str, Any]) -> None:
    from sim_bridge.embedded.collision import CollisionMap

    house, wall_id = _with_empty_wall(house0)
    layout = parse_layout(house)
    wall = next(w for w in layout.walls if w.id == wall_id)
    cmap = CollisionMap(layout)
    p0, p1 = np.array(wall.p0), np.array(wall.p1)
    d = (p1 - p0) / wall.length
    normal = np.array([-d[1], d[0]])
    mid = p0 + d * wall.length / 2
    # standing right where the wall would be, on both sides of it: free when nothing else is there
    assert cmap.collision(*mid) is None or cmap.collision(*mid).kind != "wall"
    assert all(cmap.collision(*(mid + s * 0.25 * normal)) is None or cmap.collision(*(mid + s * 0.25 * normal)).kind
               != "wall" for s in (1.0, -1.0))


@pytest.mark.parametrize("field,value", [("wall1", "wall|nowhere|0|0|1|1"), ("room0", "room|99")])
def test_a_door_naming_a_missing_wall_or_room_is_refused(house0: dict[str, Any], field: str, value: str) -> None:
    house = json.loads(json.dumps(house0))
    door = house["doors"][0]
    door[field] = value
    with pytest.raises(HouseError, match=rf"{door['id']}.*{field}"):
        parse_layout(house)
