"""What an action makes true, as belief-tracker state atoms: the one table every writer uses.

The agent's own actions (planner.episodic_beliefs), the ROS belief node, bag replay and the
WorldLines trace world all turn actions into ``(entity, attribute, value)`` atoms here, so a
question about the tracker reads one vocabulary whoever wrote the evidence (there were four tables,
and they disagreed on where a held object is). The vocabulary is the trace's: ``location`` is a
receptacle id or ``held:<actor>``, ``open`` is open/closed, ``power`` is on/off, ``sliced`` is true.
"""
from __future__ import annotations

from typing import Optional

ON, OFF, OPEN, CLOSED, TRUE = "on", "off", "open", "closed", "true"
LOCATION, OPENNESS, POWER, SLICED = "location", "open", "power", "sliced"
HELD_PREFIX = "held:"

# ALFRED/LongAct interaction -> the (attribute, value) it makes true on its target.
STATE_EFFECTS: dict[str, tuple[str, str]] = {
    "OpenObject": (OPENNESS, OPEN),
    "CloseObject": (OPENNESS, CLOSED),
    "ToggleObjectOn": (POWER, ON),
    "ToggleObjectOff": (POWER, OFF),
    "SliceObject": (SLICED, TRUE),
}
# "... is already on/off/open/closed/sliced": what a refused action says about the world.
ALREADY: dict[str, tuple[str, str]] = {"on": (POWER, ON), "off": (POWER, OFF), "open": (OPENNESS, OPEN),
                                       "closed": (OPENNESS, CLOSED), "sliced": (SLICED, TRUE)}
# THOR's boolean object flags <-> (attribute, the value that means True).
THOR_FLAGS: dict[str, tuple[str, str]] = {"isOpen": (OPENNESS, OPEN), "isToggled": (POWER, ON),
                                          "isSliced": (SLICED, TRUE)}

Atom = tuple[str, str, str]


def held_location(actor: str) -> str:
    """The ``location`` value of an object that ``actor`` holds."""
    return f"{HELD_PREFIX}{actor}"


def action_effects(action: str, target: Optional[str], held: Optional[str], actor: str) -> list[Atom]:
    """The atoms a SUCCESSFUL ``action`` on ``target`` made true (``held``: what ``actor`` held
    when it was sent; a PutObject moves that object onto ``target``)."""
    if target is None:
        return []
    if action == "PickupObject":
        return [(target, LOCATION, held_location(actor))]
    if action == "PutObject":
        return [(held, LOCATION, target)] if held else []
    if action in STATE_EFFECTS:
        attribute, value = STATE_EFFECTS[action]
        return [(target, attribute, value)]
    return []
