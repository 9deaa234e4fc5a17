"""The agent's episodic status as belief-tracker evidence (planner.episodic_beliefs)."""

from __future__ import annotations

from pathlib import Path


from household.visible_states import STATE_FLAGS
from planner.episodic_beliefs import HAND, EpisodicBeliefs, seen_atom


def test_successful_actions_become_observed_state_with_history() -> None:
    b = EpisodicBeliefs(session="ep-1")
    b.record(10, "OpenObject", "Fridge|1", True)
    b.record(12, "PickupObject", "Egg|2", True)
    b.record(15, "PutObject", "Fridge|1", True, held_before="Egg|2")
    b.record(17, "CloseObject", "Fridge|1", True)
    b.record(20, "ToggleObjectOn", "Lamp|3", True)
    b.record(22, "SliceObject", "Apple|4", True)
    assert b.state_of("Fridge|1") == {"isOpen": False}
    # one vocabulary for every belief writer (memory.belief.effects): open/closed, held:<actor>
    assert b.history("Fridge|1", "open") == [(10, "open"), (17, "closed")]
    assert HAND == "held:robot"
    assert b.history("Egg|2", "location") == [(12, HAND), (15, "Fridge|1")]
    assert b.state_of("Egg|2") == {"location": "Fridge|1"}
    assert b.state_of("Lamp|3") == {"isToggled": True}
    assert b.state_of("Apple|4") == {"isSliced": True}
    assert len(b) == 6
    entry = b.tracker.state.current("Egg|2", "location")
    assert entry.provenance == "observed" and entry.source == "robot" and entry.session == "ep-1"


def test_a_failure_that_reveals_a_state_is_an_observation_and_others_record_nothing() -> None:
    b = EpisodicBeliefs()
    b.record(5, "ToggleObjectOn", "Lamp|3", False, "Lamp|3 is already on")
    assert b.state_of("Lamp|3") == {"isToggled": True}
    assert b.tracker.event(0).kind == "observation"
    b.record(6, "PickupObject", "Vase|1", False, "Vase|1 is out of reach (1.9 m)")
    b.record(7, "PutObject", "Shelf|1", True)  # nothing was held: no location to record
    assert len(b) == 1 and b.state_of("Vase|1") == {}


def test_unknown_objects_stay_unknown() -> None:
    assert EpisodicBeliefs().state_of("Never|seen") == {}


def test_the_log_on_disk_replays_into_the_same_state(tmp_path: Path) -> None:
    path = tmp_path / "episodic.log"
    b = EpisodicBeliefs(session="ep-2", path=path)
    b.record(3, "OpenObject", "Drawer|1", True)
    b.record(9, "CloseObject", "Drawer|1", True)
    b.close()
    again = EpisodicBeliefs(session="ep-3", path=path)
    assert again.history("Drawer|1", "open") == [(3, "open"), (9, "closed")]
    again.record(4, "OpenObject", "Drawer|1", True)  # a later episode's step counter restarts
    assert again.state_of("Drawer|1") == {"isOpen": True}
    again.close()


def test_what_a_close_look_shows_changed_is_observed_evidence_once_per_change() -> None:
    """The state classifier's flags on a frame (household.visible_states) enter the tracker as
    observations by the robot: a first look and each change are events, the same look frame
    after frame is not; the flags no interaction sets (dirty, cooked, filled) get attributes of
    their own, and the log reads back as the flags the agent acts on."""
    b = EpisodicBeliefs(session="ep-4")
    assert b.observe(30, "Mug|1", (("isDirty", True), ("isFilledWithLiquid", False))) == 2
    assert b.observe(31, "Mug|1", (("isDirty", True), ("isFilledWithLiquid", False))) == 0  # the same again
    assert b.observe(40, "Mug|1", (("isDirty", False), ("isFilledWithLiquid", "coffee"))) == 2
    assert b.state_of("Mug|1") == {"isDirty": False, "isFilledWithLiquid": "coffee"}
    assert b.history("Mug|1", "dirty") == [(30, "true"), (40, "false")]
    assert b.history("Mug|1", "filled") == [(30, "empty"), (40, "coffee")]
    assert len(b) == 2
    event = b.tracker.event(1)
    assert event.kind == "observation" and event.actor == "robot" and event.observers == ("robot",)
    assert b.tracker.state.current("Mug|1", "dirty").provenance == "observed"
    # flags an interaction sets share its vocabulary: a fridge seen standing open, then closed by
    # the robot, then seen open again (someone opened it) is history the planner can read
    b.observe(50, "Fridge|1", (("isOpen", True),))
    b.record(55, "CloseObject", "Fridge|1", True)
    assert b.observe(56, "Fridge|1", (("isOpen", False),)) == 0  # what the action said: no news
    b.observe(70, "Fridge|1", (("isOpen", True), ("isToggled", False)))
    assert b.history("Fridge|1", "open") == [(50, "open"), (55, "closed"), (70, "open")]
    assert b.state_of("Fridge|1") == {"isOpen": True, "isToggled": False}
    assert b.history("Fridge|1", "power") == [(70, "off")]


def test_a_flag_with_no_belief_attribute_is_skipped() -> None:
    b = EpisodicBeliefs()
    assert b.observe(3, "Thing|1", (("isHotToTheTouch", True),)) == 0
    assert len(b) == 0


def test_every_flag_the_classifier_reports_has_a_belief_attribute() -> None:
    """A flag added to the state classifier (household.visible_states) without a belief
    attribute would be dropped silently by ``observe``: the two tables must agree."""
    for flag in STATE_FLAGS:
        assert seen_atom(flag, True) is not None, flag
        assert seen_atom(flag, True) != seen_atom(flag, False), flag  # both values told apart
