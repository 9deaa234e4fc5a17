"""Versioned JSON payloads on std_msgs/String: encode/decode round trips and refusal of malformed
input with an error naming the topic and the field."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sim_bridge.ros import payloads as pl
from household.types import ActionFeedback, AgentStatus, InstanceLabel, RoomInfo, WorldState

EXAMPLES = {
    "label_table": {"labels": [{"id": 1, "object_id": "Mug|1", "object_type": "Mug"}], "step": 3},
    "goal_dag": {"goals": [{"id": "g1", "text": "a"}, {"id": "g2", "text": "b"}], "edges": [["g1", "g2"]]},
    "critic_directive": {"verdict": "refine", "diagnosis": "target not visible", "fix": []},
    "belief_update": {"events": [{"id": "e1", "t": 1.0, "actor": "robot", "kind": "action", "action": "pick",
                                  "observers": ["robot"]}]},
    "memory_query": {"id": "q1", "text": "where is the mug", "k": 5},
    "memory_answer": {"id": "q1", "hits": [{"object": 3, "score": 0.9}], "answer": None},
    "skill_request": {"id": "s1", "skill": "pick", "args": {"object_id": "Mug|1"}},
    "skill_result": {"id": "s1", "success": False, "error": "not reachable"},
    "agent_status": {"step": 2, "position": [1.0, 2.0, 0.0], "yaw_deg": 90.0, "horizon_deg": 0.0,
                     "held_object_id": None, "feedback": {"action": "MoveAhead", "success": True, "error": ""}},
    "ground_truth": {"step": 1, "objects": [{"objectId": "Mug|1"}], "agent": {"position": {"x": 0}}},
}


def test_every_kind_has_an_example():
    assert set(EXAMPLES) == set(pl.KINDS)


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_round_trip(kind):
    text = pl.encode(kind, EXAMPLES[kind])
    body = json.loads(text)
    assert body["schema"] == f"worldmind/{kind}" and body["version"] == 1
    got = pl.decode(text, "/t", kind)
    assert got.kind == kind and got.version == 1 and got.data == EXAMPLES[kind]
    assert pl.encode(kind, got.data) == text  # deterministic bytes


def test_numpy_and_tuples_are_converted():
    got = pl.decode(pl.encode("agent_status", {"step": np.int64(1), "position": (np.float32(1.5), 0.0, 0.0),
                                               "yaw_deg": np.float64(3.0), "horizon_deg": 0}), "/s")
    assert got.data["position"] == [1.5, 0.0, 0.0] and got.data["step"] == 1


@pytest.mark.parametrize("text,field,match", [
    ("{not json", None, "malformed JSON"),
    ("[1, 2]", None, "JSON object"),
    ('{"version": 1, "labels": []}', "schema", "worldmind/<kind>"),
    ('{"schema": "worldmind/nonsense", "version": 1}', "schema", "unknown kind"),
    ('{"schema": "worldmind/goal_dag", "version": 1, "goals": []}', "schema", "carries worldmind/label_table"),
    ('{"schema": "worldmind/label_table", "version": 2, "labels": []}', "version", "not supported"),
    ('{"schema": "worldmind/label_table", "version": "1", "labels": []}', "version", "integer"),
    ('{"schema": "worldmind/label_table", "version": 1}', "labels", "missing"),
    ('{"schema": "worldmind/label_table", "version": 1, "labels": {}}', "labels", "must be list"),
    ('{"schema": "worldmind/label_table", "version": 1, "labels": [{"id": 0, "object_id": "a", "object_type": "b"}]}',
     "labels[0].id", "positive"),
    ('{"schema": "worldmind/label_table", "version": 1, "labels": [{"id": 1, "object_id": 5, "object_type": "b"}]}',
     "labels[0].object_id", "must be str"),
    ('{"schema": "worldmind/label_table", "version": 1, "labels": [], "step": NaN}', None, "NaN"),
    ('{"schema": "worldmind/label_table", "version": 1, "labels": [{"id": 1, "object_id": "a", "object_type": "b", '
     '"states": {"isShiny": true}}]}', "labels[0].states.isShiny", "not a state flag"),
    ('{"schema": "worldmind/label_table", "version": 1, "labels": [{"id": 1, "object_id": "a", "object_type": "b", '
     '"states": {"isFilledWithLiquid": "lava"}}]}', "labels[0].states.isFilledWithLiquid", "not a value"),
    ('{"schema": "worldmind/label_table", "version": 1, "labels": [{"id": 1, "object_id": "a", "object_type": "b", '
     '"states": [1]}]}', "labels[0].states", "must be an object"),
])
def test_malformed_label_table_names_topic_and_field(text, field, match):
    with pytest.raises(pl.PayloadError, match=match) as info:
        pl.decode(text, "/camera/instance_labels", "label_table")
    assert info.value.topic == "/camera/instance_labels" and info.value.field == field
    assert "/camera/instance_labels" in str(info.value)
    if field:
        assert repr(field) in str(info.value)


def test_kind_specific_checks():
    def bad(kind, data, field):
        with pytest.raises(pl.PayloadError) as info:
            pl.encode(kind, data, "/x")
        assert info.value.field == field

    bad("critic_directive", {"verdict": "maybe"}, "verdict")
    bad("goal_dag", {"goals": [{"id": "a"}], "edges": [["a", "b"]]}, "edges[0]")
    bad("goal_dag", {"goals": [{"text": "no id"}]}, "goals[0].id")
    bad("skill_result", {"id": "s", "success": 1}, "success")
    bad("agent_status", {"step": 1, "position": [1, 2], "yaw_deg": 0, "horizon_deg": 0}, "position")
    bad("agent_status", {"step": True, "position": [1, 2, 3], "yaw_deg": 0, "horizon_deg": 0}, "step")
    bad("belief_update", {"events": ["e1"]}, "events[0]")
    bad("memory_query", {"id": "q"}, "text")
    bad("label_table", {"labels": [], "schema": "x"}, "schema")
    with pytest.raises(pl.PayloadError, match="unknown payload kind"):
        pl.encode("plan", {})
    with pytest.raises(pl.PayloadError, match="not JSON serialisable"):
        pl.encode("skill_request", {"id": "s", "skill": "pick", "args": {"x": object()}})
    assert pl.decode(pl.encode("critic_directive", {"verdict": "Replan"}), "/c").data["verdict"] == "Replan"


def test_bytes_input_and_bad_utf8():
    text = pl.encode("memory_query", {"id": "q", "text": "mug"}).encode()
    assert pl.decode(text, "/q").data["text"] == "mug"
    with pytest.raises(pl.PayloadError, match="UTF-8"):
        pl.decode(b"\xff\xfe", "/q")


def test_typed_helpers_round_trip():
    labels = {3: InstanceLabel("Mug|1", "Mug", (("isDirty", True), ("isFilledWithLiquid", "coffee"))),
              1: InstanceLabel("Cup|2", "Cup")}
    data = pl.decode(pl.encode("label_table", pl.labels_to_payload(labels, step=2, stamp_ns=5)), "/l").data
    assert pl.labels_from_payload(data) == labels and data["labels"][0]["id"] == 1
    assert "states" not in data["labels"][0] and data["labels"][1]["states"] == {"isDirty": True,
                                                                                  "isFilledWithLiquid": "coffee"}
    agent = AgentStatus((1.0, 2.0, 0.0), -90.0, 30.0, "Mug|1", "Mug")
    fb = ActionFeedback("PickupObject", True, "")
    data = pl.decode(pl.encode("agent_status", pl.agent_status_to_payload(agent, 4, fb)), "/a").data
    assert pl.agent_status_from_payload(data) == (agent, 4, fb)
    world = WorldState([{"objectId": "Mug|1", "position": {"x": 1.0, "y": 0.5, "z": 2.0}}], {"position": {}},
                       [RoomInfo("room|1", "Kitchen", [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)])], "Mug|1", "house-1")
    data = pl.decode(pl.encode("ground_truth", pl.world_state_to_payload(world, 9)), "/g").data
    assert pl.world_state_from_payload(data) == world
