"""Which existing object (if any) each observation of a frame is.

Spatial evidence, from both sides, because a new view of an object often shows *other*
surfaces than earlier views (the side of a wardrobe first seen from the front), and because an
early partial view (a table's corner) is small inside a later full one:
- observation side: ``exact_obs`` (share of the observation's voxels the object already holds,
  from the voxel index) and ``near_obs`` (share of them inside the object's box grown by a
  margin);
- object side: ``exact_obj`` (share of the object's voxels the observation holds) and
  ``box_obj`` (share of the object's box volume inside the observation's grown box).
spatial = max of the two sides' means. A pair is a candidate when spatial >= ``min_spatial``;
its score adds semantic agreement (cosine of the label/caption embeddings, and of the CLIP
vectors where both exist) and label agreement. ``label_mode="strict"`` (right for ground-truth or
closed-set segmentation) never matches different labels: an apple inside the table's box is not
the table. ``"soft"`` (open-vocabulary segmenters) lets semantics outvote a label flip.

Assignment is greedy by score and one-to-one per frame: two instances of one frame are two
objects. When an observation also strongly overlaps a second same-label object, that object is
a fragment of the first (two partial views that never overlapped before) and is merged into
it, unless the two were ever seen as separate instances in one frame (``distinct``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from memory.spatial.voxels import VoxelIndex, _ranges


@dataclass
class AssociationConfig:
    min_spatial: float = 0.25
    min_score: float = 0.6
    w_spatial: float = 1.0
    w_semantic: float = 0.5
    w_label: float = 0.5
    label_mode: str = "strict"  # "strict" | "soft"
    near_margin_voxels: float = 1.5
    merge_overlap: float = 0.2  # exact overlap with a second object that makes it a fragment
    min_label_share: float = 0.2  # a label counts as the object's when it has this share of votes
    # How far apart two views may put one object (the pose error between them: on a robot, twice
    # its localiser's stated accuracy, ``sensor_settings.memory_config_for``): added to the box
    # margin, so a cup seen from two places with different localiser biases stays one cup.
    # 0 for an exact pose. Same-label objects seen side by side keep the voxel margin alone.
    pose_margin_m: float = 0.0

    def __post_init__(self) -> None:
        if self.label_mode not in ("strict", "soft"):
            raise ValueError(f"label_mode must be 'strict' or 'soft', got {self.label_mode!r}")


@dataclass
class FrameQuery:
    """The frame's observations as arrays (built once by the memory)."""

    keys: np.ndarray  # concatenated voxel keys of all observations
    centers: np.ndarray  # (sum V, 3) their centres
    starts: np.ndarray  # (M + 1,) offsets into keys per observation
    aabb_min: np.ndarray  # (M, 3)
    aabb_max: np.ndarray  # (M, 3)
    label_ids: np.ndarray  # (M,)
    text: np.ndarray  # (M, Dt)
    clip: np.ndarray | None  # (M, Dc) or None


@dataclass
class Association:
    row_of_obs: np.ndarray  # (M,) object row or -1 (create)
    score: np.ndarray  # (M,) score of the chosen pair (0 for new)
    merges: list[tuple[int, int]] = field(default_factory=list)  # (keep, absorb)


@dataclass
class Candidates:
    obs: np.ndarray
    row: np.ndarray
    exact_obs: np.ndarray
    near_obs: np.ndarray
    exact_obj: np.ndarray
    box_obj: np.ndarray
    semantic: np.ndarray
    label_ok: np.ndarray

    @property
    def spatial(self) -> np.ndarray:
        return np.maximum(0.5 * (self.exact_obs + self.near_obs), 0.5 * (self.exact_obj + self.box_obj))

    @property
    def exact(self) -> np.ndarray:
        return np.maximum(self.exact_obs, self.exact_obj)


def label_agreement(obs_labels: np.ndarray, rows: np.ndarray, vote_label: np.ndarray, vote_weight: np.ndarray,
                    min_share: float) -> np.ndarray:
    """Does the observation's label hold at least ``min_share`` of the object's label votes?"""
    labels, weights = vote_label[rows], vote_weight[rows]
    total = np.maximum(weights.sum(axis=1), 1e-12)
    share = np.where(labels == obs_labels[:, None], weights, 0.0).sum(axis=1) / total
    return share >= min_share


