"""The static part of a house: rooms (floor polygons) and walls with their door holes.

Everything here is in THOR's frame (x, z on the floor, y up), because the house dict is. Walls
come in pairs in ProcTHOR (one per room side); both are kept for rendering, and door holes are
cut in both. As in ai2thor's ProceduralTools, a door's ``holePolygon`` x-range is measured along
its ``wall0`` from that wall's ``polygon[0]``; the ``wall1`` copy lists its points the other way
round, so holes are carried over through world coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from household.house_data import HouseError
from household.house_limits import check_size, extent_problems
from household.house_limits import point as checked_point


@dataclass(frozen=True)
class Room:
    id: str
    room_type: str
    polygon: tuple[tuple[float, float], ...]  # (x, z) vertices


@dataclass(frozen=True)
class Hole:
    """An opening in a wall: along-wall interval [s0, s1] (m from p0) and height [y0, y1]."""

    s0: float
    s1: float
    y0: float
    y1: float
    kind: str  # "door" or "window"
    id: str


@dataclass
class WallSegment:
    id: str
    room_id: str
    p0: tuple[float, float]  # (x, z)
    p1: tuple[float, float]
    height: float
    holes: list[Hole] = field(default_factory=list)
    # ProcTHOR's ``"empty": true``: an open-plan connection between rooms (kitchen and living room).
    # AI2-THOR builds no wall there, so nothing collides with, hides behind or is drawn as it.
    empty: bool = False

    @property
    def length(self) -> float:
        return float(np.hypot(self.p1[0] - self.p0[0], self.p1[1] - self.p0[1]))

    def solid_intervals(self, y: float) -> list[tuple[float, float]]:
        """Along-wall intervals that are solid at height y (door holes removed; none if empty)."""
        if self.empty:
            return []
        cuts = sorted((h.s0, h.s1) for h in self.holes if h.y0 <= y <= h.y1)
        out: list[tuple[float, float]] = []
        s = 0.0
        for a, b in cuts:
            if a > s:
                out.append((s, min(a, self.length)))
            s = max(s, b)
        if s < self.length:
            out.append((s, self.length))
        return out


@dataclass
class HouseLayout:
    house_id: str
    rooms: list[Room]
    walls: list[WallSegment]

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(min_x, min_z, max_x, max_z) over all floor polygons."""
        pts = np.array([p for r in self.rooms for p in r.polygon], dtype=float)
        return float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max())


def _xyz(point: Any, where: str) -> tuple[float, float, float]:
    """A finite point of household size (household/house_limits.py), or HouseError naming it."""
    return checked_point(point, where)


def _polygon_area(poly: list[tuple[float, float]]) -> float:
    a = 0.0
    for i in range(len(poly)):
        x1, z1 = poly[i]
        x2, z2 = poly[(i + 1) % len(poly)]
        a += x1 * z2 - x2 * z1
    return abs(a) / 2.0


def _closed(door: dict[str, Any]) -> bool:
    """A door whose leaf fills its hole: ``openness`` 0. AI2-THOR draws the leaf there, and the
    embedded simulator models no door opening, so the hole is left solid (doorframes and open
    doorways, openness 1 or none, are holes)."""
    openness = door.get("openness")
    return isinstance(openness, (int, float)) and not isinstance(openness, bool) and openness <= 0


