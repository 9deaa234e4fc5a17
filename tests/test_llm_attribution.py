"""Honest attribution in reports: per role, how many decisions the model took and why the others
fell back, and a plain warning beside the figures when the model's share is under the threshold.
The usage dicts come from a real LLMClient's counters (record_decision / record_fallback, as the
roles call them), so these tests follow the client's format, not a copy of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.report import EpisodeResult, summarize, write_episode_report, write_summary
from household.types import WorldState
from planner.llm.attribution import (MODEL_SHARE_THRESHOLD, Attribution, is_local_api_base, server_label,
                                     server_trouble)
from planner.llm.client import LLMClient, LLMConfig
from sim_bridge.embedded.house_geometry import HouseLayout
from tests.test_report import layout, make_result, world  # noqa: F401 (pytest fixtures)


def usage_of(model: dict[str, int], fallbacks: dict[str, list[str]]) -> dict:
    """extra["llm"] of an episode in which each role took ``model[role]`` decisions and fell back
    once per kind listed (LLMRoleError kinds)."""
    client = LLMClient(LLMConfig(model="openai/qwen", api_base="http://127.0.0.1:8080/v1"))
    for role, n in model.items():
        for _ in range(n):
            client.record_decision(role)
    for role, kinds in fallbacks.items():
        for kind in kinds:
            client.record_fallback(role, f"[{kind}] failed", kind)
    return client.usage()


def test_usage_counts_decisions_per_role_and_reason() -> None:
    usage = usage_of({"refine": 8, "translate": 9}, {"refine": ["semantic"], "ground": ["semantic"] * 3 + ["timeout"],
                                                     "decompose": ["schema", "api_error", "not_json"]})
    by_role = usage["decisions_by_role"]
    assert by_role["refine"] == {"decisions": 9, "by_model": 8, "fell_back": 1,
                                 "fallback_reasons": {"refused_by_checks": 1}}
    assert by_role["ground"]["fallback_reasons"] == {"timeout": 1, "refused_by_checks": 3}
    assert by_role["decompose"]["fallback_reasons"] == {"transport_error": 1, "invalid_json": 1, "schema_invalid": 1}
    assert usage["decisions"]["decisions"] == 9 + 9 + 4 + 3
    assert usage["decisions"]["by_model"] == 17
    assert usage["decisions"]["model_share"] == pytest.approx(17 / 25, abs=1e-4)


def test_episode_report_says_who_decided(tmp_path: Path, layout: HouseLayout, world: WorldState) -> None:  # noqa: F811
    usage = usage_of({"refine": 2}, {"ground": ["semantic"] * 5, "translate": ["timeout"]})
    result = make_result(world, planner="llm:openai/qwen", extra={"llm": usage})
    paths = write_episode_report(tmp_path, result, layout, world)
    data = json.loads(paths["json"].read_text())
    md = paths["md"].read_text()
    assert data["model_decisions"]["by_model"] == 2 and data["model_decisions"]["decisions"] == 8
    assert data["model_decisions"]["under_threshold"] is True
    assert "took only 2 of 8 planner decisions (25%" in data["model_decisions"]["warning"]
    assert "## Model decisions" in md and data["model_decisions"]["warning"] in md
    assert "| ground | 5 | 0 | 5 | schema-valid but refused by the project's checks" in md
    assert "| translate | 1 | 0 | 1 | timeout" in md
    # The report reads back with the same attribution (a summary rebuilt from reports agrees).
    again = EpisodeResult.from_dict(data)
    assert again.attribution() is not None and again.attribution().to_dict() == result.attribution().to_dict()


def test_no_warning_when_the_model_decided_enough(tmp_path: Path, layout: HouseLayout, world: WorldState) -> None:  # noqa: F811
    usage = usage_of({"refine": 3, "ground": 3}, {"ground": ["semantic"]})
    result = make_result(world, planner="llm:openai/qwen", extra={"llm": usage})
    md = write_episode_report(tmp_path, result, layout, world)["md"].read_text()
    assert "## Model decisions" in md and "WARNING" not in md
    assert "The model took 6 of 7 decisions (86%)." in md


def test_deterministic_reports_have_no_attribution(tmp_path: Path, layout: HouseLayout, world: WorldState) -> None:  # noqa: F811
    result = make_result(world)
    paths = write_episode_report(tmp_path, result, layout, world)
    assert "model_decisions" not in json.loads(paths["json"].read_text())
    assert "Model decisions" not in paths["md"].read_text()


def test_summary_sums_over_episodes_and_warns_beside_the_figures(tmp_path: Path, world: WorldState) -> None:  # noqa: F811
    a = make_result(world, eid="a", planner="llm:x", extra={"llm": usage_of({"refine": 4}, {"ground": ["semantic"]})})
    b = make_result(world, eid="b", planner="llm:x", extra={"llm": usage_of({}, {"ground": ["semantic"] * 6})})
    c = make_result(world, eid="c", planner="deterministic")
    paths = write_summary(tmp_path, [a, b, c])
    data = json.loads(paths["json"].read_text())
    decisions = data["model_decisions"]
    assert (decisions["decisions"], decisions["by_model"], decisions["episodes_with_model"]) == (11, 4, 2)
    assert decisions["by_role"]["ground"]["fallback_reasons"] == {"refused_by_checks": 7}
    assert decisions["threshold"] == MODEL_SHARE_THRESHOLD and decisions["under_threshold"] is True
    md = paths["md"].read_text()
    head = md.split("| Episode |")[0]  # the warning opens the summary, before the table
    assert "took only 4 of 11 planner decisions (36%" in head
    assert "| ground | 7 | 0 | 7 |" in md
    assert [row["llm_model_decisions"] for row in data["episodes"]] == [4.0, 0.0, None]
    # Over the threshold: figures, no warning.
    ok = summarize([make_result(world, eid="d", planner="llm:x", extra={"llm": usage_of({"ground": 3}, {})})])
    assert ok["model_decisions"]["warning"] is None


def test_reports_from_before_attribution_read_as_unknown(world: WorldState) -> None:  # noqa: F811
    old = {"calls": 3, "prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.0, "cost_status": "unknown"}
    result = make_result(world, planner="llm:x", extra={"llm": old})
    assert result.attribution() is None and "model_decisions" not in summarize([result])


@pytest.mark.parametrize("url, local", [("http://127.0.0.1:8080/v1", True), ("http://localhost:1/v1", True),
                                        ("http://[::1]:8080/v1", True), ("http://127.1.2.3/v1", True),
                                        ("https://api.openai.com/v1", False), ("http://10.0.0.5:8080/v1", False),
                                        (None, False), ("not a url", False)])
def test_local_api_base(url: str | None, local: bool) -> None:
    assert is_local_api_base(url) is local


def test_server_label_drops_credentials() -> None:
    label = server_label("https://user:s3cretpass@example.org:8443/v1?key=abc")
    assert label == "https://example.org:8443/v1" and "s3cret" not in label and "abc" not in label


def test_attribution_roundtrip() -> None:
    usage = usage_of({"refine": 1}, {"ground": ["timeout", "semantic"]})
    a = Attribution.from_usage(usage)
    assert a is not None and a.total.decisions == 3 and a.total.fallbacks == {"timeout": 1, "refused_by_checks": 1}


def test_server_trouble_names_the_server_only_for_transport_failures() -> None:
    down = Attribution.from_usage(usage_of({}, {"ground": ["api_error", "timeout", "api_error"]}))
    line = server_trouble("http://127.0.0.1:8080/v1", down)
    assert line == ("LLM server http://127.0.0.1:8080/v1: 2 transport error(s), 1 timeout(s); "
                    "is it running? (worldmind llm check)")
    remote = server_trouble("https://u:pw@api.example.org/v1", down)
    assert remote is not None and "pw" not in remote and "worldmind llm check" not in remote
    refused = Attribution.from_usage(usage_of({}, {"ground": ["semantic", "schema"]}))
    assert server_trouble("http://127.0.0.1:8080/v1", refused) is None


def test_run_output_prints_decisions_warning_and_server(world: WorldState) -> None:  # noqa: F811
    from worldmind.cli_common import fmt_result
    usage = usage_of({"refine": 1}, {"ground": ["api_error"] * 3})
    lines = fmt_result(make_result(world, planner="llm:local", extra={"llm": usage}))
    assert "  model decisions: 1/4 (ground 0/3, refine 1/1)" in lines
    assert any(line.startswith("  WARNING: the model took only 1 of 4") for line in lines)
    assert any("LLM server http://127.0.0.1:8080/v1: 3 transport error(s)" in line for line in lines)
    assert not any("model decisions" in line for line in fmt_result(make_result(world)))
