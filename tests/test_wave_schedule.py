"""``benchmarks/wave_schedule.py``: the replay of a run's waves under each hand-out order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.wave_schedule import main, makespan, replay


def test_a_long_episode_drawn_last_runs_alone_in_file_order_not_longest_first() -> None:
    ids = ["a", "b", "c", "d"]
    times = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 3.0}
    budgets = {"a": 100, "b": 100, "c": 100, "d": 300}  # the budget ranks as the times do
    out = replay(ids, times, budgets, workers=2, wave=4)
    assert out["file order"] == 4.0  # a and b, then c beside d: d ends at 1 + 3
    assert out["longest first (step budget)"] == out["longest first (true times)"] == 3.0
    assert out["even split, no waves"] == 3.0
    assert makespan([2.0, 2.0, 2.0], 1) == 6.0


def test_waves_are_scheduled_one_after_the_other() -> None:
    ids = ["a", "b", "c", "d"]
    times = {"a": 3.0, "b": 1.0, "c": 1.0, "d": 3.0}
    budgets = dict.fromkeys(ids, 1)  # no ranking: ties keep the file order
    out = replay(ids, times, budgets, workers=2, wave=2)
    assert out["file order"] == out["longest first (step budget)"] == 6.0  # 3 + 3: a wave waits for its last
    assert out["even split, no waves"] == 4.0


def test_command_prints_each_order_and_names_an_episode_without_budget(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text("\n".join(json.dumps(x) for x in (
        {"format": "worldmind-longact-results/1"}, {"id": "e1", "wall_time_s": 60.0},
        {"id": "e2", "wall_time_s": 120.0})) + "\n")
    eps = tmp_path / "eps"
    eps.mkdir()
    (eps / "e1.json").write_text(json.dumps({"max_steps": 10}))
    (eps / "e2.json").write_text(json.dumps({"max_steps": 20}))
    assert main([str(results), "--episodes", str(eps)]) == 0
    out = capsys.readouterr().out
    assert "2 episodes" in out and "file order" in out and "2.0 min" in out
    (eps / "e2.json").write_text("{}")
    assert main([str(results), "--episodes", str(eps)]) == 2
    assert "e2.json: no max_steps" in capsys.readouterr().err
