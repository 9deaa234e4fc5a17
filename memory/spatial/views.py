"""Multi-view crops per object, bounded: what a verifier (an LLM/VLM judging "is this the red
mug?") looks at, and what a later, better image encoder can re-embed.

Each object keeps at most ``max_views`` crops, the best by a view score: the number of pixels it
covered, halved when the image border cut it. Crops are stored at most ``max_side`` pixels on a
side (integer striding, no resampling library), so a big object costs tens of kilobytes, not a
frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, cast

import numpy as np

from perception.observations import ObjectObservation


@dataclass
class View:
    step: int
    score: float
    crop: np.ndarray  # (h, w, 3) uint8, possibly strided down
    mask: np.ndarray  # (h, w) bool, same striding
    bbox_2d: tuple[int, int, int, int]  # in the original frame
    world_from_camera: np.ndarray  # (4, 4)


def _bbox4(values: Iterable[Any]) -> tuple[int, int, int, int]:
    """The four bbox ints as a tuple (the stored bboxes always have four: export reshapes to (-1, 4))."""
    return cast(tuple[int, int, int, int], tuple(int(b) for b in values))


def view_score(obs: ObjectObservation) -> float:
    return float(obs.n_pixels) * (0.5 if obs.touches_border else 1.0)


class ViewStore:
    def __init__(self, max_views: int = 3, max_side: int = 160) -> None:
        if max_views < 0 or max_side < 8:
            raise ValueError(f"max_views must be >= 0 and max_side >= 8, got {max_views}, {max_side}")
        self.max_views = int(max_views)
        self.max_side = int(max_side)
        self._views: dict[int, list[View]] = {}

    def __len__(self) -> int:
        return sum(len(v) for v in self._views.values())

    def get(self, row: int) -> list[View]:
        return list(self._views.get(row, []))

    def offer(self, row: int, obs: ObjectObservation, step: int, pose: np.ndarray) -> bool:
        """Keep this observation's crop if it is among the object's best; copy only then."""
        if self.max_views == 0 or obs.crop is None or obs.crop.size == 0:
            return False
        score = view_score(obs)
        kept = self._views.setdefault(row, [])
        if len(kept) >= self.max_views and score <= kept[-1].score:
            return False
        stride = max(1, int(np.ceil(max(obs.crop.shape[:2]) / self.max_side)))
        view = View(step, score, np.ascontiguousarray(obs.crop[::stride, ::stride]),
                    np.ascontiguousarray(obs.mask[::stride, ::stride]), _bbox4(obs.bbox_2d),
                    np.array(pose, dtype=float))
        self._insert(kept, view)
        return True

    def _insert(self, kept: list[View], view: View) -> None:
        kept.append(view)
        kept.sort(key=lambda v: (-v.score, -v.step))
        del kept[self.max_views:]

    def merge(self, src: int, dst: int) -> None:
        for view in self._views.pop(src, []):
            self._insert(self._views.setdefault(dst, []), view)

    # ---- persistence: flat arrays, no pickles ------------------------------------------------
    def export(self) -> dict[str, np.ndarray]:
        rows, steps, scores, bboxes, shapes, poses, pixels, masks = [], [], [], [], [], [], [], []
        for row in sorted(self._views):
            for v in self._views[row]:
                rows.append(row)
                steps.append(v.step)
                scores.append(v.score)
                bboxes.append(v.bbox_2d)
                shapes.append(v.crop.shape[:2])
                poses.append(v.world_from_camera)
                pixels.append(v.crop.reshape(-1))
                masks.append(v.mask.reshape(-1))
        return {
            "row": np.array(rows, dtype=np.int64), "step": np.array(steps, dtype=np.int64),
            "score": np.array(scores, dtype=np.float64), "bbox": np.array(bboxes, dtype=np.int64).reshape(-1, 4),
            "shape": np.array(shapes, dtype=np.int64).reshape(-1, 2),
            "pose": np.array(poses, dtype=np.float64).reshape(-1, 4, 4),
            "pixels": np.concatenate(pixels) if pixels else np.zeros(0, np.uint8),
            "masks": np.concatenate(masks) if masks else np.zeros(0, bool),
        }

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        """Inverse of ``export``; raises ValueError when the buffers do not add up."""
        shapes = arrays["shape"]
        sizes = shapes[:, 0] * shapes[:, 1]
        if int(sizes.sum()) * 3 != len(arrays["pixels"]) or int(sizes.sum()) != len(arrays["masks"]):
            raise ValueError("view pixel/mask buffers do not match the stored view shapes")
        self._views = {}
        p = m = 0
        for i, row in enumerate(arrays["row"].tolist()):
            h, w = (int(x) for x in shapes[i])
            crop = arrays["pixels"][p:p + h * w * 3].reshape(h, w, 3).copy()
            mask = arrays["masks"][m:m + h * w].reshape(h, w).copy()
            p, m = p + h * w * 3, m + h * w
            self._views.setdefault(row, []).append(View(int(arrays["step"][i]), float(arrays["score"][i]), crop, mask,
                                                        _bbox4(arrays["bbox"][i]),
                                                        arrays["pose"][i].copy()))

    def nbytes(self) -> int:
        return sum(v.crop.nbytes + v.mask.nbytes + 200 for vs in self._views.values() for v in vs)
