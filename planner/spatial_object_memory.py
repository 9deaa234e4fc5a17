"""The planner's object memory backed by the spatial semantic memory (issue 31, item 3).

``planner.object_tracker.ObjectTracker`` keeps a box per segmenter id, for the planner alone;
``memory.spatial.SpatialMemory`` is the scene map the rest of the stack reads (text and CLIP
queries, replay, the ROS memory node). ``SpatialObjectMemory`` makes the second the first: the
planner's records are views of the memory's object rows, so what the planner grounds, walks to
and checks is what the memory holds, and a query such as "the mug by the sink" answers in ids the
planner can act on (``find``).

What the memory adds over the tracker, and the planner gets with it:
- geometry from the voxel map: an object's box is the voxels its views filled (seen at least
  twice behind a learned segmenter), not the union of per-frame pixel boxes;
- association by geometry and meaning, not by the segmenter's id alone: two ids the segmenter
  gave one object are one row; a segmenter id seen somewhere the memory holds nothing of it
  becomes a new row (someone moved it), and the old place, once seen empty, retires its row;
- label votes by observed area, confirmation of a detector's objects over several views, and
  the pose and depth tolerances of the sensors (``memory.spatial.sensor_settings``).

What stays here, not in the memory: the segmenter's id per row (the id an interaction names: the
simulator's object id, a robot's tracker id), the states the agent's own actions and close looks
gave (the belief tracker keeps their history; this is the planner's working copy), and what the
agent did to an object (moved: the box is stale until it is seen again; gone: sliced).

Positions: the memory's rows are REP 103 (``aabb_min``/``aabb_max``, metres); the records handed
to the planner are THOR (x, y, z), the frame the lattice planner plans in, as ``TrackedObject``
says.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from household.types import Observation
from memory.pipeline import FrameResult, MemoryPipeline
from memory.spatial.memory import MemoryConfig
from memory.spatial.object_table import ACTIVE, MERGED, RETIRED
from memory.spatial.sensor_settings import SensorErrors, memory_config_for
from planner.agent_config import AgentConfig
from planner.object_memory import Look, ObjectMemory, RecordKeeping, TrackedObject, best_looks
from planner.planning_budget import NOISY_SPATIAL_MEMORY_EXPANSIONS, SPATIAL_MEMORY_EXPANSIONS

__all__ = ["SpatialObjectMemory", "sensor_errors_for", "spatial_memory"]

# Instances smaller than this (pixels) are not perceived: the tracker's figure, so a pen across
# the room is found as soon as by the tracker (perception's own default, 20, is for the scene
# map alone, where a three-pixel sighting adds little).
MIN_PIXELS = 3


def _thor_box(aabb_min: np.ndarray, aabb_max: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A REP 103 axis-aligned box as a THOR one (``ros_to_thor_points``: THOR x = -ROS y, y = ROS
    z, z = ROS x; so THOR's x bounds are ROS y's, negated and swapped). Written out: a record is
    refreshed from its row every frame it is seen."""
    return (np.array([0.0 - float(aabb_max[1]), float(aabb_min[2]) + 0.0, float(aabb_min[0]) + 0.0]),
            np.array([0.0 - float(aabb_min[1]), float(aabb_max[2]) + 0.0, float(aabb_max[0]) + 0.0]))


