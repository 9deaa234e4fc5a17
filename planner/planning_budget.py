"""The planning work one decision may do, and what the agent does when a decision would do more.

Issue 27: no single ``act`` may stall. A search is capped (``navigation.MAX_EXPANSIONS``), but one
decision can ask for many: on dev-005-0 (step 199) the approach to an object and the frontiers
tried for it ran 13 lattice searches in one act, 12 of them to their cap, about a second. A robot
that thinks that long between two commands stands still anyway, so the stack says so: once an act
has spent ``ActBudget.expansions`` lattice expansions, it starts no further plan request and no
further stage of one; the skill hands the simulator or robot THOR's ``Pass`` (a step in which
nothing moves; ``household.types.PASS``) and goes on on the next frame, in a fresh act. A plan to a
point or an object comes in stages (``planned_in_stages``, ``navigation.PlanStages``): the fine
search, the coarse one where the fine one ran into its cap, and the same two on the tight grid
where the map allows for pose error; each stage is at most one capped search, so an act expands at
most the budget plus one search (two capped searches with the default budget; before the stages,
an act could run the budget plus four under uncertain sensors: 802 ms on dev-045-1 under
``--sensors realistic``). A passage or gap look is one request that bisects a way with several
plans, not split.

The requests are not changed, only spread over steps: each is made whole, as the unbounded agent
would make it (on the map as the next frame leaves it; a later stage on the map as it is then,
which with exact sensors is the same map: a Pass shows the same frame again). Why not cut a
search part way instead: a search cut by a budget comes back empty and would be taken for "no way
there" (a frontier given up, an object left), which changes what the agent does, not when; and a request cut in the middle
and made again from the start could be cut again every time. Why expansions and not seconds: the
same run then decides the same way on a fast and a slow machine (reports are compared episode by
episode, issue 27's Ray check included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generator, TypeVar

from household.types import PASS, Action, Observation

T = TypeVar("T")

# Lattice expansions after which an act of the HoloMind agent starts no further plan request
# (``AgentConfig.act_expansions``): one search at its cap (``navigation.MAX_EXPANSIONS``).
ACT_EXPANSIONS = 8_000


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


def planned(budget: ActBudget, request: Callable[..., T], *args: Any, **kwargs: Any) -> Generator[Action, Observation, T]:
    """``request(*args, **kwargs)``'s answer, made in this act if its planning budget is not
    spent, else after one ``Pass`` step (a fresh act always starts a request). The pose among the
    arguments stays right: nothing moves in a Pass."""
    yield from _pass_if_spent(budget)
    return request(*args, **kwargs)


def planned_in_stages(budget: ActBudget, stages: Generator[None, None, T]) -> Generator[Action, Observation, T]:
    """The answer of a request made in stages (``navigation.PlanStages``: it yields between two
    searches): each stage, the first included, starts in this act if its planning budget is not
    spent, else after one ``Pass`` step. No stage is cut."""
    try:
        while True:
            yield from _pass_if_spent(budget)
            next(stages)
    except StopIteration as done:
        return done.value
