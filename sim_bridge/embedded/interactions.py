"""THOR object interactions and their contextual effects, on the object table alone.

The agent-side preconditions (visible, within reach) are checked by the environment before it
calls in here; this module checks the object-side ones (pickupable, open, fits, ...) and applies
effects. Failures raise ``InteractionError`` carrying a THOR-style message that names the object
id; the environment turns that into an unsuccessful step, never an exception to the caller.

Contextual effects follow THOR: an object under a running faucet in a sink is cleaned and, if
fillable, filled with water; a Mug or Cup in a running coffee machine fills with coffee; cookable
things in or on an active heat source (microwave, toaster, ...) cook and get hot; a cold source
(fridge) makes its contents cold. Effects are re-evaluated after every change, so order does not
matter (toggle then place, or place then toggle).
"""

from __future__ import annotations

import math
from typing import Callable, Iterable

import numpy as np

from household.assets import OBJECT_SPECIFIC_RECEPTACLES, SLICER_TYPES, AssetCatalog, sliced_type
from household.outcomes import Failure
from sim_bridge.embedded.levels import BOARD_M, DRAWER_SLIDE_SHARE, LEVEL_MERGE_M
from sim_bridge.embedded.objects import SimObject
from sim_bridge.embedded.scene_mesh import yaw_rotation

# How far a faucet may be from the sink it runs into.
_FAUCET_REACH = 1.0
# Spacing of placement candidates over a receptacle's body (find_placement).
_RUN_GRID_STEP = 0.1
# Chooses where a put object lands: (object, receptacle, current contents) -> (centre, yaw), or
# None (``find_spot``: THOR turns what it places square to the receptacle).
Placement = Callable[[SimObject, SimObject, list[SimObject]], "tuple[np.ndarray, float] | None"]
_SLICES = {"Bread": 6, "Apple": 4, "Tomato": 4, "Lettuce": 4, "Potato": 4, "Egg": 1}
# The hand's height (the embedded agent's camera at 1.5 m, the hand 0.3 m below it): a put on
# furniture with shelves lands on the level nearest it.
PUT_HEIGHT_M = 1.2
# THOR's fillLiquid values.
POURABLE_LIQUIDS = ("water", "coffee", "wine")


class InteractionError(Exception):
    """A failed interaction; the message is what THOR's errorMessage would carry, ``failure`` the
    typed outcome (``household.outcomes.Failure``) set where the simulator knows why."""

    def __init__(self, message: str, failure: Failure = Failure.UNKNOWN) -> None:
        super().__init__(message)
        self.failure = failure


