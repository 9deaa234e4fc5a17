"""Objects a house places where nothing could reach them: named, warned about, never fatal.

A house file can put a pickupable object where the embedded simulator (and THOR) cannot give
it to an agent: nested under, or lying inside, the solid body of an object that is not a
receptacle (a potato inside a floor lamp: never visible, so never picked up), outside every
room's floor, or in mid-air with nothing under it. Such a house still loads (one bad object
should not lose a house of forty), but every such object is logged with ``logging.warning``,
naming the house (its id is ``<file>#<line>`` when loaded from a houses file) and the object,
and kept in ``EmbeddedEnvironment.placement_problems`` so ``worldmind audit houses`` can name
it among the unreachable objects instead of counting it reachable.

Real ProcTHOR data has such objects: 2 of the dev houses' objects lie wholly inside a
houseplant's box. (20 more lay inside televisions' boxes until a television became its screen,
shapes.py; about 85 more on the inner shelves of shelving units, which the asset database does
not mark as receptacles; the catalog now does, as THOR's units hold things on their shelves, and
``levels.py`` opens those shelves.) Each is warned about once per process, not on every reset of
an evaluation run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from household.types import point_in_polygon
from sim_bridge.embedded.house_geometry import HouseLayout
from sim_bridge.embedded.objects import SimObject, iter_house_objects

log = logging.getLogger(__name__)
# (house id, object id) already warned about in this process.
_WARNED: set[tuple[str, str]] = set()

# A loose object whose bottom is this far above the floor, with no receptacle under it, floats.
FLOAT_TOLERANCE_M = 0.1
# How deep inside another body an object's centre must lie to count as inside it (boxes touch).
INSIDE_DEPTH_M = 0.02


@dataclass(frozen=True)
class PlacementProblem:
    """One object a house places where it cannot be reached; ``kind`` is one of
    ``inside_non_receptacle``, ``outside_rooms``, ``floating``."""

    house_id: str
    object_id: str
    object_type: str
    kind: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"object_id": self.object_id, "type": self.object_type, "kind": self.kind, "message": self.message}


def _depth_inside(body: SimObject, point: np.ndarray) -> float:
    """How far inside ``body`` a point lies (<= 0 when outside every box of it)."""
    local = (point - body.position) @ body.rotation()
    centers, sizes = body.local_boxes()
    return float((sizes / 2.0 - np.abs(local - centers)).min(axis=1).max())


def _sealed_in(obj: SimObject, objects: dict[str, SimObject], raw_parent: str | None,
               holders: list[tuple[SimObject, np.ndarray, np.ndarray]]) -> SimObject | None:
    """The non-receptacle that holds obj: the one the house nests it under, when obj's centre
    lies inside its body; or any non-receptacle body (``holders``: with their world AABBs, a
    cheap first test) that holds obj's whole box (a centre alone is not enough there: a cup's
    asset box can poke into the television behind it and still be seen)."""
    if raw_parent is not None and raw_parent in objects and not objects[raw_parent].affords("receptacle"):
        holder = objects[raw_parent]
        if _depth_inside(holder, obj.position) > INSIDE_DEPTH_M:
            return holder
    corners = None
    for other, lo, hi in holders:
        if other.id == obj.id or not (np.all(obj.position >= lo) and np.all(obj.position <= hi)):
            continue
        if _depth_inside(other, obj.position) > INSIDE_DEPTH_M:
            corners = obj.corners() if corners is None else corners
            if all(_depth_inside(other, c) > 0 for c in corners):
                return other
    return None


def check_placements(house: dict[str, Any], layout: HouseLayout, objects: dict[str, SimObject]) -> list[PlacementProblem]:
    """Every pickupable object of the house that sits inside a non-receptacle, outside every
    room, or floating; each is also logged (``logging.warning``, once per process) with the house
    and object id."""
    hid = layout.house_id
    raw_parent: dict[str, str | None] = {}
    for raw, parent, _ in iter_house_objects(house.get("objects") or []):
        raw_parent[str(raw.get("id"))] = str(parent["id"]) if parent is not None else None
    rooms = [list(r.polygon) for r in layout.rooms]
    holders = [(o, *o.aabb()) for o in objects.values()
               if o.active and not o.affords("receptacle") and not o.affords("pickupable")]
    problems: list[PlacementProblem] = []
    for obj in objects.values():
        if not obj.active or not obj.affords("pickupable"):
            continue
        x, y, z = (float(v) for v in obj.position)
        holder = _sealed_in(obj, objects, raw_parent.get(obj.id), holders)
        if not any(point_in_polygon(x, z, poly) for poly in rooms):
            kind, why = "outside_rooms", f"lies outside every room's floor (x={x:.2f}, z={z:.2f})"
        elif holder is not None:
            kind, why = "inside_non_receptacle", (f"sits inside {holder.id} ({holder.type}), which is not a "
                                                  f"receptacle: it can be neither seen nor picked up")
        elif obj.parent is None and y - obj.size[1] / 2.0 > FLOAT_TOLERANCE_M:
            kind, why = "floating", f"floats {y - obj.size[1] / 2.0:.2f} m above the floor with no receptacle under it"
        else:
            continue
        message = f"house {hid}: object {obj.id} ({obj.type}) {why}"
        if (hid, obj.id) not in _WARNED:
            _WARNED.add((hid, obj.id))
            log.warning(message)
        problems.append(PlacementProblem(hid, obj.id, obj.type, kind, message))
    return problems
