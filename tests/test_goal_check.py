"""planner.goal_check: a goal is checked against what the agent saw, never ground truth (issue 34).
Synthetic tracker records, so each rule is exercised on its own."""

from __future__ import annotations

import numpy as np
import pytest

from household.checklist import ChecklistItem, ObjectSelector
from planner.goal_check import GoalCheck, check_goal, check_report, qualify_choice
from planner.object_tracker import ObjectTracker, TrackedObject
from planner.roles import Goal


class Rooms:
    def __init__(self, name: str | None, margin: float = 10.0) -> None:
        self.name, self.margin = name, margin

    def room_type_at(self, x: float, z: float) -> str | None:
        return self.name

    def room_scores_at(self, x: float, z: float) -> dict[str, float]:
        names = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")  # the named one likelier by ``margin``
        return {room: 0.0 if room == self.name else -self.margin for room in names} if self.name else {}


def _goal(pred: str, obj: str, value=None, target: str | None = None) -> Goal:
    item = ChecklistItem(ObjectSelector(obj), pred, value=value,
                         target=ObjectSelector(target) if target else None)
    return Goal("g1", (item,), "text")


def _rec(oid: str, lo, hi, seen: int = 10, first: int = 0) -> TrackedObject:
    lo, hi = np.array(lo, float), np.array(hi, float)
    return TrackedObject(oid, oid.split("|")[0], (lo + hi) / 2, lo, hi, first, seen)


def _tracker(*recs: TrackedObject) -> ObjectTracker:
    t = ObjectTracker()
    t.objects = {r.object_id: r for r in recs}
    return t


TABLE = _rec("DiningTable|1", [0, 0, 0], [2, 0.8, 1])
ON_TABLE = _rec("Mug|1", [0.9, 0.8, 0.4], [1.0, 0.9, 0.5])
ON_FLOOR = _rec("Mug|1", [4.0, 0.0, 4.0], [4.1, 0.1, 4.1])


def test_placed_object_seen_on_its_target_is_verified_elsewhere_contradicted() -> None:
    goal = _goal("inReceptacle", "Mug", target="DiningTable")
    b = {"object": "Mug|1", "target": "DiningTable|1"}
    ok = check_goal(goal, b, 5, None, _tracker(TABLE, ON_TABLE), Rooms(None))
    assert ok.status == "verified" and "DiningTable|1" in ok.reason
    bad = check_goal(goal, b, 5, None, _tracker(TABLE, ON_FLOOR), Rooms(None))
    assert bad.status == "contradicted" and "not on/in DiningTable|1" in bad.reason


def test_not_seen_since_it_was_placed_is_unverified_with_the_reason() -> None:
    goal = _goal("inReceptacle", "Mug", target="Fridge")
    stale = _rec("Mug|1", [0.9, 0.8, 0.4], [1.0, 0.9, 0.5], seen=3)
    check = check_goal(goal, {"object": "Mug|1", "target": "DiningTable|1"}, 5, None, _tracker(TABLE, stale), Rooms(None))
    assert check.status == "unverified" and "not seen since" in check.reason
    moved = _rec("Mug|1", [0.9, 0.8, 0.4], [1.0, 0.9, 0.5])
    moved.moved = True  # put down, no frame has shown it since
    assert check_goal(goal, {"object": "Mug|1", "target": "DiningTable|1"}, 5, None, _tracker(TABLE, moved),
                      Rooms(None)).status == "unverified"


@pytest.mark.parametrize("named, status", [("Kitchen", "verified"), ("Bedroom", "contradicted"), (None, "unverified")])
def test_in_room_reads_the_agents_own_room_names(named: str | None, status: str) -> None:
    goal = _goal("inRoom", "Mug", value="Kitchen")
    assert check_goal(goal, {"object": "Mug|1"}, 5, None, _tracker(ON_TABLE), Rooms(named)).status == status


def test_held_is_proprioception_and_flags_need_a_close_look() -> None:
    assert check_goal(_goal("isHeld", "Mug", True), {"object": "Mug|1"}, 0, "Mug|1", _tracker(), Rooms(None)).status \
        == "verified"
    wrong = check_goal(_goal("isHeld", "Mug", True), {"object": "Mug|1"}, 0, "Cup|2", _tracker(), Rooms(None))
    assert wrong.status == "contradicted" and "Cup|2" in wrong.reason
    lamp = check_goal(_goal("isToggled", "FloorLamp", True), {"object": "FloorLamp|1"}, 0, None, _tracker(), Rooms(None))
    assert lamp.status == "unverified" and "whether it is on" in lamp.reason
    assert check_report("done", lamp.to_dict()).startswith("done, unverified: no close look showed")


