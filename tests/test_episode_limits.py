"""Issue 32: episodes that used to pass validation and score GC 0 with exit status 0 (a NaN object
position, a room 1e306 m across, an instruction over the parser's limit) are refused, naming the field."""

from __future__ import annotations

import copy
import json
import math

import pytest

from evaluation.episodes import Episode, EpisodeError, validate_episode
from household.house_data import load_asset_database, load_house
from household.house_limits import MAX_COORD_M
from planner.language.types import MAX_INSTRUCTION_CHARS
from worldmind import cli

EPISODE = {"id": "limits", "house": {"file": "houses_dev.jsonl.gz", "index": 0}, "scenario": "test",
           "instructions": {"detailed": "Turn on the floor lamp.", "concise": "Lamp on."},
           "checklist": [{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}], "max_steps": 300}


@pytest.fixture(scope="module")
def house():
    return load_house("houses_dev.jsonl.gz", 0)


@pytest.fixture(scope="module")
def assets():
    return load_asset_database()


def _validate(house: dict, assets) -> str:
    episode = Episode.from_dict(dict(EPISODE, house=house))
    with pytest.raises(EpisodeError) as err:
        validate_episode(episode, episode.resolve_house(None), assets)
    return str(err.value)


@pytest.mark.parametrize("value", [math.nan, math.inf, 1e306, -2 * MAX_COORD_M])
def test_an_object_position_that_is_not_a_household_number_is_refused(house, assets, value):
    bad = copy.deepcopy(house)
    bad["objects"][1]["position"]["x"] = value
    message = _validate(bad, assets)
    assert "episode limits: house.objects[1].position.x:" in message


def test_a_room_of_1e306_metres_is_refused(house, assets):
    bad = copy.deepcopy(house)
    bad["rooms"][0]["floorPolygon"][1]["z"] = 1e306
    assert "rooms[0].floorPolygon[1].z: 1e+306 is more than 1000 from the origin" in _validate(bad, assets)


def test_an_instruction_over_the_parser_limit_is_refused():
    long = "Turn on the lamp. " * (MAX_INSTRUCTION_CHARS // 18 + 1)
    with pytest.raises(EpisodeError, match="episode limits: instructions.detailed: .* over the instruction parser"):
        Episode.from_dict(dict(EPISODE, instructions={"detailed": long, "concise": "Lamp on."}))


def test_the_cli_refuses_a_nan_episode_with_exit_2_naming_the_field(tmp_path, house, capsys):
    bad = copy.deepcopy(house)
    bad["objects"][0]["position"]["y"] = math.nan
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(dict(EPISODE, house=bad)))  # json writes NaN, as a careless tool would
    assert cli.main(["run", "--episode", str(path), "--out", str(tmp_path / "o"), "--no-render"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "house.objects[0].position.y" in err and "finite" in err
    assert not (tmp_path / "o" / "report.json").exists()


def test_duplicate_keys_in_an_episode_file_are_refused_naming_the_key(tmp_path):
    from evaluation.episodes import load_episode, load_episodes

    text = json.dumps(EPISODE)
    dup = text[:-1] + ', "max_steps": 5}'  # the same key twice: which one counts?
    path = tmp_path / "dup.json"
    path.write_text(dup)
    with pytest.raises(EpisodeError, match="duplicate key 'max_steps'") as err:
        load_episode(path)
    assert str(path) in str(err.value)
    nested = tmp_path / "nested.jsonl"
    nested.write_text(text.replace('"predicate": "isToggled"', '"predicate": "isToggled", "predicate": "isOpen"') + "\n")
    episodes, errors = load_episodes(nested)
    assert episodes == [] and errors and f"{nested}:1" in errors[0] and "duplicate key 'predicate'" in errors[0]