class ObjectTable:
    """All objects of one house and the one the agent holds."""

    def __init__(self, objects: dict[str, SimObject], catalog: AssetCatalog) -> None:
        self.objects = objects
        self.catalog = catalog
        self.held: str | None = None
        self.version = 0  # bumped on every geometric change so renderers know to rebuild

    # ---- queries -------------------------------------------------------------------------
    def get(self, object_id: str) -> SimObject:
        obj = self.objects.get(object_id)
        if obj is None or not obj.active:
            raise InteractionError(f"Object ID {object_id} appears to be invalid (no such object in this house)", Failure.UNKNOWN_OBJECT)
        return obj

    def active(self) -> list[SimObject]:
        return [o for o in self.objects.values() if o.active]

    def children(self, object_id: str) -> list[SimObject]:
        return [o for o in self.objects.values() if o.active and o.parent == object_id]

    def descendants(self, object_id: str) -> list[SimObject]:
        out, stack = [], [object_id]
        while stack:
            for child in self.children(stack.pop()):
                out.append(child)
                stack.append(child.id)
        return out

    def ancestors(self, obj: SimObject) -> list[SimObject]:
        """What holds obj, innermost first: its receptacle, that one's, ...; a drawer is held by
        its dresser (``part_of``), so a keychain in a dresser's drawer is in the dresser, as a
        person would say it is (and as the house files list it: a child of the dresser)."""
        out: list[SimObject] = []
        seen = {obj.id}
        while True:
            up = obj.parent if obj.parent is not None else obj.part_of
            if up is None or up in seen:
                return out
            seen.add(up)
            obj = self.objects[up]
            out.append(obj)

    def enclosed_by_closed(self, obj: SimObject) -> SimObject | None:
        """The closed openable container hiding obj, if any."""
        for anc in self.ancestors(obj):
            if anc.must_be_open and not anc.is_open:
                return anc
        return None

    # ---- actions ---------------------------------------------------------------------------
    def pickup(self, object_id: str, hand_position: np.ndarray) -> None:
        obj = self.get(object_id)
        if self.held is not None:
            raise InteractionError(f"Agent's hand is already holding {self.held}; cannot pick up {object_id}", Failure.HAND_FULL)
        if not obj.affords("pickupable"):
            raise InteractionError(f"{object_id} ({obj.type}) is not pickupable", Failure.NOT_CAPABLE)
        hidden_by = self.enclosed_by_closed(obj)
        if hidden_by is not None:
            raise InteractionError(f"{object_id} is inside {hidden_by.id}, which is closed", Failure.CLOSED)
        obj.parent = None
        obj.is_picked_up = True
        self.held = obj.id
        self.move_held(hand_position)
        self._changed()

    def move_held(self, hand_position: np.ndarray) -> None:
        """Carry the held object (and what sits in it) to the hand."""
        if self.held is None:
            return
        obj = self.objects[self.held]
        delta = np.asarray(hand_position, dtype=float) - obj.position
        obj.position = obj.position + delta
        for d in self.descendants(obj.id):
            d.position = d.position + delta
            d.is_picked_up = True

    def put(self, receptacle_id: str, place: Placement) -> None:
        if self.held is None:
            raise InteractionError("Agent is not holding any object", Failure.NOT_HOLDING)
        rec = self.get(receptacle_id)
        obj = self.objects[self.held]
        if rec.id == obj.id or rec.id in {d.id for d in self.descendants(obj.id)}:
            raise InteractionError(f"cannot put {obj.id} into itself", Failure.BAD_REQUEST)
        if not rec.affords("receptacle"):
            raise InteractionError(f"{receptacle_id} ({rec.type}) is not a receptacle", Failure.WRONG_RECEPTACLE)
        if rec.must_be_open and not rec.is_open:
            raise InteractionError(f"{receptacle_id} ({rec.type}) is closed; open it before putting {obj.id} in it", Failure.CLOSED)
        if not self.catalog.accepts(rec.type, obj.type):
            allowed = ", ".join(sorted(OBJECT_SPECIFIC_RECEPTACLES[rec.type]))
            raise InteractionError(f"{receptacle_id} ({rec.type}) only accepts {allowed}, not {obj.type}", Failure.WRONG_RECEPTACLE)
        found = place(obj, rec, [o for o in self.children(rec.id)])
        if found is None:
            raise InteractionError(f"No valid positions to place object {obj.id} ({obj.type}) in {receptacle_id} "
                                   f"({rec.type})", Failure.NO_ROOM)
        spot, yaw = found
        spin = yaw_rotation(yaw - obj.yaw_deg)
        for d in self.descendants(obj.id):  # what it holds turns and moves with it
            d.position = spot + spin @ (d.position - obj.position)
            d.yaw_deg = (d.yaw_deg + yaw - obj.yaw_deg) % 360.0
            d.is_picked_up = False
        obj.position = np.asarray(spot, dtype=float)
        obj.yaw_deg = yaw
        obj.parent = rec.id
        obj.is_picked_up = False
        self.held = None
        self._changed()

    def open(self, object_id: str, value: bool) -> None:
        obj = self.get(object_id)
        verb = "open" if value else "close"
        if not obj.affords("openable"):
            raise InteractionError(f"{object_id} ({obj.type}) is not openable", Failure.NOT_CAPABLE)
        if obj.is_open == value:
            raise InteractionError(f"{object_id} ({obj.type}) is already {'open' if value else 'closed'}; "
                                   f"cannot {verb} it", Failure.ALREADY_STATE)
        if obj.type == "Microwave" and value and obj.is_toggled:
            raise InteractionError(f"{object_id} (Microwave) is running; turn it off before opening it", Failure.RUNNING)
        obj.is_open = value
        if obj.part_of is not None and obj.type == "Drawer":
            self._slide_drawer(obj, value)
        self._changed()

    def _slide_drawer(self, drawer: SimObject, out: bool) -> None:
        """An opened drawer slides out of its dresser's front (local +z) by ``DRAWER_SLIDE_SHARE``
        of its depth, with what it holds; a closed one slides back."""
        step = DRAWER_SLIDE_SHARE * float(drawer.size[2]) * (1.0 if out else -1.0)
        delta = drawer.rotation() @ np.array([0.0, 0.0, step])
        drawer.position = drawer.position + delta
        for d in self.descendants(drawer.id):
            d.position = d.position + delta

    def toggle(self, object_id: str, value: bool) -> None:
        obj = self.get(object_id)
        if not obj.affords("toggleable"):
            raise InteractionError(f"{object_id} ({obj.type}) is not toggleable", Failure.NOT_CAPABLE)
        if obj.is_toggled == value:
            raise InteractionError(f"{object_id} ({obj.type}) is already {'on' if value else 'off'}", Failure.ALREADY_STATE)
        if obj.type == "Microwave" and value and obj.is_open:
            raise InteractionError(f"{object_id} (Microwave) is open; close it before turning it on", Failure.DEVICE_OPEN)
        obj.is_toggled = value
        self._changed()

    def break_object(self, object_id: str) -> None:
        """THOR's BreakObject: breakable objects (the asset database's CanBreak) break for good."""
        obj = self.get(object_id)
        if not obj.affords("breakable"):
            raise InteractionError(f"{object_id} ({obj.type}) is not breakable", Failure.NOT_CAPABLE)
        if obj.is_broken:
            raise InteractionError(f"{object_id} ({obj.type}) is already broken", Failure.ALREADY_STATE)
        obj.is_broken = True
        self._changed()

    def fill(self, object_id: str, liquid: str) -> None:
        """THOR's FillObjectWithLiquid, made physical: the liquid is poured from what the agent
        holds, a WineBottle (wine) or a vessel already filled with that liquid (a kettle of water).
        THOR fills from nothing; requiring a source keeps "pour a glass of wine" a real task here
        while every fill done here is also a valid THOR action."""
        obj = self.get(object_id)
        if liquid not in POURABLE_LIQUIDS:
            raise InteractionError(f"FillObjectWithLiquid: unknown liquid {liquid!r} "
                                   f"(known: {', '.join(POURABLE_LIQUIDS)})", Failure.BAD_REQUEST)
        if not obj.affords("fillable"):
            raise InteractionError(f"{object_id} ({obj.type}) cannot be filled with a liquid", Failure.NOT_CAPABLE)
        if obj.is_filled and obj.fill_liquid != liquid:
            # filled with another liquid, and nothing here empties it: this object will not do
            raise InteractionError(f"{object_id} is already filled with {obj.fill_liquid}", Failure.NOT_CAPABLE)
        held = self.objects.get(self.held) if self.held else None
        pours = held is not None and ((held.type == "WineBottle" and liquid == "wine")
                                      or (held.is_filled and held.fill_liquid == liquid))
        if not pours:
            raise InteractionError(f"Filling {object_id} with {liquid} needs something to pour it from in hand "
                                   f"({'a WineBottle' if liquid == 'wine' else f'a vessel of {liquid}'})", Failure.NEEDS_TOOL)
        obj.is_filled, obj.fill_liquid = True, liquid
        self._changed()

    def slice(self, object_id: str) -> list[SimObject]:
        obj = self.get(object_id)
        if not obj.affords("sliceable"):
            raise InteractionError(f"{object_id} ({obj.type}) is not sliceable", Failure.NOT_CAPABLE)
        if obj.is_sliced:
            raise InteractionError(f"{object_id} is already sliced", Failure.ALREADY_STATE)
        held = self.objects.get(self.held) if self.held else None
        if held is None or held.type not in SLICER_TYPES:
            raise InteractionError(f"Slicing {object_id} needs a Knife or ButterKnife in hand", Failure.NEEDS_TOOL)
        if obj.is_picked_up:
            raise InteractionError(f"{object_id} is held; put it down before slicing", Failure.UNKNOWN)
        pieces = self._make_slices(obj)
        obj.is_sliced = True
        obj.active = False
        for child in self.children(obj.id):
            child.parent = obj.parent
        for p in pieces:
            self.objects[p.id] = p
        self._changed()
        return pieces

    def _make_slices(self, obj: SimObject) -> list[SimObject]:
        n = _SLICES.get(obj.type, 4)
        size = obj.size.copy()
        axis = 0 if size[0] >= size[2] else 2
        size[axis] /= n
        direction = obj.rotation()[:, axis]
        new_type = sliced_type(obj.type)
        pieces = []
        for i in range(n):
            offset = (i - (n - 1) / 2.0) * size[axis]
            pieces.append(SimObject(
                id=f"{obj.id}|{new_type}_{i}", type=new_type, asset=obj.asset,
                position=obj.position + direction * offset, yaw_deg=obj.yaw_deg, size=size.copy(),
                parent=obj.parent, is_cooked=obj.is_cooked, temperature=obj.temperature,
                sliced_from=obj.id,
                # THOR: slices are pickupable and cookable, not further sliceable
                overrides={"sliceable": False, "cookable": True, "pickupable": True, "openable": False,
                           "receptacle": False, "toggleable": False, "fillable": False},
            ))
        return pieces

    # ---- contextual effects ----------------------------------------------------------------
    def _changed(self) -> None:
        self.version += 1
        self.apply_effects()

    def apply_effects(self) -> None:
        active = self.active()
        running_faucets = [o for o in active if o.type == "Faucet" and o.is_toggled]
        wet_sinks = {s.id for s in active if s.type == "Sink" and any(
            math.dist((s.position[0], s.position[2]), (f.position[0], f.position[2])) <= _FAUCET_REACH
            for f in running_faucets)}
        for obj in active:
            if obj.is_picked_up:
                continue
            chain = self.ancestors(obj)
            if any(a.id in wet_sinks for a in chain):
                obj.is_dirty = False
                if obj.affords("fillable"):
                    obj.is_filled, obj.fill_liquid = True, "water"
            parent = chain[0] if chain else None
            if parent is not None and parent.type == "CoffeeMachine" and parent.is_toggled and obj.affords("fillable"):
                obj.is_filled, obj.fill_liquid = True, "coffee"
                obj.temperature = "Hot"
            if any(a.affords("heat_source") and a.is_toggled for a in chain):
                obj.temperature = "Hot"
                if obj.affords("cookable"):
                    obj.is_cooked = True
            elif any(a.affords("cold_source") for a in chain):
                obj.temperature = "Cold"