def _looked(oid: str, step: int, **flags) -> ObjectTracker:
    rec = _rec(oid, [0, 0, 0], [0.1, 0.1, 0.1], seen=step)
    rec.state.update(flags)
    rec.state_seen.update({f: step for f in flags})
    return _tracker(rec)


def test_flags_from_a_close_look_after_the_action() -> None:
    """A state classifier's report (InstanceLabel.states, kept by the tracker) verifies a flag goal
    or contradicts it, but only from a look at or after the goal's last action."""
    lamp_on = _goal("isToggled", "FloorLamp", True)
    b = {"object": "FloorLamp|1"}
    assert check_goal(lamp_on, b, 0, None, _looked("FloorLamp|1", 12, isToggled=True), Rooms(None), acted_at=12).status \
        == "verified"
    off = check_goal(lamp_on, b, 0, None, _looked("FloorLamp|1", 12, isToggled=False), Rooms(None), acted_at=12)
    assert off.status == "contradicted" and "off" in off.reason
    # seen off before the toggle: that is the state the goal changed, not evidence against it
    assert check_goal(lamp_on, b, 0, None, _looked("FloorLamp|1", 9, isToggled=False), Rooms(None), acted_at=12).status \
        == "unverified"
    mug = {"object": "Mug|1"}
    coffee = _goal("isFilledWithLiquid", "Mug", "coffee")
    assert check_goal(coffee, mug, 0, None, _looked("Mug|1", 5, isFilledWithLiquid="coffee"), Rooms(None), 5).status \
        == "verified"
    water = check_goal(coffee, mug, 0, None, _looked("Mug|1", 5, isFilledWithLiquid="water"), Rooms(None), 5)
    assert water.status == "contradicted" and "water" in water.reason
    clean = _goal("isDirty", "Mug", False)
    assert check_goal(clean, mug, 0, None, _looked("Mug|1", 5, isDirty=False), Rooms(None), 5).status == "verified"
    assert check_goal(clean, mug, 0, None, _looked("Mug|1", 5, isDirty=True), Rooms(None), 5).status == "contradicted"


def test_slices_seen_since_the_goal_began() -> None:
    goal = _goal("isSliced", "Apple", True)
    old = _rec("AppleSliced|1", [0, 0, 0], [0.1, 0.1, 0.1], first=2)
    new = _rec("AppleSliced|2", [0, 0, 0], [0.1, 0.1, 0.1], first=12)
    assert check_goal(goal, {"object": "Apple|1"}, 10, None, _tracker(old), Rooms(None)).status == "unverified"
    assert check_goal(goal, {"object": "Apple|1"}, 10, None, _tracker(old, new), Rooms(None)).status == "verified"


def test_a_choice_made_by_a_guess_is_not_verified() -> None:
    """After exploring without finding what the instruction describes, the agent takes the likeliest
    or nearest instance: the condition may show on it, but the goal is then unverified, with why."""
    goal = Goal("g1", (ChecklistItem(ObjectSelector("Mug"), "inReceptacle", ObjectSelector("DiningTable")),),
                "put the mug from the desk on the table", {"object_source": "Desk"})
    seen = check_goal(goal, {"object": "Mug|1", "target": "DiningTable|1"}, 5, None, _tracker(TABLE, ON_TABLE),
                      Rooms(None))
    assert seen.status == "verified"
    assert qualify_choice(seen, goal, relaxed_rooms=False, relaxed_relations=False) == seen
    guessed = qualify_choice(seen, goal, relaxed_rooms=False, relaxed_relations=True)
    assert guessed.status == "unverified" and "Desk" in guessed.reason and "closest" in guessed.reason
    in_room = Goal("g1", (ChecklistItem(ObjectSelector("Mug"), "inRoom", None, "Kitchen"),), "take a mug to the kitchen")
    guessed = qualify_choice(seen, in_room, relaxed_rooms=True, relaxed_relations=False)
    assert guessed.status == "unverified" and "Kitchen" in guessed.reason
    # what was not verified stays as it was
    contradicted = check_goal(goal, {"object": "Mug|1", "target": "DiningTable|1"}, 5, None,
                              _tracker(TABLE, ON_FLOOR), Rooms(None))
    assert qualify_choice(contradicted, goal, True, True) == contradicted


