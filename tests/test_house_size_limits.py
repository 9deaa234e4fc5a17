"""House size limits (issue 32, household/house_limits.py): every real house passes; a house of
1,000 rooms, 10,000 objects or a room 1 km across is refused within a second with an error naming
the file and the field, instead of minutes and gigabytes of free grid."""

from __future__ import annotations

import copy
import gzip
import json
import time
from pathlib import Path

import pytest

from household import house_limits as L
from household.house_data import HouseError, load_house, load_houses_file, resolve_data_file
from sim_bridge.embedded.house_geometry import parse_layout

EP = {"id": "big", "scenario": "test", "instructions": {"detailed": "Turn on the floor lamp.", "concise": "Lamp on."},
      "checklist": [{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}], "max_steps": 300}


def _hostile() -> dict[str, tuple[dict, str]]:
    h = load_house("houses_dev.jsonl.gz", 0)
    rooms = copy.deepcopy(h)
    rooms["rooms"] += [dict(rooms["rooms"][0], id=f"r{i}") for i in range(1000)]
    objects = copy.deepcopy(h)
    obj = {k: v for k, v in objects["objects"][1].items() if k != "children"}
    objects["objects"] += [dict(obj, id=f"o{i}") for i in range(10_000)]
    km = copy.deepcopy(h)
    km["rooms"][0]["floorPolygon"] = [{"x": x, "y": 0, "z": z} for x, z in ((-400, -400), (600, -400), (600, 600),
                                                                            (-400, 600))]
    return {"1,000 rooms": (rooms, "rooms"), "10,000 objects": (objects, "objects"),
            "a room 1 km across": (km, "rooms[0].floorPolygon")}


def test_every_real_house_is_within_the_limits() -> None:
    n = 0
    for name in ("houses_dev.jsonl.gz", "houses_test.jsonl.gz", "houses_small_1000.jsonl.gz"):
        try:
            report = load_houses_file(name)
        except FileNotFoundError:
            continue
        assert not report.errors, report.errors[:3]
        for house in report.houses:
            parse_layout(house)
            n += 1
    assert n >= 100


@pytest.mark.parametrize("case", ["1,000 rooms", "10,000 objects", "a room 1 km across"])
def test_an_oversized_episode_house_is_refused_within_a_second_naming_file_and_field(tmp_path: Path,
                                                                                     case: str) -> None:
    from worldmind.cli_common import load_valid_episode
    from evaluation.episodes import EpisodeError

    house, field = _hostile()[case]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(dict(EP, house=house)))
    t0 = time.perf_counter()
    with pytest.raises(EpisodeError) as err:
        load_valid_episode(path, None)
    assert time.perf_counter() - t0 < 1.0
    text = "\n".join(err.value.problems)
    assert f": {field}: " in text and "at most" in text


def test_an_oversized_house_line_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    lines = gzip.open(resolve_data_file("houses_dev.jsonl.gz"), "rt").readlines()[:2]
    big = json.loads(lines[1])
    big["rooms"] += [dict(big["rooms"][0], id=f"r{i}") for i in range(L.MAX_ROOMS)]
    path = tmp_path / "houses.jsonl"
    path.write_text(lines[0] + json.dumps(big) + "\n")
    report = load_houses_file(path)
    assert len(report.houses) == 1 and len(report.errors) == 1
    assert f"{path}:2: rooms: " in report.errors[0]
    with pytest.raises(HouseError, match="houses.jsonl:2: rooms"):
        load_house(path, 1)
