"""The object table: one row per object ever created, one numpy column per field.

Columns rather than a list of dicts: association, queries and retirement read one field of many
objects at once (all boxes, all labels, all statuses), which is a slice here and a Python loop
there, and 100,000 rows cost a few megabytes. Rows are never reused: a retired or merged object
keeps its row (and its id, which is the row number) so history and provenance stay resolvable.

Labels: each row keeps the ``VOTE_SLOTS`` best-supported labels with their accumulated observed
surface area; the row's label is the heaviest. A segmenter that calls a mug a cup once is
outvoted instead of renaming the object.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from memory.spatial.voxels import MAX_OBJECTS

ACTIVE, RETIRED, MERGED = 1, 2, 3
STATUS_NAMES = {ACTIVE: "active", RETIRED: "retired", MERGED: "merged"}
VOTE_SLOTS = 4

# name -> (dtype, trailing shape, fill value for new rows)
COLUMNS: dict[str, tuple[type, tuple[int, ...], float]] = {
    "status": (np.int8, (), ACTIVE),
    "label_id": (np.int32, (), -1),
    "vote_label": (np.int32, (VOTE_SLOTS,), -1),
    "vote_weight": (np.float64, (VOTE_SLOTS,), 0.0),
    "area": (np.float64, (), 0.0),  # accumulated observed surface area (m^2): the merge weight
    "n_obs": (np.int32, (), 0),
    "first_step": (np.int64, (), -1),
    "last_step": (np.int64, (), -1),
    "aabb_min": (np.float64, (3,), 0.0),
    "aabb_max": (np.float64, (3,), 0.0),
    "n_voxels": (np.int32, (), 0),
    "peak_voxels": (np.int32, (), 0),
    "absent": (np.int16, (), 0),  # frames in a row that showed its place without it
    "merged_into": (np.int32, (), -1),
    "ended_step": (np.int64, (), -1),  # when it was retired or merged
}


@dataclass
class ObjectRecord:
    """A read-only snapshot of one row, for callers outside the memory."""

    object_id: int
    label: str
    status: str
    center: np.ndarray
    aabb_min: np.ndarray
    aabb_max: np.ndarray
    n_voxels: int
    n_observations: int
    surface_area: float
    first_step: int
    last_step: int
    label_votes: dict[str, float] = field(default_factory=dict)
    merged_into: int | None = None


class ObjectTable:
    def __init__(self, capacity: int = 64) -> None:
        self.n = 0
        self.labels: list[str] = []
        self._label_index: dict[str, int] = {}
        self._cols: dict[str, np.ndarray] = {}
        self._allocate(max(int(capacity), 1))

    def _allocate(self, capacity: int) -> None:
        for name, (dtype, shape, fill) in COLUMNS.items():
            new: np.ndarray = np.full((capacity,) + shape, fill, dtype=dtype)
            old = self._cols.get(name)
            if old is not None:
                new[:self.n] = old[:self.n]
            self._cols[name] = new
        self.capacity = capacity

    def __getattr__(self, name: str) -> np.ndarray:
        """Columns read as attributes (``table.status``), trimmed to the rows in use."""
        cols = self.__dict__.get("_cols")
        if cols is not None and name in cols:
            return cols[name][:self.n]
        raise AttributeError(name)

    # ---- labels ------------------------------------------------------------------------
    def intern_label(self, label: str) -> int:
        """The vocabulary index of a label, adding it when new."""
        idx = self._label_index.get(label)
        if idx is None:
            idx = self._label_index[label] = len(self.labels)
            self.labels.append(label)
        return idx

    def find_label(self, label: str) -> int | None:
        return self._label_index.get(label)

    def vote(self, row: int, label_id: int, weight: float) -> None:
        """Add evidence for a label; the row's label becomes the heaviest slot."""
        labels, weights = self._cols["vote_label"][row], self._cols["vote_weight"][row]
        lab, wts = labels.tolist(), weights.tolist()  # four slots: plain Python beats numpy calls
        if label_id in lab:
            slot = lab.index(label_id)
            wts[slot] += weight
        else:
            slot = lab.index(-1) if -1 in lab else min(range(VOTE_SLOTS), key=wts.__getitem__)
            if lab[slot] >= 0 and wts[slot] >= weight:
                return
            lab[slot], wts[slot] = label_id, weight
        labels[slot], weights[slot] = lab[slot], wts[slot]
        best = max((w, -i) for i, w in enumerate(wts) if lab[i] >= 0)
        self._cols["label_id"][row] = lab[-best[1]]

    # ---- rows --------------------------------------------------------------------------
    def add(self, label: str, step: int) -> int:
        if self.n >= MAX_OBJECTS:
            raise OverflowError(f"the object table is full ({MAX_OBJECTS} objects ever created)")
        if self.n == self.capacity:
            self._allocate(self.capacity * 2)
        row = self.n
        self.n += 1
        self._cols["first_step"][row] = step
        self._cols["last_step"][row] = step
        self._cols["label_id"][row] = self.intern_label(label)
        return row

    def set(self, name: str, rows: np.ndarray | int, values: np.ndarray | float) -> None:
        self._cols[name][rows] = values

    def column(self, name: str) -> np.ndarray:
        """A writable view of a column, trimmed to the rows in use."""
        return self._cols[name][:self.n]

    def active_rows(self) -> np.ndarray:
        return np.flatnonzero(self._cols["status"][:self.n] == ACTIVE)

    def centers(self) -> np.ndarray:
        return 0.5 * (self._cols["aabb_min"][:self.n] + self._cols["aabb_max"][:self.n])

    def label_of(self, row: int) -> str:
        return self.labels[int(self._cols["label_id"][row])]

    def record(self, row: int) -> ObjectRecord:
        if not 0 <= row < self.n:
            raise KeyError(f"no object {row} (the memory has {self.n})")
        c = self._cols
        votes = {self.labels[int(lab)]: float(w) for lab, w in zip(c["vote_label"][row], c["vote_weight"][row])
                 if lab >= 0}
        merged = int(c["merged_into"][row])
        return ObjectRecord(
            object_id=row, label=self.label_of(row), status=STATUS_NAMES[int(c["status"][row])],
            center=0.5 * (c["aabb_min"][row] + c["aabb_max"][row]), aabb_min=c["aabb_min"][row].copy(),
            aabb_max=c["aabb_max"][row].copy(), n_voxels=int(c["n_voxels"][row]), n_observations=int(c["n_obs"][row]),
            surface_area=float(c["area"][row]), first_step=int(c["first_step"][row]),
            last_step=int(c["last_step"][row]), label_votes=votes, merged_into=merged if merged >= 0 else None)

    # ---- persistence ---------------------------------------------------------------------
    def export(self) -> dict[str, np.ndarray]:
        return {name: self._cols[name][:self.n].copy() for name in COLUMNS}

    def restore(self, columns: dict[str, np.ndarray], labels: list[str]) -> None:
        n = len(columns["status"])
        self.n = 0
        self._cols = {}
        self._allocate(max(n, 1))
        for name in COLUMNS:
            self._cols[name][:n] = columns[name]
        self.n = n
        self.labels = list(labels)
        self._label_index = {lab: i for i, lab in enumerate(self.labels)}

    def nbytes_per_row(self) -> int:
        return sum(np.dtype(dt).itemsize * int(np.prod(shape)) for dt, shape, _ in COLUMNS.values())
