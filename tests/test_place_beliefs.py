"""Where a thing is seen standing enters the belief tracker as observed evidence
(``planner.support``, ``EpisodicBeliefs.observe_location``): a mug someone else moved has its new
place in the agent's beliefs, not only "moved" in its object memory (issue 31, item 3)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from planner.episodic_beliefs import EpisodicBeliefs
from planner.object_memory import TrackedObject
from planner.support import PLACE_LOOKS, PlaceWatcher, catalog_place_watcher, support_of
from household.assets import default_catalog

RECEPTACLES = {"DiningTable", "Plate", "CounterTop", "Sink", "Shelf", "Dresser", "Drawer"}


def _box(oid: str, kind: str, lo: tuple[float, float, float], hi: tuple[float, float, float], step: int = 0) -> TrackedObject:
    lo_a, hi_a = np.array(lo), np.array(hi)
    return TrackedObject(oid, kind, (lo_a + hi_a) / 2, lo_a, hi_a, step, step)


TABLE = _box("table|1", "DiningTable", (0.0, 0.0, 0.0), (1.6, 0.75, 0.9))
PLATE = _box("plate|1", "Plate", (0.2, 0.75, 0.2), (0.45, 0.78, 0.45))
COUNTER = _box("counter|1", "CounterTop", (3.0, 0.0, 0.0), (5.0, 0.9, 0.6))
SHELF = _box("shelf|1", "Shelf", (3.2, 1.5, 0.0), (3.8, 1.55, 0.3))  # a wall shelf over the counter
DRESSER = _box("dresser|1", "Dresser", (6.0, 0.0, 0.0), (7.0, 0.8, 0.5))
DRAWER = _box("drawer|1", "Drawer", (6.05, 0.55, 0.02), (6.95, 0.76, 0.48))  # inside the dresser, under its top


def _is_receptacle(kind: str) -> bool:
    return kind in RECEPTACLES


def test_the_support_is_the_innermost_receptacle_the_object_stands_on_or_in() -> None:
    on_plate = _box("mug|1", "Mug", (0.27, 0.78, 0.27), (0.37, 0.88, 0.37))
    on_table = _box("mug|1", "Mug", (1.0, 0.75, 0.4), (1.1, 0.85, 0.5))
    on_shelf = _box("mug|1", "Mug", (3.4, 1.55, 0.1), (3.5, 1.65, 0.2))
    hovering = _box("mug|1", "Mug", (1.0, 1.2, 0.4), (1.1, 1.3, 0.5))
    on_dresser = _box("watch|1", "Watch", (6.4, 0.8, 0.2), (6.45, 0.83, 0.25))
    in_drawer = _box("watch|1", "Watch", (6.4, 0.57, 0.2), (6.45, 0.6, 0.25))
    records = [TABLE, PLATE, COUNTER, SHELF, DRESSER, DRAWER]
    assert support_of(on_dresser, records, _is_receptacle) == "dresser|1"  # on its top, not in the drawer under it
    assert support_of(in_drawer, records, _is_receptacle) == "drawer|1"  # in both: the smaller
    bat = _box("bat|1", "BaseballBat", (6.9, 0.0, 0.45), (7.0, 0.95, 0.55))  # leaning on the dresser
    under = _box("book|1", "Book", (0.7, 0.0, 0.4), (0.9, 0.04, 0.6))  # on the floor under the table
    assert support_of(bat, records, _is_receptacle) is None
    chair = _box("chair|1", "Chair", (0.0, 0.0, 1.0), (0.5, 0.9, 1.5))
    at_edge = _box("book|2", "Book", (0.2, 0.75, 0.85), (0.4, 0.8, 1.05))  # a noisy box, reaching over the chair
    assert support_of(at_edge, records + [chair], lambda k: k in RECEPTACLES | {"Chair"}) == "table|1"
    assert support_of(under, records, _is_receptacle) is None
    assert support_of(on_plate, records, _is_receptacle) == "plate|1"
    assert support_of(on_table, records, _is_receptacle) == "table|1"
    assert support_of(on_shelf, records, _is_receptacle) == "shelf|1"  # not the counter 0.65 m below
    assert support_of(hovering, records, _is_receptacle) is None  # far above the table's top: not on it
    cup = _box("cup|1", "Cup", (1.2, 0.75, 0.4), (1.28, 0.85, 0.48))  # a cup on the table, a receptacle too
    beside = _box("apple|1", "Apple", (1.3, 0.75, 0.41), (1.38, 0.83, 0.49))
    inside = _box("pen|1", "Pen", (1.23, 0.76, 0.43), (1.25, 0.9, 0.45))
    assert support_of(beside, records + [cup], lambda k: k in RECEPTACLES | {"Cup"}) == "table|1"
    assert support_of(inside, records + [cup], lambda k: k in RECEPTACLES | {"Cup"}) == "cup|1"


class _Memory:
    """The slice of ``ObjectMemory`` the watcher reads: records and what the frame showed."""

    def __init__(self, records: list[TrackedObject]) -> None:
        self.objects = {r.object_id: r for r in records}
        self.visible_now: dict[str, int] = {}

    def get(self, oid: str) -> TrackedObject | None:
        return self.objects.get(oid)

    def show(self, rec: TrackedObject, step: int) -> None:
        """A frame at ``step`` that shows ``rec`` where its box says."""
        rec.last_seen = step
        self.objects[rec.object_id] = rec
        self.visible_now = {rec.object_id: 200}


def _watch(watcher: PlaceWatcher, memory: Any, log: Any, mug: TrackedObject, steps: range, held: str | None = None) -> None:
    for step in steps:
        memory.show(mug, step)
        watcher.watch(step, memory, held, log)


def test_a_moved_mug_gets_its_new_place_after_agreeing_looks_and_each_place_once() -> None:
    beliefs = EpisodicBeliefs("test")
    memory = _Memory([TABLE, PLATE, COUNTER])
    watcher = PlaceWatcher(lambda kind: kind == "Mug", _is_receptacle)
    mug = _box("mug|1", "Mug", (1.0, 0.75, 0.4), (1.1, 0.85, 0.5))
    _watch(watcher, memory, beliefs, mug, range(1, PLACE_LOOKS))
    assert beliefs.state_of("mug|1") == {}  # one look is not enough: noise flips supports
    _watch(watcher, memory, beliefs, mug, range(PLACE_LOOKS, PLACE_LOOKS + 5))
    assert beliefs.state_of("mug|1")["location"] == "table|1"
    assert watcher.recorded == 1  # the same place seen again is not a new event
    # someone moved it to the counter while the agent looked away
    moved = _box("mug|1", "Mug", (4.0, 0.9, 0.2), (4.1, 1.0, 0.3))
    _watch(watcher, memory, beliefs, moved, range(20, 20 + PLACE_LOOKS))
    assert beliefs.state_of("mug|1")["location"] == "counter|1"
    assert beliefs.history("mug|1", "location") == [(PLACE_LOOKS, "table|1"), (20 + PLACE_LOOKS - 1, "counter|1")]
    entry = beliefs.tracker.state.current("mug|1", "location")
    assert entry is not None and (entry.provenance, entry.source) == ("observed", "robot")


def test_looks_that_flip_between_supports_record_nothing() -> None:
    beliefs = EpisodicBeliefs("test")
    memory = _Memory([TABLE, COUNTER])
    watcher = PlaceWatcher(lambda kind: kind == "Mug", _is_receptacle)
    here = _box("mug|1", "Mug", (1.0, 0.75, 0.4), (1.1, 0.85, 0.5))
    there = _box("mug|1", "Mug", (4.0, 0.9, 0.2), (4.1, 1.0, 0.3))
    for step in range(1, 9):
        memory.show(here if step % 2 else there, step)
        watcher.watch(step, memory, None, beliefs)
    assert watcher.recorded == 0 and beliefs.state_of("mug|1") == {}


def test_what_is_in_hand_stale_or_not_seen_this_frame_gives_no_place() -> None:
    log = SimpleNamespace(calls=[], observe_location=lambda step, oid, where: log.calls.append(oid) or True)
    memory = _Memory([TABLE])
    watcher = PlaceWatcher(lambda kind: kind == "Mug", _is_receptacle)
    mug = _box("mug|1", "Mug", (1.0, 0.75, 0.4), (1.1, 0.85, 0.5))
    _watch(watcher, memory, log, mug, range(1, 5), held="mug|1")
    mug.moved = True  # picked up and put down unseen: its box is where it was
    _watch(watcher, memory, log, mug, range(5, 9))
    mug.moved = False
    memory.show(mug, 10)
    for step in range(11, 15):  # in view, but the record was refreshed at step 10 only
        watcher.watch(step, memory, None, log)
    assert log.calls == []


def test_the_catalog_says_what_is_picked_up_and_what_takes_things() -> None:
    watcher = catalog_place_watcher(default_catalog())
    assert watcher.is_pickupable("Mug") and not watcher.is_pickupable("DiningTable")
    assert watcher.is_receptacle("DiningTable") and not watcher.is_receptacle("Apple")
    assert not watcher.is_pickupable("NoSuchType") and not watcher.is_receptacle("NoSuchType")
