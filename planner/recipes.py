"""How the deterministic planner makes each predicate true: one registry, one entry per predicate.

Why a registry: the roles a goal needs bound (the object, a target, a tool), the tools it picks
up and the skills it runs were three if-chains over predicate names in three functions that had
to agree. Here each predicate's ``Recipe`` holds all three, beside the predicate's registration
in ``household.checklist`` (what it means) and the interaction table (what one action does).

- A predicate that one interaction makes true (isOpen, isToggled, isBroken, ...) needs no entry:
  ``recipe_for`` derives it from ``household.interactions.setter`` (act on the object).
- A registered predicate without a recipe plans nothing; the agent reports the goal failed with
  the reason ``no_recipe`` (never done).
- A predicate that is not registered at all raises: no goal should carry it.

Skills are ``planner.roles.SKILLS``; the plans mirror THOR's effects: water from a running faucet
over a sink, coffee from a running coffee machine, cooking in a running microwave, slicing with a
knife in hand, wine poured from a bottle in hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from household.assets import AssetCatalog, default_catalog
from household.checklist import PREDICATES, ChecklistItem
from household.interactions import setter
from planner.roles import Subgoal
from planner.stations import emptied_station, station_type

KNIVES = ("Knife", "ButterKnife")
WINE_SOURCES = ("WineBottle",)  # wine is poured from a bottle in hand
# What can carry water to something that cannot go under a faucet (a plant): THOR's fillable,
# pickupable types but the wine bottle (it holds wine).
VESSELS = ("WateringCan", "Cup", "Mug", "Bowl", "Bottle", "Kettle", "Pot")

Role = tuple[str, str | None, str | None]  # (binding role, object type to search for, room); type None: no station
# (skills of which a plan needs one, the binding role it must act on or None); ((), None): nothing
Needs = tuple[tuple[str, ...], str | None]


@dataclass(frozen=True)
class Plan:
    """What a recipe plans from: the goal's item, its effective value and the bound ids."""

    goal_id: str
    item: ChecklistItem
    value: Any
    bindings: Mapping[str, str | None]

    def s(self, skill: str, **args: Any) -> Subgoal:
        return Subgoal(skill, args, self.goal_id)

    def get(self, role: str) -> str | None:
        return self.bindings.get(role)


@dataclass(frozen=True)
class Recipe:
    """``roles``: the bindings beyond the object; ``tools``: the tool types it picks up (the goal
    DAG uses a tool before putting its type away); ``plan``: the skills; ``needs``: the
    interaction any plan for the item must contain, whoever wrote it (planner.plan_checks)."""

    plan: Callable[[Plan], list[Subgoal]]
    roles: Callable[[ChecklistItem], list[Role]] = field(default=lambda item: [])
    tools: Callable[[ChecklistItem], tuple[str, ...]] = field(default=lambda item: ())
    needs: Callable[[ChecklistItem], Needs] = field(default=lambda item: ((), None))


def pickupable_type(object_type: str, catalog: AssetCatalog | None = None) -> bool:
    """Unknown types count as pickupable: the recipe that carries the object is the usual one."""
    info = (catalog or default_catalog()).type_affordances(object_type)
    return info is None or info.pickupable


def _is_wine(item: ChecklistItem) -> bool:
    return item.predicate == "isFilledWithLiquid" and item.expected == "wine"


def _place(p: Plan) -> list[Subgoal]:
    return [p.s("pick", object_id=p.get("object")), p.s("place", receptacle_id=p.get("target"))]


def _hold(p: Plan) -> list[Subgoal]:
    return [p.s("pick", object_id=p.get("object"))] if p.value else [p.s("put_down")]


def _slice(p: Plan) -> list[Subgoal]:
    return [p.s("pick", object_id=p.get("tool")), p.s("slice", object_id=p.get("object"))]


def _cook(p: Plan) -> list[Subgoal]:
    target = p.get("target")
    return [p.s("pick", object_id=p.get("object")), p.s("place", receptacle_id=target), p.s("close", object_id=target),
            p.s("toggle_on", object_id=target), p.s("toggle_off", object_id=target)]


