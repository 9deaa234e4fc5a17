"""WorldLines traces: the executor's preconditions, observers, reproducibility, trace files."""

from __future__ import annotations

import pytest

from evaluation.worldlines.generator import PROJECT_TYPES, generate_house_trace
from evaluation.worldlines.trace import load_trace
from evaluation.worldlines.world import build_world
from household.house_data import load_house


@pytest.fixture(scope="module")
def trace():
    return generate_house_trace("houses_dev.jsonl.gz", 0, days=6, seed=3)


def test_executor_checks_preconditions_and_returns_effects():
    w = build_world(load_house("houses_dev.jsonl.gz", 0))
    obj = sorted(w.mobiles - {o for o in w.mobiles if w.hidden(o)})[0]
    room = w.room_of_entity(obj)
    other = next(r for r in w.rooms if r != room)
    w.actor_room.update(robot=other, alice=room)
    assert not w.execute("robot", "pick", obj).success  # wrong room
    assert w.execute("robot", "navigate_to", room).success
    out = w.execute("robot", "pick", obj)
    assert out.success and out.effects == [(obj, "location", "held:robot")]
    assert "already holds" in w.execute("robot", "pick", obj).error
    fridge = next(iter(sorted(w.containers)))
    w.open[fridge] = False
    w.actor_room["robot"] = w.room_of[fridge]
    assert "closed" in w.execute("robot", "place", fridge, {"object": obj}).error
    assert w.execute("robot", "open", fridge).success and w.execute("robot", "place", fridge, {"object": obj}).success
    assert w.hidden(obj) is False and w.execute("robot", "close", fridge).success and w.hidden(obj)
    assert not w.execute("robot", "fly", fridge).success


def test_trace_is_seeded_reproducible_and_time_ordered(trace):
    again = generate_house_trace("houses_dev.jsonl.gz", 0, days=6, seed=3)
    assert [e.to_dict() for e in again.events] == [e.to_dict() for e in trace.events]
    other = generate_house_trace("houses_dev.jsonl.gz", 0, days=6, seed=4)
    assert [e.to_dict() for e in other.events] != [e.to_dict() for e in trace.events]
    times = [e.t for e in trace.events]
    assert times == sorted(times) and len({e.id for e in trace.events}) == len(trace.events)
    assert {s["project"] for s in trace.meta.sessions} == set(PROJECT_TYPES)


def test_observers_are_the_people_in_the_room_and_others_act_unseen(trace):
    acts = {e.action for e in trace.events}
    assert {"navigate_to", "inspect", "pick", "place", "open", "close", "set_device_state", "say"} <= acts
    unseen = [e for e in trace.events if e.actor != "robot" and "robot" not in e.observers]
    assert unseen, "members must also act where the robot is not"
    for e in trace.events:
        assert e.actor not in e.observers
    kinds = {e.speech_act for e in trace.events if e.kind == "utterance"}
    assert {"request", "report", "preference", "schedule", "reminder", "promise"} <= kinds


def test_trace_files_round_trip_and_malformed_lines_are_reported(trace, tmp_path):
    path = trace.save(tmp_path / "t.jsonl")
    text = path.read_text().splitlines()
    path.write_text("\n".join(text[:3] + ["{not json", '{"id": "x"}'] + text[3:]) + "\n")
    loaded, problems = load_trace(path)
    assert [e.to_dict() for e in loaded.events] == [e.to_dict() for e in trace.events]
    assert len(problems) == 2 and ":4:" in problems[0] and ":5:" in problems[1]
    (tmp_path / "bad.jsonl").write_text("nope\n")
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        load_trace(tmp_path / "bad.jsonl")
