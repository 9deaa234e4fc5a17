"""Text queries with places in them: "mug", "mug in the kitchen", "apple on the dining table".

A small deterministic grammar splits the text into a target phrase and prepositional phrases;
each phrase that names a region (a room's name or kind) restricts where the target may be, any
other phrase names an anchor object the target must be on/in (or near). Embedding a whole
sentence and hoping the vector encodes "on" does not work with label encoders and barely with
CLIP, so relations are decided on the memory's geometry instead. An LLM query planner can
produce the same ``ParsedQuery`` (docs/ARCHITECTURE.md: deterministic first, LLM when configured).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from perception.encoders import normalize_phrase
from household.types import point_in_polygon

if TYPE_CHECKING:
    from memory.spatial.object_table import ObjectRecord
    from memory.spatial.views import View

# longest first, so "on top of" wins over "on"
RELATIONS = {"on top of": "on", "inside of": "in", "inside": "in", "in": "in", "on": "on", "at": "on",
             "near": "near", "next to": "near", "by": "near", "beside": "near"}
_SPLIT = re.compile(r"\b(" + "|".join(sorted((re.escape(p) for p in RELATIONS), key=len, reverse=True)) + r")\b")
SUPPORT_TOLERANCE = 0.08  # metres a supported object may stick out of its anchor's box
NEAR_DISTANCE = 1.0

# (query text, record, its stored views) -> confidence in [0, 1]; 0 drops the candidate
Verifier = Callable[[str, "ObjectRecord", "Sequence[View]"], float]


@dataclass(frozen=True)
class Region:
    """A named area of the floor plan in REP 103 (x, y): a room, or any user-drawn zone."""

    name: str  # unique, e.g. "room|3" or "Kitchen"
    kind: str  # e.g. "Kitchen"; queries match either
    polygon: tuple[tuple[float, float], ...]

    def contains(self, x: float, y: float) -> bool:
        return point_in_polygon(x, y, list(self.polygon))


@dataclass
class ParsedQuery:
    target: str
    regions: list[str]  # region names the target must lie in (any of them)
    relation: str | None = None  # "on" | "in" | "near"
    anchor: str | None = None


@dataclass
class QueryHit:
    object_id: int
    label: str
    score: float
    center: np.ndarray
    region: str | None


def match_regions(phrase: str, regions: Sequence[Region]) -> list[str]:
    """Names of regions whose name or kind equals the phrase (normalised)."""
    p = normalize_phrase(phrase)
    return [r.name for r in regions if p and p in (normalize_phrase(r.name), normalize_phrase(r.kind))]


def parse_query(text: str, regions: Sequence[Region] = ()) -> ParsedQuery:
    parts = _SPLIT.split(" " + str(text).strip() + " ")
    target = parts[0].strip()
    room: list[str] = []
    relation = anchor = None
    for prep, phrase in zip(parts[1::2], parts[2::2]):
        phrase = phrase.strip()
        names = match_regions(phrase, regions)
        if names:
            room = names
        elif anchor is None and normalize_phrase(phrase):
            relation, anchor = RELATIONS[prep], phrase
        else:
            target = f"{target} {prep} {phrase}".strip()
    if not normalize_phrase(target) and anchor is not None:  # "on the table" alone: the table is the target
        target, relation, anchor = anchor, None, None
    return ParsedQuery(target=target, regions=room, relation=relation, anchor=anchor)


def supported_by(t_min: np.ndarray, t_max: np.ndarray, a_min: np.ndarray, a_max: np.ndarray,
                 relation: str) -> np.ndarray:
    """(T, A) bool: target box t on/in anchor box a ("on"/"in": footprint centre over the anchor
    and bottom within the anchor's height span; "near": boxes within NEAR_DISTANCE)."""
    if relation == "near":
        gap = np.maximum(0.0, np.maximum(a_min[None] - t_max[:, None], t_min[:, None] - a_max[None]))
        return np.linalg.norm(gap, axis=2) <= NEAR_DISTANCE
    tol = SUPPORT_TOLERANCE
    c = 0.5 * (t_min + t_max)
    over = np.all((c[:, None, :2] >= a_min[None, :, :2] - tol) & (c[:, None, :2] <= a_max[None, :, :2] + tol), axis=2)
    bottom = t_min[:, None, 2]
    return over & (bottom >= a_min[None, :, 2] - tol) & (bottom <= a_max[None, :, 2] + tol)


def region_of(center: np.ndarray, regions: Sequence[Region]) -> str | None:
    for r in regions:
        if r.contains(float(center[0]), float(center[1])):
            return r.name
    return None
