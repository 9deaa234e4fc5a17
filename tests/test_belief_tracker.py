"""The belief tracker: observer gate, tracks, belief rules, commitments, causal links, retrieval."""

from __future__ import annotations

from memory.belief import BeliefTracker
from memory.belief.beliefs import BeliefConfig

ROOMS = {"table_1": "kitchen_1", "shelf_1": "livingroom_1", "fridge_1": "kitchen_1", "lamp_1": "livingroom_1"}
ENTS = ["mug_1", "key_1", "table_1", "shelf_1", "fridge_1", "lamp_1"]


def ev(eid: str, t: float, actor: str, action: str, observers=("robot",), **kw) -> dict:
    kind = kw.pop("kind", "utterance" if action == "say" else "observation" if action == "inspect" else "action")
    return {"id": eid, "t": t, "actor": actor, "kind": kind, "action": action, "observers": list(observers),
            "session": kw.pop("session", f"d{int(t // 86400)}"), **kw}


def tracker(**kw) -> BeliefTracker:
    return BeliefTracker(None, actors=["alice", "bob"], entities=ENTS, room_of=ROOMS, **kw)


def test_observer_gate_keeps_unperceived_events_out_of_memory():
    tr = tracker()
    rep = tr.ingest([ev("e1", 10, "robot", "inspect", room="kitchen_1", effects=[["mug_1", "location", "table_1"]]),
                     ev("e2", 20, "bob", "place", observers=["alice"], room="kitchen_1", target="table_1",
                        args={"object": "mug_1"}, effects=[["mug_1", "location", "shelf_1"]])])
    assert rep.acknowledged == ["e1"] and rep.not_perceived == 1
    a = tr.answer("Where is mug_1 now?", 100)
    assert a.value == "table_1"  # the unseen move is not known
    assert tr.event_by_id("e2") is None


def test_utterance_yields_reported_atom_with_speaker_and_state_history():
    tr = tracker()
    tr.ingest([ev("e1", 10, "robot", "inspect", effects=[["key_1", "location", "table_1"]]),
               ev("e2", 5000, "alice", "say", claims=[["key_1", "location", "shelf_1"]], text="alice: keys on shelf")])
    cur = tr.state.current("key_1", "location")
    assert (cur.value, cur.provenance, cur.source) == ("shelf_1", "reported", "alice")
    assert tr.state.as_of("key_1", "location", 100).value == "table_1"
    assert tr.answer("Who told the robot that key_1 was on shelf_1?", 6000).value == "alice"
    assert tr.answer("Where was key_1 before it was moved to shelf_1?", 6000).value == "table_1"


def test_belief_statuses_follow_the_rules_and_thresholds():
    tr = tracker(config=BeliefConfig(stale_after_s={"location": 1000.0}))
    tr.ingest([ev("n0", 1, "robot", "navigate_to", args={"to": "livingroom_1"}, room="livingroom_1"),
               ev("e1", 10, "robot", "inspect", effects=[["mug_1", "location", "table_1"], ["key_1", "location", "shelf_1"]])])
    assert tr.belief("mug_1", "location", 20).status == "fresh"
    assert tr.belief("key_1", "location", 5000).status == "stale"
    # bob seen heading into the kitchen while the robot is in the living room: the mug may have moved
    tr.ingest([ev("e2", 30, "bob", "navigate_to", room="kitchen_1", args={"from": "livingroom_1", "to": "kitchen_1"})])
    b = tr.belief("mug_1", "location", 40)
    assert b.status == "uncertain" and b.value == "table_1" and b.cue == "e2"
    assert tr.belief("key_1", "location", 40).status == "fresh"  # the robot is in that room itself
    # looking at the shelf and not seeing the key there contradicts the belief
    tr.ingest([ev("e3", 50, "robot", "inspect", args={"scope": ["shelf_1"]}, effects=[])])
    assert tr.belief("key_1", "location", 60).status == "contradicted"
    assert tr.answer("Where is lamp_1 now?", 60).status == "unknown"


