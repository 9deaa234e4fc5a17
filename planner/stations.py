"""Stations: the appliance where a goal's state change is made, in one table.

Three parts of the planner need to know it and must agree, so none of them keeps its own copy:
- grounding (``deterministic.required_roles``) binds the station as the goal's ``target``;
- the recipe (``deterministic.RecipeTranslator``) takes its object out again from a station that
  must not stay blocked (``EMPTIED_STATIONS``);
- the goal DAG (``goal_dag``'s ``station`` edge) does such a goal before goals that leave
  something in that station for good, since what is left there can leave no room for the vessel.

The choices mirror THOR's effects: water comes from a running faucet over a sink (filling and
washing), coffee from a running coffee machine, cooking from a running toaster (for what it takes) or microwave; wine is poured
from a bottle, so it has no station.
"""

from __future__ import annotations

from typing import Any

from household.assets import OBJECT_SPECIFIC_RECEPTACLES

# Stations the recipe empties again: a vessel left in a sink keeps the next one out ("no room"),
# and the agent then searched the house for another sink. A mug is left in the coffee machine
# (the embedded simulator draws the machine as a box open only at the top, so the mug cannot be
# seen from the front to be taken out) and food in the microwave (that is where it was cooked).
EMPTIED_STATIONS = frozenset({"Sink"})


def station_type(predicate: str, expected: Any) -> str | None:
    """The receptacle type the recipe for ``predicate`` = ``expected`` is carried out at, if any."""
    if predicate == "isFilledWithLiquid" and expected == "wine":
        return None
    if predicate == "isFilledWithLiquid" and expected == "coffee":
        return "CoffeeMachine"
    if predicate in ("isFilledWithLiquid", "isDirty"):
        return "Sink"
    if predicate == "isCooked":
        return "Microwave"
    return None


def cooker_types(object_type: str) -> tuple[str, ...]:
    """Where ``object_type`` is cooked, preferred first: a toaster for what a toaster takes (bread
    slices: THOR's ReceptacleRestrictions), else a microwave. Houses without a microwave toast."""
    takes = OBJECT_SPECIFIC_RECEPTACLES.get("Toaster", frozenset())
    return ("Toaster", "Microwave") if object_type in takes else ("Microwave",)


def emptied_station(predicate: str, expected: Any) -> str | None:
    """The station the recipe uses and leaves empty again (None when it uses none, or leaves its
    object there)."""
    station = station_type(predicate, expected)
    return station if station in EMPTIED_STATIONS else None