class SpatialObjectMemory(RecordKeeping):
    """``planner.object_memory.ObjectMemory`` over a ``memory.pipeline.MemoryPipeline``.

    Records are keyed by the segmenter's id and point at the memory row that id's latest view
    under its majority label went to (``row_of``; a look-alike's name for it, now and then, goes
    to a row of its own and is not the record's); a row merged into another follows it. A record
    is made when its row counts (``SpatialMemory.known_rows``: seen ``min_observations`` times)
    and the id itself was seen ``confirm_views`` times, and refreshed from the row whenever its
    id is seen; its ``state`` is the agent's, kept here."""

    def __init__(self, pipeline: MemoryPipeline, depth_noise_k: float = 0.0, confirm_views: int = 1) -> None:
        self.pipeline = pipeline
        self.memory = pipeline.memory
        self.depth_noise_k = float(depth_noise_k)
        # Charged to the act's planning budget for each frame (``ObjectMemory.frame_expansions``).
        self.frame_expansions = NOISY_SPATIAL_MEMORY_EXPANSIONS if self.depth_noise_k > 0 else SPATIAL_MEMORY_EXPANSIONS
        # Views of a segmenter id before it gets a record (the agent's ``confirm_views``, as the
        # tracker counts them): the row counting is not enough, the id is what the agent acts on.
        self.confirm_views = max(int(confirm_views), 1)
        # In view: as many pixels as perception needs to integrate an instance (so every id the
        # memory integrates from a frame is in view in it; perception counts fewer, valid ones).
        self.min_pixels = int(pipeline.perception.config.min_pixels)
        self.objects: dict[str, TrackedObject] = {}
        self.visible_now: dict[str, int] = {}
        self.row_of: dict[str, int] = {}  # segmenter id -> the memory row of its majority label's latest view
        self._votes: dict[str, dict[str, int]] = {}  # segmenter id -> label -> views that gave it
        self._label_rows: dict[str, dict[str, int]] = {}  # segmenter id -> label -> row of that label's latest view
        self.last_frame: FrameResult | None = None  # what the latest frame did to the memory
        # segmenter id -> the best looks' box (THOR) and their depth noise: noisy depth only (``_bounded``)
        self._looks: dict[str, Look] = {}
        self._frames = self._skipped = 0
        self._seconds = [0.0, 0.0]  # perception, integration

    # ---- frames ---------------------------------------------------------------------------
    def integrate(self, obs: Observation) -> None:
        self.visible_now = {}
        if obs.instance_ids is None or obs.depth is None or not obs.id_to_label:
            return
        counts = np.bincount(obs.instance_ids.ravel(), minlength=max(obs.id_to_label) + 1)
        in_view = []
        for inst, label in obs.id_to_label.items():
            n = int(counts[inst]) if inst < len(counts) else 0
            if n >= self.min_pixels:
                self.visible_now[label.object_id] = n
                in_view.append(label)
        self._integrate_frame(obs)
        # What a close look showed, on every record in view: made before this frame or by it.
        for label in in_view:
            self._saw_states(self.objects.get(label.object_id), label.states, obs.step)

    def _integrate_frame(self, obs: Observation) -> None:
        """Feed the frame to the memory; make or refresh the records of the ids it integrated."""
        # In hand it moves with the camera: the pipeline leaves it out of the map (its record stays
        # stale until it is seen put down: ``note_moved``), its pixels hiding, not emptying, what is behind.
        result = self.last_frame = self.pipeline.process(obs)
        self._frames += 1
        self._seconds[0] += result.perception_s
        self._seconds[1] += result.memory_s
        if result.skipped or result.frame is None:
            self._skipped += 1
            return
        known = set(self.memory.known_rows().tolist())
        for seen, row in zip(result.frame.objects, result.report.rows):
            sid = seen.source_id
            votes = self._votes.setdefault(sid, {})
            votes[seen.label] = votes.get(seen.label, 0) + 1
            self._label_rows.setdefault(sid, {})[seen.label] = row
            kind = self._majority(sid)
            self.row_of[sid] = self._label_rows[sid][kind]
            if seen.label != kind:
                continue  # a look-alike's name for it: that view went to a row of its own
            live = self._live_row(sid)
            if live is None or live not in known:
                continue  # tentative (a detector's object seen too few times) or already retired
            if sid not in self.objects and sum(votes.values()) < self.confirm_views:
                # The row counts, but this id has too few views of its own to act on: a detector's
                # false detection has a new id each time and, seen once where a real one is, went
                # to its row (dev-000-0 under ``--sensors realistic``: the agent walked to a
                # "potato" named after one false detection and looked for it from three poses).
                continue
            sigma = self.depth_noise_k * seen.mean_depth ** 2
            self._refresh(sid, kind, live, obs.step, seen.n_pixels, sigma, _thor_box(seen.aabb_min, seen.aabb_max))

    def glimpses(self, object_type: str) -> dict[str, np.ndarray]:
        """``ObjectMemory.glimpses``: ids whose views most often named the type, with no record
        yet, their row active but not counted (``SpatialMemory.known_rows``)."""
        known = set(self.memory.known_rows().tolist())
        out = {}
        for sid in self.row_of:
            if sid in self.objects or self._majority(sid) != object_type:
                continue
            row = self._live_row(sid)
            if row is not None and row not in known:
                lo, hi = _thor_box(self.memory.table.aabb_min[row], self.memory.table.aabb_max[row])
                out[sid] = (lo + hi) / 2.0
        return out

    def _majority(self, source_id: str) -> str:
        """The label most of the id's views gave (a detector now and then names a look-alike: a
        mug a cup); while tied, the record's type stands, else the first view's, as the tracker
        votes. With exact labels (strict association) each label's views make rows of their own,
        so the record follows the majority's row, not the latest view's."""
        votes = self._votes[source_id]
        best = max(votes.values())
        rec = self.objects.get(source_id)
        if rec is not None and votes.get(rec.object_type, 0) == best:
            return rec.object_type
        return next(label for label, n in votes.items() if n == best)

    def _live_row(self, source_id: str) -> int | None:
        """The active row behind a segmenter id, following merges; None once it was retired."""
        row = self.row_of.get(source_id)
        table = self.memory.table
        while row is not None and int(table.status[row]) == MERGED:
            row = int(table.merged_into[row])
        if row is None or int(table.status[row]) != ACTIVE:
            return None
        self.row_of[source_id] = row
        return row

    def _refresh(self, source_id: str, label: str, row: int, step: int, pixels: int, sigma: float,
                 view: tuple[np.ndarray, np.ndarray] | None = None) -> TrackedObject:
        """The record of a segmenter id, made or updated from its memory row; ``label``: the
        majority of its views (``_majority``); ``view``: this frame's box of it (THOR)."""
        table = self.memory.table
        lo, hi = _thor_box(table.aabb_min[row], table.aabb_max[row])
        rec = self.objects.get(source_id)
        if view is not None and self.depth_noise_k > 0:
            lo, hi, sigma = self._bounded(source_id, lo, hi, view, sigma, rec is not None and rec.moved)
        if rec is None:
            rec = self.objects[source_id] = TrackedObject(source_id, label, (lo + hi) / 2.0, lo, hi, step, step,
                                                          pixels=pixels, sigma=sigma)
            rec.type_votes = self._votes[source_id]  # views that named it, one dict with the votes here
        else:
            rec.box_min, rec.box_max, rec.centroid = lo, hi, (lo + hi) / 2.0
            rec.object_type, rec.last_seen, rec.pixels, rec.sigma = label, step, pixels, sigma
            rec.seen_count += 1
            rec.moved = rec.gone = False
        return rec

    def _bounded(self, source_id: str, lo: np.ndarray, hi: np.ndarray, view: tuple[np.ndarray, np.ndarray],
                 sigma: float, moved: bool) -> Look:
        """The row's box bounded by what the best looks at the id showed, and their noise.

        With noisy depth and pose the row's voxels come from every view, far ones too, each
        off by its own depth error and by the pose's error at that range (a degree of heading
        is 5 cm at 3 m), so the box grows with every pass and its near face comes towards the
        agent: the agent stopped where the box was in reach and the object was not (dev-098-0
        under ``--sensors realistic``: 7 interactions out of reach, 1.54 to 2.29 m, where the
        box said 1.35 to 1.49 m; the tracker's box, 1 failure). The best looks are kept as the
        tracker keeps its box (``planner.object_memory.best_looks``). The box is the row's, cut
        to the looks' box grown by three of their sigma; where the two do not meet (a row that
        still holds an old place), the looks'. No pose tolerance in that margin: a look is taken from the pose the agent
        believes now, or near it, so it places the object where the agent will reach for it
        (dev-098-0, run alone: 2 interactions out of reach with this cut, 4 with the tolerance
        added to the margin)."""
        blo, bhi, bsigma = self._looks[source_id] = best_looks(self._looks.get(source_id), *view, sigma, moved)
        margin = 3.0 * bsigma
        cut_lo, cut_hi = np.maximum(lo, blo - margin), np.minimum(hi, bhi + margin)
        if np.any(cut_lo > cut_hi):
            return blo.copy(), bhi.copy(), bsigma
        return cut_lo, cut_hi, bsigma

    def diagnostics(self) -> dict[str, Any]:
        """What the report says of this memory: frames fed and skipped (a bad frame leaves the
        memory as it was), the memory's objects by status, and mean milliseconds per frame."""
        table = self.memory.table
        status = np.bincount(table.status.astype(np.int64), minlength=4) if table.n else np.zeros(4, dtype=np.int64)
        n = max(self._frames, 1)
        return {"kind": "spatial", "frames": self._frames, "frames_skipped": self._skipped,
                "objects": len(self.memory), "rows": int(table.n), "retired": int(status[RETIRED]),
                "merged": int(status[MERGED]), "records": len(self.objects),
                "perception_ms": round(1000.0 * self._seconds[0] / n, 2),
                "integration_ms": round(1000.0 * self._seconds[1] / n, 2)}

    # ---- lookups (the rest: RecordKeeping) ----------------------------------------------------
    def find(self, text: str, k: int = 5) -> list[tuple[TrackedObject, float]]:
        """The objects a description names, best first, as records the planner can act on: the
        memory's text (and CLIP, where configured) query, with its spatial relations ("the mug
        by the sink"), mapped back to segmenter ids. Objects the agent has not confirmed, or that
        are gone, are left out."""
        source_of: dict[int, str] = {}
        for source_id in self.objects:
            row = self._live_row(source_id)
            if row is not None:
                source_of.setdefault(row, source_id)
        hits = self.memory.query_text(text, k=max(int(k), 1) * 4)
        out: list[tuple[TrackedObject, float]] = []
        for hit in hits:
            hit_source = source_of.get(int(hit.object_id))
            rec = self.objects.get(hit_source) if hit_source is not None else None
            if rec is not None and not rec.gone:
                out.append((rec, float(hit.score)))
        return out[:k]


