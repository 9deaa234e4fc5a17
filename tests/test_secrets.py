"""An API key never reaches a file (issue 16, item 4), even when a model's answer contains it.

Before, only error messages were redacted: a goal text echoing the key went into report.json,
report.md and the LLM cache. Now answers are redacted as they arrive and every text file written
through household.atomic_io is redacted too.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest  # noqa: E402

from household.atomic_io import atomic_write_text  # noqa: E402
from household.secrets import forget_secrets, redact, register_secret  # noqa: E402
from planner.llm import LLMConfig, LLMDecomposer  # noqa: E402
from planner.llm.client import LLMClient  # noqa: E402
from planner.roles import PlannerContext  # noqa: E402

KEY = "sk-worldmind-SECRET-51c0ffee9d"
LEAKY_ANSWER = json.dumps({"goals": [
    {"id": "g1", "text": f"put a mug in the sink (key {KEY})", "items": [
        {"object": {"type": "Mug"}, "predicate": "inReceptacle", "target": {"type": "Sink"}}]}]})


@pytest.fixture(autouse=True)
def clean_registry():
    forget_secrets()
    yield
    forget_secrets()


def _context() -> PlannerContext:
    return PlannerContext(step=0, held_object_id=None, held_object_type=None, known_objects=[], rooms_seen=[],
                          history=[], experience=[], object_types=["Mug", "Sink"])


def test_a_key_in_a_model_answer_reaches_no_goal_and_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("WORLDMIND_TEST_KEY", KEY)
    client = LLMClient(LLMConfig(model="openai/worldmind-mock", mock_responses=[LEAKY_ANSWER], cache_dir=tmp_path,
                                 api_key_env="WORLDMIND_TEST_KEY"))
    goals = LLMDecomposer(client).decompose("put a mug in the sink", _context())
    assert goals and "***" in goals[0].text and KEY not in goals[0].text
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files and all(KEY not in p.read_text() for p in files)
    # a report written later from those goals holds no key either
    report = tmp_path / "report.json"
    atomic_write_text(report, json.dumps({"goals": [g.text for g in goals]}))
    assert KEY not in report.read_text()


def test_every_text_file_written_is_redacted(tmp_path: Path):
    register_secret(KEY)
    path = atomic_write_text(tmp_path / "summary.md", f"| goal | {KEY} |\n")
    assert path.read_text() == "| goal | *** |\n"


def test_a_stale_cache_entry_holding_a_key_is_redacted_on_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("WORLDMIND_TEST_KEY", KEY)
    client = LLMClient(LLMConfig(model="openai/worldmind-mock", mock_responses=[], cache_dir=tmp_path,
                                 cache_mode="replay_only", api_key_env="WORLDMIND_TEST_KEY"))
    messages = client._with_format_instruction([{"role": "user", "content": "q"}], {"type": "object"})
    path = client._cache_path(client.cache_key(messages, {"type": "object"}))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"text": json.dumps({"note": KEY})}))  # written by an older version
    value = client.call_json("x", [{"role": "user", "content": "q"}], {"type": "object"})
    assert value == {"note": "***"}


def test_short_values_are_not_treated_as_secrets():
    register_secret("ab")
    assert redact("a cab") == "a cab"
