"""Episode parsing, loading and validation, including against a real ProcTHOR house."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from household.checklist import ChecklistItem, ObjectSelector
from evaluation.episodes import (
    AgentStart,
    Episode,
    EpisodeError,
    HouseRef,
    load_episode,
    load_episodes,
    validate_episode,
)
from household.house_data import load_asset_database, load_house


def episode_dict(eid: str = "dev-001", checklist: list | None = None, **extra) -> dict:
    data = {
        "id": eid,
        "house": {"file": "houses_dev.jsonl.gz", "index": 0},
        "scenario": "kitchen_tidy",
        "instructions": {"detailed": "Put the potato in the fridge and close it.", "concise": "Potato to fridge."},
        "checklist": checklist if checklist is not None else [
            {"object": {"type": "Potato"}, "predicate": "inReceptacle", "target": {"type": "Fridge"}},
            {"object": {"type": "Fridge"}, "predicate": "isOpen", "value": False},
        ],
        "max_steps": 400,
    }
    data.update(extra)
    return data


@pytest.fixture(scope="module")
def house0() -> dict:
    return load_house("houses_dev.jsonl.gz", 0)


@pytest.fixture(scope="module")
def asset_db() -> dict:
    return load_asset_database()


def test_round_trip_keeps_optional_and_unknown_fields() -> None:
    data = episode_dict(
        agent_start={"position": {"x": 4.25, "y": 0.95, "z": 10.5}, "rotation": {"x": 0.0, "y": 90.0, "z": 0.0},
                     "horizon": 30.0},
        goals=[{"id": "g1", "kind": "place", "depends_on": []}],
        oracle={"steps_nav": 41.0, "steps_manip": 4},
        difficulty="easy",
    )
    episode = Episode.from_dict(data)
    assert episode.house == HouseRef("houses_dev.jsonl.gz", 0)
    assert episode.agent_start == AgentStart((4.25, 0.95, 10.5), (0.0, 90.0, 0.0), 30.0)
    assert episode.checklist[1].value is False and episode.checklist[0].expected is True
    assert episode.extra == {"difficulty": "easy"}
    assert episode.to_dict() == data
    assert Episode.from_dict(episode.to_dict()) == episode
    assert episode.instruction("concise") == "Potato to fridge."
    with pytest.raises(EpisodeError, match="instructions.verbose"):
        episode.instruction("verbose")


def test_inline_house_is_accepted(house0: dict) -> None:
    episode = Episode.from_dict(episode_dict(house=house0))
    assert episode.resolve_house() is house0
    assert episode.house_label == "houses_dev.jsonl.gz#0"


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda d: d.pop("max_steps"), "episode dev-001: max_steps: missing field"),
        (lambda d: d.update(max_steps=0), "episode dev-001: max_steps: expected a positive integer, got 0"),
        (lambda d: d.update(id=""), "episode <no id>: id: expected a non-empty string"),
        (lambda d: d["house"].update(index=-1), "episode dev-001: house.index: expected a 0-based line index"),
        (lambda d: d.update(house={"rooms": []}), "episode dev-001: house: expected {file, index} or an inline"),
        (lambda d: d["instructions"].pop("concise"), "episode dev-001: instructions.concise: expected a non-empty"),
        (lambda d: d.update(checklist=[]), "episode dev-001: checklist: expected a non-empty list"),
        (lambda d: d["checklist"][1].update(predicate="isShut"),
         "episode dev-001: checklist[1].predicate: unknown predicate 'isShut'"),
        (lambda d: d["checklist"][0]["target"].update(type=7),
         "episode dev-001: checklist[0].target.type: expected a non-empty string, got 7"),
        (lambda d: d.update(agent_start={"position": {"x": 1, "y": 0, "z": "a"}, "rotation": {"x": 0, "y": 0, "z": 0},
                                         "horizon": 0}),
         "episode dev-001: agent_start.position.z: expected a number"),
        (lambda d: d.update(goals={"g": 1}), "episode dev-001: goals: expected a list"),
    ],
)
def test_parse_errors_name_episode_and_field(change, expected: str) -> None:
    data = episode_dict()
    change(data)
    with pytest.raises(EpisodeError) as info:
        Episode.from_dict(data)
    assert str(info.value).startswith(expected), str(info.value)


def test_load_episodes_reports_bad_files_and_keeps_good_ones(tmp_path: Path) -> None:
    (tmp_path / "a_good.json").write_text(json.dumps(episode_dict("ep-a")))
    (tmp_path / "b_list.json").write_text(json.dumps([episode_dict("ep-b"), episode_dict("ep-c", max_steps="x")]))
    (tmp_path / "c_broken.json").write_text("{not json")
    lines = [json.dumps(episode_dict("ep-d")), "", "{oops", json.dumps(episode_dict("ep-a"))]
    with gzip.open(tmp_path / "d_more.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    (tmp_path / "notes.txt").write_text("ignored")
    (tmp_path / "e_binary.json").write_bytes(b"\xff\xfe\x00garbage")

    episodes, errors = load_episodes(tmp_path)

    assert [e.id for e in episodes] == ["ep-a", "ep-b", "ep-d"]
    assert len(errors) == 5, errors
    assert errors[0].startswith(f"{tmp_path / 'b_list.json'}[1]: episode ep-c: max_steps:")
    assert errors[1].startswith(f"{tmp_path / 'c_broken.json'}: malformed JSON")
    assert errors[2].startswith(f"{tmp_path / 'd_more.jsonl.gz'}:3: malformed JSON")
    assert errors[3] == (f"{tmp_path / 'd_more.jsonl.gz'}:4: episode ep-a: id: duplicate episode id "
                         f"(first in {tmp_path / 'a_good.json'})")
    assert errors[4].startswith(f"{tmp_path / 'e_binary.json'}: unreadable episode file")
    single, single_errors = load_episodes(tmp_path / "a_good.json")
    assert [e.id for e in single] == ["ep-a"] and single_errors == []
    with pytest.raises(FileNotFoundError):
        load_episodes(tmp_path / "missing")


def test_load_episode_names_the_file(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(episode_dict("ep-x")))
    assert load_episode(good).id == "ep-x"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(episode_dict("ep-y", scenario="")))
    with pytest.raises(EpisodeError, match=rf"^{bad}: episode ep-y: scenario:"):
        load_episode(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("[1,")
    with pytest.raises(EpisodeError, match=rf"^{broken}: malformed JSON"):
        load_episode(broken)


def test_hand_written_episode_validates_against_real_house(house0: dict, asset_db: dict) -> None:
    episode = Episode.from_dict(episode_dict(
        "dev-real",
        checklist=[
            {"object": {"type": "Potato", "count": 2}, "predicate": "inReceptacle", "target": {"type": "Fridge"}},
            {"object": {"type": "Fridge"}, "predicate": "isOpen", "value": False},
            {"object": {"type": "TomatoSliced", "count": 3, "room": "Kitchen"}, "predicate": "inReceptacle",
             "target": {"type": "CounterTop"}},
            {"object": {"type": "Cup"}, "predicate": "isFilledWithLiquid", "value": "coffee"},
            {"object": {"type": "Television", "id": "7|0|2"}, "predicate": "isToggled"},
            {"object": {"type": "CellPhone"}, "predicate": "inRoom", "value": "LivingRoom"},
            {"object": {"type": "Laptop", "room": "room|4"}, "predicate": "isHeld"},
            {"object": {"type": "Bed"}, "predicate": "isDirty", "value": False},
            {"object": {"type": "Potato"}, "predicate": "isCooked"},
        ],
        agent_start={"position": {"x": 4.25, "y": 0.95, "z": 10.5}, "rotation": {"x": 0, "y": 90, "z": 0},
                     "horizon": 30},
    ))
    house = episode.resolve_house()
    assert house["id"] == "houses_dev.jsonl.gz#0"
    validate_episode(episode, house, asset_db)  # raises on any problem


def test_validation_problems_name_episode_and_item(house0: dict, asset_db: dict) -> None:
    episode = Episode.from_dict(episode_dict(
        "bad-001",
        checklist=[
            {"object": {"type": "Toaster"}, "predicate": "isToggled"},
            {"object": {"type": "Cup", "room": "Garage"}, "predicate": "isDirty"},
            {"object": {"type": "Fridge", "id": "9|9"}, "predicate": "isOpen"},
            {"object": {"type": "Fridge", "id": "6|0"}, "predicate": "isOpen"},
            {"object": {"type": "Cup", "count": 3}, "predicate": "isDirty"},
            {"object": {"type": "Potato"}, "predicate": "isOpen"},
            {"object": {"type": "Potato"}, "predicate": "inReceptacle", "target": {"type": "Laptop"}},
            {"object": {"type": "BreadSliced", "id": "small|6|36"}, "predicate": "inRoom", "value": "Kitchen"},
            {"object": {"type": "WineBottleSliced"}, "predicate": "inRoom", "value": "Kitchen"},
            {"object": {"type": "Toastr"}, "predicate": "inRoom", "value": "Attic"},
            {"object": {"type": "Television", "id": "7|0|2"}, "predicate": "isOpen"},
        ],
        agent_start={"position": {"x": -3.0, "y": 0.9, "z": 2.0}, "rotation": {"x": 0, "y": 0, "z": 0},
                     "horizon": 0},
    ))
    episode.checklist.append(ChecklistItem(ObjectSelector("Fridge"), "isFrozen"))  # only reachable in code
    with pytest.raises(EpisodeError) as info:
        validate_episode(episode, house0, asset_db)
    problems = info.value.problems
    house = "houses_dev.jsonl.gz#0"
    assert problems[0] == f"episode bad-001: checklist[0].object.type: no object of type 'Toaster' in house {house}"
    expected_prefixes = [
        "checklist[1].object.room: no room of type 'Garage'",
        "checklist[2].object.id: no object with id '9|9'",
        "checklist[3].object.id: object '6|0' is a CounterTop, not a Fridge",
        "checklist[4].object.count: 3 objects asked for, but house houses_dev.jsonl.gz#0 has only 2",
        "checklist[5].predicate: predicate 'isOpen' needs CanOpen, and no Potato in house houses_dev.jsonl.gz#0 has it",
        "checklist[6].target: predicate 'inReceptacle' needs a target with Receptacle, and no Laptop in house",
        "checklist[7].object.id: a sliced-piece selector takes no id",
        "checklist[8].object.type: 'WineBottleSliced' needs a sliceable WineBottle",
        "checklist[9].object.type: no object of type 'Toastr' in house houses_dev.jsonl.gz#0 (not an object type",
        "checklist[9].value: no room of type 'Attic'",
        "checklist[10].predicate: predicate 'isOpen' needs CanOpen, and no Television 7|0|2 has it",
        "checklist[11].predicate: unknown predicate 'isFrozen'",
        "agent_start.position: (x, z) = (-3.00, 2.00) lies outside every room",
    ]
    assert len(problems) == 1 + len(expected_prefixes), "\n".join(problems)
    for line, prefix in zip(problems[1:], expected_prefixes):
        assert line.startswith(f"episode bad-001: {prefix}"), line
    assert str(info.value).splitlines() == problems


def test_validation_accepts_what_the_house_supports(house0: dict, asset_db: dict) -> None:
    """Each single fix removes exactly its problem: validation is not just rejecting everything."""
    base = episode_dict("fix-001", checklist=[{"object": {"type": "Cup", "count": 2}, "predicate": "isDirty"}])
    validate_episode(Episode.from_dict(base), house0, asset_db)
    too_many = copy.deepcopy(base)
    too_many["checklist"][0]["object"]["count"] = 3
    with pytest.raises(EpisodeError, match=r"checklist\[0\]\.object\.count"):
        validate_episode(Episode.from_dict(too_many), house0, asset_db)


def test_missing_house_file_names_the_episode(tmp_path: Path) -> None:
    episode = Episode.from_dict(episode_dict("ep-nohouse", house={"file": "no_such_houses.jsonl.gz", "index": 3}))
    with pytest.raises(EpisodeError, match=r"^episode ep-nohouse: house: houses file 'no_such_houses.jsonl.gz' not"):
        episode.resolve_house(tmp_path)
    beyond = Episode.from_dict(episode_dict("ep-far", house={"file": "houses_dev.jsonl.gz", "index": 100000}))
    with pytest.raises(EpisodeError, match=r"^episode ep-far: house: .*no house at index 100000"):
        beyond.resolve_house()
