"""Furniture with levels: open shelves, drawers and seats, derived from where a house puts things.

The asset database gives one bounding box per asset, and until this module every piece of
furniture was that solid box. ProcTHOR, like THOR, puts objects on the lower shelves of TV stands,
desks and side tables, in the drawers of dressers, on the mattress of a bed under its headboard and
on the inner shelves of shelving units: sealed inside one solid box they were invisible and
unreachable, though THOR's agent sees and takes them (issue 30). The data has no shelf or drawer
geometry, so the levels are derived from the data there is: the heights at which the house rests
objects inside a piece of furniture's box. Per owner type:

- **Open shelves** (every receptacle not named below: TV stands, desks, side tables, coffee
  tables; and shelving units, which the database does not mark as receptacles although THOR's
  have shelf receptacles: here they take objects like a TV stand does): each distinct resting
  height below the top is a level. The body is drawn as a board under each level, a top board
  and a thin back panel (local -z; local +z is an asset's front), so what stands on a level is
  seen and reached from the front and the sides. A level with too little room above it to look
  into (``OPEN_SHELF_CLEARANCE_M``: the slot under a side table's top) is a drawer, as below.
  Collision and reach keep the whole box: the
  boards span the full footprint. A put lands on the level nearest the hand's height, the top
  for anything lower than a shelving unit.
- **Drawers** (``Dresser``): each distinct resting height becomes a ``Drawer`` object of its own
  (THOR's type: openable, a receptacle, must be open to see in, take out or put in), spanning the
  dresser's width and depth between that level and the next. The dresser is drawn as its top
  board, its plinth, the dividers between drawers and its back; closed drawers fill the rest, so
  a closed dresser looks solid and hides what is inside. Opening a drawer slides it out by half
  its depth with what it holds, drawn without its top and front, as THOR's drawers open.
- **Seats** (beds, sofas, armchairs, chairs, ottomans): the lowest resting height at or above
  ``MIN_SEAT_SHARE`` of the box is the seat or mattress; the box is drawn up to it (the
  ``surface`` of ``objects.py``) even when pillows rest higher against a headboard (those lay
  sealed inside the bed before), and a put lands on it.
- **Chairs** (``Chair``: dining and desk chairs) are drawn as their seat and a back: a block up
  to the seat (the surface above, or ``CHAIR_SEAT_SHARE`` of the height where nothing rests on
  it) and a ``CHAIR_BACK_M`` panel along the back (local -z) up to the top. Drawn as one box, a
  chair pushed under a table filled the air over the table's edge up to its backrest's height
  and hid what stood there from every pose on that side (issue 30: 5 of the 34 objects the
  acting audit could not pick up from a pose within range). Collision keeps the box.

Where nothing rests on a piece's top, its box is drawn up to its lowest level at
``MIN_SEAT_SHARE`` or more, as before levels existed (a TV stand with a phone on its lower shelf
and nothing on top is drawn as low as that shelf, seen from above): a camera 1.5 m up within
1.5 m of reach cannot see under a 0.7 m top to a shelf 0.3 m up, and THOR's agent would crouch
for it. The rule predates the Crouch action (env.py) and every committed episode was made under
it, so it stays (keeping them what they were); levels below it become shelves or drawers, seen
crouched.

How it differs from THOR: levels exist only where the house rests something (a dresser the house
leaves empty stays one closed box, a shelf nobody used is not there); every drawer spans the whole
width of its dresser; an open drawer does not collide with the agent; shelves have no side panels;
a chair is solid under its seat (no legs) and its back is one full-width panel.
``tests/test_levels.py`` checks the derivation on real dev houses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from household.assets import DERIVED_TYPES, AssetInfo
from sim_bridge.embedded.shapes import Part

DRAWER_OWNER_TYPES = frozenset({"Dresser"})
SEAT_TYPES = frozenset({"Bed", "Sofa", "ArmChair", "Chair", "Ottoman", "DogBed"})

# An object whose bottom rests at or above this share of its owner's height lies on the top.
TOP_SHARE = 0.95
# A seat or mattress lies at least this share up its box (lower resting heights are a frame).
MIN_SEAT_SHARE = 0.3
# A chair's seat as a share of its height where nothing rests on it to say: the median over the
# 35 dev-house chairs something rests on (0.41 to 0.61, 10th to 90th percentile 0.44 to 0.57).
CHAIR_SEAT_SHARE = 0.5
CHAIR_BACK_M = 0.06  # depth of a chair's back panel
CHAIR_TYPES = frozenset({"Chair"})
# Resting heights closer than this are one level: assets' boxes do not start exactly at their
# visible bottoms, so things on one shelf rest a few centimetres apart (chosen from dev houses 0, 1
# and 97, where 0.53/0.58 m and 0.24/0.29 m were one shelf each; not measured over all furniture).
LEVEL_MERGE_M = 0.10
# A level with less room above it than this (to the next level or the top board) is a drawer, not
# an open shelf: a camera 1.5 m up cannot look into a slot so low within reach (dev house 0's side
# table rests a phone in an 8 cm slot under its top: most likely a drawer in THOR, unverified
# without the Unity build).
OPEN_SHELF_CLEARANCE_M = 0.15
BOARD_M = 0.02  # thickness of a shelf board, a top board, a divider and a back panel
# An open drawer slides out by this share of its depth.
DRAWER_SLIDE_SHARE = 0.5
# Drawers are this much narrower and shallower than their dresser on each side.
DRAWER_INSET_M = 0.02

# The asset every derived drawer carries (THOR's Drawer: CanOpen, Receptacle, Static); the same as
# the catalog's (household/assets.py DERIVED_TYPES).
DRAWER_ASSET = AssetInfo("embedded_Drawer", "Drawer", (0.0, 0.0, 0.0), *DERIVED_TYPES["Drawer"])


@dataclass(frozen=True)
class DrawerSpec:
    """One derived drawer, in its dresser's local frame: its band (bottom, top above the
    dresser's box bottom) and the ids of what rests in it."""

    index: int
    bottom: float
    top: float
    contents: tuple[str, ...]


