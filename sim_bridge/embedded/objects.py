"""Simulated objects: pose, box, affordances and THOR state, built from a house dict.

A house nests objects under ``children``. Nesting is how ProcTHOR places small objects on
receptacles, but it also nests chairs under tables, so containment (``parent``) is set only for
pickupable children of receptacles; every other object stands on its own. Positions are box
centres in THOR's frame; ``yaw_deg`` is THOR's rotation.y, with the asset's local +z its front.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from household.assets import BASIN_DEPTH, CONTAINER_TYPES, MUST_BE_OPEN_TYPES, AssetCatalog, AssetInfo
from household.house_data import HouseError
from household.house_limits import point as checked_point
from sim_bridge.embedded import levels as lv
from sim_bridge.embedded.shapes import PANEL_DEPTH_M, PANEL_TYPES, Part, compound_parts, panel_parts


@dataclass
class SimObject:
    id: str
    type: str
    asset: AssetInfo
    position: np.ndarray  # box centre (x, y, z), THOR frame
    yaw_deg: float
    # Extents (x, y, z) in the object's frame, closed. An open door is not part of the body: the
    # database's open box covers the whole swept area in front (a fridge grows 0.8 m), which
    # would wall the agent off from the contents; an open container is drawn without its front.
    size: np.ndarray
    parent: str | None = None
    kinematic: bool = False
    is_open: bool = False
    is_toggled: bool = False
    is_sliced: bool = False
    is_cooked: bool = False
    is_dirty: bool = False
    is_filled: bool = False
    fill_liquid: str | None = None
    is_picked_up: bool = False
    is_broken: bool = False
    temperature: str = "RoomTemp"
    active: bool = True  # False once sliced: kept for metadata, gone from the scene
    sliced_from: str | None = None
    # Height of the support surface above the box bottom, where it lies below the box top (a bed
    # under its headboard, a sofa under its back): boxes are drawn up to it so what rests there
    # is seen, and put objects land on it.
    surface: float | None = None
    # overrides the asset's affordances for objects created by slicing
    overrides: dict[str, bool] = field(default_factory=dict)
    # The body as boxes in the local frame where it is not its bounding box (L and C counters,
    # shapes.py); None: the box ``size`` is the body. Collision, rendering, reach and placement
    # all go through ``local_boxes``, so the floor inside a counter's bend is free.
    parts: tuple[Part, ...] | None = None
    # Heights above the box bottom of the open shelves inside (levels.py), ascending; empty for
    # a body with none. Put objects may land on them as well as on the top.
    levels: tuple[float, ...] = ()
    # The body as drawn where it is not ``parts``/the box: the boards of open shelves, a dresser
    # around its drawers (levels.py). Collision and reach keep ``local_boxes``.
    render_parts: tuple[Part, ...] | None = None
    # The furniture a derived part belongs to (a drawer's dresser): it moves with it, and it is
    # not an obstacle of its own (its owner's box is).
    part_of: str | None = None

    def affords(self, name: str) -> bool:
        if name in self.overrides:
            return self.overrides[name]
        return bool(getattr(self.asset, name))

    @property
    def is_container(self) -> bool:
        """Contents sit inside the box rather than on its top."""
        return self.type in CONTAINER_TYPES

    @property
    def must_be_open(self) -> bool:
        """Closed, it hides its contents and takes nothing new (a fridge, not a toilet lid)."""
        return self.type in MUST_BE_OPEN_TYPES and self.affords("openable")

    def open_faces(self) -> tuple[bool, bool]:
        """(front, top) faces left out when drawn: an open fridge or cabinet loses its front so
        its contents are seen; a lidless container (a sink, a mug) its top; an open drawer, slid
        out of its dresser, both (levels.py)."""
        if self.is_open and self.must_be_open:
            return True, self.part_of is not None and self.type == "Drawer"
        return False, self.is_container and not self.must_be_open

    def surface_y(self) -> float:
        """World height objects rest at when put on this receptacle."""
        bottom = self.position[1] - self.size[1] / 2.0
        return float(bottom + (self.surface if self.surface is not None else self.size[1]))

    def inner_floor_y(self) -> float:
        """World height a container's contents rest at: 10% up its box, or its basin's floor where
        the box reaches far below the basin (a sink on its cabinet). Placing at the box's floor
        there would hide a kettle a metre down a pedestal, out of sight and reach of a robot
        that must take it out again after filling it."""
        bottom = self.position[1] - self.size[1] / 2.0
        floor = bottom + 0.1 * self.size[1]
        depth = BASIN_DEPTH.get(self.type)
        if depth is not None:
            floor = max(floor, bottom + self.size[1] - depth)
        return float(floor)

    def support_heights(self) -> list[float]:
        """World heights objects may rest at when put on this receptacle: the top (or surface)
        and each open shelf's level."""
        bottom = self.position[1] - self.size[1] / 2.0
        return [self.surface_y()] + [float(bottom + h) for h in self.levels]

    def render_box(self) -> tuple[np.ndarray, np.ndarray]:
        """(centre, size) of the bounding box that is drawn and occludes: clipped at the support
        surface. A compound body is drawn as ``render_boxes``; this is its overall box."""
        if self.surface is None:
            return self.position, self.size
        size = self.size.copy()
        size[1] = self.surface
        center = self.position.copy()
        center[1] = self.position[1] - self.size[1] / 2.0 + self.surface / 2.0
        return center, size

    def local_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """(K, 3) centres and (K, 3) full sizes of the body's boxes in the local frame: the one
        bounding box, or the parts of a compound body."""
        if self.parts is None:
            return np.zeros((1, 3)), self.size[None, :].astype(float)
        return np.array([p.center for p in self.parts]), np.array([p.size for p in self.parts])

    def render_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """(K, 3) world centres and (K, 3) sizes of the boxes drawn for this object, each clipped
        at the support surface like ``render_box``; or the drawn parts (``render_parts``)."""
        if self.render_parts is not None:
            centers = np.array([p.center for p in self.render_parts])
            sizes = np.array([p.size for p in self.render_parts])
            return self.position + centers @ self.rotation().T, sizes
        centers, sizes = self.local_boxes()
        world = self.position + centers @ self.rotation().T
        if self.surface is not None:
            sizes = sizes.copy()
            sizes[:, 1] = self.surface
            world[:, 1] = self.position[1] - self.size[1] / 2.0 + self.surface / 2.0
        return world, sizes

    def rotation(self) -> np.ndarray:
        """3x3 THOR rotation about +y: local +z maps to (sin yaw, 0, cos yaw)."""
        yaw = math.radians(self.yaw_deg)
        c, s = math.cos(yaw), math.sin(yaw)
        return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])

    def corners(self) -> np.ndarray:
        """(8, 3) corners of the oriented box, THOR frame."""
        half = self.size / 2.0
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        return (signs * half) @ self.rotation().T + self.position

    def aabb(self) -> tuple[np.ndarray, np.ndarray]:
        c = self.corners()
        return c.min(axis=0), c.max(axis=0)

    def footprint_half_extents(self) -> tuple[float, float]:
        size = self.size
        return float(size[0] / 2.0), float(size[2] / 2.0)

    def _local_excess(self, p: np.ndarray) -> np.ndarray:
        """(K, 3) per box: how far the THOR point lies outside each box along each local axis."""
        local = (np.asarray(p, dtype=float) - self.position) @ self.rotation()
        centers, sizes = self.local_boxes()
        return np.maximum(np.abs(local - centers) - sizes / 2.0, 0.0)

    def contains_xz(self, x: float, z: float, margin: float = 0.0) -> bool:
        """Is (x, z) inside the rotated footprint of the body (some box of it, grown by margin)?"""
        excess = self._local_excess(np.array([x, self.position[1], z]))
        return bool(((excess[:, 0] <= margin) & (excess[:, 2] <= margin)).any())

    def distance_to_point(self, p: np.ndarray) -> float:
        """Distance from a THOR point to the body (0 inside): the nearest of its boxes."""
        return float(np.linalg.norm(self._local_excess(p), axis=1).min())

    def distance_to_upright(self, x: float, z: float, y_lo: float, y_hi: float) -> float:
        """Distance from the upright segment at (x, z) between heights y_lo and y_hi to the body
        (0 where they meet): the nearest of its boxes. THOR measures its interaction range this
        way, from the agent's upright capsule (EmbeddedEnvironment.range_distance)."""
        return float(upright_distances(self, np.array([[x, z]]), y_lo, y_hi)[0])


