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

from household.house_data import HouseError

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
