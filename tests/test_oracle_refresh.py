"""``worldmind refresh-oracle``: the stored oracle block is rerun and rewritten, nothing else in the
file changes, and an episode the oracle does not solve is refused by name (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evaluation.oracle_refresh as refresh
from evaluation.oracle_refresh import RefreshError, format_episode, main_refresh_oracle, refresh_file
from worldmind.cli import main

SHORT = Path("evaluation/data/episodes_dev/dev-003-0.json")  # a short episode (about 320 oracle steps)


def stale_copy(tmp_path: Path, oracle: dict[str, Any] | None = None) -> tuple[Path, dict[str, Any]]:
    data = json.loads(SHORT.read_text())
    data["oracle"] = oracle or dict(data["oracle"], steps_nav=data["oracle"]["steps_nav"] + 100,
                                    steps_total=data["oracle"]["steps_total"] + 100)
    path = tmp_path / SHORT.name
    path.write_text(format_episode(data))
    return path, data


def test_refresh_reruns_the_oracle_and_rewrites_only_its_block(tmp_path, capsys):
    path, stale = stale_copy(tmp_path)
    assert main_refresh_oracle([str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{stale['id']}: nav {stale['oracle']['steps_nav']}" in out and "[written;" in out
    assert "1 episode(s)" in out and "1 changed, 1 written, 0 refused" in out and "mean steps_nav" in out
    text = path.read_text()
    new = json.loads(text)
    assert new["oracle"] != stale["oracle"] and new["oracle"]["gc"] == 1.0 and new["oracle"]["sr"] == 1.0
    assert set(new["oracle"]) == set(refresh.FIELDS)
    assert new["oracle"]["steps_total"] == new["oracle"]["steps_nav"] + new["oracle"]["steps_manip"]
    assert text == format_episode(dict(stale, oracle=new["oracle"]))  # every other byte as it was
    assert list(new) == list(stale)  # the block keeps its place


def fake_oracle(figures: dict[str, Any]):
    return lambda path, data_dir=None: dict(figures)


def test_an_episode_the_oracle_does_not_solve_is_refused_by_name(tmp_path, monkeypatch, capsys):
    path, _ = stale_copy(tmp_path)
    before = path.read_bytes()
    monkeypatch.setattr(refresh, "rerun_oracle", fake_oracle(
        {"gc": 0.9, "sr": 0.0, "steps_nav": 10.0, "steps_manip": 1.0, "steps_total": 11.0, "actions": 11}))
    assert main_refresh_oracle([str(path)]) == 1
    out = capsys.readouterr().out
    assert "REFUSED" in out and "episode dev-003-0" in out and "GC 0.9 SR 0.0" in out
    assert path.read_bytes() == before


def test_check_writes_nothing_and_an_unchanged_block_is_left_alone(tmp_path, monkeypatch, capsys):
    path, data = stale_copy(tmp_path)
    before = path.read_bytes()
    monkeypatch.setattr(refresh, "rerun_oracle", fake_oracle(
        {"gc": 1.0, "sr": 1.0, "steps_nav": 5.0, "steps_manip": 1.0, "steps_total": 6.0, "actions": 6}))
    assert main_refresh_oracle(["--check", str(path)]) == 0
    assert "not written (--check)" in capsys.readouterr().out and path.read_bytes() == before
    monkeypatch.setattr(refresh, "rerun_oracle", fake_oracle(data["oracle"]))
    result = refresh_file(path)
    assert not result.changed and not result.written and path.read_bytes() == before


def test_a_file_in_another_formatting_is_refused_naming_it(tmp_path, monkeypatch):
    path = tmp_path / "ep.json"
    path.write_text(json.dumps(json.loads(SHORT.read_text()), indent=2) + "\n")
    monkeypatch.setattr(refresh, "rerun_oracle", fake_oracle({}))
    with pytest.raises(RefreshError, match="ep.json: its formatting"):
        refresh_file(path)


def test_duplicate_keys_and_missing_sources_are_refused(tmp_path, capsys):
    path = tmp_path / "dup.json"
    path.write_text('{"id": "a", "id": "b"}\n')
    assert main_refresh_oracle([str(path)]) == 2
    assert "dup.json" in capsys.readouterr().err
    assert main_refresh_oracle([str(tmp_path / "nope.json")]) == 2
    assert "nope.json: no such episode file" in capsys.readouterr().err


def test_the_cli_dispatches_the_subcommand(capsys):
    assert main(["refresh-oracle", "--help"]) == 0
    assert "oracle block" in capsys.readouterr().out


def test_folders_are_expanded_to_their_episode_files(tmp_path):
    for name in ("b.json", "a.json", "notes.tsv"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in refresh.episode_files([str(tmp_path)])] == ["a.json", "b.json"]
