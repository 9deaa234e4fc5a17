"""Rooms from the agent's own map: segment by walls, name by what is in them.

Segmentation: the occupancy map's wall band (points above every doorway's top) draws the walls
and the lintels over doorways, so flooding the observed floor without crossing it separates the
rooms even where a doorway is open. Walls not yet seen leave gaps, and two rooms may be one
region until the agent looks at the wall between them; the segmentation is recomputed as the map
grows.

Naming: naive Bayes over the object types seen in a region, with P(type | room type) counted on
the DEV houses' objects (never the test houses; Laplace smoothing). A bed says Bedroom, a toilet
Bathroom, a stove Kitchen; common objects (chairs, windows) barely move the posterior. An
object counts where it was found, not where the agent has since put it (``TrackedObject.home``):
the agent's own placements follow the instruction, not the room.
"""

from __future__ import annotations

import functools
import math
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
from matplotlib.path import Path as MplPath
from scipy import ndimage

from household import morphology
from planner.occupancy import OccupancyMap

ROOM_TYPES = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")
# The rooms a home joins without a wall (an open plan): the shared rooms. A bedroom or a bathroom
# has walls and a door, so a region holding a bed and a television corner is one bedroom.
OPEN_PLAN_ROOMS = frozenset({"Kitchen", "LivingRoom"})


@dataclass
class RoomPrior:
    log_p: dict[str, dict[str, float]]  # room type -> object type -> log P(type | room)
    log_unseen: dict[str, float]  # room type -> log P(an unseen type | room)

    def score(self, object_types: list[str]) -> dict[str, float]:
        return {room: sum(self.log_p[room].get(t, self.log_unseen[room]) for t in object_types)
                for room in self.log_p}

    def room_given_type(self, object_type: str, room: str) -> float:
        """P(room | one object of this type), room types equally likely a priori: how typical of
        ``room`` a piece of furniture is (a counter top 0.97 for Kitchen, a sofa 0.93 for
        LivingRoom, a chair about a third for each of three rooms)."""
        if room not in self.log_p:
            return 0.0
        logs = {r: self.log_p[r].get(object_type, self.log_unseen[r]) for r in self.log_p}
        top = max(logs.values())
        return math.exp(logs[room] - top) / sum(math.exp(v - top) for v in logs.values())


def _walk(objects: list[dict]) -> list[dict]:
    out = []
    for o in objects:
        out.append(o)
        out.extend(_walk(o.get("children") or []))
    return out


@functools.lru_cache(maxsize=1)
def dev_room_prior() -> RoomPrior:
    """Count object types per room type over the packaged dev houses."""
    from household.assets import default_catalog
    from household.house_data import load_houses_file, resolve_data_file

    catalog = default_catalog()
    houses = load_houses_file(resolve_data_file("houses_dev.jsonl.gz")).houses
    counts: dict[str, Counter] = defaultdict(Counter)
    for house in houses:
        rooms = [(r["roomType"], MplPath(np.array([[p["x"], p["z"]] for p in r["floorPolygon"]])))
                 for r in house.get("rooms", [])]
        for obj in _walk(house.get("objects", [])):
            info = catalog.get(str(obj.get("assetId", "")))
            t = info.object_type if info is not None else _type_of(obj)
            p = obj.get("position") or {}
            for room_type, path in rooms:
                if path.contains_point((p.get("x", 0.0), p.get("z", 0.0))):
                    counts[room_type][t] += 1
                    break
    vocab = set().union(*[set(c) for c in counts.values()]) if counts else set()
    log_p, log_unseen = {}, {}
    for room in ROOM_TYPES:
        c = counts.get(room, Counter())
        total = sum(c.values()) + len(vocab) + 1
        log_p[room] = {t: math.log((c[t] + 1) / total) for t in vocab}
        log_unseen[room] = math.log(1 / total)
    return RoomPrior(log_p, log_unseen)


def _type_of(obj: dict) -> str:
    """ProcTHOR object ids start with the type for small objects ("Apple|..."); larger ones are
    "<n>|<m>" with the type in the asset id ("Bed_12" -> "Bed")."""
    oid = str(obj.get("id", ""))
    head = oid.split("|")[0]
    if head and not head[0].isdigit():
        return head
    asset = str(obj.get("assetId", ""))
    return asset.split("_")[0] if asset else head


@dataclass
class Region:
    label: int
    room_type: str | None
    confidence: float
    cells: int
    scores: dict[str, float] | None = None  # log posterior per room type minus the best one's
    parts: OpenPlanParts | None = None  # an open plan: which room each part of the region is


