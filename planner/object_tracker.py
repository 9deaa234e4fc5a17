"""What the agent knows of each object it has seen, from its own frames only.

Instances are keyed by the segmenter's instance ids (the label table's object ids: LongAct
provides segmentation with persistent ids, a robot gets them from its segmenter and tracker),
which is what the agent must name in an interaction. Geometry comes from the depth pixels of the
instance: a centroid and an axis-aligned box in THOR (x, y, z), the frame the lattice planner
plans in. States (open, on, filled, ...) are never observed directly here: the agent records
what its own successful actions did (``note_state``), what a state classifier reports on close
looks (``InstanceLabel.states``, household.visible_states: dirty, filled, on, open, cooked,
broken; the latest look wins, and ``state_seen`` keeps its step), and the critic learns from the
failures ("already on") what it could not know.

The scene map of record for text queries is ``memory.spatial.SpatialMemory``; with
``AgentConfig.object_memory = "spatial"`` the agent grounds through it instead of this table
(``planner.spatial_object_memory``). This table is the default working set for acting, cheap to
update every step.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from household.frames import ros_to_thor_points
from household.types import Observation
from perception.backproject import backproject_pixels
from perception.mask_edges import main_depth_run
from planner.agent_config import AgentConfig
from planner.object_memory import ObjectMemory, RecordKeeping, TrackedObject, best_looks

# Ids seen too few times to believe, kept at most (the oldest first out): a detector's false
# detections never come back, and a robot runs for days; the largest v2 episode budget (7,953
# frames) at 0.1 false detections per frame leaves about 800, so none is dropped in an episode.
MAX_TENTATIVE = 2048

__all__ = ["ObjectTracker", "TrackedObject", "tracker_memory"]  # TrackedObject: planner.object_memory's


class ObjectTracker(RecordKeeping):
    """The default ``planner.object_memory.ObjectMemory``.

    ``depth_noise_k``: the depth camera's noise (sigma = k z^2; 0: noise-free). With noise the
    min/max of a mask's points is the min/max of its noise (a mug 4 m away spans 0.3 m of
    depth), and a union over views only grows: the agent then stood "within reach" of a box
    whose near face was noise and the pick failed again and again. So each view gives the 5th to
    95th percentile box, and the box is the union of the views no more than twice as noisy as
    the best so far: a closer look replaces what was seen from afar, and a view that puts the
    object clearly elsewhere replaces the box whatever its noise (someone moved it)."""

    # Its cost per frame is part of what ``planning_budget.INTEGRATION_EXPANSIONS`` charges.
    frame_expansions = 0

    def __init__(self, stride: int = 2, min_pixels: int = 3, depth_noise_k: float = 0.0,
                 confirm_views: int = 1, mask_edge_check: bool = False) -> None:
        self.objects: dict[str, TrackedObject] = {}
        self.depth_noise_k = float(depth_noise_k)
        # A detector that reports things that are not there (a few per hundred frames) is believed
        # only after ``confirm_views`` views of an id agree on where it is; until then the id waits
        # here (views so far, its last box) and is nothing the agent plans with.
        self.confirm_views = max(int(confirm_views), 1)
        # A learned segmenter's mask bleeds over the silhouette: pixels the depth puts apart from
        # the object (the wall behind it) would stretch its box by metres (perception/mask_edges.py).
        self.mask_edge_check = bool(mask_edge_check)
        self.tentative: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
        self._tentative_labels: dict[str, list[str]] = {}  # the labels of those views, in order
        self.stride = stride
        self.min_pixels = min_pixels
        self.visible_now: dict[str, int] = {}  # object id -> pixel count in the latest frame
        self._cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def integrate(self, obs: Observation) -> None:
        self.visible_now = {}
        if obs.instance_ids is None or obs.depth is None or not obs.id_to_label:
            return
        ids_img = obs.instance_ids
        counts = np.bincount(ids_img.ravel(), minlength=max(obs.id_to_label) + 1)
        h, w = ids_img.shape
        if (h, w) not in self._cache:
            v, u = np.mgrid[0:h, 0:w]
            self._cache[(h, w)] = (u.ravel(), v.ravel())
        u_all, v_all = self._cache[(h, w)]
        flat = ids_img.ravel()
        depth = obs.depth.ravel()
        k = obs.intrinsics
        pose = obs.world_from_camera
        held = obs.agent.held_object_id
        for inst, label in obs.id_to_label.items():
            n = int(counts[inst]) if inst < len(counts) else 0
            if n < self.min_pixels:
                continue
            if label.object_id == held:
                # In hand it moves with the agent: a union of in-hand views would stretch its box
                # along the path. Its box stays stale (``note_moved``) until it is seen put down.
                self.visible_now[label.object_id] = n
                self._saw_states(self.objects.get(label.object_id), label.states, obs.step)
                continue
            sel = np.flatnonzero(flat == inst)
            if len(sel) > 400:
                sel = sel[:: len(sel) // 400 + 1]
            d = depth[sel].astype(np.float64)
            ok = d > 0.05
            if not ok.any():
                continue
            sel, d = sel[ok], d[ok]
            if self.mask_edge_check and len(d) > 1:
                main = main_depth_run(np.zeros(len(d), dtype=np.int64), d)
                sel, d = sel[main], d[main]
            u, v = u_all[sel], v_all[sel]
            thor = ros_to_thor_points(backproject_pixels(u, v, d, k, pose))
            sigma = 0.0
            if self.depth_noise_k > 0:
                lo, hi = np.percentile(thor, 5, axis=0), np.percentile(thor, 95, axis=0)
                c = (lo + hi) / 2.0
                sigma = self.depth_noise_k * float(np.median(d)) ** 2
            else:
                lo, hi, c = thor.min(axis=0), thor.max(axis=0), thor.mean(axis=0)
            self.visible_now[label.object_id] = n
            rec = self.objects.get(label.object_id)
            if rec is None:
                views = self._confirmed(label.object_id, label.object_type, lo, hi, sigma)
                if views is None:
                    continue
                votes = Counter(views)  # every agreeing view votes; tied, the first view's label
                kind = max(votes, key=lambda t: (votes[t], -views.index(t)))
                rec = self.objects[label.object_id] = TrackedObject(label.object_id, kind, c, lo, hi,
                                                                    obs.step, obs.step, pixels=n, sigma=sigma)
                rec.type_votes.update(votes)
                self._saw_states(rec, label.states, obs.step)
                continue
            self._saw_states(rec, label.states, obs.step)
            self._vote_type(rec, label.object_type)
            # the box of the best looks: a much better look, a moved or stale record, a view clear
            # of the box replace it; a look as good widens it; a worse one is left out
            rec.box_min, rec.box_max, rec.sigma = best_looks((rec.box_min, rec.box_max, rec.sigma), lo, hi, sigma,
                                                             rec.moved)
            rec.moved = False
            rec.centroid = (rec.box_min + rec.box_max) / 2.0
            rec.last_seen, rec.pixels = obs.step, n
            rec.seen_count += 1
            rec.gone = False

    def glimpses(self, object_type: str) -> dict[str, np.ndarray]:
        """``ObjectMemory.glimpses``: the waiting ids whose views most often named the type."""
        out = {}
        for oid, (_, lo, hi) in self.tentative.items():
            labels = self._tentative_labels.get(oid, [])
            if labels and max(labels, key=labels.count) == object_type:
                out[oid] = (lo + hi) / 2.0
        return out

    def _confirmed(self, object_id: str, object_type: str, lo: np.ndarray, hi: np.ndarray,
                   sigma: float) -> list[str] | None:
        """The labels of the views (this one last) when this view of an id not tracked yet makes
        ``confirm_views`` views in a row that agree on where it is (boxes within three sigma of
        each other, or 5 cm without noise); None until then. A false detection lands wherever the
        frame's error put it, so its views do not agree. The labels all vote for the new track's
        type: a soap bottle first seen as one, then once as a spray bottle, is a soap bottle."""
        if self.confirm_views <= 1:
            return [object_type]
        views, plo, phi = self.tentative.get(object_id, (0, lo, hi))
        slack = max(3.0 * sigma, 0.05)
        apart = bool(np.any((lo > phi + slack) | (hi < plo - slack)))
        views = 1 if apart or views == 0 else views + 1
        labels = [*self._tentative_labels.get(object_id, []), object_type][-views:]
        if views >= self.confirm_views:
            self.tentative.pop(object_id, None)
            self._tentative_labels.pop(object_id, None)
            return labels
        self.tentative[object_id] = (views, lo, hi)
        self._tentative_labels[object_id] = labels
        while len(self.tentative) > MAX_TENTATIVE:  # a detector's false detections, each its own id, pile up
            oldest = next(iter(self.tentative))
            self.tentative.pop(oldest)
            self._tentative_labels.pop(oldest, None)
        return None

    @staticmethod
    def _vote_type(rec: TrackedObject, object_type: str) -> None:
        """A detector now and then names a look-alike (a mug a cup): the track's type is the label
        most of its views gave (the first view's while tied), not the first view's alone."""
        votes = rec.type_votes
        votes[object_type] = votes.get(object_type, 0) + 1
        best = max(votes.values())
        if votes.get(rec.object_type, 0) < best:
            rec.object_type = max(votes, key=lambda t: votes[t])


def tracker_memory(config: AgentConfig) -> ObjectMemory:
    """The agent's default object memory (``planner.object_memory.ObjectMemoryFactory``): this
    tracker, with the depth camera's noise figure from the agent's settings."""
    return ObjectTracker(depth_noise_k=config.depth_noise_k, confirm_views=config.confirm_views,
                         mask_edge_check=config.mask_edge_check)
