"""Keep Python's full garbage collections out of an agent's decisions.

CPython's cyclic collector now and then walks every tracked object of the process (a "generation
2" collection). In an evaluation worker or a planner node most of those objects are what the
imports left (torch, open3d, scipy: about 145,000 objects), and one such walk took 65-95 ms in the
middle of an ``act`` (issue 27's decision tail: dev-061-0 had eight in one episode, each a step
over 50 ms by itself). ``gc.freeze`` moves every object alive into a generation the collector
never walks again; what an episode then allocates is walked as usual (a full collection over it
took under a millisecond).

Frozen objects that become unreachable are still freed by their reference counts, but a cycle
among them never would be, so every call first unfreezes and collects what the last episode left
(its agent, its maps) before it freezes again: nothing leaks from one episode into the next. That
full collection runs between episodes (after the agent's reset, before its first act), where a
pause costs no decision. At exit the heap is unfrozen again (``atexit``): a process that ended
with objects frozen exited with status 1 after a clean run (`worldmind eval longact`, the ROS
nodes; `tests/test_kill9.py` and the ROS tests caught it), for a cause not traced further.
"""
from __future__ import annotations

import atexit
import gc

_unfreeze_at_exit = False


def settle_heap() -> int:
    """Collect everything unreachable, then freeze what is alive (see the module docstring).
    Call it where a pause costs nothing: after an episode's reset, before its first act. Returns
    how many objects are frozen. Process-wide, like the collector itself; idempotent."""
    global _unfreeze_at_exit
    if not _unfreeze_at_exit:  # the interpreter's shutdown tears down what it can collect
        atexit.register(gc.unfreeze)
        _unfreeze_at_exit = True
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