def parse_layout(house: dict[str, Any]) -> HouseLayout:
    """Parse rooms, walls and door/window holes, raising HouseError naming house id and field."""
    hid = str(house.get("id", "<no id>"))
    for key in ("rooms", "walls", "objects"):
        if key not in house:
            raise HouseError(f"house {hid}: missing key {key!r}")
        if not isinstance(house[key], list):
            raise HouseError(f"house {hid}: field {key!r} must be a list")
    check_size(house, f"house {hid}")  # counts first: a 1,000-room house is refused before any geometry
    rooms: list[Room] = []
    for i, r in enumerate(house["rooms"]):
        where = f"house {hid}: rooms[{i}]"
        if not isinstance(r, dict) or "id" not in r or "roomType" not in r or "floorPolygon" not in r:
            raise HouseError(f"{where}: needs id, roomType and floorPolygon")
        poly = [(x, z) for x, _, z in (_xyz(p, f"{where}.floorPolygon[{k}]") for k, p in enumerate(r["floorPolygon"]))]
        if len(poly) < 3 or _polygon_area(poly) < 1e-3:
            raise HouseError(f"{where} ({r['id']}): degenerate floorPolygon (fewer than 3 points or zero area)")
        rooms.append(Room(str(r["id"]), str(r["roomType"]), tuple(poly)))
    if not rooms:
        raise HouseError(f"house {hid}: no rooms")
    too_big = extent_problems([(f"rooms[{i}]", list(r.polygon)) for i, r in enumerate(rooms)])
    if too_big:
        raise HouseError("; ".join(f"house {hid}: {field}: {message}" for field, message in too_big))

    room_ids = {r.id for r in rooms}
    walls: list[WallSegment] = []
    by_id: dict[str, list[WallSegment]] = {}
    for i, w in enumerate(house["walls"]):
        where = f"house {hid}: walls[{i}]"
        if not isinstance(w, dict) or "id" not in w or "polygon" not in w:
            raise HouseError(f"{where}: needs id and polygon")
        pts = [_xyz(p, f"{where}.polygon[{k}]") for k, p in enumerate(w["polygon"])]
        if len(pts) < 3:
            raise HouseError(f"{where} ({w['id']}): degenerate polygon")
        ys = [p[1] for p in pts]
        floor_pts = sorted({(round(p[0], 4), round(p[2], 4)) for p in pts})
        if len(floor_pts) < 2 or max(ys) - min(ys) < 1e-3:
            raise HouseError(f"{where} ({w['id']}): degenerate polygon (no length or no height)")
        # THOR measures door holes from polygon[0] of the door's wall0, so keep the polygon's
        # own order (and exact coordinates) rather than the rounded, sorted id.
        first = (pts[0][0], pts[0][2])
        other = max(((p[0], p[2]) for p in pts), key=lambda q: (q[0] - first[0]) ** 2 + (q[1] - first[1]) ** 2)
        ends = (first, other)
        seg = WallSegment(str(w["id"]), str(w.get("roomId", "")), ends[0], ends[1], max(ys),
                          empty=w.get("empty") is True)
        walls.append(seg)
        by_id.setdefault(seg.id, []).append(seg)

    for kind in ("doors", "windows"):
        for i, d in enumerate(house.get(kind, []) or []):
            where = f"house {hid}: {kind}[{i}]"
            if not isinstance(d, dict) or "holePolygon" not in d:
                raise HouseError(f"{where}: needs holePolygon")
            hp = [_xyz(p, f"{where}.holePolygon[{k}]") for k, p in enumerate(d["holePolygon"])]
            if len(hp) < 2:
                raise HouseError(f"{where}: holePolygon needs two corners")
            s0, s1 = min(hp[0][0], hp[1][0]), max(hp[0][0], hp[1][0])
            y0, y1 = min(hp[0][1], hp[1][1]), max(hp[0][1], hp[1][1])
            hole_id = str(d.get("id", f"{kind}[{i}]"))
            wall0 = by_id.get(str(d.get("wall0", "")))
            if not wall0:
                raise HouseError(f"{where} ({hole_id}): wall0 {d.get('wall0')!r} is not a wall of this house")
            if d.get("wall1") and str(d["wall1"]) not in by_id and not str(d["wall1"]).startswith("wall|exterior"):
                raise HouseError(f"{where} ({hole_id}): wall1 {d.get('wall1')!r} is not a wall of this house")
            for rkey in ("room0", "room1"):
                if d.get(rkey) is not None and str(d[rkey]) not in room_ids:
                    raise HouseError(f"{where} ({hole_id}): {rkey} {d[rkey]!r} is not a room of this house")
            if kind == "doors" and _closed(d):
                continue  # a closed door (ProcTHOR's front door: openable false, openness 0) is solid
            # Hole ends in the floor plane, measured along wall0 from its polygon[0] ...
            ref = wall0[0]
            p0 = np.array(ref.p0)
            direction = (np.array(ref.p1) - p0) / ref.length
            a, b = p0 + direction * s0, p0 + direction * s1
            # ... then re-expressed along every copy of the wall (the wall1 copy runs backwards).
            for wkey in ("wall0", "wall1"):
                for seg in by_id.get(str(d.get(wkey, "")), []):
                    q0 = np.array(seg.p0)
                    dq = (np.array(seg.p1) - q0) / seg.length
                    sa, sb = float(np.dot(a - q0, dq)), float(np.dot(b - q0, dq))
                    lo, hi = max(min(sa, sb), 0.0), min(max(sa, sb), seg.length)
                    if hi > lo:
                        seg.holes.append(Hole(lo, hi, y0, y1, kind[:-1], hole_id))
    return HouseLayout(hid, rooms, walls)
