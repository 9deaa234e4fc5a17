"""Duplicate JSON keys are refused in every JSON input a user hands us (issue 32), not only episode
files: houses files, experience pools and LLM config files (JSON and YAML); the error names the
file and the key (household.input_files.unique_keys: one helper)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from household.house_data import HouseError, load_house, load_houses_file, resolve_data_file


def test_a_houses_file_line_with_a_key_twice_is_refused_naming_file_line_and_key(tmp_path: Path) -> None:
    line = gzip.open(resolve_data_file("houses_dev.jsonl.gz"), "rt").readline().rstrip("\n")
    path = tmp_path / "houses.jsonl"
    path.write_text(line[:-1] + ', "rooms": []}\n')
    report = load_houses_file(path)
    assert not report.houses and "houses.jsonl:1" in report.errors[0] and "'rooms'" in report.errors[0]
    with pytest.raises(HouseError, match=r"houses.jsonl:1: .*duplicate key 'rooms'"):
        load_house(path, 0)


def test_an_experience_pool_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    from planner.critic import ExperiencePool

    path = tmp_path / "pool.json"
    path.write_text('{"entries": [{"action": "OpenObject", "situation": "closed", "object_type": "Fridge", '
                    '"fix": "open", "seen": 2, "seen": 9, "validated": 1}]}')
    with pytest.raises(ValueError, match=r"pool.json: .*duplicate key 'seen'"):
        ExperiencePool.load(path)


@pytest.mark.parametrize("suffix,text", [
    (".json", '{"api_base": "http://127.0.0.1:8080/v1", "temperature": 0.0, "temperature": 1.5}'),
    (".yaml", "api_base: http://127.0.0.1:8080/v1\ntemperature: 0.0\ntemperature: 1.5\n")])
def test_an_llm_config_with_a_key_twice_is_refused(tmp_path: Path, suffix: str, text: str) -> None:
    from planner.llm import LLMConfigError, load_llm_config

    path = tmp_path / f"llm{suffix}"
    path.write_text(text)
    with pytest.raises(LLMConfigError) as err:
        load_llm_config("openai/worldmind-mock", path, environ={})
    assert str(path) in str(err.value) and "duplicate key 'temperature'" in str(err.value)


def test_episode_files_still_use_the_same_helper() -> None:
    from evaluation import episodes
    from household.input_files import unique_keys

    assert episodes._unique_keys is unique_keys
    assert json.loads('{"a": 1}', object_pairs_hook=unique_keys) == {"a": 1}