def cluster_levels(offsets: list[float], merge: float = LEVEL_MERGE_M) -> list[float]:
    """Distinct resting heights (ascending): each the lowest of a run of heights within
    ``merge`` of the previous one."""
    levels: list[float] = []
    last = -np.inf
    for o in sorted(offsets):
        if o - last > merge:
            levels.append(float(o))
        last = o
    return levels


def owner_kind(object_type: str) -> str:
    """'drawers', 'seat' or 'shelves': how an owner of this type holds what rests inside its box."""
    if object_type in DRAWER_OWNER_TYPES:
        return "drawers"
    if object_type in SEAT_TYPES:
        return "seat"
    return "shelves"


def shelf_parts(size: np.ndarray, levels: tuple[float, ...], top: float | None = None) -> tuple[Part, ...]:
    """The boxes an open-shelved body is drawn as, in its local frame (box centre origin): a board
    under each level, the top board and the back panel. ``levels`` are heights above the bottom,
    ``top`` that of the top face (default: the box's)."""
    sx, sy, sz = (float(v) for v in size)
    bottom = -sy / 2.0
    sy = sy if top is None else float(top)
    parts = [_slab(sx, sz, sy - BOARD_M, sy, bottom)]
    for h in levels:
        lo = max(0.0, h - BOARD_M)
        if h > lo:
            parts.append(_slab(sx, sz, lo, h, bottom))
    parts.append(_back_panel(sx, sz, 0.0, sy, bottom))
    return tuple(parts)


def dresser_parts(size: np.ndarray, drawers: tuple[DrawerSpec, ...], top: float | None = None) -> tuple[Part, ...]:
    """The boxes a dresser with drawers is drawn as: everything of its box (up to ``top``, default
    the box's) but the drawers' bands (the plinth under the lowest drawer, the dividers between,
    the top board) and its back."""
    sx, sy, sz = (float(v) for v in size)
    bottom = -sy / 2.0
    sy = sy if top is None else float(top)
    parts: list[Part] = []
    edge = 0.0
    for d in sorted(drawers, key=lambda d: d.bottom):
        if d.bottom > edge:
            parts.append(_slab(sx, sz, edge, d.bottom, bottom))
        edge = max(edge, d.top)
    if sy > edge:
        parts.append(_slab(sx, sz, edge, sy, bottom))
    parts.append(_back_panel(sx, sz, 0.0, sy, bottom))
    return tuple(parts)


