"""Scoring a spatial memory against the simulator's ground truth (evaluation only).

Matching: memory objects and ground-truth objects of the same type are paired one-to-one by
centroid distance (Hungarian assignment, pairs farther than ``match_distance`` not allowed).
- precision = matched memory objects / active memory objects;
- recall = matched ground-truth objects / ground-truth objects, reported against the objects that
  perception kept in at least one frame ("visible": at least ``min_pixels`` pixels) and against
  all objects (the renderer draws boxes; things in closed drawers are never visible);
- centroid error over matched pairs, against the centre of the box the simulator draws (what
  any sensor can see; it differs from THOR's ``position`` for furniture drawn without its back)
  and, for reference, against the THOR position;
- duplicate rate: memory objects that are not matched but lie within ``duplicate_distance`` of a
  ground-truth object of their type that another memory object already matched, over all active
  memory objects;
- text-query retrieval: top-1 (and top-5) accuracy per query kind; a hit is right when the memory
  object is matched to one of the query's ground-truth answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from memory.spatial.memory import SpatialMemory
from perception.encoders import normalize_phrase

RECEPTACLE_PREPOSITION = "on"


@dataclass
class GTObject:
    object_id: str
    object_type: str
    center: np.ndarray  # REP 103, centre of the drawn box
    position: np.ndarray  # REP 103, THOR position
    footprint: np.ndarray  # (4, 2) REP 103 (x, y) corners of the drawn box, in order
    room: str | None  # room id
    room_type: str | None
    parent_type: str | None
    pickupable: bool


@dataclass
class Matching:
    mem_rows: np.ndarray  # active memory rows, in the order of the arrays below
    mem_labels: list[str]
    mem_centers: np.ndarray
    gt_of_mem: np.ndarray  # index into gt, or -1
    mem_of_gt: np.ndarray  # memory row, or -1
    duplicate: np.ndarray  # per memory row (bool)


@dataclass
class QuerySpec:
    text: str
    kind: str  # "type" | "type+room" | "type+receptacle"
    answers: list[int] = field(default_factory=list)  # indices into gt


def match(memory: SpatialMemory, gt: list[GTObject], match_distance: float, duplicate_distance: float) -> Matching:
    recs = memory.objects()
    rows = np.array([r.object_id for r in recs], dtype=np.int64)
    labels = [r.label for r in recs]
    centers = np.array([r.center for r in recs]).reshape(-1, 3)
    gt_centers = np.array([g.center for g in gt]).reshape(-1, 3)
    dist = np.linalg.norm(centers[:, None, :] - gt_centers[None, :, :], axis=2)
    same = np.array([[lab == g.object_type for g in gt] for lab in labels], dtype=bool).reshape(len(recs), len(gt))
    big = 1e6
    cost = np.where(same & (dist <= match_distance), dist, big)
    gt_of_mem = np.full(len(recs), -1, dtype=np.int64)
    mem_of_gt = np.full(len(gt), -1, dtype=np.int64)
    if len(recs) and len(gt):
        ri, ci = linear_sum_assignment(cost)
        for r, c in zip(ri, ci):
            if cost[r, c] < big:
                gt_of_mem[r], mem_of_gt[c] = c, rows[r]
    duplicate = np.zeros(len(recs), dtype=bool)
    for i in np.flatnonzero(gt_of_mem < 0):
        near = np.flatnonzero(same[i] & (dist[i] <= duplicate_distance) & (mem_of_gt >= 0))
        duplicate[i] = len(near) > 0
    return Matching(rows, labels, centers, gt_of_mem, mem_of_gt, duplicate)


def object_metrics(m: Matching, gt: list[GTObject], visible: set[str]) -> dict[str, Any]:
    matched = m.gt_of_mem >= 0
    err = np.array([np.linalg.norm(m.mem_centers[i] - gt[m.gt_of_mem[i]].center) for i in np.flatnonzero(matched)])
    err_pos = np.array([np.linalg.norm(m.mem_centers[i] - gt[m.gt_of_mem[i]].position) for i in np.flatnonzero(matched)])
    vis = np.array([g.object_id in visible for g in gt], dtype=bool)
    found = m.mem_of_gt >= 0
    n_mem = len(m.mem_rows)

    def ratio(a: int, b: int) -> float | None:
        return a / b if b else None

    return {
        "memory_objects": n_mem,
        "gt_objects": len(gt),
        "gt_visible": int(vis.sum()),
        "matched": int(matched.sum()),
        "precision": ratio(int(matched.sum()), n_mem),
        "recall_visible": ratio(int((found & vis).sum()), int(vis.sum())),
        "recall_all": ratio(int(found.sum()), len(gt)),
        "centroid_error_mean": float(err.mean()) if len(err) else None,
        "centroid_error_median": float(np.median(err)) if len(err) else None,
        "centroid_error_p90": float(np.percentile(err, 90)) if len(err) else None,
        "centroid_error_vs_thor_position_mean": float(err_pos.mean()) if len(err_pos) else None,
        "duplicates": int(m.duplicate.sum()),
        "duplicate_rate": ratio(int(m.duplicate.sum()), n_mem),
        "false_positives": int((~matched & ~m.duplicate).sum()),
        "missed_visible": sorted(g.object_id for g, f, v in zip(gt, found, vis) if v and not f),
    }


def make_queries(gt: list[GTObject], visible: set[str]) -> list[QuerySpec]:
    """Queries by type, type + room type, type + receptacle type, over visible objects; each
    lists every visible ground-truth object that answers it."""
    vis = [i for i, g in enumerate(gt) if g.object_id in visible]
    out: dict[str, QuerySpec] = {}

    def add(text: str, kind: str, pred: Any) -> None:
        if text not in out:
            out[text] = QuerySpec(text, kind, [j for j in vis if pred(gt[j])])

    for i in vis:
        g = gt[i]
        name = normalize_phrase(g.object_type)
        add(name, "type", lambda o, t=g.object_type: o.object_type == t)
        if g.room_type:
            add(f"{name} in the {normalize_phrase(g.room_type)}", "type+room",
                lambda o, t=g.object_type, r=g.room_type: o.object_type == t and o.room_type == r)
        if g.pickupable and g.parent_type:
            add(f"{name} {RECEPTACLE_PREPOSITION} the {normalize_phrase(g.parent_type)}", "type+receptacle",
                lambda o, t=g.object_type, p=g.parent_type: o.object_type == t and o.parent_type == p)
    return list(out.values())


def query_metrics(memory: SpatialMemory, queries: list[QuerySpec], m: Matching) -> dict[str, Any]:
    gt_of_row = {int(r): int(g) for r, g in zip(m.mem_rows, m.gt_of_mem)}
    per_kind: dict[str, dict[str, float]] = {}
    failures = []
    for q in queries:
        hits = memory.query_text(q.text, k=5)
        ok = [gt_of_row.get(h.object_id, -1) in q.answers for h in hits]
        stats = per_kind.setdefault(q.kind, {"queries": 0, "top1": 0, "top5": 0})
        stats["queries"] += 1
        stats["top1"] += bool(ok and ok[0])
        stats["top5"] += any(ok)
        if not (ok and ok[0]):
            failures.append({"query": q.text, "got": [f"{h.label}#{h.object_id}" for h in hits[:3]]})
    out: dict[str, Any] = {}
    for kind, s in sorted(per_kind.items()):
        out[kind] = {"queries": int(s["queries"]), "top1_accuracy": s["top1"] / s["queries"],
                     "top5_accuracy": s["top5"] / s["queries"]}
    out["failures"] = failures[:30]
    return out
