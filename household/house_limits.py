"""Numbers in a house must be finite and of household size (issue 32).

A NaN object position or a room whose corners lie 1e306 m apart passed every check: the
simulator started, the agent saw nothing it could reach, and the episode scored GC 0 with exit
status 0, as if the planner had failed. Every coordinate of a room, wall or object (rotations
included) is now a finite number within ``MAX_COORD_M`` of the origin; the error names the house
and the field ("house 12: rooms[0].floorPolygon[2].x").
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from household.errors import HouseError

#: A ProcTHOR house spans tens of metres; 1 km leaves room for any real home and none for a
#: coordinate that would blow up a grid sized from it. Rotations are degrees, bounded the same way.
MAX_COORD_M = 1000.0


def coordinate(value: Any, where: str) -> float:
    """``value`` as a float, or HouseError naming ``where`` when it is not a finite number within
    ``MAX_COORD_M``."""
    if isinstance(value, bool):
        raise HouseError(f"{where}: expected a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise HouseError(f"{where}: expected a number, got {value!r}") from None
    if not math.isfinite(number):
        raise HouseError(f"{where}: expected a finite number, got {value!r}")
    if abs(number) > MAX_COORD_M:
        raise HouseError(f"{where}: {number:g} is more than {MAX_COORD_M:g} from the origin; "
                         "not a household coordinate")
    return number


def point(value: Any, where: str) -> tuple[float, float, float]:
    """An {x, y, z} point with every coordinate checked by ``coordinate``."""
    if not isinstance(value, dict):
        raise HouseError(f"{where}: expected a point {{x, y, z}}, got {value!r}")
    x, y, z = (coordinate(value.get(k), f"{where}.{k}") for k in "xyz")
    return x, y, z


def _objects(objects: Any, path: str) -> Iterator[tuple[dict[str, Any], str]]:
    for i, obj in enumerate(objects if isinstance(objects, list) else []):
        if isinstance(obj, dict):
            yield obj, f"{path}[{i}]"
            yield from _objects(obj.get("children"), f"{path}[{i}].children")


def object_number_problems(house: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for each object position or rotation that is not a finite household
    number (rooms and walls are checked when the layout is parsed)."""
    out = []
    for obj, where in _objects(house.get("objects"), "objects"):
        for key in ("position", "rotation"):
            if obj.get(key) is None:
                continue
            try:
                point(obj[key], f"{where}.{key}")
            except HouseError as exc:
                field, _, message = str(exc).partition(": ")
                out.append((field, message))
    return out


# Size limits (issue 32). A house of 1,000 rooms, 10,000 objects or a room 1 km across took minutes
# and gigabytes (the free grid is 2.5 cm cells, so a 1 km house is 40,000 x 40,000 cells). The
# largest real ProcTHOR houses we ship or evaluate on (houses_dev, houses_test, houses_small_1000:
# 1,150 houses) have 10 rooms, 220 objects (children included), a room 19.0 m across, a house
# 34.6 m across, 82 walls, 10 doors, 8 windows and 14 corners to a room. The limits leave 1.5-3x
# that, no more: the oracle's first step already costs about 20 s and 0.3 GB in a house 40 m
# across and 14 s and 0.5 GB with 600 objects (100 m: 96 s and 1.1 GB), and 266 s and 0.6 GB at
# every limit at once, measured on houses_dev.jsonl.gz#0 stretched with extra rooms and copies of
# an object (benchmarks/bad_inputs_issue32.py has the hostile cases).
MAX_ROOMS = 20
MAX_OBJECTS = 500  # children included
MAX_WALLS = 250
MAX_DOORS_WINDOWS = 40  # each of doors and windows
MAX_POLYGON_POINTS = 50  # corners of one room's floorPolygon
MAX_ROOM_EXTENT_M = 30.0  # a room's width or depth
MAX_HOUSE_EXTENT_M = 50.0  # the width or depth of all rooms together


def count_problems(house: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for each list of a house longer than its limit; cheap (no geometry), so a
    hostile house is refused before anything is built from it."""
    out = []
    for key, limit in (("rooms", MAX_ROOMS), ("walls", MAX_WALLS), ("doors", MAX_DOORS_WINDOWS),
                       ("windows", MAX_DOORS_WINDOWS)):
        value = house.get(key)
        if isinstance(value, list) and len(value) > limit:
            out.append((key, f"{len(value):,} {key}; a house may have at most {limit:,} "
                             "(household/house_limits.py)"))
    n = 0
    for _obj, _where in _objects(house.get("objects"), "objects"):
        n += 1
        if n > MAX_OBJECTS:
            break
    if n > MAX_OBJECTS:
        out.append(("objects", f"more than {MAX_OBJECTS:,} objects (children included); a house may have at most "
                               f"{MAX_OBJECTS:,} (household/house_limits.py)"))
    rooms = house.get("rooms")
    for i, room in enumerate(rooms if isinstance(rooms, list) else []):
        poly = room.get("floorPolygon") if isinstance(room, dict) else None
        if isinstance(poly, list) and len(poly) > MAX_POLYGON_POINTS:
            out.append((f"rooms[{i}].floorPolygon", f"{len(poly):,} corners; a room may have at most "
                                                    f"{MAX_POLYGON_POINTS}"))
    return out


def check_size(house: dict[str, Any], where: str) -> None:
    """HouseError naming ``where`` and each field over its count limit (``count_problems``)."""
    found = count_problems(house)
    if found:
        raise HouseError("; ".join(f"{where}: {field}: {message}" for field, message in found))


def extent_problems(rooms: list[tuple[str, list[tuple[float, float]]]]) -> list[tuple[str, str]]:
    """(field, message) for each room wider or deeper than MAX_ROOM_EXTENT_M and for a house wider
    or deeper than MAX_HOUSE_EXTENT_M; ``rooms``: (field of the room, its (x, z) corners)."""
    out = []
    xs: list[float] = []
    zs: list[float] = []
    for where, poly in rooms:
        rx = [p[0] for p in poly]
        rz = [p[1] for p in poly]
        xs += rx
        zs += rz
        size = max(max(rx) - min(rx), max(rz) - min(rz)) if poly else 0.0
        if size > MAX_ROOM_EXTENT_M:
            out.append((f"{where}.floorPolygon", f"the room is {size:,.1f} m across; a room may be at most "
                                                 f"{MAX_ROOM_EXTENT_M:g} m across (household/house_limits.py)"))
    if xs:
        size = max(max(xs) - min(xs), max(zs) - min(zs))
        if size > MAX_HOUSE_EXTENT_M:
            out.append(("rooms", f"the house is {size:,.1f} m across; a house may be at most "
                                 f"{MAX_HOUSE_EXTENT_M:g} m across (household/house_limits.py)"))
    return out
