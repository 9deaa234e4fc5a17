"""The interaction vocabulary: one table of what each object interaction is, read by every layer.

Why one table: an interaction used to be described in about ten places that had to agree by hand
(the action list, the simulator's dispatch, the THOR and Habitat mappings, the ROS ExecuteSkill
contract, the planner's skills, the belief effects, the "already done" words), and they did not:
``pour`` was missing from the ROS contract and from the THOR stand-in, so every pour failed over
ROS. Here each interaction is one ``Interaction`` row; those places derive their tables from
``INTERACTIONS``, and ``tests/test_interaction_table.py`` fails when a declared interaction has no
executor in a backend, no robot skill, no THOR call or no planner skill.

Adding an interaction (e.g. THOR's ``BreakObject``) is one row here, its executor in each
simulator, and the ``ExecuteSkill.action`` constant for its robot skill.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping


@dataclass(frozen=True)
class Interaction:
    """One object interaction, in every vocabulary that names it.

    - ``action``: the ALFRED/THOR action name (``household.types.Action.name``, THOR's ``action``);
    - ``skill``: the planner's skill (``planner.roles.SKILLS``, ``Subgoal.skill``);
    - ``robot_skill`` / ``robot_on``: the ``ExecuteSkill`` goal's ``skill`` constant and ``on`` flag;
    - ``thor_args``: the fixed arguments ai2thor 5.0 documents for the call; ``passes``: the
      ``Action.args`` keys that travel with it (to THOR, to the robot), e.g. ``fillLiquid``;
    - ``affordance``: the ``household.assets.AssetInfo`` property the target must have;
    - ``thor_flag`` / ``thor_value``: the THOR metadata flag a success sets, and to what;
    - ``belief``: the belief-tracker atom (attribute, value) a success makes true on the target;
    - ``already``: the word in "X is already <word>" that a refused repeat reports;
    - ``habitat``: whether the Habitat backend can execute it (habitat_sim has no object states
      beyond open/closed and on/off; the rest is a typed NOT_CAPABLE failure there);
    - ``skill_args`` / ``note``: the planner skill's arguments and what a planner (or an LLM in a
      planner role) must know about it.
    """

    action: str
    skill: str
    robot_skill: str
    affordance: str
    robot_on: bool = False
    thor_args: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({"forceAction": False}))
    passes: tuple[str, ...] = ()
    thor_flag: str | None = None
    thor_value: bool = True
    belief: tuple[str, str] | None = None
    already: str | None = None
    habitat: bool = True
    skill_args: tuple[str, ...] = ("object_id",)
    note: str = ""


def _args(**kw: Any) -> Mapping[str, Any]:
    return MappingProxyType(dict(kw))


INTERACTIONS: tuple[Interaction, ...] = (
    Interaction("PickupObject", "pick", "pick", "pickupable",
                thor_args=_args(forceAction=False, manualInteract=False), thor_flag="isPickedUp"),
    Interaction("PutObject", "place", "place", "receptacle",
                thor_args=_args(forceAction=False, placeStationary=True), skill_args=("receptacle_id",)),
    Interaction("OpenObject", "open", "open", "openable", thor_args=_args(openness=1.0, forceAction=False),
                thor_flag="isOpen", belief=("open", "open"), already="open"),
    Interaction("CloseObject", "close", "close", "openable", thor_flag="isOpen", thor_value=False,
                belief=("open", "closed"), already="closed"),
    Interaction("ToggleObjectOn", "toggle_on", "toggle", "toggleable", robot_on=True, thor_flag="isToggled",
                belief=("power", "on"), already="on"),
    Interaction("ToggleObjectOff", "toggle_off", "toggle", "toggleable", thor_flag="isToggled", thor_value=False,
                belief=("power", "off"), already="off"),
    Interaction("SliceObject", "slice", "slice", "sliceable", thor_flag="isSliced", belief=("sliced", "true"),
                already="sliced", habitat=False, note="needs a knife in hand"),
    # THOR's; args {"fillLiquid": "water" | "coffee" | "wine"}; poured from what the agent holds
    Interaction("FillObjectWithLiquid", "pour", "pour", "fillable", passes=("fillLiquid",),
                thor_flag="isFilledWithLiquid", habitat=False, skill_args=("object_id", "liquid"),
                note="water/coffee/wine; from a vessel of it or a wine bottle in hand"),
    # THOR's BreakObject: a vase, a mug, a window... once broken, broken (no interaction undoes it)
    Interaction("BreakObject", "break", "break", "breakable", thor_flag="isBroken", belief=("broken", "true"),
                already="broken", habitat=False),
)

BY_ACTION: Mapping[str, Interaction] = MappingProxyType({i.action: i for i in INTERACTIONS})
BY_SKILL: Mapping[str, Interaction] = MappingProxyType({i.skill: i for i in INTERACTIONS})
INTERACTION_ACTIONS: tuple[str, ...] = tuple(i.action for i in INTERACTIONS)
INTERACTION_SKILLS: tuple[str, ...] = tuple(i.skill for i in INTERACTIONS)
# The ExecuteSkill skills that act on an object, in table order, each once ("toggle" serves two).
ROBOT_OBJECT_SKILLS: tuple[str, ...] = tuple(dict.fromkeys(i.robot_skill for i in INTERACTIONS))


def setter(flag: str, value: object) -> Interaction | None:
    """The interaction whose success sets THOR flag ``flag`` to ``value`` (OpenObject for isOpen
    True), or None: the recipe of a predicate that one interaction on the object makes true."""
    if not isinstance(value, bool):
        return None
    return next((i for i in INTERACTIONS if i.thor_flag == flag and i.thor_value == value), None)


def interaction(action: str) -> Interaction:
    """The row for an action name; KeyError naming the known ones."""
    try:
        return BY_ACTION[action]
    except KeyError:
        raise KeyError(f"unknown interaction {action!r} (known: {', '.join(INTERACTION_ACTIONS)})") from None


def _check(table: tuple[Interaction, ...]) -> None:
    """The table's own consistency, at import: one row per action and per planner skill, and one
    (robot skill, on) pair per action so the ExecuteSkill mapping inverts."""
    if len({i.action for i in table}) != len(table) or len({i.skill for i in table}) != len(table):
        raise ValueError("household.interactions: an action or a planner skill is declared twice")
    if len({(i.robot_skill, i.robot_on) for i in table}) != len(table):
        raise ValueError("household.interactions: two actions share a robot skill and 'on' flag")


_check(INTERACTIONS)
