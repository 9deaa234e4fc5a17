"""Inputs that used to run with exit 0 and a wrong result (issue 16): a NaN/Infinity in an episode's
numbers and a wrongly typed experience-pool field are errors naming the file and field."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.episodes import EpisodeError, load_episode
from planner.critic import ExperiencePool
from planner.factory import make_agent
from household.errors import InputError

EPISODE = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev" / "dev-000-0.json"


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_start_pose_is_refused(tmp_path: Path, token: str) -> None:
    data = json.loads(EPISODE.read_text())
    data["agent_start"] = {"position": {"x": 1.0, "y": 0.9, "z": 1.0}, "rotation": {"x": 0, "y": 90, "z": 0},
                           "horizon": 30}
    text = json.dumps(data).replace('"horizon": 30', f'"horizon": {token}')
    path = tmp_path / "ep.json"
    path.write_text(text)
    with pytest.raises(EpisodeError, match="agent_start.horizon.*finite"):
        load_episode(path)


@pytest.mark.parametrize("entry,field", [
    ({"action": "PutObject", "situation": "closed", "object_type": "Fridge", "fix": "open", "seen": "3"}, "seen"),
    ({"action": "PutObject", "situation": "closed", "object_type": "Fridge", "fix": "open", "validated": -1},
     "validated"),
    ({"action": 7, "situation": "closed", "object_type": "Fridge", "fix": "open"}, "action"),
    ({"action": "PutObject", "situation": "closed", "object_type": "Fridge", "fix": "open", "extra": 1}, "extra"),
    ("not an object", "expected an object"),
])
def test_wrongly_typed_pool_fields_are_named(tmp_path: Path, entry, field) -> None:
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps({"schema": "worldmind/experience_pool", "version": 1, "entries": [entry]}))
    with pytest.raises(ValueError, match=rf"pool.json: entries\[0\].*{field}"):
        ExperiencePool.load(pool)
    with pytest.raises(InputError, match="--experience"):  # the CLI's agent factory: exit 2, one line
        make_agent("deterministic", None, experience_path=pool)


def test_a_good_pool_still_loads(tmp_path: Path) -> None:
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps({"entries": [{"action": "PutObject", "situation": "closed", "object_type": "Fridge",
                                             "fix": "open", "seen": 2, "validated": 1}]}))
    assert ExperiencePool.load(pool).proactive_fix("PutObject", "Fridge") == "open"


@pytest.mark.parametrize("attempts,named", [
    ([1, 2], "expected an object of counts"),
    ({"PickupObject": 3}, "'PickupObject' is not"),
    ({"PickupObject|Mug|x": 3}, "'PickupObject|Mug|x' is not"),
    ({"PickupObject|Mug": -1}, r"\['PickupObject\|Mug'\].*count"),
    ({"PickupObject|Mug": True}, r"\['PickupObject\|Mug'\].*count"),
])
def test_wrongly_typed_pool_tries_are_named(tmp_path: Path, attempts, named) -> None:
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps({"schema": "worldmind/experience_pool", "version": 1, "entries": [],
                                "attempts": attempts}))
    with pytest.raises(ValueError, match=rf"pool.json: attempts.*{named}"):
        ExperiencePool.load(pool)
