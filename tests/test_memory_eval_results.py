"""benchmarks/memory_eval_results.py: a memory-eval folder to per-house rows, group means that
keep the held-back houses apart, and the compact file read back the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.memory_eval_results import main, rows_of, summary


def _house(root: Path, index: int, recall: float, precision: float) -> None:
    phase = {"recall_visible": recall, "recall_all": recall - 0.1, "precision": precision, "centroid_error_mean": 0.1,
             "duplicate_rate": 0.0, "memory_objects": 10, "gt_objects": 12, "gt_visible": 11,
             "timing": {"agent_steps": 100 * (index + 1), "surfaces_surveyed": 3, "stop_reason": "surfaces surveyed"}}
    after = dict(phase, moved=[{}, {}], moved_found_at_new_place=1)
    folder = root / f"house_{index:03d}"
    folder.mkdir(parents=True)
    (folder / "memory_eval.json").write_text(json.dumps({"index": index, "house_id": f"h{index}",
                                                          "explored": phase, "after_move": after}))


def test_groups_are_averaged_apart_and_the_export_reads_back_the_same(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    _house(run, 0, 0.8, 1.0)
    _house(run, 1, 1.0, 0.9)
    _house(run, 2, 0.5, 0.5)
    rows = rows_of(run)
    assert len(rows) == 6 and {r["phase"] for r in rows} == {"explored", "after_move"}
    lines = summary(rows, {"tuned": {0, 1}, "held": {2}})
    tuned = next(line for line in lines if line.startswith("tuned") and "explored" in line)
    held = next(line for line in lines if line.startswith("held") and "explored" in line)
    assert "recall seen 0.900" in tuned and "precision 0.950" in tuned and "agent steps 150" in tuned
    assert "recall seen 0.500" in held and "houses  1" in held
    assert any("found at the new place 2/4" in line for line in lines)
    out = tmp_path / "r.jsonl"
    assert main(["export", str(run), "--out", str(out), "--commit", "abc", "--command", "worldmind memory-eval"]) == 0
    header = json.loads(out.read_text().splitlines()[0])
    assert header["commit"] == "abc" and header["houses"] == 3
    assert rows_of(out) == rows


def test_a_folder_without_results_is_named(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no memory_eval.json"):
        rows_of(tmp_path)
