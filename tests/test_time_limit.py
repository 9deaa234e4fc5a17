"""--time-limit: an episode stopped after S seconds of wall time is scored as it stands, says so in
its report, and is never reused by a rerun without the same limit (a slow model's episode on a lent
machine used to be killed by `timeout`, leaving no report at all)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldmind import cli

LAMP = [{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}]


def _episode(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tiny.json"
    path.write_text(json.dumps({"id": "tiny-lamp", "house": {"file": "houses_dev.jsonl.gz", "index": 0},
                                "scenario": "test", "instructions": {"detailed": "Turn on the floor lamp.",
                                                                     "concise": "Lamp on."},
                                "checklist": LAMP, "max_steps": 300}))
    return path


def test_run_stops_at_the_time_limit_and_scores_what_it_has(tmp_path: Path) -> None:
    ep = _episode(tmp_path / "eps")
    out = tmp_path / "out"
    # a limit shorter than the reset itself: stopped before the first action, the world scored as it is
    assert cli.main(["run", "--episode", str(ep), "--planner", "oracle", "--no-render",
                     "--time-limit", "0.000001", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["extra"]["stop_reason"] == "time limit (1e-06 s)"
    assert report["extra"]["time_limit_s"] == pytest.approx(1e-6)
    assert report["num_actions"] == 0 and report["timeline"] and report["steps_total"] == 0


def test_without_a_limit_the_same_run_ends_by_the_agent(tmp_path: Path) -> None:
    ep = _episode(tmp_path / "eps")
    out = tmp_path / "out"
    assert cli.main(["run", "--episode", str(ep), "--planner", "oracle", "--no-render", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["extra"]["stop_reason"] == "stop" and "time_limit_s" not in report["extra"]
    assert report["gc"] == 1.0


def test_a_time_limited_report_is_not_reused_by_a_run_without_the_limit(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    _episode(tmp_path / "eps")
    out = tmp_path / "out"
    base = ["eval", "longact", "--episodes", str(tmp_path / "eps"), "--out", str(out), "--no-render"]
    assert cli.main([*base, "--time-limit", "0.000001"]) == 0
    assert cli.main([*base, "--time-limit", "0.000001"]) == 0  # the same limit: resumed, nothing rerun
    capsys.readouterr()
    assert cli.main(base) == 2
    err = capsys.readouterr().err
    assert "made for other inputs" in err and "time_limit_s: stored 1e-06, this run None" in err


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf", "nan"])
def test_a_time_limit_that_is_no_positive_number_is_refused(value: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    ep = _episode(tmp_path / "eps")
    assert cli.main(["run", "--episode", str(ep), "--time-limit", value, "--out", str(tmp_path / "o")]) == 2
    assert "--time-limit" in capsys.readouterr().err