def _at_station(p: Plan) -> list[Subgoal]:
    """Fill (or wash) at a running station: carry it (or a vessel) there, run the switch, and
    pour from the vessel, or take it out of the sink again (planner.stations says why)."""
    if _is_wine(p.item):
        return [p.s("pick", object_id=p.get("tool")), p.s("pour", object_id=p.get("object"), liquid="wine")]
    switch, tool = p.get("switch"), p.get("tool")
    carried = tool or p.get("object")  # a vessel for what cannot go under the faucet itself
    fill = [p.s("pick", object_id=carried), p.s("place", receptacle_id=p.get("target")),
            p.s("toggle_on", object_id=switch), p.s("toggle_off", object_id=switch)]
    if tool:
        liquid = p.value if isinstance(p.value, str) else "water"
        fill += [p.s("pick", object_id=carried), p.s("pour", object_id=p.get("object"), liquid=liquid)]
    elif emptied_station(p.item.predicate, p.value) and pickupable_type(p.item.object.type):
        fill += [p.s("pick", object_id=carried), p.s("put_down")]
    return fill


def _station_roles(item: ChecklistItem) -> list[Role]:
    if _is_wine(item):
        return [("tool", WINE_SOURCES[0], None)]
    out: list[Role] = []
    if item.predicate == "isFilledWithLiquid" and not pickupable_type(item.object.type):
        out.append(("tool", "Cup", None))  # any of VESSELS binds; Cup is what the search looks for
    return out + [("target", station_type(item.predicate, item.expected), None)]


RECIPES: dict[str, Recipe] = {
    "inReceptacle": Recipe(_place, roles=lambda item: [("target", item.target.type, item.target.room)]
                           if item.target is not None else [], needs=lambda item: (("place",), "target")),
    "inRoom": Recipe(_place, roles=lambda item: [("target", "", str(item.value))],  # any surface in that room
                     needs=lambda item: (("place",), None)),
    "isHeld": Recipe(_hold, needs=lambda item: (("pick",), "object") if item.expected else (("put_down", "place"), None)),
    "isSliced": Recipe(_slice, roles=lambda item: [("tool", "Knife", None)], tools=lambda item: KNIVES,
                       needs=lambda item: (("slice",), "object")),
    "isCooked": Recipe(_cook, roles=lambda item: [("target", station_type(item.predicate, item.expected), None)],
                       needs=lambda item: (("toggle_on",), None)),
    "isFilledWithLiquid": Recipe(_at_station, roles=_station_roles,
                                 tools=lambda item: WINE_SOURCES if _is_wine(item) else (),
                                 needs=lambda item: (("toggle_on", "pour"), None)),
    # isDirty true asks for nothing to be done (an absence)
    "isDirty": Recipe(_at_station, roles=_station_roles,
                      needs=lambda item: ((), None) if item.expected is True else (("toggle_on",), None)),
}


def _one_interaction(p: Plan) -> list[Subgoal]:
    row = setter(p.item.predicate, p.value)
    return [p.s(row.skill, object_id=p.get("object"))] if row is not None else []


def _one_interaction_needs(item: ChecklistItem) -> Needs:
    row = setter(item.predicate, item.expected)
    return ((row.skill,), "object") if row is not None else ((), None)


def recipe_for(predicate: str) -> Recipe:
    """The recipe of a registered predicate (derived from the interaction table when one
    interaction makes it true; planning nothing when there is none). ValueError if unregistered."""
    if predicate not in PREDICATES:
        raise ValueError(f"unknown predicate {predicate!r} (registered: {', '.join(sorted(PREDICATES))})")
    return RECIPES.get(predicate) or Recipe(_one_interaction, needs=_one_interaction_needs)


def _check(recipes: Mapping[str, Recipe]) -> None:
    unknown = sorted(set(recipes) - set(PREDICATES))
    if unknown:
        raise ValueError(f"planner.recipes: recipes for unregistered predicates {unknown}")


_check(RECIPES)