def sensor_errors_for(config: AgentConfig) -> SensorErrors:
    """What the agent's frames get wrong, from its settings, as the memory's settings need it: the
    depth noise; the pose tolerance (position; heading unknown here, so none); a learned
    segmenter's false detections (``confirm_views`` > 1) and imperfect masks (``mask_edge_check``).

    Never ``label_confusion``, whatever the segmenter: it lets association join views of different
    labels when their geometry agrees, which the scene map wants (a mug called a cup once stays
    one mug) and the planner cannot have: it acts on the segmenter's ids, and a pen's views joined
    the chair row they lay against, so the pen's record read "Chair" and the agent never found a
    pen (dev-005-0 under ``--sensors realistic``: GC 1.0 with the tracker, 0.75 with this memory in
    soft mode). A look-alike's rare view makes a tentative row of its own here, which a detector's
    confirmation (``min_observations``) keeps from counting."""
    return SensorErrors(depth_noise_k=config.depth_noise_k, pose_tolerance_m=config.pose_tolerance,
                        false_detections=config.confirm_views > 1, imperfect_masks=config.mask_edge_check)


def spatial_memory(config: AgentConfig, base: MemoryConfig | None = None) -> ObjectMemory:
    """``planner.object_memory.ObjectMemoryFactory`` for the spatial memory: a fresh memory per
    episode with the settings the agent's sensors call for (``memory_config_for``) and the
    default (hashing text) encoders; ``base`` overrides the memory's own defaults.

    An object counts after the agent's own ``confirm_views`` sightings, not the scene map's
    ``DETECTOR_MIN_OBSERVATIONS`` (3, chosen for recall and precision of a map built by a
    viewpoint sweep): an agent walks past most things once or twice, and at 3 a sink seen twice on
    the way was never believed, so the agent searched the house for one and gave up (dev-028-0
    under ``--sensors realistic``: GC 0.75 with the tracker, 0.5 with the memory at 3)."""
    memory_config = memory_config_for(sensor_errors_for(config), base)
    memory_config = replace(memory_config, min_observations=max(int(config.confirm_views), 1))
    pipeline = MemoryPipeline.build(memory_config=memory_config, min_pixels=MIN_PIXELS,
                                    mask_edge_check=config.mask_edge_check)
    return SpatialObjectMemory(pipeline, depth_noise_k=config.depth_noise_k, confirm_views=config.confirm_views)
