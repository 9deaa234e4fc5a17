"""evaluation.failure_taxonomy and benchmarks/longact_results.py: every unmet checklist unit of a
report gets one cause, traced through the goal that served it; results files round-trip and a
comparison names what changed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from evaluation.failure_taxonomy import CAUSES, Taxonomy, classify_report, format_taxonomy

REPO = Path(__file__).resolve().parents[1]

EPISODE = {"id": "e1", "checklist": [
    {"object": {"type": "Mug"}, "predicate": "inReceptacle", "target": {"type": "Sink"}},
    {"object": {"type": "FloorLamp"}, "predicate": "isToggled", "value": True},
    {"object": {"type": "Laptop"}, "predicate": "isOpen", "value": True},
    {"object": {"type": "Apple"}, "predicate": "isSliced", "value": True},
    {"object": {"type": "Book"}, "predicate": "isOpen", "value": True},
    {"object": {"type": "Vase"}, "predicate": "inRoom", "value": "Bedroom"},
]}


def _item(index: int, predicate: str, ok: bool, candidates: list[str], units: int = 1,
          targets: list[str] | None = None) -> dict:
    return {"index": index, "description": "", "predicate": predicate, "satisfied": ok, "units": units,
            "satisfied_units": units if ok else 0, "object_ids": [], "candidate_ids": candidates,
            "target_ids": targets or []}


def _report(stop: str = "stop", goals: dict | None = None) -> dict:
    return {"episode_id": "e1", "gc": 1 / 6, "sr": 0.0, "scenario": "s", "checklist": [
        _item(0, "inReceptacle", False, ["Mug|1"]),
        _item(1, "isToggled", False, ["FloorLamp|1"]),
        _item(2, "isOpen", False, ["Laptop|1"]),
        _item(3, "isSliced", False, ["Apple|1"]),
        _item(4, "isOpen", True, ["Book|1"]),
        _item(5, "inRoom", False, ["Vase|1"], units=2),
    ], "extra": {"stop_reason": stop, "goals": goals if goals is not None else {
        "g1": {"status": "done", "predicate": "inReceptacle", "object_type": "Mug", "target_type": "Sink",
               "reason": "done", "bindings": {"object": "Mug|2"}, "steps_spent": 40,
               "check": {"status": "verified", "reason": "Mug|2 seen on/in Sink|1"}},
        "g2": {"status": "done", "predicate": "isToggled", "object_type": "FloorLamp", "reason": "done",
               "bindings": {"object": "FloorLamp|1"}, "steps_spent": 12,
               "check": {"status": "unverified", "reason": "the agent's sensors do not show whether it is on"}},
        "g3": {"status": "failed", "predicate": "isOpen", "object_type": "Laptop", "reason": "not_found",
               "detail": "could not find Laptop", "steps_spent": 300},
        "g5": {"status": "done", "predicate": "isOpen", "object_type": "Book", "reason": "done",
               "bindings": {"object": "Book|1"}, "steps_spent": 9},
        "g6": {"status": "deferred", "predicate": "inRoom", "object_type": "Vase", "steps_spent": 100},
    }}}


def test_each_unmet_item_gets_its_cause() -> None:
    unmet = {u.item_index: u for u in classify_report(_report("budget"), EPISODE)}
    assert set(unmet) == {0, 1, 2, 3, 5}  # the met Book item has none
    assert unmet[0].cause == "wrong_object" and "Mug|2" in unmet[0].detail
    assert unmet[1].cause == "done_but_unmet"
    assert unmet[2].cause == "not_found" and unmet[2].goal_ids == ("g3",)
    assert unmet[3].cause == "misread"  # no goal asked for the apple
    assert unmet[5].cause == "budget_spent" and unmet[5].units == 2
    # a done goal beside an unmet item: the agent's own check says whether a reason was stated
    assert unmet[0].agent_check == "verified" and unmet[1].agent_check == "unverified"
    assert all(u.cause in CAUSES for u in unmet.values())


def test_a_done_goal_with_the_wrong_receptacle_or_room() -> None:
    report = _report("budget")
    report["checklist"][0] = _item(0, "inReceptacle", False, ["Mug|1", "Mug|2"], targets=["Sink|1"])
    report["extra"]["goals"]["g1"]["bindings"] = {"object": "Mug|2", "target": "Sink|7"}
    report["extra"]["goals"]["g6"].update(status="done", reason="done", bindings={"object": "Vase|1", "target": "T|1"})
    unmet = {u.item_index: u for u in classify_report(report, EPISODE)}
    assert unmet[0].cause == "wrong_target" and "Sink|7" in unmet[0].detail and "Sink|1" in unmet[0].detail
    assert unmet[5].cause == "wrong_room"


def test_a_count_half_done_is_the_unfinished_copys_miss() -> None:
    """'A couple of phones on the bed': the first copy done (its phone is the unit met), the second
    not reached when the budget ran out. The unit missed is the second copy's (budget_spent), not
    the done copy's condition undone; a done copy whose object is not the one met stays its own."""
    report = _report("budget")
    report["checklist"][5] = dict(_item(5, "inRoom", False, ["Vase|1", "Vase|2"], units=2),
                                  satisfied_units=1, object_ids=["Vase|1"])
    goals = report["extra"]["goals"]
    goals["g6"] = {"status": "done", "predicate": "inRoom", "object_type": "Vase", "reason": "done",
                   "bindings": {"object": "Vase|1", "target": "T|1"}, "check": {"status": "verified", "reason": ""}}
    goals["g6.2"] = {"status": "pending", "predicate": "inRoom", "object_type": "Vase", "steps_spent": 0}
    unmet = {u.item_index: u for u in classify_report(report, EPISODE)}
    assert unmet[5].cause == "budget_spent" and unmet[5].goal_ids == ("g6.2",) and unmet[5].units == 1
    goals["g6"]["bindings"] = {"object": "Vase|3", "target": "T|1"}  # not the vase that is met
    assert {u.item_index: u for u in classify_report(report, EPISODE)}[5].cause == "wrong_object"


