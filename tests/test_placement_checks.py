"""Objects a house places out of any agent's reach load with a warning naming house and object
(sim_bridge/embedded/placement_checks.py, issue 30), and the audit names them."""

from __future__ import annotations

import copy
import logging
from typing import Any, Callable

import pytest

from evaluation.audit import audit_house
from household.house_data import load_house
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

POTATO, LAMP = "small|6|20", "4|6|1"  # dev house 0: a potato on the C counter, a floor lamp


@pytest.fixture(scope="module")
def house0() -> dict[str, Any]:
    return load_house("houses_dev.jsonl.gz", 0)


def _walk(objects: list[dict[str, Any]]):
    for o in objects:
        yield o
        yield from _walk(o.get("children") or [])


def _with_bad_potato(house0: dict[str, Any], name: str, place: Callable[[dict, dict], None]) -> dict[str, Any]:
    """House 0 plus a copy of its potato, ``bad|potato``, put where ``place`` says; the house id
    is unique per test so the once-per-process warning fires."""
    house = copy.deepcopy(house0)
    house["id"] = f"bad-{name}.jsonl#0"
    potato = copy.deepcopy(next(o for o in _walk(house["objects"]) if o["id"] == POTATO))
    potato["id"] = "bad|potato"
    place(house, potato)
    return house


def _in_lamp(house: dict, potato: dict) -> None:
    lamp = next(o for o in _walk(house["objects"]) if o["id"] == LAMP)
    potato["position"] = dict(lamp["position"])
    lamp.setdefault("children", []).append(potato)


def _outside(house: dict, potato: dict) -> None:
    potato["position"] = {"x": -50.0, "y": 1.0, "z": -50.0}
    house["objects"].append(potato)


def _floating(house: dict, potato: dict) -> None:
    potato["position"] = {"x": 3.5, "y": 2.2, "z": 3.0}  # mid-air in the living room
    house["objects"].append(potato)


@pytest.mark.parametrize("name, place, kind", [("lamp", _in_lamp, "inside_non_receptacle"),
                                               ("outside", _outside, "outside_rooms"),
                                               ("floating", _floating, "floating")])
def test_a_misplaced_object_loads_with_a_warning_naming_house_and_object(
        house0: dict[str, Any], caplog: pytest.LogCaptureFixture, name: str, place: Callable, kind: str) -> None:
    house = _with_bad_potato(house0, name, place)
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    with caplog.at_level(logging.WARNING, logger="sim_bridge.embedded.placement_checks"):
        env.reset(house)
    bad = [p for p in env.placement_problems if p.object_id == "bad|potato"]
    assert [p.kind for p in bad] == [kind]
    warned = [r.getMessage() for r in caplog.records if "bad|potato" in r.getMessage()]
    assert len(warned) == 1 and f"bad-{name}.jsonl#0" in warned[0]
    if kind == "inside_non_receptacle":
        assert LAMP in warned[0] and "FloorLamp" in warned[0]
    assert all(p.object_id != POTATO for p in env.placement_problems)  # the real potato is fine
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sim_bridge.embedded.placement_checks"):
        env.reset(house)  # an evaluation resets the same house again and again: warned once
    assert not [r for r in caplog.records if "bad|potato" in r.getMessage()]
    assert [p.kind for p in env.placement_problems if p.object_id == "bad|potato"] == [kind]


def test_audit_names_an_object_sealed_in_a_non_receptacle_instead_of_counting_it(house0: dict[str, Any]) -> None:
    clean = audit_house(copy.deepcopy(house0), 0)
    audit = audit_house(_with_bad_potato(house0, "audit", _in_lamp), 0)
    assert audit.pickupable == clean.pickupable + 1
    assert audit.pickupable_reachable == clean.pickupable_reachable  # the lamp's floor is near, yet it is not
    row = next(u for u in audit.unreachable if u["object_id"] == "bad|potato")
    assert LAMP in row["reason"] and "not a receptacle" in row["reason"]
    assert any(p["object_id"] == "bad|potato" and p["kind"] == "inside_non_receptacle"
               for p in audit.placement_problems)
