"""``worldmind parse`` (worldmind.cli_parse), the parser's bad-input limits and the fixed
free-form split (benchmarks/freeform_split.py)."""

from __future__ import annotations

import json
import time

import pytest

from benchmarks.freeform_split import HELD_OUT_PERCENT, split_of
from worldmind.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["parse", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_json_shape_items_in_checklist_vocabulary(capsys) -> None:
    rc, out, _ = run(capsys, "Put the mug in the sink, then switch the TV on.", "--json")
    assert rc == 0
    report = json.loads(out)
    assert set(report) >= {"items", "unparsed"}
    got = {(i["object"]["type"], i["predicate"], (i.get("target") or {}).get("type")) for i in report["items"]}
    assert got == {("Mug", "inReceptacle", "Sink"), ("Television", "isToggled", None)}
    assert all(i["clause"] for i in report["items"])
    assert report["unparsed"] == []


def test_human_output_lists_unparsed_with_reason(capsys) -> None:
    rc, out, err = run(capsys, "Put the mug in the sink. Sing me a song.")
    assert rc == 0
    assert "Mug in Sink" in out
    assert 'unparsed: "Sing me a song"' in out


@pytest.mark.parametrize("text", ["", "   ", "!!! ???"])
def test_empty_instruction_is_usage_error(capsys, text: str) -> None:
    rc, out, err = run(capsys, text)
    assert rc == 2
    assert err.count("\n") == 1 and "empty instruction" in err and "Traceback" not in err


def test_huge_instruction_refused_fast_with_limit_named(capsys) -> None:
    from planner.instruction_parser import MAX_INSTRUCTION_CHARS

    text = "put the mug in the sink " * (50 * 2**20 // 24)  # ~50 MB
    t0 = time.perf_counter()
    rc, out, err = run(capsys, text)
    assert time.perf_counter() - t0 < 5.0
    assert rc == 2 and str(MAX_INSTRUCTION_CHARS) in err and "too long" in err


@pytest.mark.parametrize("text", ["Mets la tasse dans l'évier, s'il te plaît.",
                                  "Stell die Tasse in die Spüle bitte.",
                                  "把杯子放进水槽里"])
def test_non_english_yields_no_goal_and_says_so(capsys, text: str) -> None:
    rc, out, err = run(capsys, text, "--json")
    if rc == 2:  # no Latin letters at all: refused with one line
        assert "no English words" in err and err.count("\n") == 1
        return
    report = json.loads(out)
    assert rc == 1 and report["items"] == [] and report["unparsed"]
    assert "not recognised as English" in report["unparsed"][0]["reason"]


@pytest.mark.parametrize("unit", ["put the mug in the sink and ", "mug bowl plate cup ", "put the mug, "])
def test_longest_accepted_instruction_is_bounded(unit: str) -> None:
    import tracemalloc

    from planner.instruction_parser import MAX_INSTRUCTION_CHARS, InstructionParser

    text = (unit * (MAX_INSTRUCTION_CHARS // len(unit) + 1))[:MAX_INSTRUCTION_CHARS]
    parser = InstructionParser()
    tracemalloc.start()
    t0 = time.perf_counter()
    parser.decompose(text)
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 15.0 and peak < 50e6  # measured ~1 s and ~1 MB on the dev machine


def test_no_known_object_yields_no_goal(capsys) -> None:
    rc, out, err = run(capsys, "Please put the flibbertigibbet on the zorblax.", "--json")
    report = json.loads(out)
    assert rc == 1 and report["items"] == []
    assert report["unparsed"] and report["unparsed"][0]["reason"]


def test_split_is_deterministic_and_near_forty_percent() -> None:
    ids = [{"episode_id": f"dev-{i:03d}-{i % 2}"} for i in range(400)]
    parts = [split_of(e) for e in ids]
    assert parts == [split_of(e) for e in ids]
    share = parts.count("heldout") / len(parts)
    assert abs(share - HELD_OUT_PERCENT / 100) < 0.08
    # The two styles of one episode split independently (the key includes the style).
    assert any(split_of({"episode_id": e["episode_id"]}) != split_of({**e, "style": "adversarial"}) for e in ids)