@dataclass
class OpenPlanParts:
    """One region that holds two rooms with no wall between them (a kitchen open to the living
    room): the objects whose own neighbourhood names a room clearly, and that room. A point in
    the region belongs to the room of the nearest such object (a Voronoi split of the region)."""

    xz: np.ndarray  # (n, 2) floor positions of the labelled objects
    rooms: list[str]
    scores: np.ndarray  # (n, room types) local log posterior minus the best, per labelled object

    def nearest(self, x: float, z: float) -> int:
        return int(np.argmin(np.sum((self.xz - np.array([x, z])) ** 2, axis=1)))


def core_labels(space: np.ndarray, erosion: int, min_cells: int) -> np.ndarray:
    """Room cores: the traversable space eroded until doorways close, labelled, cores smaller
    than ``min_cells`` dropped (int32 labels, 0 elsewhere)."""
    labels, count = ndimage.label(morphology.erode(space, iterations=erosion))
    if count:
        small = np.bincount(labels.ravel()) < min_cells
        small[0] = False
        labels[small[labels]] = 0
    return labels.astype(np.int32)


def grow_labels(labels: np.ndarray, allowed: np.ndarray, steps: int) -> np.ndarray:
    """Grow labels (in place) over the ``allowed`` unlabelled cells, one ring per step: a cell next
    to labelled ones takes the largest label in its 3 x 3 neighbourhood; stops after ``steps``
    or when nothing grows. The same as repeating ``labels[new] = grey_dilation(labels, 3)[new]``
    for ``new = (labels == 0) & allowed & (grown > 0)``, but each step looks only at the cells
    the step before labelled (the others' neighbourhoods did not change), not the whole window
    (40 whole-window dilations were half of a re-segmentation, issue 27).

    The rings are walked on flat indices of a copy padded by one unlabelled, disallowed cell on
    every side: a neighbour is an index plus a fixed offset, with no bounds to check or clip
    (grey_dilation's border repeats the edge cell, already in the neighbourhood; the padding's
    0 is below every label, so the largest label is the same), and a ring's candidates are made
    unique by stamping them into a scratch array instead of sorting them (``np.unique``): about
    4x less per re-segmentation than the ring-by-ring walk on (i, j) pairs it replaces (13.4 ->
    3.1 ms a growth, equal labels, on the 64 labellings of dev-082-0; issue 27)."""
    h, w = labels.shape
    if h == 0 or w == 0:
        return labels
    wide = w + 2
    pad = np.zeros((h + 2, wide), dtype=labels.dtype)
    pad[1:-1, 1:-1] = labels
    open_ = np.zeros((h + 2, wide), dtype=bool)  # cells a ring may still take: allowed, unlabelled
    open_[1:-1, 1:-1] = allowed & (labels == 0)
    flat, free = pad.ravel(), open_.ravel()  # views: writing them writes pad and open_
    offsets = np.array([di * wide + dj for di in (-1, 0, 1) for dj in (-1, 0, 1) if di or dj], dtype=np.int64)
    # the first ring's sources: labelled cells (the padding has none) next to an unlabelled one
    src = np.flatnonzero((pad > 0) & morphology.dilate(pad == 0, np.ones((3, 3), dtype=bool)))
    stamp = np.full(flat.size, -1, dtype=np.int64)
    for _ in range(steps):
        cand = (src[:, None] + offsets[None, :]).ravel()
        cand = cand[free[cand]]
        if cand.size == 0:
            break
        # unique: of the repeats of an index, the last one written to ``stamp`` keeps it
        order = np.arange(cand.size)
        stamp[cand] = order
        cand = cand[stamp[cand] == order]
        # the largest label around each, read before any of this ring is written
        best = flat[cand + offsets[0]]
        for off in offsets[1:]:
            np.maximum(best, flat[cand + off], out=best)
        flat[cand] = best
        free[cand] = False
        src = cand
    labels[...] = pad[1:-1, 1:-1]
    return labels


def contacts(labels: np.ndarray) -> dict[tuple[int, int], int]:
    """(smaller, larger) label pair -> how many side-by-side cell pairs join the two regions, in
    the order the pairs are first met (rows of vertical neighbours, then of horizontal ones)."""
    lows, highs = [], []
    for a, b in ((labels[:-1, :], labels[1:, :]), (labels[:, :-1], labels[:, 1:])):
        touch = (a > 0) & (b > 0) & (a != b)
        x, y = a[touch], b[touch]
        lows.append(np.minimum(x, y))
        highs.append(np.maximum(x, y))
    low, high = np.concatenate(lows).astype(np.int64), np.concatenate(highs).astype(np.int64)
    if low.size == 0:
        return {}
    key = low * (int(high.max()) + 1) + high
    uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return {(int(low[first[k]]), int(high[first[k]])): int(counts[k]) for k in order}


