"""``household.heap.settle_heap`` (issue 27's decision tail): between episodes the runner freezes
what is alive so the collector's full walks skip the imports' objects during decisions, and
nothing an episode leaves behind outlives the next settle, cycles included."""

from __future__ import annotations

import gc
import weakref

from household.heap import settle_heap


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_settling_freezes_what_lives_and_the_next_settle_collects_a_frozen_cycle() -> None:
    try:
        cycle = _Node()
        gone = weakref.ref(cycle)
        assert settle_heap() > 0 and gc.get_freeze_count() > 0  # the cycle is among the frozen
        del cycle
        gc.collect()
        assert gone() is not None  # frozen: a collection does not walk it
        settle_heap()  # the next episode's settle unfreezes first
        assert gone() is None
    finally:
        gc.unfreeze()
