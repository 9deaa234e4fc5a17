"""HoloMind's scene map: a sparse voxel map, an object table and the dual index, kept current
frame by frame (docs/ARCHITECTURE.md "Spatial semantic memory").

One frame (``integrate``): validate everything first (so a bad frame leaves the memory exactly
as it was), associate observations to objects (association.py), merge fragments, update or
create objects (embeddings blended by seen area, label votes, voxels, views), then judge the
objects in view against the frame's free space (freespace.py): objects whose place is seen
without them are retired, not duplicated, when they turn up elsewhere.

Queries return ``QueryHit``/``ObjectRecord`` snapshots; object ids are table rows and stay valid
for the memory's life (and across save/load).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Sequence, cast

import numpy as np

from memory.spatial.association import AssociationConfig, FrameQuery, assign, candidates
from memory.spatial.freespace import FreeSpaceConfig, judge, rows_in_view
from memory.spatial.index import SemanticIndex
from memory.spatial.object_table import ACTIVE, MERGED, RETIRED, ObjectRecord, ObjectTable
from memory.spatial.query import (QueryHit, Region, Verifier, match_regions, parse_query, region_of,
                                  supported_by)
from memory.spatial.views import View, ViewStore
from memory.spatial.voxels import VoxelIndex
from perception.backproject import check_pose, unpack_keys
from perception.encoders import Encoders, HashTextEncoder, normalize_phrase, normalize_rows
from perception.observations import FrameObservations, PerceptionError

log = logging.getLogger(__name__)
DIRECT_SUPPORT_BONUS = 0.05


class MemoryInputError(ValueError):
    """A frame the memory refuses; nothing was changed."""


@dataclass
class MemoryConfig:
    voxel_size: float = 0.05
    max_hits: int = 3
    association: AssociationConfig = field(default_factory=AssociationConfig)
    free_space: FreeSpaceConfig = field(default_factory=FreeSpaceConfig)
    max_views: int = 3
    view_max_side: int = 160
    w_text: float = 1.0  # query weights of the two semantic halves
    w_clip: float = 1.0
    exact_query_limit: int = 5000  # objects scored exhaustively; above: label-probed (index.py)
    n_probe: int = 8  # labels probed at most, above exact_query_limit objects
    probe_margin: float = 0.25  # ... and only those scoring within this of the best label
    # An object counts (queries, objects(), len) once segments were associated with it this many
    # times; before that it is tentative: kept, associated, confirmed by its next sighting. A
    # real segmenter's one-frame false positives never count; 1: every segment counts at once.
    min_observations: int = 1
    # An object's box spans the voxels observed at least this many times (hits, at most
    # ``max_hits``), where it has any: a learned segmenter's stray pixels land somewhere new in
    # every frame and would stretch the box by metres. 1: every voxel (exact masks).
    box_min_hits: int = 1


@dataclass
class IntegrationReport:
    step: int
    created: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    merged: list[tuple[int, int]] = field(default_factory=list)
    retired: list[int] = field(default_factory=list)
    # The object row each of the frame's observations went to, in ``frame.objects`` order (after
    # this frame's merges): how a caller that knows the segmenter's ids (``source_id``) finds the
    # memory's object for them, e.g. the planner's object memory (planner.spatial_object_memory).
    rows: list[int] = field(default_factory=list)
    skipped: bool = False
    warnings: list[str] = field(default_factory=list)


class SpatialMemory:
    def __init__(self, encoders: Encoders | None = None, config: MemoryConfig | None = None,
                 regions: Sequence[Region] = ()) -> None:
        self.config = config or MemoryConfig()
        self.encoders = encoders or Encoders(HashTextEncoder())
        clip_dim = self.encoders.clip.dim if self.encoders.clip else 0
        self.table = ObjectTable()
        self.voxels = VoxelIndex(self.config.max_hits)
        self.index = SemanticIndex(self.encoders.text.dim, clip_dim)
        self.views = ViewStore(self.config.max_views, self.config.view_max_side)
        self.distinct: set[tuple[int, int]] = set()  # object pairs once seen as two instances of one frame
        self.regions: list[Region] = list(regions)
        self.frames = 0

    # ---- ingestion ---------------------------------------------------------------------
    def _validate(self, frame: FrameObservations) -> None:
        where = f"frame step {frame.step}"
        if abs(frame.voxel_size - self.config.voxel_size) > 1e-12:
            raise MemoryInputError(f"{where}: voxel size {frame.voxel_size} differs from the memory's "
                                   f"{self.config.voxel_size}")
        try:
            check_pose(frame.world_from_camera, f"{where}: world_from_camera")
        except PerceptionError as exc:
            raise MemoryInputError(str(exc)) from exc
        shape = (frame.intrinsics.height, frame.intrinsics.width)
        for name in ("depth", "instance_of_pixel"):
            if np.shape(getattr(frame, name)) != shape:
                raise MemoryInputError(f"{where}: {name} has shape {np.shape(getattr(frame, name))}, expected {shape}")
        clip = self.encoders.clip
        for i, o in enumerate(frame.objects):
            if o.voxel_keys.ndim != 1 or len(o.voxel_keys) == 0 or len(o.points) != len(o.voxel_keys):
                raise MemoryInputError(f"{where}: objects[{i}] ({o.label}) has no voxels or mismatched points")
            if o.text_embedding is not None and o.text_embedding.shape != (self.index.text_dim,):
                raise MemoryInputError(f"{where}: objects[{i}].text_embedding has shape {o.text_embedding.shape}, "
                                       f"the memory's text encoder {self.encoders.text.name} gives {self.index.text_dim}")
            if o.image_embedding is not None and (clip is None or o.image_embedding.shape != (clip.dim,)):
                raise MemoryInputError(f"{where}: objects[{i}].image_embedding does not fit the memory's CLIP encoder "
                                       f"({clip.name if clip else 'none configured'})")

    def _label_id(self, label: str) -> int:
        known = self.table.find_label(label)
        if known is not None:
            return known
        lid = self.table.intern_label(label)
        clip = self.encoders.clip
        self.index.set_label(lid, self.encoders.text.encode_texts([label])[0],
                             clip.encode_texts([label])[0] if clip else None)
        return lid

    def _frame_query(self, frame: FrameObservations) -> FrameQuery:
        objs = frame.objects
        missing = [o.label for o in objs if o.text_embedding is None]
        fill = iter(self.encoders.text.encode_texts(missing)) if missing else iter(())
        text = np.stack([o.text_embedding if o.text_embedding is not None else next(fill) for o in objs])
        clip = None
        if self.index.clip_dim and all(o.image_embedding is not None for o in objs):
            # every image_embedding is set (the all() above)
            clip = normalize_rows(np.stack([cast(np.ndarray, o.image_embedding)
                                            + (o.clip_text_embedding if o.clip_text_embedding is not None else 0.0)
                                            for o in objs]))
        return FrameQuery(
            keys=np.concatenate([o.voxel_keys for o in objs]),
            centers=np.concatenate([o.points for o in objs]).astype(np.float64),
            starts=np.concatenate([[0], np.cumsum([len(o.voxel_keys) for o in objs])]),
            aabb_min=np.stack([o.aabb_min for o in objs]), aabb_max=np.stack([o.aabb_max for o in objs]),
            label_ids=np.array([self._label_id(o.label) for o in objs], dtype=np.int64), text=normalize_rows(text),
            clip=clip)

    def integrate(self, frame: FrameObservations) -> IntegrationReport:
        self._validate(frame)
        report = IntegrationReport(frame.step, warnings=list(frame.warnings))
        cfg = self.config
        t = self.table
        row_of_obs = np.zeros(0, dtype=np.int64)
        if frame.objects:
            fq = self._frame_query(frame)
            margin = cfg.association.near_margin_voxels * cfg.voxel_size
            active = t.active_rows()
            cands = candidates(fq, self.voxels, active, t.column("aabb_min"), t.column("aabb_max"),
                               t.column("n_voxels"), t.column("vote_label"), t.column("vote_weight"),
                               self.index.text, self.index.clip,
                               self.index.has_clip, margin + cfg.association.pose_margin_m,
                               cfg.association.min_label_share)
            assoc = assign(cands, len(frame.objects), cfg.association, self.distinct)
            for keep, absorb in assoc.merges:
                self._absorb(keep, absorb, frame.step)
                report.merged.append((keep, absorb))
            row_of_obs = assoc.row_of_obs.copy()
            for i, o in enumerate(frame.objects):
                clip_vec = fq.clip[i] if fq.clip is not None else None
                row = int(row_of_obs[i])
                if row < 0:
                    row = t.add(o.label, frame.step)
                    self.index.set(row, fq.text[i], clip_vec)
                    row_of_obs[i] = row
                    report.created.append(row)
                else:
                    self.index.merge(row, fq.text[i], clip_vec, float(t.area[row]), o.surface_area)
                    report.updated.append(row)
                t.vote(row, int(fq.label_ids[i]), o.surface_area)
                t.column("area")[row] += o.surface_area  # after the blend used the old area
                t.column("n_obs")[row] += 1
                t.column("last_step")[row] = frame.step
                t.column("absent")[row] = 0
                self.views.offer(row, o, frame.step, frame.world_from_camera)
            self.voxels.observe(np.repeat(row_of_obs, np.diff(fq.starts)), fq.keys)
            self._note_distinct(row_of_obs, margin)
            report.rows = row_of_obs.tolist()
        changed = self._free_space(frame, row_of_obs, report)
        self._refresh(np.union1d(row_of_obs, changed).astype(np.int64), frame.step, report)
        self.frames += 1
        return report

    def _absorb(self, keep: int, gone: int, step: int) -> None:
        """Merge object ``gone`` into ``keep`` (two fragments of one object)."""
        t = self.table
        self.index.merge(keep, self.index.text[gone], self.index.clip[gone] if self.index.has_clip[gone] else None,
                         float(t.area[keep]), float(t.area[gone]))
        for lab, w in zip(t.vote_label[gone], t.vote_weight[gone]):
            if lab >= 0:
                t.vote(keep, int(lab), float(w))
        for name, fn in (("area", np.add), ("n_obs", np.add), ("first_step", np.minimum), ("last_step", np.maximum)):
            col = t.column(name)
            col[keep] = fn(col[keep], col[gone])
        self.voxels.merge_object(gone, keep)
        self.views.merge(gone, keep)
        t.set("status", gone, MERGED)
        t.set("merged_into", gone, keep)
        t.set("ended_step", gone, step)
        self.distinct = {(min(keep if a == gone else a, keep if b == gone else b),
                          max(keep if a == gone else a, keep if b == gone else b)) for a, b in self.distinct}

    def _note_distinct(self, rows: np.ndarray, margin: float) -> None:
        """Same-label objects observed side by side in one frame are two objects for good."""
        t = self.table
        lo, hi = t.aabb_min[rows] - margin, t.aabb_max[rows] + margin
        touch = np.all((lo[:, None] <= hi[None]) & (lo[None] <= hi[:, None]), axis=2)
        touch &= t.label_id[rows][:, None] == t.label_id[rows][None, :]
        a, b = np.nonzero(np.triu(touch, 1))
        self.distinct.update(zip(np.minimum(rows[a], rows[b]).tolist(), np.maximum(rows[a], rows[b]).tolist()))

    def _free_space(self, frame: FrameObservations, row_of_obs: np.ndarray, report: IntegrationReport) -> np.ndarray:
        """Judge objects in view; retire absent ones; returns rows whose voxels changed."""
        t = self.table
        fs = self.config.free_space
        rows = rows_in_view(frame, t.active_rows(), t.column("aabb_min"), t.column("aabb_max"), fs)
        if len(rows) == 0:
            return np.zeros(0, dtype=np.int64)
        ev = judge(frame, self.voxels, rows, row_of_obs, self.config.voxel_size, fs)
        changed = self.voxels.weaken(ev.weaken_rows, ev.weaken_keys)
        observed = np.isin(ev.rows, row_of_obs)
        absent_col = t.column("absent")
        enough = ((ev.judged >= fs.min_judged) & (ev.judged >= fs.min_judged_share * ev.in_view)
                  & (ev.expected_pixels >= fs.min_expected_pixels) & (ev.unknown <= fs.max_unknown_share * ev.judged)
                  & ~observed)
        gone = enough & (ev.absent >= fs.absent_share * np.maximum(ev.judged, 1))
        seen = enough & ~gone & (ev.absent < 0.5 * ev.judged)
        absent_col[ev.rows[gone]] += 1
        absent_col[ev.rows[seen]] = 0
        retire = ev.rows[gone][absent_col[ev.rows[gone]] >= fs.absent_frames]
        self._retire(retire, frame.step, report)
        return changed

    def _retire(self, rows: np.ndarray, step: int, report: IntegrationReport) -> None:
        if len(rows) == 0:
            return
        self.voxels.remove_objects(rows)
        self.table.set("status", rows, RETIRED)
        self.table.set("ended_step", rows, step)
        self.table.set("n_voxels", rows, 0)
        report.retired.extend(int(r) for r in rows)

    def _refresh(self, rows: np.ndarray, step: int, report: IntegrationReport) -> None:
        """Recompute boxes and voxel counts of rows whose voxels changed; retire empty ones."""
        t = self.table
        rows = rows[t.status[rows] == ACTIVE] if len(rows) else rows
        if len(rows) == 0:
            return
        obj, keys, hits = self.voxels.pairs_of_many(rows)
        row_idx = np.searchsorted(rows, obj)
        count = np.bincount(row_idx, minlength=len(rows))
        self._retire(rows[count == 0], step, report)
        have = rows[count > 0]
        if len(have) == 0:
            return
        use = self._box_voxels(hits, row_idx, len(rows))
        coords = unpack_keys(keys[use])
        per_row = np.bincount(row_idx[use], minlength=len(rows))
        starts = np.concatenate([[0], np.cumsum(per_row[count > 0])[:-1]])
        vs = self.config.voxel_size
        t.set("aabb_min", have, np.minimum.reduceat(coords, starts, axis=0) * vs)
        t.set("aabb_max", have, (np.maximum.reduceat(coords, starts, axis=0) + 1) * vs)
        t.set("n_voxels", have, count[count > 0])
        t.set("peak_voxels", have, np.maximum(t.peak_voxels[have], count[count > 0]))

    def _box_voxels(self, hits: np.ndarray, row_idx: np.ndarray, n_rows: int) -> np.ndarray:
        """Which of the (object, voxel) pairs make the objects' boxes: all of them, or with
        ``box_min_hits`` > 1 those observed that often, for every object that has any (a voxel a
        segmenter's stray pixel put on the wall behind is seen once; the object's own, from every
        view)."""
        need = self.config.box_min_hits
        if need <= 1 or len(hits) == 0:
            return np.ones(len(hits), dtype=bool)
        strong = hits >= need
        n_strong = np.bincount(row_idx[strong], minlength=n_rows)
        return strong | (n_strong[row_idx] == 0)

    # ---- queries -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.known_rows())

    def known_rows(self) -> np.ndarray:
        """Rows of the objects that count: active and seen ``min_observations`` times. Association
        and free-space retirement work on every active row, so tentative objects get confirmed
        (or retired) like any other."""
        rows = self.table.active_rows()
        if self.config.min_observations > 1:
            rows = rows[self.table.column("n_obs")[rows] >= self.config.min_observations]
        return rows

    def record(self, object_id: int) -> ObjectRecord:
        return self.table.record(int(object_id))

    def objects(self, status: str = "active") -> list[ObjectRecord]:
        """Objects by status: "active" (those that count, see ``known_rows``), "tentative" (active,
        not yet seen ``min_observations`` times), "retired" or "merged"."""
        if status == "active":
            return [self.table.record(int(r)) for r in self.known_rows()]
        if status == "tentative":
            rows = np.setdiff1d(self.table.active_rows(), self.known_rows())
            return [self.table.record(int(r)) for r in rows]
        code = {"retired": RETIRED, "merged": MERGED}[status]
        return [self.table.record(int(r)) for r in np.flatnonzero(self.table.status == code)]

    def object_views(self, object_id: int) -> list[View]:
        return self.views.get(int(object_id))

    def object_voxels(self, object_id: int) -> np.ndarray:
        """(V, 3) voxel centres of an object."""
        return (unpack_keys(self.voxels.voxels_of(int(object_id))) + 0.5) * self.config.voxel_size

    def _hits(self, rows: np.ndarray, scores: np.ndarray) -> list[QueryHit]:
        centers = 0.5 * (self.table.aabb_min[rows] + self.table.aabb_max[rows])
        return [QueryHit(int(r), self.table.label_of(int(r)), float(s), c, region_of(c, self.regions))
                for r, s, c in zip(rows, scores, centers)]

    def _encode_query(self, text: str) -> tuple[np.ndarray, np.ndarray | None]:
        clip = self.encoders.clip
        return self.encoders.text.encode_texts([text])[0], (clip.encode_texts([text])[0] if clip else None)

    def _semantic(self, text: str, rows: np.ndarray, k: int, exact: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
        q_text, q_clip = self._encode_query(text)
        cfg = self.config
        return self.index.query(rows, self.table.label_id[rows], q_text, q_clip, k, w_text=cfg.w_text,
                                w_clip=cfg.w_clip, exact=exact, exact_limit=cfg.exact_query_limit,
                                n_probe=cfg.n_probe, probe_margin=cfg.probe_margin)

    def query_text(self, text: str, k: int = 10, *, verifier: Verifier | None = None, verify_top: int = 10,
                   exact: bool | None = None) -> list[QueryHit]:
        """Top-k objects for a description; rooms and anchors in it ("in the kitchen", "on the
        table") filter by geometry (query.py). A ``verifier`` re-scores the best ``verify_top``
        candidates from their stored views (score * confidence; 0 drops one)."""
        parsed = parse_query(text, self.regions)
        rows = self.known_rows()
        if parsed.regions:
            rows = rows[self._in_regions(rows, [r for r in self.regions if r.name in parsed.regions])]
        wide = k if (parsed.anchor is None and verifier is None) else max(20 * k, 200)
        rows, scores = self._semantic(parsed.target, rows, wide, exact)
        if parsed.anchor is not None and len(rows):
            rows, scores = self._relate(rows, scores, parsed.anchor, parsed.relation or "on", exact)
        if verifier is not None:
            head = [(int(r), float(s)) for r, s in zip(rows[:verify_top], scores[:verify_top])]
            judged = [(r, s * float(verifier(text, self.record(r), self.views.get(r)))) for r, s in head]
            judged = [(r, s) for r, s in judged if s > 0]
            judged.sort(key=lambda rs: (-rs[1], rs[0]))
            rows = np.array([r for r, _ in judged], dtype=np.int64)
            scores = np.array([s for _, s in judged])
        return self._hits(rows[:k], scores[:k])

    def _relate(self, rows: np.ndarray, scores: np.ndarray, anchor: str, relation: str,
                exact: bool | None) -> tuple[np.ndarray, np.ndarray]:
        """Keep targets on/in/near an object matching ``anchor``. For on/in, among targets that
        match the description about equally well (within ``DIRECT_SUPPORT_BONUS``), those whose
        tightest support (the smallest object they rest on or in) is such an anchor rank first: a
        knife in a sink also lies inside the counter top's box, but it is in the sink."""
        t = self.table
        active = self.known_rows()
        arows, ascores = self._semantic(anchor, active, 50, exact)
        if len(arows) == 0:
            return rows[:0], scores[:0]
        arows = arows[ascores >= ascores[0] - 0.05]
        ok = supported_by(t.aabb_min[rows], t.aabb_max[rows], t.aabb_min[arows], t.aabb_max[arows], relation)
        keep = (ok & (rows[:, None] != arows[None, :])).any(axis=1)
        rows, scores = rows[keep], scores[keep]
        if relation == "near" or len(rows) == 0:
            return rows, scores
        sup = supported_by(t.aabb_min[rows], t.aabb_max[rows], t.aabb_min[active], t.aabb_max[active], relation)
        sup &= rows[:, None] != active[None, :]
        volume = np.prod(t.aabb_max[active] - t.aabb_min[active], axis=1)
        tightest = active[np.argmin(np.where(sup, volume[None, :], np.inf), axis=1)]
        scores = scores - DIRECT_SUPPORT_BONUS * ~np.isin(tightest, arows)
        order = np.lexsort((rows, -scores))
        return rows[order], scores[order]

    def _in_regions(self, rows: np.ndarray, regions: Sequence[Region]) -> np.ndarray:
        centers = self.table.centers()[rows]
        return np.array([any(r.contains(c[0], c[1]) for r in regions) for c in centers], dtype=bool)

    def objects_of_type(self, label: str) -> list[ObjectRecord]:
        """Active objects whose label is ``label`` (case and spelling normalised: 'dining table'
        finds 'DiningTable')."""
        want = normalize_phrase(label)
        ids = [i for i, lab in enumerate(self.table.labels) if normalize_phrase(lab) == want]
        rows = self.known_rows()
        return [self.table.record(int(r)) for r in rows[np.isin(self.table.label_id[rows], ids)]]

    def objects_in_region(self, region: str | Region) -> list[ObjectRecord]:
        """Active objects whose centre lies in a region (a Region, or a region's name or kind)."""
        if isinstance(region, Region):
            regions = [region]
        else:
            names = set(match_regions(region, self.regions))
            regions = [r for r in self.regions if r.name in names]
        rows = self.known_rows()
        return [self.table.record(int(r)) for r in rows[self._in_regions(rows, regions)]]

    def nearest(self, point: Sequence[float], label: str | None = None, k: int = 1) -> list[ObjectRecord]:
        """The k active objects (of a label, if given) whose boxes are closest to a point."""
        recs = self.objects_of_type(label) if label else None
        rows = np.array([r.object_id for r in recs], dtype=np.int64) if recs is not None else self.known_rows()
        p = np.asarray(point, dtype=float)
        gap = np.maximum(0.0, np.maximum(self.table.aabb_min[rows] - p, p - self.table.aabb_max[rows]))
        order = np.lexsort((rows, np.linalg.norm(gap, axis=1)))[:k]
        return [self.table.record(int(r)) for r in rows[order]]