def upright_distances(obj: SimObject, xz: np.ndarray, y_lo: float, y_hi: float) -> np.ndarray:
    """(N,) distances from upright segments at the (N, 2) floor points ``xz``, spanning heights
    y_lo..y_hi, to the nearest box of ``obj``. The body turns about +y only, so the height gap
    per box is the same for every point and the rest is a distance in the floor plane."""
    rot = obj.rotation()
    d = np.asarray(xz, dtype=float) - obj.position[[0, 2]]
    lx = d[:, 0] * rot[0, 0] + d[:, 1] * rot[2, 0]  # local x of each point
    lz = d[:, 0] * rot[0, 2] + d[:, 1] * rot[2, 2]  # local z
    centers, sizes = obj.local_boxes()
    ex = np.maximum(np.abs(lx[:, None] - centers[None, :, 0]) - sizes[None, :, 0] / 2.0, 0.0)
    ez = np.maximum(np.abs(lz[:, None] - centers[None, :, 2]) - sizes[None, :, 2] / 2.0, 0.0)
    lo = obj.position[1] + centers[:, 1] - sizes[:, 1] / 2.0
    hi = obj.position[1] + centers[:, 1] + sizes[:, 1] / 2.0
    ey = np.maximum(np.maximum(lo - y_hi, y_lo - hi), 0.0)
    return np.sqrt(ex * ex + ez * ez + (ey * ey)[None, :]).min(axis=1)