def named_by(scores: dict[str, float]) -> tuple[str | None, float]:
    """The room type a set of log scores names, and its margin over the next type: a name only
    where the margin passes 1.0 (log), so a region, or objects with no region, holding only what
    any room holds get none."""
    ordered = sorted(scores.values(), reverse=True)
    margin = ordered[0] - ordered[1] if len(ordered) > 1 else 0.0
    return (max(scores, key=scores.__getitem__) if margin > 1.0 else None), margin


class RoomSegmenter:
    """Region per map cell, and a room type per region; recomputed when the map changed."""

    def __init__(self, occupancy: OccupancyMap, prior: RoomPrior | None = None) -> None:
        self.map = occupancy
        self.prior = prior or dev_room_prior()
        self.labels = np.zeros((occupancy.n, occupancy.n), dtype=np.int32)
        self.regions: dict[int, Region] = {}
        self.contact: dict[tuple[int, int], int] = {}
        self._version = -1
        self._segmentations = 0  # how many times the labels were made (a new labelling: a new count)
        # Cells per label of ``labels`` (index 0: not all of the unlabelled ones), counted once per
        # labelling: naming runs again whenever the objects change, and counting (and listing)
        # the labels over the whole map each time cost it 7 ms (issue 27).
        self.sizes = np.zeros(1, dtype=np.int64)
        # What the regions were last named from: (labelling, objects). The naming reads nothing
        # else, so the same labelling and objects name them the same: ``update`` keeps them
        # (the agent asks for its context several times a step, each an update; issue 27).
        self._named_from: tuple[int, tuple[tuple[str, float, float], ...]] | None = None
        # ``room_type_at`` answers per point since the regions were last named: the agent's
        # context asks it for every known object on each call, several calls an act, and the
        # answer changes only with the labels or the names (both made in ``update`` alone).
        self._type_at: dict[tuple[float, float], str | None] = {}
        self.every = 8  # map versions (frames) between re-segmentations
        self.erosion = 6  # cells (0.3 m)
        self.min_core_cells = 60
        self.grow_steps = 40
        self.max_orphan_cells = 2400  # 6 m^2: larger unnamed regions are rooms not yet understood
        # Open plans: an object's neighbourhood (objects within this many metres, same region)
        # names its part of a region; a part needs this many objects naming it, each by a
        # margin over the next room type as the region's own name needs (1.0, log).
        self.part_radius = 2.5
        self.part_min_objects = 3
        # Objects seen where no region of the map is near them (type, x, z): see ``room_type_at``.
        self._off_floor: list[tuple[str, float, float]] = []

    def _segment(self) -> None:
        """Cores: traversable floor shrunk until doorways close (a doorway leaves the agent's
        centre ~0.5 m of width; 0.3 m of erosion cuts it) and cut by the wall band (lintels);
        then labels grow back from the cores over everything observed, never across the wall
        band, so furniture and the objects on it join the room they stand in."""
        m = self.map
        seen = m.observed()
        # the box around every observed cell, from its rows and columns (np.nonzero over the
        # whole map listed every observed cell for four numbers: 1.3 ms; issue 27)
        rows = np.flatnonzero(seen.any(axis=1))
        if rows.size == 0:
            return
        cols = np.flatnonzero(seen[rows[0]:rows[-1] + 1].any(axis=0))
        i0, i1 = max(int(rows[0]) - 2, 0), min(int(rows[-1]) + 3, m.n)
        j0, j1 = max(int(cols[0]) - 2, 0), min(int(cols[-1]) + 3, m.n)
        walls = morphology.dilate(m.wall[i0:i1, j0:j1], iterations=2)
        space = m.free_grid().mask[i0:i1, j0:j1] & ~walls
        labels = grow_labels(core_labels(space, self.erosion, self.min_core_cells),
                             seen[i0:i1, j0:j1] & ~walls, self.grow_steps)
        self.labels = np.zeros((m.n, m.n), dtype=np.int32)
        self.labels[i0:i1, j0:j1] = labels
        # cells per label: the same counts as over the whole map (nothing is labelled outside
        # the window) but for the zeros, which nothing reads
        self.sizes = np.bincount(labels.ravel())
        self._segmentations += 1
        # Which regions touch without a wall band between them (cut apart by the erosion only:
        # a doorway whose lintel was not seen, or a narrow passage between furniture).
        self.contact = contacts(labels)

    @property
    def segmentations(self) -> int:
        """How many labellings were made so far (a new one: a new count)."""
        return self._segmentations

    def update(self, objects: list[tuple[str, float, float]], force: bool = False) -> None:
        """Re-segment (if the map changed) and re-name regions from (type, x, z) of known objects."""
        if self._version != self.map.version and (force or self.map.version - self._version >= self.every
                                                   or self._version < 0):
            self._segment()
            self._version = self.map.version
        named_from = (self._segmentations, tuple(objects))
        if named_from == self._named_from:
            return  # named already from this labelling and these objects
        self._named_from = named_from
        self._type_at = {}
        members: dict[int, list[str]] = defaultdict(list)
        labels = [self.label_at(x, z, search=12) for _, x, z in objects]
        for (t, _, _), lab in zip(objects, labels):
            if lab:
                members[lab].append(t)
        self._off_floor = [o for o, lab in zip(objects, labels) if not lab]
        sizes = self.sizes
        self.regions = {}
        for lab, types in members.items():
            scores = self.prior.score(types)
            name, margin = named_by(scores)
            top = max(scores.values())
            self.regions[lab] = Region(lab, name, margin, int(sizes[lab]),
                                       {room: v - top for room, v in scores.items()})
        self._one_kitchen()
        self._open_plans(objects, np.array(labels, dtype=np.int64))
        # A small region with no name of its own (a corner the erosion cut off) takes the name of
        # the named region it shares the longest border with.
        # The labels present with 0, in increasing order: np.unique(self.labels) over the whole
        # map listed the same (the map always has unlabelled cells), and a set made the same way
        # iterates the same way, so the orphans are named in the same order.
        for lab in set(np.union1d([0], np.flatnonzero(sizes)).tolist()) - {0}:
            region = self.regions.get(lab)
            if (region is not None and region.room_type) or sizes[lab] > self.max_orphan_cells:
                continue
            best, best_contact = None, 0
            for (a, b), n in self.contact.items():
                other = b if a == lab else a if b == lab else None
                r = self.regions.get(other) if other is not None else None
                if r is not None and r.room_type and n > best_contact and r.confidence > 1.0:
                    best, best_contact = r.room_type, n
            if best is not None:
                self.regions[lab] = Region(lab, best, 0.0, int(sizes[lab]))

    def _one_kitchen(self) -> None:
        """Houses have one kitchen (every dev house does). When several regions apart from each
        other are named Kitchen, the one with the clearest evidence keeps the name; the others
        take their next likeliest type (a dining area with a fruit bowl read as a kitchen). Regions
        that touch without a wall between them are parts of one room and keep it."""
        kitchens = [r for r in self.regions.values() if r.room_type == "Kitchen"]
        if len(kitchens) < 2:
            return
        best = max(kitchens, key=lambda r: (r.confidence, r.cells))
        joined = {best.label}
        for (a, b), _ in sorted(self.contact.items()):
            if a in joined or b in joined:
                joined |= {a, b}
        for r in kitchens:
            if r.label in joined or not r.scores:
                continue
            others = sorted(((v, room) for room, v in r.scores.items() if room != "Kitchen"), reverse=True)
            if others:
                r.room_type = others[0][1]
                r.confidence = 0.0

    def _open_plans(self, objects: list[tuple[str, float, float]], labels: np.ndarray) -> None:
        """Split regions that are two rooms without a wall between them. Open plans join the
        kitchen and the living room (``OPEN_PLAN_ROOMS``; many ProcTHOR houses do); walls cannot separate them, and
        naive Bayes over the whole region names it after the room with more objects (a kitchen's
        counters, fridge and stove outvote a sofa), so "the table in the living room" was never
        found there. Each object is named by the objects within ``part_radius`` of it in the
        same region; where both open-plan rooms (and no other) are each named by
        ``part_min_objects`` objects, the region is split between them by the nearest named
        object."""
        if not objects:
            return
        rooms = list(self.prior.log_p)
        types = [t for t, _, _ in objects]
        table = np.array([[self.prior.log_p[r].get(t, self.prior.log_unseen[r]) for r in rooms] for t in types])
        xz = np.array([[x, z] for _, x, z in objects])
        for lab, region in self.regions.items():
            idx = np.nonzero(labels == lab)[0]
            if len(idx) < 2 * self.part_min_objects:
                continue
            pts = xz[idx]
            near = np.sum((pts[:, None, :] - pts[None, :, :]) ** 2, axis=2) <= self.part_radius ** 2
            local = near.astype(float) @ table[idx]  # (n, rooms): log likelihood of each neighbourhood
            top = np.sort(local, axis=1)
            clear = top[:, -1] - top[:, -2] > 1.0
            best = np.argmax(local, axis=1)
            counts = np.bincount(best[clear], minlength=len(rooms))
            named = [k for k in range(len(rooms)) if counts[k] >= self.part_min_objects]
            if len(named) < 2 or not {rooms[k] for k in named} <= OPEN_PLAN_ROOMS:
                continue
            keep = clear & np.isin(best, named)
            region.parts = OpenPlanParts(pts[keep], [rooms[k] for k in best[keep]],
                                         local[keep] - top[keep, -1:])

    def label_at(self, x: float, z: float, search: int = 0) -> int:
        """Region label at a point; with ``search`` > 0 the nearest labelled cell within that many
        cells (objects sit on furniture whose cells may lie just outside the flooded floor)."""
        i, j = self.map.cell(x, z)
        if not self.map.inside(i, j):
            return 0
        if self.labels[i, j] or search == 0:
            return int(self.labels[i, j])
        i0, i1 = max(i - search, 0), min(i + search + 1, self.map.n)
        j0, j1 = max(j - search, 0), min(j + search + 1, self.map.n)
        window = self.labels[i0:i1, j0:j1]
        ii, jj = np.nonzero(window)
        if len(ii) == 0:
            return 0
        k = int(np.argmin((ii + i0 - i) ** 2 + (jj + j0 - j) ** 2))
        return int(window[ii[k], jj[k]])

    def region_at(self, x: float, z: float) -> Region | None:
        """The named region an object at (x, z) belongs to (it may stand just off the floor)."""
        return self.regions.get(self.label_at(x, z, search=12))

    def room_type_at(self, x: float, z: float) -> str | None:
        """The room type at (x, z): the region's name, or in an open plan its part's. Where no
        region of the map is near (x, z), the name the objects seen there give it (those
        within ``part_radius`` that have no region either), by the margin a region's name needs:
        a room the agent saw into but has no floor of (through a doorway, beyond the range its
        depth camera maps floor at). Under the realistic sensors a living room's television,
        bowl and dining table, seen from the kitchen, were in no room, so "the bowl in the
        lounge" was relaxed to the kitchen's bowl (dev-027-0)."""
        key = (x, z)
        if key in self._type_at:
            return self._type_at[key]
        region = self.region_at(x, z)
        if region is None:
            scores = self._off_floor_scores(x, z)
            found = named_by(scores)[0] if scores else None
        elif region.parts is not None:
            found = region.parts.rooms[region.parts.nearest(x, z)]
        else:
            found = region.room_type
        self._type_at[key] = found
        return found

    def _off_floor_scores(self, x: float, z: float) -> dict[str, float]:
        """Log posterior per room type minus the best one's, from the objects with no region
        within ``part_radius`` of (x, z); empty where there are none."""
        r2 = self.part_radius ** 2
        types = [t for t, ox, oz in self._off_floor if (ox - x) ** 2 + (oz - z) ** 2 <= r2]
        if not types:
            return {}
        scores = self.prior.score(types)
        top = max(scores.values())
        return {room: v - top for room, v in scores.items()}

    def room_scores_at(self, x: float, z: float) -> dict[str, float]:
        """Log posterior per room type minus the best one's, at (x, z): the region's, or in an
        open plan its part's (the nearest named object's neighbourhood); where no region is
        near, the objects' around it that have none (``room_type_at``)."""
        region = self.region_at(x, z)
        if region is None:
            return self._off_floor_scores(x, z)
        if region.parts is not None:
            row = region.parts.scores[region.parts.nearest(x, z)]
            return {room: float(v) for room, v in zip(self.prior.log_p, row)}
        return dict(region.scores) if region.scores else {}

    def rooms_seen(self) -> list[str]:
        named = {r.room_type for r in self.regions.values() if r.room_type}
        named |= {t for t in (self.room_type_at(x, z) for _, x, z in self._off_floor) if t}
        return sorted(named | {room for r in self.regions.values() if r.parts is not None for room in r.parts.rooms})