def chair_parts(size: np.ndarray, seat: float | None) -> tuple[Part, ...]:
    """The boxes a chair is drawn as, in its local frame: everything up to the seat (``seat``
    above the box bottom; default ``CHAIR_SEAT_SHARE`` of the height) and a back panel along
    local -z from there to the top (local +z is the front: all 314 dev-house chairs within
    1.2 m of a table face it so)."""
    sx, sy, sz = (float(v) for v in size)
    bottom = -sy / 2.0
    lo = min(max(CHAIR_SEAT_SHARE * sy if seat is None else float(seat), 0.0), sy)
    parts = [_slab(sx, sz, 0.0, lo, bottom)] if lo > 0.0 else []
    if sy > lo:
        parts.append(_back_panel(sx, sz, lo, sy, bottom, CHAIR_BACK_M))
    return tuple(parts)


def split_levels(height: float, kind: str, rests: list[tuple[float, float, str]]
                 ) -> tuple[list[float], list[tuple[float, float, str]]]:
    """(open shelf levels, what rests in drawers) of an owner of box height ``height`` from the
    (bottom, top, object id) above its box bottom of what rests inside it: each level
    (``cluster_levels``) is a drawer where the owner has drawers (a dresser) or where less than
    ``OPEN_SHELF_CLEARANCE_M`` is free above it; otherwise an open shelf."""
    levels = cluster_levels([b for b, _, _ in rests])
    shelves: list[float] = []
    in_drawers: list[tuple[float, float, str]] = []
    for i, level in enumerate(levels):
        above = (levels[i + 1] if i + 1 < len(levels) else height) - BOARD_M
        upper = levels[i + 1] if i + 1 < len(levels) else np.inf
        members = [r for r in rests if level <= r[0] < upper]
        if kind == "drawers" or above - level < OPEN_SHELF_CLEARANCE_M:
            in_drawers.extend(members)
        else:
            shelves.append(level)
    return shelves, in_drawers


def drawer_bands(height: float, rests: list[tuple[float, float]], shelves: tuple[float, ...] = ()
                 ) -> list[tuple[float, float]]:
    """(bottom, top) above the box bottom of each drawer, from the (bottom, top) of what rests
    in drawers: a drawer starts a board's thickness under the lowest bottom not yet in a
    drawer and holds everything whose bottom lies below its top or within ``LEVEL_MERGE_M`` of
    the bottom before it (one level, as ``cluster_levels`` groups them: a pencil resting 4 cm
    under a phone lies in the same drawer, not in a 5 cm drawer of its own no camera can look
    into); its top is the highest top among them plus a board (so a drawer always encloses
    what it holds), and it reaches up to a board under the next drawer or open shelf; the
    topmost ends under the top board, and none reaches into it."""
    bands: list[tuple[float, float]] = []
    last = -np.inf
    for bottom, top in sorted(rests):
        if bands and (bottom < bands[-1][1] or bottom - last <= LEVEL_MERGE_M):
            lo, hi = bands[-1]
            bands[-1] = (lo, max(hi, top + BOARD_M))
        else:
            bands.append((max(0.0, bottom - BOARD_M), top + BOARD_M))
        last = bottom
    ceiling = height - BOARD_M
    out = []
    for k, (lo, hi) in enumerate(bands):
        nxt = [b for b, _ in bands[k + 1:]] + [h - BOARD_M for h in shelves if h - BOARD_M > lo] + [height]
        top = min(nxt) - BOARD_M
        out.append((lo, max(min(max(hi, top), ceiling), lo + BOARD_M)))
    return out


def _back_panel(sx: float, sz: float, lo: float, hi: float, bottom: float, depth: float = BOARD_M) -> Part:
    """The panel along the back (local -z) between heights lo and hi above ``bottom`` (local
    frame), ``depth`` deep but at most a quarter of the body's depth."""
    back = min(depth, sz / 4.0)
    return Part(np.array([0.0, bottom + (lo + hi) / 2.0, -sz / 2.0 + back / 2.0]), np.array([sx, hi - lo, back]))


def _slab(sx: float, sz: float, lo: float, hi: float, bottom: float) -> Part:
    """A full-footprint box between heights lo and hi above ``bottom`` (local frame)."""
    return Part(np.array([0.0, bottom + (lo + hi) / 2.0, 0.0]), np.array([sx, hi - lo, sz]))
