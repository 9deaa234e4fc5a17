"""Where an object stands, read from the object memory's boxes: on or in which receptacle.

Two readers share the one rule: the goal check (``planner.goal_check``: is the mug seen on the
shelf it was put on?) and the agent's beliefs (``PlaceWatcher``, fed every frame by
``HoloMindAgent._integrate``: a thing seen standing somewhere is observed evidence of its
location, so an object someone else moved has its new place in the belief tracker, not only
"moved"). The boxes are the agent's own, never ground
truth.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Iterable, Protocol

from household.assets import AssetCatalog
from planner.object_memory import ObjectMemory, TrackedObject

# How far (metres) an object's box may stick out of its receptacle's footprint and still count as
# on or in it (a mug at a counter's edge), and how far below the receptacle's bottom it may sit.
FOOTPRINT_SLACK = 0.10
BELOW_SLACK = 0.05
# How far above a receptacle's top an object's bottom may be and still stand on it (a box's top
# is a few centimetres off under noisy depth); higher, it stands on something else (a wall shelf
# over a counter).
ABOVE_SLACK = 0.15
# How far under a receptacle's top an object's bottom must be for it to stand in the receptacle
# rather than on it.
INSIDE_DEPTH = 0.05
# Furniture taller than this (metres) that an object stands at the foot of, its bottom level with
# the furniture's, has the object beside or under it, not in it (a bowl or a bin is lower; in a
# fridge or a bookcase things stand on shelves above its bottom).
TALL = 0.6


def stands_in(obj: TrackedObject, target: TrackedObject) -> bool:
    """The object's box stands on or in the target's: its centre over the target's footprint,
    the boxes overlapping in plan, its bottom not below the target's."""
    lo, hi = obj.box_min, obj.box_max
    tlo, thi = target.box_min, target.box_max
    overlap_x = lo[0] <= thi[0] + FOOTPRINT_SLACK and hi[0] >= tlo[0] - FOOTPRINT_SLACK
    overlap_z = lo[2] <= thi[2] + FOOTPRINT_SLACK and hi[2] >= tlo[2] - FOOTPRINT_SLACK
    centre_inside = (tlo[0] - FOOTPRINT_SLACK <= (lo[0] + hi[0]) / 2 <= thi[0] + FOOTPRINT_SLACK
                     and tlo[2] - FOOTPRINT_SLACK <= (lo[2] + hi[2]) / 2 <= thi[2] + FOOTPRINT_SLACK)
    return bool(overlap_x and overlap_z and centre_inside and lo[1] >= tlo[1] - BELOW_SLACK)


def support_of(obj: TrackedObject, records: Iterable[TrackedObject],
               is_receptacle: Callable[[str], bool]) -> str | None:
    """The receptacle the object stands on or in, or None. Candidates are the receptacles it
    stands in (``stands_in``), its bottom not above their top by more than ``ABOVE_SLACK``, its
    centre over their footprint within a quarter of the footprint's short side at most (an apple
    beside a mug is not in the mug). Of those, in this order:

    1. a container standing where the object stands, the object inside its footprint (the pen in
       the mug, the apple in the bowl, the watch in the drawer): the smallest;
    2. a surface whose top its bottom is level with (the book on the table, not the chair beside
       it whose box a noisy look puts it in; the dresser's top, not the drawer inside it): the
       nearest in height;
    3. a container it stands in above its bottom (a fridge's or a bookcase's shelves): the
       smallest; never tall furniture it stands at the foot of (``TALL``: a bat leaning on a
       dresser, a book under a table)."""
    best: tuple[tuple[int, float], str] | None = None
    olo, ohi = obj.box_min, obj.box_max
    cx, cz = (olo[0] + ohi[0]) / 2.0, (olo[2] + ohi[2]) / 2.0
    for rec in records:
        if rec.object_id == obj.object_id or rec.gone or rec.moved or not is_receptacle(rec.object_type):
            continue
        lo, hi = rec.box_min, rec.box_max
        slack = min(FOOTPRINT_SLACK, 0.25 * float(min(hi[0] - lo[0], hi[2] - lo[2])))
        if not (lo[0] - slack <= cx <= hi[0] + slack and lo[2] - slack <= cz <= hi[2] + slack):
            continue
        if olo[1] > hi[1] + ABOVE_SLACK or not stands_in(obj, rec):
            continue
        gap = float(olo[1] - hi[1])  # the object's bottom above the top (+) or under it (-)
        area = float((hi[0] - lo[0]) * (hi[2] - lo[2]))
        if gap >= -INSIDE_DEPTH:
            key = (2, abs(gap))
        elif abs(float(olo[1] - lo[1])) <= INSIDE_DEPTH and lo[0] <= cx <= hi[0] and lo[2] <= cz <= hi[2]:
            if hi[1] - lo[1] > TALL:
                continue  # at the foot of tall furniture
            key = (1, area)
        elif olo[1] > lo[1] + INSIDE_DEPTH:
            key = (3, area)
        else:
            continue
        if best is None or key < best[0]:
            best = (key, rec.object_id)
    return best[1] if best else None


# Looks in a row that must show an object on the same receptacle before its place is recorded:
# under noisy boxes a mug at a sink's edge stands "in" the sink on one frame, on the counter on
# the next; one look would record each flip as a move.
PLACE_LOOKS = 3


class PlaceLog(Protocol):
    """What ``PlaceWatcher`` writes to: the agent's belief log (``planner.episodic_beliefs``)."""

    def observe_location(self, step: int, object_id: str, receptacle_id: str) -> bool: ...


class PlaceWatcher:
    """Turns where the agent sees things standing into observed ``location`` evidence, frame by
    frame: for each object that can be picked up, refreshed by this frame, not in hand and not
    stale, its support (``support_of``); once ``PLACE_LOOKS`` looks in a row agree, the belief log
    gets it (it records only a change). Made new per episode."""

    def __init__(self, is_pickupable: Callable[[str], bool], is_receptacle: Callable[[str], bool]) -> None:
        self.is_pickupable = is_pickupable
        self.is_receptacle = is_receptacle
        self._streak: dict[str, tuple[str, int]] = {}  # object id -> (support, looks in a row)
        self.recorded = 0

    def watch(self, step: int, memory: ObjectMemory, held_id: str | None, log: PlaceLog) -> None:
        seen = [rec for oid in memory.visible_now if oid != held_id and (rec := memory.get(oid)) is not None
                and rec.last_seen == step and not rec.moved and not rec.gone and self.is_pickupable(rec.object_type)]
        if not seen:
            return
        receptacles = [r for r in memory.objects.values()
                       if not r.gone and not r.moved and self.is_receptacle(r.object_type)]
        for rec in seen:
            where = support_of(rec, receptacles, self.is_receptacle)
            if where is None:
                self._streak.pop(rec.object_id, None)
                continue
            before = self._streak.get(rec.object_id)
            looks = before[1] + 1 if before is not None and before[0] == where else 1
            self._streak[rec.object_id] = (where, looks)
            if looks >= PLACE_LOOKS and log.observe_location(step, rec.object_id, where):
                self.recorded += 1


def catalog_place_watcher(catalog: AssetCatalog) -> PlaceWatcher:
    """A ``PlaceWatcher`` whose types come from the asset catalog (a type it does not know is
    neither picked up nor a receptacle)."""

    @lru_cache(maxsize=None)
    def flags(object_type: str) -> tuple[bool, bool]:
        info = catalog.type_affordances(object_type)
        return (info.pickupable, info.receptacle) if info is not None else (False, False)

    return PlaceWatcher(lambda t: flags(t)[0], lambda t: flags(t)[1])