def test_a_description_that_fits_several_is_a_guess() -> None:
    """'The book by the bed' with two books by beds: whichever the agent took, it cannot know it was
    the one meant, so its check says so (a counted description, 'both books', fits several on purpose)."""
    from planner.deterministic import ambiguous_description
    from planner.roles import KnownObject, PlannerContext

    def ctx(*objs: KnownObject) -> PlannerContext:
        return PlannerContext(step=0, held_object_id=None, held_object_type=None, known_objects=list(objs),
                              rooms_seen=[], history=[], experience=[], object_types=[], agent_position=(0.0, 0.0, 0.0))

    bed = KnownObject("Bed|1", "Bed", None, (0.0, 0.0, 0.4), half_extent=(1.0, 0.8))
    book1, book2 = KnownObject("Book|1", "Book", None, (1.2, 0.0, 0.5)), KnownObject("Book|2", "Book", None, (0.0, 1.0, 0.5))
    far = KnownObject("Book|3", "Book", None, (9.0, 9.0, 0.5))
    goal = Goal("g1", (ChecklistItem(ObjectSelector("Book"), "inRoom", None, "LivingRoom"),), "the book by the bed",
                {"object_near": "Bed"})
    assert ambiguous_description(goal, ctx(bed, book1, far)) is None
    why = ambiguous_description(goal, ctx(bed, book1, book2, far))
    assert why is not None and "2 Books" in why and "Bed" in why
    seen = GoalCheck("verified", "Book|1 seen in a region the agent names LivingRoom")
    assert qualify_choice(seen, goal, False, False, why).status == "unverified"
    both = Goal("g1", goal.items, "both books by the bed", {"object_near": "Bed", "count_of": "1/2"})
    assert ambiguous_description(both, ctx(bed, book1, book2)) is None


def test_a_description_that_fits_several_by_the_end_is_not_claimed() -> None:
    """The plant by the dresser was watered and seen full (verified); later the agent saw a second
    plant by a dresser. At the end the goal is unverified with that reason; a goal whose
    description still fits one, or with no description, keeps its check."""
    from planner.deterministic import ambiguous_description
    from planner.goal_check import recheck_descriptions
    from planner.roles import KnownObject, PlannerContext

    def ctx(*objs: KnownObject) -> PlannerContext:
        return PlannerContext(step=0, held_object_id=None, held_object_type=None, known_objects=list(objs),
                              rooms_seen=[], history=[], experience=[], object_types=[], agent_position=(0.0, 0.0, 0.0))

    dresser1 = KnownObject("Dresser|1", "Dresser", None, (0.0, 0.0, 0.5), half_extent=(0.3, 0.6))
    dresser2 = KnownObject("Dresser|2", "Dresser", None, (8.0, 0.0, 0.5), half_extent=(0.3, 0.6))
    plant1 = KnownObject("HousePlant|1", "HousePlant", None, (0.6, 0.0, 0.3), half_extent=(0.15, 0.15))
    plant2 = KnownObject("HousePlant|2", "HousePlant", None, (8.6, 0.0, 0.3), half_extent=(0.15, 0.15))
    water = Goal("g1", (ChecklistItem(ObjectSelector("HousePlant"), "isFilledWithLiquid", None, "water"),),
                 "water the plant by the dresser", {"object_near": "Dresser"})
    plain = Goal("g2", (ChecklistItem(ObjectSelector("HousePlant"), "isFilledWithLiquid", None, "water"),), "water a plant")
    checks = {"g1": GoalCheck("verified", "HousePlant|1 seen filled"), "g2": GoalCheck("verified", "HousePlant|2 seen filled")}
    assert recheck_descriptions([water, plain], checks, ctx(dresser1, plant1), ambiguous_description) == {}
    changed = recheck_descriptions([water, plain], checks, ctx(dresser1, dresser2, plant1, plant2), ambiguous_description)
    assert list(changed) == ["g1"]
    assert changed["g1"].status == "unverified" and "by the end" in changed["g1"].reason
