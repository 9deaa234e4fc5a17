"""benchmarks/longact_breakdown.py: per-predicate units, per-scenario GC and the up/down count
from report.json files, a damaged report named and skipped."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.longact_breakdown import main


def _report(folder: Path, eid: str, gc: float, scenario: str, items: list[tuple[str, int, int]]) -> None:
    (folder / eid).mkdir(parents=True)
    checklist = [{"predicate": p, "satisfied_units": s, "units": u} for p, s, u in items]
    (folder / eid / "report.json").write_text(json.dumps(
        {"episode_id": eid, "gc": gc, "sr": float(gc == 1.0), "scenario": scenario, "checklist": checklist}))


def test_breakdown_side_by_side(tmp_path: Path, capsys) -> None:
    before, after = tmp_path / "before", tmp_path / "after"
    _report(before, "e1", 0.5, "Kitchen", [("isHeld", 0, 1), ("inRoom", 1, 1)])
    _report(before, "e2", 1.0, "Study", [("inRoom", 2, 2)])
    _report(after, "e1", 1.0, "Kitchen", [("isHeld", 1, 1), ("inRoom", 1, 1)])
    _report(after, "e2", 1.0, "Study", [("inRoom", 2, 2)])
    _report(after, "e3", 0.0, "Study", [("inRoom", 0, 2)])  # only in one run: left out
    (after / "e4").mkdir()
    (after / "e4" / "report.json").write_text("{not json")
    assert main([str(before), str(after)]) == 0
    out, err = capsys.readouterr()
    assert "2 episodes in every run" in out
    assert "| mean GC | 0.750 | 1.000 |" in out
    assert "| isHeld (units) | 0/1 | 1/1 |" in out
    assert "| inRoom (units) | 3/3 | 3/3 |" in out
    assert "| GC, Kitchen (episodes) | 0.500 (1) | 1.000 (1) |" in out
    assert "after vs before: GC higher on 1, lower on 0, equal on 1" in out
    assert "e4" in err and "skipped" in err


def test_breakdown_refuses_a_missing_folder(tmp_path: Path) -> None:
    assert main([str(tmp_path / "nope")]) == 2
