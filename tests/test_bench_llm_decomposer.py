"""benchmarks/bench_llm_decomposer.py against a loopback stub: the figures it prints are counted
from what the server answered (schema-valid and accepted answers, fallbacks by reason, items)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import bench_llm_decomposer as bench
from tests.llm_stub_server import StubServer, chat_reply

MUG = {"object": {"type": "Mug"}, "predicate": "isDirty", "value": False}
SINK = {"object": {"type": "Mug"}, "predicate": "inReceptacle", "target": {"type": "Sink"}}
SET = [
    {"episode_id": "e1", "detailed": "Wash the mug.", "concise": "Clean mug.", "checklist": [MUG]},
    {"episode_id": "e2", "style": "adversarial", "text": "Put the mug in the sink.", "expected_checklist": [SINK]},
]


def test_figures_count_what_the_server_answered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    freeform = tmp_path / "ff.json"
    freeform.write_text(json.dumps(SET))

    def answer(body: dict) -> object:
        text = body["messages"][1]["content"]
        if "Wash the mug." in text:  # right, first time
            return chat_reply(json.dumps({"goals": [{"id": "g1", "text": "wash", "items": [MUG]}]}))
        if "Clean mug." in text:  # cut off every time: falls back to the parser
            return chat_reply('{"goals": [{"id": "g1", "text": "cle', finish_reason="length")
        return chat_reply(json.dumps({"goals": [{"id": "g1", "text": "sink", "items": [MUG]}]}))  # wrong item

    with StubServer(answer) as server:
        monkeypatch.setenv("WORLDMIND_LLM_LOCAL_BASE", server.base_url)
        out, summary = tmp_path / "rows.jsonl", tmp_path / "summary.json"
        assert bench.main(["--freeform", str(freeform), "--out", str(out), "--summary", str(summary),
                           "--workers", "2"]) == 0
    rows = {(r["id"], r["style"]): r for r in map(json.loads, out.read_text().splitlines())}
    assert rows[("e1", "detailed")]["by_model"] and rows[("e1", "detailed")]["model"] == {"parsed": 1, "matched": 1}
    concise = rows[("e1", "concise")]
    assert not concise["by_model"] and concise["fallback"] == "invalid_json" and concise["schema_valid"] == 0
    assert concise["model"] == {"parsed": 0, "matched": 0} and concise["used"] == concise["parser"]
    adversarial = rows[("e2", "adversarial")]
    assert adversarial["by_model"] and adversarial["model"] == {"parsed": 1, "matched": 0}
    figures = json.loads(summary.read_text())["all"]
    assert figures["texts"] == 3 and figures["by_model"] == 2 and figures["fallback_reasons"] == {"invalid_json": 1}
    assert figures["model"] == {"P": 0.5, "R": 0.333}  # the fallen-back text's item counts against recall
    assert figures["schema_valid"] == pytest.approx(2 / figures["answers"], abs=1e-4)
    assert "model decided 2/3" in capsys.readouterr().out


def test_a_missing_set_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--freeform", str(tmp_path / "none.json")]) == 2
    assert "free-form set not found" in capsys.readouterr().err