def _point(p: Any, where: str) -> np.ndarray:
    """A finite point of household size (household/house_limits.py), or HouseError naming it."""
    return np.array(checked_point(p, where))


def iter_house_objects(objects: list[dict[str, Any]], parent: dict[str, Any] | None = None,
                       path: str = "objects") -> Iterator[tuple[dict[str, Any], dict[str, Any] | None, str]]:
    for i, obj in enumerate(objects):
        where = f"{path}[{i}]"
        yield obj, parent, where
        children = obj.get("children") or []
        if not isinstance(children, list):
            raise HouseError(f"{where}.children must be a list")
        yield from iter_house_objects(children, obj, f"{where}.children")


def build_objects(house: dict[str, Any], catalog: AssetCatalog) -> dict[str, SimObject]:
    """House dict -> {objectId: SimObject}; errors name the house id, the field and the asset."""
    hid = str(house.get("id", "<no id>"))
    out: dict[str, SimObject] = {}
    parents: dict[str, str | None] = {}
    for raw, parent_raw, where in iter_house_objects(house.get("objects") or []):
        where = f"house {hid}: {where}"
        if not isinstance(raw, dict):
            raise HouseError(f"{where}: object must be a JSON object")
        for key in ("id", "assetId", "position"):
            if key not in raw:
                raise HouseError(f"{where}: missing key {key!r}")
        oid = str(raw["id"])
        if oid in out:
            raise HouseError(f"{where}: duplicate object id {oid!r}")
        asset = catalog.get(str(raw["assetId"]))
        if asset is None:
            raise HouseError(f"{where} ({oid}): unknown assetId {raw['assetId']!r} (not in the asset database)")
        rot = raw.get("rotation") or {"x": 0.0, "y": 0.0, "z": 0.0}
        yaw = float(_point(rot, f"{where}.rotation")[1])
        obj = SimObject(
            id=oid,
            type=asset.object_type,
            asset=asset,
            position=_point(raw["position"], f"{where}.position"),
            yaw_deg=yaw % 360.0,
            size=np.array(asset.size),
            kinematic=bool(raw.get("kinematic", False)),
            is_dirty=bool(raw.get("isDirty", False)) and asset.dirtyable,
            is_toggled=bool(raw.get("isOn", False)) and asset.toggleable,
            is_open=bool(raw.get("openness", 0) or raw.get("isOpen", False)) and asset.openable,
            parts=compound_parts(asset.asset_id, np.array(asset.size)),
        )
        out[oid] = obj
        parents[oid] = str(parent_raw["id"]) if parent_raw is not None else None
    for oid, pid in parents.items():
        obj = out[oid]
        if pid is not None and obj.affords("pickupable") and out[pid].affords("receptacle"):
            obj.parent = pid
    # Loose pickupables (not nested) rest on whatever receptacle lies under them.
    for obj in out.values():
        if obj.parent is None and obj.affords("pickupable"):
            obj.parent = support_under(obj, out.values())
    _apply_levels(out)
    _apply_panels(out)
    for obj in out.values():
        if obj.type in lv.CHAIR_TYPES and obj.render_parts is None:
            obj.render_parts = lv.chair_parts(obj.size, obj.surface)
    return out


def _apply_panels(objects: dict[str, SimObject]) -> None:
    """Give each television its screen (shapes.panel_parts), lifted over whatever the house
    places under it: the tops of the pickupable objects whose boxes cross the screen's slab
    within the set's box."""
    loose = [o for o in objects.values() if o.affords("pickupable")]
    for tv in objects.values():
        if tv.type not in PANEL_TYPES or tv.parts is not None:
            continue
        bottom = float(tv.position[1] - tv.size[1] / 2.0)
        clearance = 0.0
        for obj in loose:
            corners = (obj.corners() - tv.position) @ tv.rotation()
            lo, hi = corners.min(axis=0), corners.max(axis=0)
            half = tv.size / 2.0
            if (lo[0] < half[0] and hi[0] > -half[0] and lo[2] < PANEL_DEPTH_M / 2.0 and hi[2] > -PANEL_DEPTH_M / 2.0
                    and lo[1] < half[1] and hi[1] > -half[1]):
                clearance = max(clearance, float(obj.position[1] + obj.size[1] / 2.0) - bottom + 0.01)
        tv.parts = panel_parts(tv.size, clearance)


