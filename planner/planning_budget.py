"""The planning work one decision may do, and what the agent does when a decision would do more.

Issue 27: no single ``act`` may stall. A search is capped (``navigation.MAX_EXPANSIONS``), but one
decision can ask for many: on dev-005-0 (step 199) the approach to an object and the frontiers
tried for it ran 13 lattice searches in one act, 12 of them to their cap, about a second. A robot
that thinks that long between two commands stands still anyway, so the stack says so: once an act
has spent ``ActBudget.expansions`` lattice expansions, it starts no further plan request and no
further stage of one; the skill hands the simulator or robot THOR's ``Pass`` (a step in which
nothing moves; ``household.types.PASS``) and goes on on the next frame, in a fresh act. The act's
other work is charged in the same unit (``INTEGRATION_EXPANSIONS`` and its noisy twin for the
frame it integrates, plus what the object memory's frame costs beyond the tracker's,
``SEGMENTATION_EXPANSIONS`` for a room re-segmentation), so the searches get what is left of it
(issue 31).

Every plan request comes in stages (``planned_in_stages``, ``navigation.PlanStages``): the fine
search, the coarse one where the fine one ran into its cap, and the same two on the tight grid
where the map allows for pose error; and each search pauses after every ``SLICE_EXPANSIONS``
expansions (``lattice_nav.plan_lattice_in_slices``). So an act expands at most its budget plus one
slice. With a whole search per stage (353c304) it was the budget plus one capped search: a search
at its cap of 8,000 expansions (80-90 ms) was a step over 50 ms by itself, and under
``--sensors realistic`` p99 stayed at 101.5 ms. The passage and gap looks, which bisect a way with
several plans, are requests in stages too (``passage_look_point_stages``,
``gap_look_point_stages``; until 2026-11-30 each was one request, made whole in one act).

The requests are not changed, only spread over steps: a search that pauses goes on where it
paused, on the map it started on (its free grid, its distance field, the wall band its goal test
reads), and returns what the one call returns; a later stage starts on the map as the next frame
leaves it, which with exact sensors is the same map (a Pass shows the same frame again). Why not
cut a search part way instead: a search cut by a budget comes back empty and would be taken for "no
way there" (a frontier given up, an object left), which changes what the agent does, not when;
and a search cut and made again from the start could be cut again every time. Why expansions and
not seconds: the same run then decides the same way on a fast and a slow machine (reports are
compared episode by episode, issue 27's Ray check included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generator, TypeVar

from household.types import PASS, Action, Observation

T = TypeVar("T")

# Lattice expansions after which an act of the HoloMind agent starts no further plan request
# and goes on with no search under way (``AgentConfig.act_expansions``). A quarter of a capped
# search: 25-35 ms of searching at 12-17 us an expansion, which leaves an act that also rebuilds
# the free grid (about 10 ms then; 2 ms since its morphology is OpenCV's) and prepares a request
# (the coarse reachability test, the distance field, the in-sight cells: about 7 ms) under issue
# 27's 50 ms. Chosen on dev-061-0 alone (3,000 left 1.3% of its acts over 50 ms, 2,000 0.8%).
# The act's frame integration and room re-segmentation are charged to it too (below).
ACT_EXPANSIONS = 2_000
# A search under an act budget pauses after every this many expansions (3-4 ms), so an act
# expands at most its budget plus one slice in the requests made in stages.
SLICE_EXPANSIONS = 250
# The work an act does besides searching, charged to its budget in expansions of about the same
# time (12-13 us each), so the searches get what the act has left (issue 31: under
# ``--sensors realistic`` the acts over 50 ms were a spent budget on top of a frame integration of
# 9-13 ms and, every eighth frame, a room re-segmentation of 6-8 ms). Measured per act on
# dev-000-0 and dev-087-0 (2026-11-30): a frame's integration 6.4 ms on average with exact depth,
# 9.0 ms (p95 12.8) on the noise-aware path that counts returns per cell; a context that
# re-segmented 5.5-8 ms. Constants, not timings: a run decides the same on any machine. (Since
# the occupancy map integrates a frame through one cell index, 2026-12-01, the exact-depth
# integration takes 4.3 ms an act: the charges are on the safe side now, and left as they are,
# since every committed run decided with them.)
INTEGRATION_EXPANSIONS = 500
NOISY_INTEGRATION_EXPANSIONS = 700
SEGMENTATION_EXPANSIONS = 500
# Those two are the occupancy map's and the tracker's work. An object memory that does more per
# frame says how much more (``ObjectMemory.frame_expansions``): the spatial memory's perception,
# association and free-space judging cost 5.4 ms more a frame than the tracker with exact depth and
# 11.2 ms more on the noise-aware path (pose tolerance windows), means per act over dev-000-0 and
# dev-087-0 (2026-11-30 sixteenth session, ``bench_agent_decision.py --split --object-memory``).
SPATIAL_MEMORY_EXPANSIONS = 420
NOISY_SPATIAL_MEMORY_EXPANSIONS = 870


@dataclass
class ActBudget:
    """Lattice expansions spent in the current act, against the most after which no further
    plan request is started in it (None: no bound, for a ``Navigator`` used outside an agent)."""

    expansions: int | None
    spent: int = 0
    passes: int = 0  # Pass steps handed in for it (the report's ``planning_passes``)

    def begin_act(self) -> None:
        self.spent = 0

    def charge(self, expanded: int) -> None:
        self.spent += expanded

    def can_start(self) -> bool:
        return self.expansions is None or self.spent < self.expansions


def _pass_if_spent(budget: ActBudget) -> Generator[Action, Observation, None]:
    """One ``Pass`` step, counted, where the act has spent its planning budget; else nothing
    (the next act starts afresh: the agent's ``act`` begins it)."""
    if not budget.can_start():
        budget.passes += 1
        yield Action(PASS)


def planned_in_stages(budget: ActBudget, stages: Generator[None, None, T]) -> Generator[Action, Observation, T]:
    """The answer of a request made in stages (``navigation.PlanStages``: it yields between two
    searches): each stage, the first included, starts in this act if its planning budget is not
    spent, else after one ``Pass`` step (a fresh act always starts one). The pose the request
    was made for stays right: nothing moves in a Pass. No stage is cut."""
    try:
        while True:
            yield from _pass_if_spent(budget)
            next(stages)
    except StopIteration as done:
        return done.value