def find_placement(obj: SimObject, receptacle: SimObject, siblings: Iterable[SimObject]) -> np.ndarray | None:
    """Where obj would rest on (or in) the receptacle, or None if it does not fit
    (``find_spot`` without the yaw: the question the oracle and the generator ask)."""
    spot = find_spot(obj, receptacle, siblings)
    return None if spot is None else spot[0]


def find_spot(obj: SimObject, receptacle: SimObject, siblings: Iterable[SimObject],
              near: np.ndarray | None = None) -> tuple[np.ndarray, float] | None:
    """(centre, yaw) of a free spot for obj on (or in) the receptacle, or None if it does not fit.
    ``near``: the hand; the free spot nearest it is taken, as THOR's PutObject takes the spawn
    point nearest the agent (``SimObjPhysics.FindMySpawnPoints`` sorts them by distance to it),
    so a knife put on a deep TV stand lands at its front edge, not behind a candle in the middle
    where no pose saw it again (dev-063-0); None: nearest the receptacle's centre.

    Surfaces: the object rests on the top face; containers: on the inner floor
    (``SimObject.inner_floor_y``); furniture with levels: on the level nearest the hand.
    Candidates are scanned on a grid over the body (deterministic), the object square to the
    receptacle or a quarter turn round, rejecting spots whose footprint rectangle overlaps a
    sibling's (``_place_on_footprint``); on a compound body (an L or C counter) the footprint
    must lie on its runs, so nothing lands in the air inside its bend."""
    if receptacle.levels and not receptacle.is_container:
        return _place_on_levels(obj, receptacle, list(siblings), near)
    container = receptacle.is_container
    if container and float(np.prod(obj.size)) > 0.8 * float(np.prod(receptacle.size)):
        return None
    y = (receptacle.inner_floor_y() + obj.size[1] / 2.0 if container
         else receptacle.surface_y() + obj.size[1] / 2.0)
    if receptacle.parts is not None:
        return _place_on_footprint(obj, receptacle, list(siblings), y, near)
    return _place_on_surface(obj, receptacle, siblings, y, near)


