"""The planner's roles and the records that flow between them (docs/ARCHITECTURE.md, "Planner (HoloMind)").

Every role has two implementations behind the same Protocol: a deterministic one (the offline
default and the baseline, ``planner.deterministic``) and one that asks an LLM through litellm
(``planner.llm``). The agent (``planner.holomind``) only talks to these Protocols, so a run can
mix them (e.g. an LLM decomposer with a deterministic critic) and an ablation swaps one out.

Goals are written in the checklist vocabulary (``household.checklist.ChecklistItem``): a goal is
"make these propositions true", which is what both the instruction means and what the critic can
check against the agent's own memory. The checklist is never shown to the agent; the decomposer
produces these items from the instruction text alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from household.checklist import ChecklistItem
from household.interactions import INTERACTION_SKILLS
from planner.goal_hints import CountOf, GoalHints

Verdict = Literal["pass", "refine", "replan"]
ReplanLevel = Literal["low", "high"]

# The skills the executor compiles to atomic actions (planner.skills).
#   navigate_to  args: object_id            walk to a pose that sees and reaches it
#   search       args: object_type, room?   explore / open containers until one is seen
#   inspect      args: object_id            look at it again (refresh its state)
#   <interaction> one skill per row of household.interactions (pick, place, open, close, toggle_on,
#                toggle_off, slice, pour, ...): args object_id (place: receptacle_id; pour: also
#                liquid, poured from what is in hand; slice needs a knife in hand)
#   put_down     args: -                    free the hand on any nearby surface
SKILLS = ("navigate_to", "search", "inspect", *INTERACTION_SKILLS, "put_down")


@dataclass(frozen=True)
class Goal:
    """One node of the goal DAG: propositions to make true, from one clause of the instruction."""

    id: str
    items: tuple[ChecklistItem, ...]
    text: str  # the clause of the instruction it came from (for reports and LLM prompts)
    # Search hints that are not propositions, e.g. {"object_room": "Bathroom"} for "take a towel
    # from the bathroom ..." (where to look first; the final state does not depend on it).
    # Text, as they travel to reports and LLM prompts; the planner reads ``typed_hints``. Not
    # changed once the goal is made (a goal with other hints is a new Goal: dataclasses.replace).
    hints: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    # ``hints`` read once, typed (``planner.goal_hints``: the known keys, what each means)
    typed_hints: GoalHints = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "typed_hints", GoalHints.parse(self.hints))

    @property
    def count_of(self) -> CountOf | None:
        """The ``count_of`` hint, typed; None when absent or unreadable (an LLM's wrong hint is
        ignored, not fatal)."""
        return self.typed_hints.count_of

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "text": self.text, "items": [i.to_dict() for i in self.items]}
        if self.hints:
            out["hints"] = dict(self.hints)
        return out


@dataclass(frozen=True)
class KnownObject:
    """What the agent's memory knows of one object (never ground truth)."""

    object_id: str
    object_type: str
    room: str | None  # room type the agent believes it is in ("Kitchen"), None if unknown
    position: tuple[float, float, float]  # REP 103 world frame
    state: dict[str, Any] = field(default_factory=dict)  # last observed flags (isOpen, isToggled, ...)
    last_seen_step: int = -1
    # log posterior of each room type for the region it stands in, normalised to the best (0.0):
    # how far from being named each type the region is; empty where the agent cannot tell
    room_scores: dict[str, float] = field(default_factory=dict, compare=False)
    # half the size of what the agent has seen of it along the REP 103 x and y axes (metres): a
    # relation ("the dresser by the bed") is about the gap between two pieces of furniture, not
    # between their centres (two metres apart for a bed and the dresser beside it)
    half_extent: tuple[float, float] = (0.0, 0.0)
    # half its seen height (REP 103 z, metres): where its bottom is (``position[2] - half_height``),
    # so that a box on the floor against a bed is not taken to stand on the bed
    half_height: float = 0.0


@dataclass
class PlannerContext:
    """What a role may read: the agent's own knowledge, never ground truth."""

    step: int
    held_object_id: str | None
    held_object_type: str | None
    known_objects: list[KnownObject]
    rooms_seen: list[str]  # room types the agent has identified so far
    history: list[str]  # completed subgoals, newest last
    experience: list[str]  # rules distilled from earlier failures (episodic memory)
    object_types: list[str]  # every type the asset database knows (the vocabulary)
    agent_position: tuple[float, float, float] | None = None  # REP 103, from the agent's pose
    excluded_ids: list[str] = field(default_factory=list)  # serve finished goals or failed twice: not to ground
    # Set once the house is explored and a room-bound role is still unbound: rooms named by the
    # agent can be wrong (an open-plan kitchen read as a living room), so a grounder may then
    # take the instance whose region is the most likely to be the named room.
    relax_rooms: bool = False
    # Set once the house is explored and a role qualified by a relation ("the side table by the
    # dresser") is still unbound: the anchor was never seen near any instance, so a grounder may
    # then take the nearest instance of the type.
    relax_relations: bool = False


@dataclass(frozen=True)
class Subgoal:
    """One skill call; ``args`` per ``SKILLS``."""

    skill: str
    args: dict[str, Any]
    goal_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"skill": self.skill, "args": dict(self.args), "goal_id": self.goal_id}


@dataclass(frozen=True)
class Grounding:
    """Which objects a goal's roles are bound to; None where the agent has not seen one yet."""

    goal_id: str
    bindings: dict[str, str | None]  # role ("object", "target", "tool") -> object id or None


@dataclass(frozen=True)
class CriticEvent:
    """What the critic judges: one action's feedback, or a finished subgoal."""

    kind: Literal["action", "subgoal"]
    subgoal: Subgoal | None
    action: str | None
    success: bool
    error: str
    context_note: str = ""  # e.g. "held: Mug|1|2", "target not visible after navigate"
    # The backend's typed outcome (household.outcomes.Failure value); "" when it sent only text.
    failure: str = ""


@dataclass(frozen=True)
class CriticDecision:
    verdict: Verdict
    diagnosis: str  # one sentence, written to reports and the experience pool
    fix: tuple[Subgoal, ...] = ()  # for "refine": subgoals to run before retrying
    replan_level: ReplanLevel = "low"  # for "replan"
    # What went wrong, as a type the agent acts on (a household.outcomes.Failure value; "unknown"
    # when nobody judged). Set from the backend's feedback, whatever a critic wrote in ``diagnosis``.
    situation: str = "unknown"


class Decomposer(Protocol):
    def decompose(self, instruction: str, context: PlannerContext) -> list[Goal]: ...


class Refiner(Protocol):
    def refine(self, goal: Goal, context: PlannerContext) -> Goal: ...


class GroundingRole(Protocol):
    def ground(self, goal: Goal, context: PlannerContext) -> Grounding: ...


class Translator(Protocol):
    def translate(self, goal: Goal, grounding: Grounding, context: PlannerContext) -> list[Subgoal]: ...


class Critic(Protocol):
    def critique(self, event: CriticEvent, context: PlannerContext) -> CriticDecision: ...
