"""The HoloMind agent's ablations (LongAct Table 4) as injected components, not string checks.

Each ablation names one part of the agent, and switching it off means injecting that part's
no-op implementation (issue 28, item 4):

- ``critic``: the ``CriticStage``. ``DiagnosingCritic`` asks the critic role and logs and counts
  its decision; ``NoCritic`` answers every failure with a plain replan (the failed action just
  fails its goal attempt), asks nobody and logs nothing.
- ``episodic``: the ``EpisodicMemory``. ``Episodic`` holds the experience pool, writes the
  agent's own actions into a belief tracker and tells the roles the object states it remembers;
  ``NoEpisodic`` holds an experience store that neither knows nor learns anything, a belief log
  that records nothing, and tells the roles no states.
- ``high-level``: the ``GoalOrder``. ``DagOrder`` takes the cheapest ready goal of the DAG from
  where the agent stands, refines it and sets a failed goal aside once; ``InstructionOrder``
  takes goals in instruction order, unrefined, and never defers.

``parts_for`` is the one table from ablation names to parts: ``planner.factory.make_agent``
builds an agent's parts with it, and an agent constructed without parts builds its defaults
with it from its config, so the two cannot disagree. The stages take the agent as a narrow host
and call ``host.context()`` only where the full component did: building the context updates
the agent's room segmentation, and calling it more often would change the rooms it names later.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Protocol

import networkx as nx

from planner.agent_config import ABLATIONS
from planner.critic import Experience, ExperiencePool, ExperienceStore
from planner.episodic_beliefs import EpisodicBeliefs
from planner.goal_dag import next_goal
from planner.roles import Critic, CriticDecision, CriticEvent, Goal, PlannerContext, Refiner


# ---- critic ----------------------------------------------------------------------------------
class CriticHost(Protocol):
    """What a critic stage uses of the agent: its critic role, its context, its critic log."""

    critic: Critic

    def context(self) -> PlannerContext: ...
    def record_critic(self, event: CriticEvent, decision: CriticDecision) -> None: ...


class CriticStage(Protocol):
    """What happens to a failed interaction (the skills ask through ``HoloMindAgent.critique``)."""

    def review(self, event: CriticEvent, host: CriticHost) -> CriticDecision: ...


class DiagnosingCritic:
    """The critic role diagnoses the failure; its decision is logged and counted."""

    def review(self, event: CriticEvent, host: CriticHost) -> CriticDecision:
        decision = host.critic.critique(event, host.context())
        host.record_critic(event, decision)
        return decision


class NoCritic:
    """The ``critic`` ablation: no diagnosis, so the failed action fails its goal attempt. Not a
    critic decision: nothing is logged or counted as an intervention."""

    def review(self, event: CriticEvent, host: CriticHost) -> CriticDecision:
        return CriticDecision("replan", f"no critic: {event.action} failed ({event.error[:60]})")


# ---- high level: goal order and refinement -----------------------------------------------------
class RefineHost(Protocol):
    """What a goal order uses of the agent to refine a goal: its refiner role and its context."""

    refiner: Refiner

    def context(self) -> PlannerContext: ...


class GoalOrder(Protocol):
    """Which goal comes next, how it is refined, and whether a failed one is set aside."""

    def next_goal(self, dag: nx.DiGraph, finished: list[str], cost: Callable[[Goal], float]) -> Goal | None: ...
    def refine(self, goal: Goal, host: RefineHost) -> Goal: ...
    def set_aside(self, ok: bool, deferred_before: bool, others_left: bool) -> bool: ...


class DagOrder:
    """The cheapest ready goal from where the agent stands (``planner.goal_dag.next_goal``),
    refined; a failed goal is set aside once while others are left (more is known later)."""

    def next_goal(self, dag: nx.DiGraph, finished: list[str], cost: Callable[[Goal], float]) -> Goal | None:
        return next_goal(dag, finished, cost, spatial=True)

    def refine(self, goal: Goal, host: RefineHost) -> Goal:
        return host.refiner.refine(goal, host.context())

    def set_aside(self, ok: bool, deferred_before: bool, others_left: bool) -> bool:
        return not ok and not deferred_before and others_left


class InstructionOrder:
    """The ``high-level`` ablation: ready goals in instruction order, as parsed, never deferred."""

    def next_goal(self, dag: nx.DiGraph, finished: list[str], cost: Callable[[Goal], float]) -> Goal | None:
        return next_goal(dag, finished, cost, spatial=False)

    def refine(self, goal: Goal, host: RefineHost) -> Goal:
        return goal

    def set_aside(self, ok: bool, deferred_before: bool, others_left: bool) -> bool:
        return False


# ---- episodic memory ---------------------------------------------------------------------------
class BeliefLog(Protocol):
    """What the agent uses of its per-episode belief log (``planner.episodic_beliefs``)."""

    def record(self, step: int, action: str, object_id: str, success: bool, error: str = "",
               held_before: str | None = None, failure: str = "") -> None: ...
    def observe(self, step: int, object_id: str, states: tuple[tuple[str, Any], ...]) -> int: ...
    def observe_location(self, step: int, object_id: str, receptacle_id: str) -> bool: ...
    def state_of(self, object_id: str) -> dict[str, Any]: ...
    def __len__(self) -> int: ...


class EpisodicMemory(Protocol):
    """The experience pool across episodes, the belief log of the agent's own actions in this
    one, and what of the remembered object states the roles are told."""

    @property
    def experience(self) -> ExperienceStore: ...
    def beliefs(self, session: str) -> BeliefLog: ...
    def recall(self, state: Mapping[str, Any]) -> dict[str, Any]: ...


@dataclass
class Episodic:
    """Episodic memory on: the pool given (loaded by the factory), a belief tracker per episode."""

    experience: ExperienceStore = field(default_factory=ExperiencePool)

    def beliefs(self, session: str) -> BeliefLog:
        return EpisodicBeliefs(session=session)

    def recall(self, state: Mapping[str, Any]) -> dict[str, Any]:
        return dict(state)


@dataclass
class NoExperience:
    """An experience store that knows nothing and learns nothing (nothing loaded, nothing saved)."""

    reused: int = 0
    entries: dict[str, Experience] = field(default_factory=dict)  # always empty (read by the run's pool merge)

    def record(self, action: str, situation: str, object_type: str, fix: str) -> Experience:
        return Experience(action, situation, object_type, fix, seen=1)  # not kept

    def validate(self, exp: Experience) -> None:
        return None

    def proactive_fix(self, action: str, object_type: str) -> str | None:
        return None

    def approach_closer(self, action: str, object_type: str) -> bool:
        return False

    def attempted(self, action: str, object_type: str) -> None:
        return None

    def avoid(self, action: str, object_type: str, target_type: str) -> bool:
        return False

    def rules(self) -> list[str]:
        return []

    def save(self) -> None:
        return None


class NoBeliefs:
    """A belief log that records nothing and so knows no state."""

    def record(self, step: int, action: str, object_id: str, success: bool, error: str = "",
               held_before: str | None = None, failure: str = "") -> None:
        return None

    def observe(self, step: int, object_id: str, states: tuple[tuple[str, Any], ...]) -> int:
        return 0

    def observe_location(self, step: int, object_id: str, receptacle_id: str) -> bool:
        return False

    def state_of(self, object_id: str) -> dict[str, Any]:
        return {}

    def __len__(self) -> int:
        return 0


@dataclass
class NoEpisodic:
    """The ``episodic`` ablation: no experience, no action evidence, no remembered states told."""

    experience: ExperienceStore = field(default_factory=NoExperience)

    def beliefs(self, session: str) -> BeliefLog:
        return NoBeliefs()

    def recall(self, state: Mapping[str, Any]) -> dict[str, Any]:
        return {}


# ---- the parts, and the one table from ablation names to them ----------------------------------
@dataclass(frozen=True)
class AgentParts:
    """The components an ablation can swap, injected into ``planner.holomind.HoloMindAgent``."""

    critic: CriticStage = field(default_factory=DiagnosingCritic)
    goal_order: GoalOrder = field(default_factory=DagOrder)
    episodic: EpisodicMemory = field(default_factory=Episodic)


# ablation name -> (the AgentParts field it replaces, its no-op component)
ABLATED: dict[str, tuple[str, Callable[[], Any]]] = {
    "critic": ("critic", NoCritic),
    "episodic": ("episodic", NoEpisodic),
    "high-level": ("goal_order", InstructionOrder),
}


def parts_for(ablate: Iterable[str] = (), experience: ExperienceStore | None = None) -> AgentParts:
    """The agent's parts with the ablations named switched off. ``experience``: the pool the
    full episodic memory uses (None: an empty one in memory); ignored under ``episodic``."""
    names = frozenset(ablate)
    unknown = sorted(names - set(ABLATED))
    if unknown:  # a misspelt ablation would otherwise switch nothing off, silently
        raise ValueError(f"unknown ablation {', '.join(map(repr, unknown))} (known: {', '.join(ABLATIONS)})")
    full = AgentParts(episodic=Episodic(experience if experience is not None else ExperiencePool()))
    return replace(full, **{ABLATED[n][0]: ABLATED[n][1]() for n in sorted(names)})
