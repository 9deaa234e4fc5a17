"""benchmarks/llm_episode_figures.py: issue 33's per-episode figures counted from the reports (the
schema-valid and fallback shares, the model's share of decisions, latency pooled over every call,
GC/SR beside the deterministic planner on the episodes both finished)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import llm_episode_figures as figs


def _report(folder: Path, eid: str, planner: str, kind: str, gc: float, llm: dict | None = None,
            stop: str = "stop") -> None:
    d = folder / f"{planner.replace(':', '-')}-{kind}" / eid
    d.mkdir(parents=True)
    extra = {"stop_reason": stop, **({"llm": llm} if llm is not None else {})}
    (d / "report.json").write_text(json.dumps({"episode_id": eid, "planner": planner, "instruction_kind": kind,
                                               "gc": gc, "sr": float(gc == 1.0), "extra": extra}))


def _usage(answers: int, valid: int, accepted: int, latencies: list[float], decisions: int, by_model: int,
           reasons: dict[str, int]) -> dict:
    return {"by_role": {"ground": {"answers": answers, "schema_valid": valid, "accepted": accepted,
                                   "calls": len(latencies), "call_latencies_s": latencies}},
            "decisions_by_role": {"ground": {"decisions": decisions, "by_model": by_model,
                                             "fell_back": decisions - by_model, "fallback_reasons": reasons}}}


def test_shares_and_latency_pool_over_episodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _report(tmp_path, "e1", "llm:local", "detailed", 1.0, _usage(4, 4, 3, [1.0, 2.0, 3.0, 4.0], 3, 3, {}))
    _report(tmp_path, "e2", "llm:local", "detailed", 0.5, _usage(2, 1, 1, [10.0, 20.0], 2, 1, {"invalid_json": 1}))
    _report(tmp_path, "e3", "llm:local", "detailed", 0.0, _usage(1, 1, 1, [5.0], 1, 1, {}))  # no deterministic run
    _report(tmp_path, "e4", "llm:local", "detailed", 0.0, _usage(0, 0, 0, [], 0, 0, {}), stop="time limit (300 s)")
    _report(tmp_path, "e1", "deterministic", "detailed", 1.0)
    _report(tmp_path, "e2", "deterministic", "detailed", 1.0)
    _report(tmp_path, "e4", "deterministic", "detailed", 1.0)
    out_json = tmp_path / "f.json"
    assert figs.main([str(tmp_path), "--json", str(out_json)]) == 0
    out = json.loads(out_json.read_text())
    llm = out["llm:local detailed"]
    assert (llm["episodes"], llm["gc"], llm["time_limited"]) == (4, 0.375, ["e4"])
    ground = llm["roles"]["ground"]
    assert (ground["answers"], ground["schema_valid"], ground["accepted"]) == (7, 6, 5)
    assert (ground["decisions"], ground["by_model"], ground["fell_back"]) == (6, 5, 1)
    assert ground["fallback_reasons"] == {"invalid_json": 1}
    # the median of all seven calls, not of the per-episode medians (2.5, 15, 5 -> 5)
    assert (ground["latency_p50_s"], ground["latency_p95_s"], ground["timed_calls"]) == (4.0, 20.0, 7)
    assert llm["roles"]["all"]["answers"] == 7
    printed = capsys.readouterr().out
    assert "schema-valid 6/7 (85.7%)" in printed and "fell back 1/6 (16.7%) (invalid_json 1)" in printed
    assert "4 episodes (1 stopped by the time limit, scored as they stood), GC 0.375" in printed
    # e3 has no deterministic report and e4 was cut short: the pair is over e1 and e2 only
    assert "detailed, 2 episodes both finished: GC 0.750 (llm:local) vs 1.000 (deterministic)" in printed


def test_no_reports_and_unreadable_ones_are_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert figs.main([str(tmp_path)]) == 1
    assert "no report.json" in capsys.readouterr().err
    bad = tmp_path / "x" / "report.json"
    bad.parent.mkdir()
    bad.write_text("{not json")
    _report(tmp_path, "e1", "deterministic", "concise", 1.0)
    assert figs.main([str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert f"{bad}: unreadable report, skipped" in captured.err
    assert "deterministic concise: 1 episodes, GC 1.000" in captured.out
    assert figs.main([str(tmp_path / "missing")]) == 2