def test_commitments_causal_links_and_multi_hop_answers():
    tr = tracker()
    tr.ingest([
        ev("r1", 86400 + 100, "alice", "say", commitment={"kind": "request", "owner": "robot", "text": "bring mug_1",
                                                           "target": "mug_1"}),
        ev("a1", 86400 + 200, "robot", "pick", target="mug_1", room="kitchen_1", args={"reason": "r1"},
           effects=[["mug_1", "location", "held:robot"]]),
        ev("a2", 86400 + 300, "robot", "place", target="shelf_1", room="livingroom_1",
           args={"object": "mug_1", "reason": "r1"}, effects=[["mug_1", "location", "shelf_1"]]),
    ])
    now = 86400 + 400
    assert tr.commitments.records[0].done_by_event == "a1"
    assert tr.answer("Where is the item that alice asked the robot to bring on day 1 now?", now).value == "shelf_1"
    assert tr.answer("Which room is mug_1 in now?", now).value == "livingroom_1"
    assert tr.answer("Why did the robot move mug_1 on day 1?", now).value == "alice"
    assert tr.answer("Who last moved mug_1?", now).value == "robot"
    assert tr.answer("Who asked the robot to bring mug_1 on day 1?", now).value == "alice"
    a = tr.answer("Where is mug_1 now?", now)
    assert len(a.evidence) <= 5 and a.evidence[0].event_ids == ("a2",)
    assert len({r.event_ids for r in a.evidence}) == len(a.evidence)  # deduplicated


def test_routines_are_induced_from_repeated_perceived_acts_and_episode_cards_kept():
    tr = tracker()
    evs = []
    for d in range(4):
        t = d * 86400 + 7 * 3600 + d * 120
        evs.append(ev(f"on{d}", t, "alice", "set_device_state", target="lamp_1", args={"value": "on"},
                      effects=[["lamp_1", "power", "on"]], session=f"d{d}-early"))
        evs.append(ev(f"x{d}", t + 5 * 3600, "alice", "set_device_state", target="lamp_1", args={"value": "on"},
                      effects=[["lamp_1", "power", "on"]], session=f"d{d}-noon"))
    tr.ingest(evs)
    assert tr.answer("What does alice usually do around 07:00?", 86400 + 8 * 3600).value is None  # 2 days only
    a = tr.answer("What does alice usually do around 07:00?", 4 * 86400)
    assert a.value == "set_device_state lamp_1 on"
    assert tr.answer("When was lamp_1 last turned on?", 4 * 86400).value == "day 3 12:06"
    assert [c.session for c in tr.episodes.cards_for_day(1)] == ["d1-early", "d1-noon"]


class _Planner:
    def plan(self, question: str):
        from memory.belief.retrieval import QueryPlan

        return QueryPlan("current", ["mug_1"], ["location"]) if "cup" in question else None


def test_an_llm_style_planner_hook_replaces_the_rule_planner():
    tr = tracker(planner=_Planner())
    tr.ingest([ev("e1", 10, "robot", "inspect", effects=[["mug_1", "location", "table_1"]])])
    assert tr.answer("where did my cup go", 20).value == "table_1"
    assert tr.answer("Where is mug_1 now?", 20).status == "unknown"  # this planner does not understand it


def test_bad_input_is_reported_and_never_reaches_the_log(tmp_path):
    tr = BeliefTracker(tmp_path / "log.jsonl", actors=["alice"], entities=ENTS, room_of=ROOMS)
    good = ev("e1", 100, "robot", "inspect", effects=[["mug_1", "location", "table_1"]])
    rep = tr.ingest([good,
                     ev("e2", 110, "zed", "pick", target="mug_1"),  # unknown actor
                     ev("e3", 120, "alice", "pick", target="vase_9"),  # unknown entity
                     ev("e4", 50, "alice", "pick", target="mug_1"),  # out of order
                     dict(good),  # exact re-send: idempotent
                     {**good, "t": 130},  # same id, other payload
                     {"id": "e6", "t": "soon", "actor": "robot", "kind": "action", "action": "x"},
                     "not an event"])
    assert rep.acknowledged == ["e1"] and rep.duplicates == 1
    joined = "\n".join(rep.rejected)
    for needle in ("e2", "'zed'", "e3", "vase_9", "e4", "time order", "duplicate id", "e6", "'t'", "JSON object"):
        assert needle in joined
    tr.close()
    again = BeliefTracker.open(tmp_path / "log.jsonl", room_of=ROOMS)
    assert len(again) == 1 and again.answer("Where is never_1 now?", 200).value is None
    assert again.answer("How is the weather?", 200).status == "unknown"
