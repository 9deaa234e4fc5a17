"""The configured API key never reaches a file: a model answer that contains it is redacted in the
LLM cache, the episode report (report.json / report.md goal texts), summaries, the belief log and
recorded bags. The key's value comes from the environment variable the LLM config names."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_llm_roles import MOCK_MODEL, VALID, FakeFallback, client, ctx, run_role  # noqa: F401
from test_report import layout, make_result, world  # noqa: F401  (fixtures)

from evaluation.report import write_episode_report, write_summary
from household.secrets import contains_secret, redact, redact_bytes, redact_json, register_secret_env
from memory.belief import BeliefTracker

KEY = "sk-test-9f8e7d6c5b4a39281706"
ENV = "WORLDMIND_SECRET_TEST_KEY"


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ENV, KEY)
    return KEY


def all_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_a_model_answer_with_the_key_is_redacted_from_cache_and_reports(tmp_path: Path, key: str,
                                                                        layout, world) -> None:  # noqa: F811
    leaky = json.loads(VALID["decompose"])
    leaky["goals"][0]["text"] = f"put a mug in the sink (my key is {key})"
    c = client([json.dumps(leaky)], cache_dir=tmp_path / "cache", api_key_env=ENV)
    goals = run_role("decompose", c, FakeFallback())
    assert key not in goals[0].text  # removed when the answer is received ...
    assert all_bytes(tmp_path / "cache") and key.encode() not in all_bytes(tmp_path / "cache")  # ... and cached
    extra = {"goals": {g.id: {"text": g.text} for g in goals}, "llm": c.usage()}
    result = make_result(world, extra=extra)
    result.extra["note"] = f"escaped form: {json.dumps(key)}"  # reaching a writer another way: still masked
    result.extra["leak"] = f"raw {key}"
    write_episode_report(tmp_path / "ep", result, layout, world)
    write_summary(tmp_path / "ep", [result])
    written = all_bytes(tmp_path / "ep")
    assert b"***" in written and key.encode() not in written
    report = json.loads((tmp_path / "ep" / "report.json").read_text())
    assert report["extra"]["goals"]["g1"]["text"] == "put a mug in the sink (my key is ***)"


def test_the_belief_log_never_stores_the_key(tmp_path: Path, key: str) -> None:
    register_secret_env(ENV)
    tr = BeliefTracker(tmp_path / "log.jsonl")
    tr.ingest([{"id": "u1", "t": 1.0, "actor": "alice", "kind": "utterance", "action": "say", "observers": ["robot"],
                "text": f"the wifi password is {key}"}])
    tr.close()
    assert key.encode() not in (tmp_path / "log.jsonl").read_bytes()
    assert BeliefTracker.open(tmp_path / "log.jsonl").event_by_id("u1").text == "the wifi password is ***"


def test_recorded_bags_mask_the_key_and_stay_readable(tmp_path: Path, key: str) -> None:
    pytest.importorskip("rosbags")
    from rosbags.highlevel import AnyReader

    from sim_bridge.replay.bag import BagWriter

    register_secret_env(ENV)
    path = tmp_path / "run.mcap"
    with BagWriter(path) as bag:
        bag.write_text("/worldmind/instruction", f"go, key={key}", 1)
    assert key.encode() not in all_bytes(tmp_path)
    assert b"go, key=" + b"*" * len(key) in all_bytes(tmp_path)  # same length: the CDR string stays valid
    with AnyReader([path]) as reader:  # and the masked message still deserialises
        texts = [reader.deserialize(raw, con.msgtype).data for con, _, raw in reader.messages()]
    assert texts == ["go, key=" + "*" * len(key)]


def test_redaction_helpers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "k\u00e9y\"with-quote-1234")
    register_secret_env(ENV)
    secret = os.environ[ENV]
    for text in (secret, json.dumps(secret), json.dumps(secret, ensure_ascii=False), f"a {secret} b"):
        assert not contains_secret(redact(text)) and "***" in redact(text)
    assert redact_json({secret: [secret, 1, None]}) == {"***": ["***", 1, None]}
    assert redact_bytes(b"x" + secret.encode() + b"y") == b"x" + b"*" * len(secret.encode()) + b"y"
    monkeypatch.setenv(ENV, "ab")  # too short to redact without masking ordinary words
    assert redact("ab abc") == "ab abc"
# ---- redaction at receipt (the goal texts themselves) and at every text write -------------------
LEAKY_DECOMPOSE = json.dumps({"goals": [
    {"id": "g1", "text": f"put a mug in the sink (key {KEY})", "items": [
        {"object": {"type": "Mug"}, "predicate": "inReceptacle", "target": {"type": "Sink"}}]}]})


def test_a_key_in_a_model_answer_reaches_no_goal_text(tmp_path: Path, key: str) -> None:
    from planner.llm import LLMDecomposer

    c = client([LEAKY_DECOMPOSE], cache_dir=tmp_path, api_key_env=ENV)
    goals = LLMDecomposer(c).decompose("put a mug in the sink", ctx())
    assert goals and "***" in goals[0].text and KEY not in goals[0].text  # redacted as it arrived
    assert KEY.encode() not in all_bytes(tmp_path)


def test_every_text_file_written_atomically_is_redacted(tmp_path: Path, key: str) -> None:
    from household.atomic_io import atomic_write_text

    register_secret_env(ENV)
    path = atomic_write_text(tmp_path / "summary.md", f"| goal | {KEY} |\n")
    assert path.read_text() == "| goal | *** |\n"


def test_credentials_inside_api_base_never_reach_usage_reports_or_writes(tmp_path: Path) -> None:
    """Issue 32: ``http://user:password@host/v1`` as api_base went into every report's extra.llm."""
    from household.atomic_io import atomic_write_text
    from household.secrets import url_credentials, url_without_credentials

    password = "hunter2-not-a-real-pw"
    base = f"http://alice:{password}@llm.example:8080/v1"
    c = client([VALID["decompose"]], api_base=base)
    run_role("decompose", c, FakeFallback())
    usage = c.usage()
    assert usage["api_base"] == "http://***@llm.example:8080/v1"
    assert password not in json.dumps(usage)
    # any other path to a file (an error text quoting the URL) is redacted at the write chokepoint
    atomic_write_text(tmp_path / "log.txt", f"connection to {base} refused")
    assert password not in (tmp_path / "log.txt").read_text() and "llm.example" in (tmp_path / "log.txt").read_text()
    assert url_without_credentials("http://h:1/v1") == "http://h:1/v1" and url_credentials("http://h/v1") == []
    assert password in url_credentials("https://bob:hunter2-not-a-real-pw@x/v1")