def _resting_offsets(objects: dict[str, SimObject]) -> dict[str, list[tuple[float, str]]]:
    """Per open receptacle (not a container): (height of the object's bottom above the
    receptacle's box bottom, object id) of everything resting on or in it."""
    rests: dict[str, list[tuple[float, str]]] = {}
    for obj in objects.values():
        parent = objects.get(obj.parent) if obj.parent else None
        if parent is None or parent.is_container:
            continue
        offset = (obj.position[1] - obj.size[1] / 2.0) - (parent.position[1] - parent.size[1] / 2.0)
        rests.setdefault(parent.id, []).append((float(offset), obj.id))
    return rests


def _apply_levels(objects: dict[str, SimObject]) -> None:
    """Give furniture the levels its contents rest on (levels.py): open shelves drawn as boards,
    a dresser's drawers as Drawer objects holding what rests in them, a seat's surface."""
    for pid, rests in _resting_offsets(objects).items():
        owner = objects[pid]
        height = float(owner.size[1])
        inner = [(o, oid) for o, oid in rests if o < lv.TOP_SHARE * height]
        if not inner:
            continue
        kind = lv.owner_kind(owner.type)
        if kind == "seat":
            seats = [o for o, _ in inner if o >= lv.MIN_SEAT_SHARE * height]
            if seats:
                owner.surface = min(seats)
            continue
        if len(inner) == len(rests):
            # Nothing rests on the top: drawn up to its lowest level at a seat's share or more, as
            # before levels (a TV stand's lower shelf seen from above; levels.py says why).
            upper = [o for o, _ in inner if o >= lv.MIN_SEAT_SHARE * height]
            if upper:
                owner.surface = height = min(upper)
                inner = [(o, oid) for o, oid in inner if o < height - 1e-9]
        if not inner:
            continue
        shelves, in_drawers = lv.split_levels(height, kind, [(o, o + float(objects[oid].size[1]), oid)
                                                             for o, oid in inner])
        owner.levels = tuple(shelves)
        drawers = _add_drawers(objects, owner, in_drawers, height) if in_drawers else ()
        owner.render_parts = (lv.dresser_parts(owner.size, drawers, height) if kind == "drawers"
                              else lv.shelf_parts(owner.size, owner.levels, height))


def _add_drawers(objects: dict[str, SimObject], owner: SimObject,
                 rests: list[tuple[float, float, str]], height: float) -> tuple[lv.DrawerSpec, ...]:
    """Drawer objects in ``owner`` (levels.py), each holding what rests with its bottom in its
    band; ``rests`` are (bottom, top, object id) above the owner's box bottom, ``height`` that of
    its top (the box's, or its drawn surface's)."""
    bands = lv.drawer_bands(height, [(b, t) for b, t, _ in rests], owner.levels)
    rot = owner.rotation()
    bottom = -float(owner.size[1]) / 2.0
    specs = []
    for k, (lo, hi) in enumerate(bands):
        contents = tuple(oid for b, _, oid in rests if lo <= b < hi)
        specs.append(lv.DrawerSpec(k, lo, hi, contents))
        size = np.array([max(owner.size[0] - 2 * lv.DRAWER_INSET_M, 0.05), hi - lo,
                         max(owner.size[2] - lv.BOARD_M - lv.DRAWER_INSET_M, 0.05)])
        local = np.array([0.0, bottom + (lo + hi) / 2.0, lv.BOARD_M / 2.0])
        drawer = SimObject(id=f"{owner.id}|Drawer|{k}", type="Drawer", asset=lv.DRAWER_ASSET,
                           position=owner.position + rot @ local, yaw_deg=owner.yaw_deg, size=size,
                           part_of=owner.id)
        objects[drawer.id] = drawer
        for oid in contents:
            objects[oid].parent = drawer.id
    return tuple(specs)


def support_under(obj: SimObject, objects: Any) -> str | None:
    """The receptacle whose footprint holds obj's centre and whose top is just below its centre."""
    best: tuple[float, str] | None = None
    x, y, z = obj.position
    for other in objects:
        if other.id == obj.id or not other.active or not other.affords("receptacle") or other.is_picked_up:
            continue
        if not other.contains_xz(x, z):
            continue
        lo, hi = other.aabb()
        if lo[1] - 0.05 <= y <= hi[1] + obj.size[1]:
            gap = abs(y - hi[1])
            if best is None or gap < best[0]:
                best = (gap, other.id)
    return best[1] if best else None