def test_an_agent_error_and_a_report_without_goals() -> None:
    assert {u.cause for u in classify_report(_report("agent error: KeyError: 'x'"), EPISODE)} == {"agent_error"}
    assert {u.cause for u in classify_report(_report(goals={}), EPISODE)} == {"unknown"}


def test_the_taxonomy_counts_units_and_each_goals_steps_once() -> None:
    tax = Taxonomy()
    report = _report("budget")
    tax.add(classify_report(report, EPISODE), report)
    assert tax.total_units == 7 and sum(tax.units.values()) == 6
    assert tax.units["budget_spent"] == 2 and tax.steps["not_found"] == 300 and tax.steps["misread"] == 0
    text = format_taxonomy(tax)
    assert "budget_spent" in text and "1 episodes, 7 checklist units, 6 missed" in text
    assert "reported done: 2 (the agent's own check: unverified 1, verified 1" in text


def _run_folder(root: Path, gc_of_book: bool = True) -> Path:
    run = root / "run"
    (run / "e1").mkdir(parents=True)
    report = _report("budget")
    report["checklist"][4]["satisfied_units"] = 1 if gc_of_book else 0
    report["num_actions"] = 500
    (run / "e1" / "report.json").write_text(json.dumps(report))
    (run / "broken").mkdir()
    (run / "broken" / "report.json").write_text("{not json")
    return run


def _results(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "benchmarks" / "longact_results.py"), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def test_results_file_round_trip_compare_and_taxonomy(tmp_path: Path) -> None:
    episodes = tmp_path / "episodes"
    episodes.mkdir()
    (episodes / "e1.json").write_text(json.dumps(EPISODE))
    run = _run_folder(tmp_path)
    out = tmp_path / "results.jsonl"
    r = _results("export", str(run), "--episodes", str(episodes), "--out", str(out), "--commit", "abc")
    assert r.returncode == 0, r.stderr
    assert "broken/report.json: skipped" in r.stderr  # named, not silently dropped
    header, row = (json.loads(line) for line in out.read_text().splitlines())
    assert header["commit"] == "abc" and header["episodes"] == 1
    assert row["id"] == "e1" and row["units"]["isOpen"] == [1, 2]
    assert {u["cause"] for u in row["unmet"]} == {"wrong_object", "done_but_unmet", "not_found", "misread",
                                                   "budget_spent"}
    same = _results("compare", str(out), str(run), "--episodes", str(episodes))
    assert same.returncode == 0 and "0 changed" in same.stdout
    after = tmp_path / "after"
    _run_folder(after, gc_of_book=False)
    report = json.loads((after / "run" / "e1" / "report.json").read_text())
    report["gc"] = 0.0
    (after / "run" / "e1" / "report.json").write_text(json.dumps(report))
    diff = _results("compare", str(out), str(after / "run"))
    assert "e1: gc 0.166667 -> 0.0" in diff.stdout and "worse in 1: e1" in diff.stdout
    tax = _results("taxonomy", str(out))
    assert tax.returncode == 0 and "misread" in tax.stdout


def test_a_bad_results_line_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "worldmind-longact-results/1"}\n[1, 2]\n')
    r = _results("taxonomy", str(bad))
    assert r.returncode != 0 and "bad.jsonl:2" in (r.stdout + r.stderr)


def test_an_episode_out_of_pass_steps_is_out_of_budget_too() -> None:
    """A run stopped because its Pass steps ran out (as many as its step budget: planning is
    bounded too, ``evaluation.runner``) leaves its unfinished goals' units as budget_spent, saying
    which budget."""
    unmet = {u.item_index: u for u in classify_report(_report("planning passes"), EPISODE)}
    assert unmet[5].cause == "budget_spent" and "Pass steps" in unmet[5].detail
