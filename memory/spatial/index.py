"""The semantic half of the dual index: one embedding pair per object, blended by seen area.

Per object row: ``clip`` = normalise(CLIP(image crop) + CLIP(text of the label)) in CLIP's joint
space (HoloMind's f_i), present only where a CLIP encoder ran, and ``text`` = the label/caption
encoder's embedding. A new observation is blended in as f <- a f + (1 - a) f_new with
a = A_old / (A_old + A_new), A the observed surface areas, then renormalised. ``a`` is computed
from the area accumulated *before* this observation is added: ConceptGraphs' merge increments
its detection count in place before it averages, which over-weights the old feature; the
caller here passes both areas explicitly and the table is updated afterwards.

Queries score s = (w_text * cos_text + w_clip * cos_clip) / (w_text + w_clip) (text only for rows
without a CLIP vector). Up to ``exact_limit`` candidate rows (a few milliseconds of scoring)
every row is scored. Above it, the label vocabulary is the coarse quantiser of an inverted
file: the query is scored against each label's prototype (the encoders' embedding of the label
name) and only rows whose label is among the ``n_probe`` best, and within ``probe_margin`` of the
best, are scored. Objects cluster by label, so recall stays high while a 100,000-object map is
searched in about a millisecond (benchmarks/bench_memory.py); ``exact=True`` forces the scan.
"""

from __future__ import annotations

import numpy as np

from perception.encoders import normalize_rows


def blend(old: np.ndarray, new: np.ndarray, area_old: float, area_new: float) -> np.ndarray:
    """a * old + (1 - a) * new with a = area_old / (area_old + area_new), renormalised."""
    total = area_old + area_new
    a = 0.5 if total <= 0 else area_old / total
    out = (a * old + (1.0 - a) * new).astype(np.float32)
    norm = float(np.sqrt(out @ out))
    return out / norm if norm > 0 else out


