"""Compound shapes: assets whose body is not their bounding box (L- and C-shaped counters,
televisions).

The asset database gives one bounding box per asset. For most furniture that box is the body,
but ProcTHOR's corner counters (``Countertop_L_<W>x<D>``, ``Countertop_C_<W>x<D>``) are runs of
counter along two or three sides of the box with open floor inside the bend. One solid box
walls that floor off and leaves the back run out of reach (issue 30), so the embedded simulator
models these assets as the union of axis-aligned boxes in the asset's own frame.

How the shape is derived, from the data:

- **Run depth.** The numbers in a counter's asset id are its extents in feet (``Countertop_C_10x8``
  is 3.048 x 2.48 m: 10 x 8 ft). The straight counters are ``Countertop_I_<N>x2``, 0.611 m deep:
  a run of counter is 2 ft (0.6096 m) deep. The L and C counters are built of such runs.
- **Which sides.** Every object ProcTHOR places on an L or C counter of the dev houses (602
  objects on 61 counters of 4 assets, in every rotation they appear in) was mapped into the counter's
  local frame (objects.py: local +z is the asset's front). They lie only on:
  L: the back run (local -z edge, full width) and the run along the local +x edge;
  C: the back run and the runs along both x edges. The front (+z) of a C is open, as are the
  front and the -x side of an L. With the run depth above, every placed object's centre lies
  inside these runs (``tests/test_counter_shapes.py`` checks it on the dev houses), and no
  object stands on the floor inside the bend.

The runs do not overlap: the back run owns the corner squares, the side runs start where it
ends. Every part spans the asset's full height.

Televisions are the other such body (``panel_parts``). A set on a foot has a box as deep as its
foot (0.23 to 0.56 m in the database) and as tall as the screen plus the foot, but the body is a
screen a few centimetres thick lifted over the stand: ProcTHOR puts key chains, remotes, watches,
candles and statues on the TV stand inside that box, under the screen and in front of and behind
it (45 of the 53 objects the acting audit could not pick up at 2de60e6; 20 of them wholly inside
the box, so ``placement_checks`` called them sealed in). The screen is modelled as a slab
``PANEL_DEPTH_M`` deep through the box's middle, the database's thinnest (wall-style) sets being
0.07 to 0.11 m deep, from a clearance above the box bottom to its top; the foot is not modelled
(it covers a few centimetres of the stand, where ProcTHOR places nothing). The clearance is the
larger of ``PANEL_CLEARANCE_SHARE`` of the height and the top of whatever the house places under
the slab (objects.py), as THOR's screen clears what physics let ProcTHOR put there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# One run of counter: 2 ft, the depth of the straight ``Countertop_I_<N>x2`` assets.
RUN_DEPTH_M = 0.6096

L_PREFIX = "Countertop_L_"
C_PREFIX = "Countertop_C_"


@dataclass(frozen=True)
class Part:
    """One box of a compound body, in the owning object's local frame (box centre origin)."""

    center: np.ndarray  # (3,) local offset of the part's centre
    size: np.ndarray  # (3,) full extents along local x, y, z


# Televisions: a screen this deep through the middle of the box (see the module docstring); a set
# no deeper than PANEL_MIN_BOX_M is its screen already (a wall-style set) and stays a box.
PANEL_TYPES = frozenset({"Television"})
PANEL_DEPTH_M = 0.08
PANEL_MIN_BOX_M = 0.12
# The screen's lowest edge above the box bottom, as a share of the box height, when nothing lies
# under it; and the most it is lifted to clear what does (a screen is kept).
PANEL_CLEARANCE_SHARE = 0.1
PANEL_MAX_CLEARANCE_SHARE = 0.5


def panel_parts(size: np.ndarray, clearance: float) -> tuple[Part, ...] | None:
    """The screen of a television of box ``size`` as one part: a ``PANEL_DEPTH_M`` slab through
    the box's middle from ``clearance`` above its bottom to its top; None for a set already that
    thin. ``clearance`` is clamped to the shares above."""
    sx, sy, sz = (float(v) for v in size)
    if sz <= PANEL_MIN_BOX_M:
        return None
    lift = min(max(clearance, PANEL_CLEARANCE_SHARE * sy), PANEL_MAX_CLEARANCE_SHARE * sy)
    return (Part(np.array([0.0, lift / 2.0, 0.0]), np.array([sx, sy - lift, PANEL_DEPTH_M])),)


def shape_kind(asset_id: str) -> str | None:
    """'L', 'C' or None (a plain box) for an asset id."""
    if asset_id.startswith(L_PREFIX):
        return "L"
    if asset_id.startswith(C_PREFIX):
        return "C"
    return None


def _box(x0: float, x1: float, z0: float, z1: float, height: float) -> Part | None:
    if x1 - x0 <= 1e-6 or z1 - z0 <= 1e-6:
        return None
    return Part(np.array([(x0 + x1) / 2.0, 0.0, (z0 + z1) / 2.0]), np.array([x1 - x0, height, z1 - z0]))


def compound_parts(asset_id: str, size: np.ndarray) -> tuple[Part, ...] | None:
    """The parts of an L or C counter of full extents ``size`` (local x, y, z), or None when the
    asset is a plain box. A run never gets deeper than the box (a 4 ft wide L is two 2 ft runs)."""
    kind = shape_kind(asset_id)
    if kind is None:
        return None
    sx, sy, sz = (float(v) for v in size)
    hx, hz = sx / 2.0, sz / 2.0
    depth_x, depth_z = min(RUN_DEPTH_M, sx), min(RUN_DEPTH_M, sz)
    back_end = -hz + depth_z
    boxes = [_box(-hx, hx, -hz, back_end, sy), _box(hx - depth_x, hx, back_end, hz, sy)]
    if kind == "C":
        boxes.append(_box(-hx, -hx + depth_x, back_end, hz, sy))
    return tuple(b for b in boxes if b is not None)