def candidates(fq: FrameQuery, voxels: VoxelIndex, rows: np.ndarray, row_min: np.ndarray, row_max: np.ndarray,
               row_voxels: np.ndarray, vote_label: np.ndarray, vote_weight: np.ndarray, text: np.ndarray,
               clip: np.ndarray | None,
               has_clip: np.ndarray | None, margin: float, min_share: float) -> Candidates:
    """All (observation, object) pairs with any spatial contact, with their evidence.
    ``rows`` are the active objects and ``row_min``/``row_max``/... their columns (full-table
    arrays indexed by row)."""
    m = len(fq.starts) - 1
    sizes = np.diff(fq.starts)
    obs_of_key = np.repeat(np.arange(m), sizes)
    q, obj = voxels.objects_at(fq.keys)
    exact_codes, exact_counts = _count(obs_of_key[q] * (1 << 32) + obj)
    # Box contact: first against the frame's overall box, then pairwise.
    lo, hi = fq.aabb_min - margin, fq.aabb_max + margin
    rmin, rmax = row_min[rows], row_max[rows]
    near_frame = np.all((rmin <= hi.max(axis=0)) & (rmax >= lo.min(axis=0)), axis=1)
    r = rows[near_frame]
    touch = np.all((lo[:, None, :] <= row_max[r][None]) & (hi[:, None, :] >= row_min[r][None]), axis=2)
    o_box, j_box = np.nonzero(touch)
    codes = np.union1d(exact_codes, o_box.astype(np.int64) * (1 << 32) + r[j_box])
    if len(codes) == 0:
        e, z = np.zeros(0, dtype=np.int64), np.zeros(0)
        return Candidates(e, e, z, z, z, z, z, np.zeros(0, dtype=bool))
    o, j = codes >> 32, codes & 0xFFFFFFFF
    shared = np.zeros(len(codes))
    shared[np.searchsorted(codes, exact_codes)] = exact_counts
    inter = np.clip(np.minimum(hi[o], row_max[j]) - np.maximum(lo[o], row_min[j]), 0.0, None).prod(axis=1)
    box_obj = inter / np.maximum((row_max[j] - row_min[j]).prod(axis=1), 1e-12)
    idx = _ranges(fq.starts[o], fq.starts[o + 1])
    pair_of = np.repeat(np.arange(len(codes)), sizes[o])
    # each observation's voxels against each of its pairs' boxes, one axis at a time on 1-D
    # gathers (the same comparisons as on (N, 3) blocks, at a fraction of the memory traffic)
    box_lo, box_hi = row_min[j] - margin, row_max[j] + margin
    inside = np.ones(len(idx), dtype=bool)
    for axis in range(3):
        at = fq.centers[:, axis][idx]
        inside &= (at >= box_lo[pair_of, axis]) & (at <= box_hi[pair_of, axis])
    near = np.bincount(pair_of, weights=inside, minlength=len(codes)) / sizes[o]
    semantic = np.einsum("ij,ij->i", fq.text[o], text[j])
    if fq.clip is not None and clip is not None and has_clip is not None:
        both = has_clip[j]
        semantic[both] = 0.5 * (semantic[both] + np.einsum("ij,ij->i", fq.clip[o[both]], clip[j[both]]))
    label_ok = label_agreement(fq.label_ids[o], j, vote_label, vote_weight, min_share)
    return Candidates(o, j, shared / sizes[o], near, shared / np.maximum(row_voxels[j], 1), box_obj, semantic,
                      label_ok)


def assign(c: Candidates, n_obs: int, cfg: AssociationConfig, distinct: set[tuple[int, int]]) -> Association:
    """Greedy one-to-one assignment plus fragment merges (see the module docstring)."""
    spatial = c.spatial
    score = cfg.w_spatial * spatial + cfg.w_semantic * c.semantic + cfg.w_label * c.label_ok
    ok = (spatial >= cfg.min_spatial) & (score >= cfg.min_score)
    if cfg.label_mode == "strict":
        ok &= c.label_ok
    row_of_obs = np.full(n_obs, -1, dtype=np.int64)
    best = np.zeros(n_obs)
    taken: set[int] = set()
    cand = np.flatnonzero(ok)
    for p in cand[np.lexsort((c.row[cand], c.obs[cand], -score[cand]))]:
        o, j = int(c.obs[p]), int(c.row[p])
        if row_of_obs[o] >= 0 or j in taken:
            continue
        row_of_obs[o], best[o] = j, score[p]
        taken.add(j)
    merges: list[tuple[int, int]] = []
    absorbed: set[int] = set()
    frag = np.flatnonzero(ok & c.label_ok & (c.exact >= cfg.merge_overlap))
    for p in frag[np.lexsort((c.row[frag], -c.exact[frag]))]:
        o, j = int(c.obs[p]), int(c.row[p])
        keep = int(row_of_obs[o])
        if keep < 0 or keep == j or j in taken or j in absorbed or keep in absorbed:
            continue
        if (min(keep, j), max(keep, j)) in distinct:
            continue
        merges.append((keep, j))
        absorbed.add(j)
    return Association(row_of_obs, best, merges)


def _count(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct codes and how often each occurs."""
    s = np.sort(codes)
    if len(s) == 0:
        return s, np.zeros(0, dtype=np.int64)
    edge = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
    return s[edge], np.diff(np.append(edge, len(s)))