def _place_on_levels(obj: SimObject, receptacle: SimObject, siblings: list[SimObject],
                     near: np.ndarray | None = None) -> tuple[np.ndarray, float] | None:
    """A spot on furniture with open shelves (levels.py): its top and each shelf, nearest the
    hand's height first (``PUT_HEIGHT_M``: the top of a TV stand, a middle shelf of a tall
    shelving unit), each with only what rests on that level in the way. A shelf fits what is
    lower than the gap to the level above."""
    heights = receptacle.support_heights()
    top_y = receptacle.position[1] + receptacle.size[1] / 2.0
    for y0 in sorted(heights, key=lambda h: (abs(h - PUT_HEIGHT_M), -h)):
        above = [h for h in heights if h > y0 + 1e-6 and h < top_y - 1e-6] + [top_y]
        is_top = y0 >= heights[0] - 1e-6
        if not is_top and obj.size[1] > min(above) - BOARD_M - y0:
            continue
        here = [s for s in siblings if abs((s.position[1] - s.size[1] / 2.0) - y0) <= LEVEL_MERGE_M]
        spot = _place_on_surface(obj, receptacle, here, y0 + obj.size[1] / 2.0, near)
        if spot is not None:
            return spot
    return None


def _place_on_surface(obj: SimObject, receptacle: SimObject, siblings: Iterable[SimObject], y: float,
                      near: np.ndarray | None = None) -> tuple[np.ndarray, float] | None:
    """The scan of ``find_spot`` over a plain box's top (or inner floor) at height y: the
    object's footprint rectangle on the box, clear of every other footprint (``_place_on_footprint``).
    A small pickupable container (a mug of pens) holds several things in one spot."""
    if min(obj.size[0], obj.size[2]) > float(max(receptacle.size[0], receptacle.size[2])) + 1e-6:
        return None
    spot = _place_on_footprint(obj, receptacle, list(siblings), y, near)
    if spot is not None:
        return spot
    if receptacle.is_container and receptacle.affords("pickupable"):
        return np.array([receptacle.position[0], y, receptacle.position[2]]), obj.yaw_deg
    return None


