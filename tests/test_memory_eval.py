"""The memory evaluation: metric definitions on hand-made cases (they must be able to fail), a
short real run on a dev house (JSON + PNGs written), and the command's handling of bad input."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluation.memory_eval import MemoryEvalConfig, main_memory_eval, run_memory_eval
from evaluation.memory_metrics import GTObject, make_queries, match, object_metrics


def gt_object(oid: str, typ: str, xyz: tuple[float, float, float], *, room: str = "Kitchen", parent: str | None = None,
              pickupable: bool = True) -> GTObject:
    c = np.asarray(xyz, dtype=float)
    return GTObject(oid, typ, c, c, np.zeros((4, 2)), "room|1", room, parent, pickupable)


@dataclass
class Rec:
    object_id: int
    label: str
    center: np.ndarray


class FakeMemory:
    def __init__(self, recs: list[tuple[str, tuple[float, float, float]]]) -> None:
        self.recs = [Rec(i, lab, np.asarray(c, float)) for i, (lab, c) in enumerate(recs)]

    def objects(self) -> list[Rec]:
        return self.recs


def test_matching_precision_recall_duplicates() -> None:
    gt = [gt_object("a", "Mug", (0, 0, 1)), gt_object("b", "Mug", (2, 0, 1)), gt_object("c", "Apple", (5, 0, 1)),
          gt_object("d", "Pen", (9, 9, 1))]
    mem = FakeMemory([("Mug", (0.05, 0, 1)), ("Mug", (0.3, 0, 1)),  # a and a duplicate of it
                      ("Mug", (2.0, 0.02, 1)), ("Apple", (5.9, 0, 1)),  # b; an apple too far off
                      ("Sofa", (5, 0, 1))])  # wrong type
    m = match(mem, gt, match_distance=0.5, duplicate_distance=1.0)
    assert list(m.gt_of_mem) == [0, -1, 1, -1, -1]
    assert list(m.duplicate) == [False, True, False, False, False]
    r = object_metrics(m, gt, visible={"a", "b", "c"})
    assert r["precision"] == pytest.approx(2 / 5) and r["duplicate_rate"] == pytest.approx(1 / 5)
    assert r["recall_visible"] == pytest.approx(2 / 3) and r["recall_all"] == pytest.approx(2 / 4)
    assert r["centroid_error_mean"] == pytest.approx((0.05 + 0.02) / 2)
    assert r["missed_visible"] == ["c"] and r["false_positives"] == 2  # the far apple and the sofa


def test_queries_cover_visible_objects_only() -> None:
    gt = [gt_object("a", "Mug", (0, 0, 1), parent="CounterTop"), gt_object("b", "Mug", (2, 0, 1), room="Bedroom"),
          gt_object("t", "CounterTop", (0, 0, 0.5), pickupable=False), gt_object("h", "Pen", (1, 1, 1))]
    qs = {q.text: (q.kind, q.answers) for q in make_queries(gt, visible={"a", "b", "t"})}
    assert qs["mug"] == ("type", [0, 1])
    assert qs["mug in the kitchen"] == ("type+room", [0]) and qs["mug in the bedroom"] == ("type+room", [1])
    assert qs["mug on the counter top"] == ("type+receptacle", [0])
    assert "pen" not in qs and "counter top on the none" not in qs


def test_short_run_writes_json_and_pictures(tmp_path: Path) -> None:
    cfg = MemoryEvalConfig(max_viewpoints=3, horizons=(30.0,), move_objects=1)
    result = run_memory_eval("houses_dev.jsonl.gz", 0, tmp_path, config=cfg)
    saved = json.loads((tmp_path / "memory_eval.json").read_text())
    assert saved["house_id"] == result["house_id"] and "oracle" in saved["privileged"]
    for phase in ("explored", "after_move"):
        r = saved[phase]
        assert r["timing"]["frames"] == 3 * 12
        assert 0 < r["recall_visible"] <= 1 and r["precision"] >= 0.9 and r["duplicate_rate"] <= 0.05
        assert r["centroid_error_mean"] < 0.1
        assert {"type", "type+room"} <= set(r["queries"])
    assert len(saved["after_move"]["moved"]) <= 1
    for name in ("memory_topdown.png", "memory_topdown_moved.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_command_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_memory_eval(["--house", str(tmp_path / "nope.jsonl.gz"), "--out", str(tmp_path)]) == 2
    assert "nope.jsonl.gz" in capsys.readouterr().err
    assert main_memory_eval(["--index", "3-1", "--out", str(tmp_path)]) == 2
    assert "backwards" in capsys.readouterr().err
    assert main_memory_eval(["--grid-step", "0", "--out", str(tmp_path)]) == 2
    capsys.readouterr()
    assert main_memory_eval(["--min-observations", "0", "--out", str(tmp_path)]) == 2
    assert "--min-observations must be >= 1" in capsys.readouterr().err
    assert main_memory_eval(["--clip-model", "ViT-B-32", "--out", str(tmp_path)]) == 2
    assert "no CLIP weights" in capsys.readouterr().err


def test_no_pose_drift_feeds_the_profile_without_its_pose_model(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """--no-pose-drift keeps the profile's depth and segmentation models and zeroes odometry drift
    only, and the result says so (the figure is the memory without the missing pose correction)."""
    import evaluation.memory_eval as me
    from sim_bridge.sensors import SensorNoise, sensor_profile
    from sim_bridge.sensors.profiles import PoseModel

    fed: list[Any] = []

    class Spy(SensorNoise):
        def __init__(self, env: Any, profile: Any, seed: int = 0) -> None:
            fed.append(profile)
            super().__init__(env, profile, seed)

    monkeypatch.setattr(me, "SensorNoise", Spy)
    realistic = sensor_profile("realistic")
    for drift in (True, False):
        cfg = MemoryEvalConfig(max_viewpoints=1, move_objects=0, width=80, height=60, sensors="realistic",
                               pose_drift=drift)
        result = run_memory_eval("houses_dev.jsonl.gz", 0, tmp_path / str(drift), config=cfg)
        assert result["config"]["pose_drift"] is drift
        assert ("exact pose" in result["privileged"]) is not drift
    assert fed[0] == realistic
    assert fed[1].pose == PoseModel() and fed[1].depth == realistic.depth
    assert fed[1].segmentation == realistic.segmentation