class SemanticIndex:
    def __init__(self, text_dim: int, clip_dim: int = 0, capacity: int = 64) -> None:
        if text_dim <= 0 or clip_dim < 0:
            raise ValueError(f"text_dim must be > 0 and clip_dim >= 0, got {text_dim}, {clip_dim}")
        self.text_dim, self.clip_dim = int(text_dim), int(clip_dim)
        self.n = 0
        self.text = np.zeros((capacity, self.text_dim), dtype=np.float32)
        self.clip = np.zeros((capacity, self.clip_dim), dtype=np.float32)
        self.has_clip = np.zeros(capacity, dtype=bool)
        self.label_text = np.zeros((0, self.text_dim), dtype=np.float32)
        self.label_clip = np.zeros((0, self.clip_dim), dtype=np.float32)

    # ---- rows ----------------------------------------------------------------------------
    def ensure(self, n_rows: int) -> None:
        if n_rows > len(self.text):
            cap = max(n_rows, 2 * len(self.text))
            for name, width in (("text", self.text_dim), ("clip", self.clip_dim)):
                grown = np.zeros((cap, width), dtype=np.float32)
                grown[:self.n] = getattr(self, name)[:self.n]
                setattr(self, name, grown)
            grown_mask = np.zeros(cap, dtype=bool)
            grown_mask[:self.n] = self.has_clip[:self.n]
            self.has_clip = grown_mask
        self.n = max(self.n, n_rows)

    def set(self, row: int, text: np.ndarray, clip: np.ndarray | None = None) -> None:
        self.ensure(row + 1)
        self.text[row] = normalize_rows(np.asarray(text)[None])[0]
        if clip is not None and self.clip_dim:
            self.clip[row] = normalize_rows(np.asarray(clip)[None])[0]
            self.has_clip[row] = True

    def merge(self, row: int, text: np.ndarray, clip: np.ndarray | None, area_old: float, area_new: float) -> None:
        """Blend a new observation (or a merged object's vectors) into a row."""
        self.text[row] = blend(self.text[row], np.asarray(text, np.float32), area_old, area_new)
        if clip is not None and self.clip_dim:
            if self.has_clip[row]:
                self.clip[row] = blend(self.clip[row], np.asarray(clip, np.float32), area_old, area_new)
            else:
                self.clip[row] = normalize_rows(np.asarray(clip)[None])[0]
                self.has_clip[row] = True

    def set_label(self, label_id: int, text: np.ndarray, clip: np.ndarray | None = None) -> None:
        """The prototype of a label (its name, embedded): the coarse quantiser's centroid."""
        if label_id >= len(self.label_text):
            n = label_id + 1
            self.label_text = np.vstack([self.label_text, np.zeros((n - len(self.label_text), self.text_dim), np.float32)])
            self.label_clip = np.vstack([self.label_clip, np.zeros((n - len(self.label_clip), self.clip_dim), np.float32)])
        self.label_text[label_id] = text
        if clip is not None and self.clip_dim:
            self.label_clip[label_id] = clip

    # ---- scoring -------------------------------------------------------------------------
    def score_rows(self, rows: np.ndarray, q_text: np.ndarray, q_clip: np.ndarray | None,
                   w_text: float = 1.0, w_clip: float = 1.0) -> np.ndarray:
        # Scoring most rows: one contiguous matrix-vector product, then pick (a fancy-index
        # gather would first copy the rows); scoring few: gather them.
        dense = len(rows) > self.n // 2

        def dot(matrix: np.ndarray, q: np.ndarray, which: np.ndarray) -> np.ndarray:
            q = np.asarray(q, np.float32)
            return (matrix[:self.n] @ q)[which] if dense else matrix[which] @ q

        s = dot(self.text, q_text, rows)
        if q_clip is None or not self.clip_dim or w_clip <= 0:
            return s
        with_clip = self.has_clip[rows]
        if with_clip.any():
            sc = dot(self.clip, q_clip, rows[with_clip])
            s[with_clip] = (w_text * s[with_clip] + w_clip * sc) / (w_text + w_clip)
        return s

    def score_labels(self, q_text: np.ndarray, q_clip: np.ndarray | None, w_text: float = 1.0,
                     w_clip: float = 1.0) -> np.ndarray:
        s: np.ndarray = self.label_text @ np.asarray(q_text, np.float32)
        if q_clip is not None and self.clip_dim and w_clip > 0:
            s = (w_text * s + w_clip * (self.label_clip @ np.asarray(q_clip, np.float32))) / (w_text + w_clip)
        return s

    def query(self, rows: np.ndarray, row_labels: np.ndarray, q_text: np.ndarray, q_clip: np.ndarray | None,
              k: int, *, w_text: float = 1.0, w_clip: float = 1.0, exact: bool | None = None,
              exact_limit: int = 5000, n_probe: int = 8, probe_margin: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (rows, scores) among ``rows`` (whose labels are ``row_labels``), best first."""
        rows = np.asarray(rows, dtype=np.int64)
        if exact is None:
            exact = len(rows) <= exact_limit or len(self.label_text) <= n_probe
        if not exact:
            label_scores = self.score_labels(q_text, q_clip, w_text, w_clip)
            probe = np.argpartition(-label_scores, n_probe - 1)[:n_probe]
            probe = probe[label_scores[probe] >= label_scores[probe].max() - probe_margin]
            wanted = np.zeros(len(label_scores), dtype=bool)
            wanted[probe] = True
            rows = rows[wanted[row_labels]]
        if len(rows) == 0:
            return rows, np.zeros(0, dtype=np.float32)
        scores = self.score_rows(rows, q_text, q_clip, w_text, w_clip)
        k = min(k, len(rows))
        top = np.argpartition(-scores, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        top = top[np.lexsort((rows[top], -scores[top]))]  # best first; ties by object id
        return rows[top], scores[top]

    # ---- persistence ---------------------------------------------------------------------
    def export(self) -> dict[str, np.ndarray]:
        return {"text": self.text[:self.n].copy(), "clip": self.clip[:self.n].copy(),
                "has_clip": self.has_clip[:self.n].copy(), "label_text": self.label_text.copy(),
                "label_clip": self.label_clip.copy()}

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        n = len(arrays["text"])
        self.n = 0
        self.ensure(max(n, 1))
        self.n = n
        self.text[:n] = arrays["text"]
        self.clip[:n] = arrays["clip"]
        self.has_clip[:n] = arrays["has_clip"]
        n_labels = len(arrays["label_text"])
        self.label_text = np.array(arrays["label_text"], dtype=np.float32).reshape(n_labels, self.text_dim)
        self.label_clip = np.array(arrays["label_clip"], dtype=np.float32).reshape(n_labels, self.clip_dim)

    def nbytes_per_row(self) -> int:
        return 4 * (self.text_dim + self.clip_dim) + 1