def _footprint(obj: SimObject, center: np.ndarray) -> tuple[float, float, float, float]:
    """World (x0, x1, z0, z1) of obj's rotated box footprint were its centre at ``center``."""
    c = obj.corners() - obj.position + center
    return float(c[:, 0].min()), float(c[:, 0].max()), float(c[:, 2].min()), float(c[:, 2].max())


def _place_on_footprint(obj: SimObject, receptacle: SimObject, siblings: list[SimObject], y: float,
                        near: np.ndarray | None = None) -> tuple[np.ndarray, float] | None:
    """(centre, yaw) where obj's footprint lies on the receptacle's body (all four corners on one
    of its boxes or across them: the runs of an L or C counter; on a plain box, within its top,
    or centred across it where longer) and overlaps no sibling's footprint (rectangles, with a
    1 cm gap), or None.

    As THOR's PutObject (``InstantiatePrefabTest.PlaceObject``): the object is turned square to
    the receptacle, then tried at each spot as it is and a quarter turn round (THOR's 90 degree
    ``degreeIncrement``; half turns give the same footprint), and it fits where its bounding box
    overlaps no other collider (``CheckSpawnArea``'s ``Physics.OverlapBox``), touching or not.
    The disc test used before (two objects as discs of their half-diagonal, 0.8 of the sum apart,
    on a 5 x 5 grid, the object's own yaw kept) refused a 1.06 x 0.64 m coffee table carrying a
    box and a bowl a newspaper (dev-078-0), and most of a 0.6 m counter run carrying forks and
    spatulas; a laptop may also sit across the corner where two runs meet. Candidates lie every
    ``_RUN_GRID_STEP`` over the body's box; the free spot nearest ``near`` (the hand; else the
    body's centre) wins, square before turned; vectorised, as the oracle asks this of every
    receptacle in a room."""
    rot = receptacle.rotation()
    to_world = rot[[0, 2]][:, [0, 2]]  # local (x, z) -> world (x, z)
    compound = receptacle.parts is not None
    boxes = [_footprint(s, s.position) for s in siblings]
    best: tuple[float, float, np.ndarray] | None = None  # (distance squared, turn, world x-z)
    origin = receptacle.position[[0, 2]] if near is None else np.asarray(near, dtype=float)[[0, 2]]
    for turn in (0.0, 90.0):
        ext = obj.size[[0, 2]] / 2.0 if turn == 0.0 else obj.size[[2, 0]] / 2.0
        corner_offsets = np.array([[sx * ext[0], sz * ext[1]] for sx in (-1, 1) for sz in (-1, 1)])
        half = receptacle.size[[0, 2]] / 2.0 - ext
        if compound and np.any(half < 0):
            continue
        # a plain box: what is longer than its top lies centred across it (a bat across a stool)
        half = np.maximum(half, 0.0)
        gx = np.linspace(-half[0], half[0], max(2, math.ceil(2 * half[0] / _RUN_GRID_STEP) + 1))
        gz = np.linspace(-half[1], half[1], max(2, math.ceil(2 * half[1] / _RUN_GRID_STEP) + 1))
        cand = np.stack(np.meshgrid(gx, gz, indexing="ij"), axis=-1).reshape(-1, 2)
        if compound:
            # All four footprint corners on some run.
            pts = cand[:, None, :] + corner_offsets[None, :, :]  # (N, 4, 2)
            centers, sizes = receptacle.local_boxes()
            on_run = np.zeros(pts.shape[:2], dtype=bool)
            for pc, ps in zip(centers, sizes):
                on_run |= np.all(np.abs(pts - pc[[0, 2]]) <= ps[[0, 2]] / 2.0 + 1e-9, axis=-1)
            cand = cand[on_run.all(axis=1)]
        if len(cand) == 0:
            continue
        world = receptacle.position[[0, 2]] + cand @ to_world.T
        order = np.argsort(((world - origin) ** 2).sum(axis=1), kind="stable")
        cand, world = cand[order], world[order]
        reach = np.abs(corner_offsets @ to_world.T).max(axis=0)  # half the footprint's world bounds
        lo, hi = world - reach, world + reach
        free = np.ones(len(world), dtype=bool)
        gap = 0.01
        for a0, a1, b0, b1 in boxes:
            free &= (hi[:, 0] + gap <= a0) | (a1 + gap <= lo[:, 0]) | (hi[:, 1] + gap <= b0) | (b1 + gap <= lo[:, 1])
        if not free.any():
            continue
        k = int(np.argmax(free))
        found = (float(((world[k] - origin) ** 2).sum()), turn, world[k])
        if best is None or found[:2] < best[:2]:
            best = found
    if best is None:
        return None
    _, turn, xz = best
    return np.array([xz[0], y, xz[1]]), (receptacle.yaw_deg + turn) % 360.0
