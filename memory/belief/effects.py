"""What an action makes true, as belief-tracker state atoms: the one table every writer uses.

The agent's own actions (planner.episodic_beliefs), the ROS belief node, bag replay and the
WorldLines trace world all turn actions into ``(entity, attribute, value)`` atoms here, so a
question about the tracker reads one vocabulary whoever wrote the evidence (there were four tables,
and they disagreed on where a held object is). The vocabulary is the trace's: ``location`` is a
receptacle id or ``held:<actor>``, ``open`` is open/closed, ``power`` is on/off, ``sliced`` is true.
"""
from __future__ import annotations

from typing import Optional

from household.interactions import INTERACTIONS

ON, OFF, OPEN, CLOSED, TRUE = "on", "off", "open", "closed", "true"
LOCATION, OPENNESS, POWER, SLICED = "location", "open", "power", "sliced"
HELD_PREFIX = "held:"

# ALFRED/LongAct interaction -> the (attribute, value) it makes true on its target: the interaction
# table's ``belief`` column (household.interactions), e.g. OpenObject -> (open, open).
STATE_EFFECTS: dict[str, tuple[str, str]] = {i.action: i.belief for i in INTERACTIONS if i.belief}
# "... is already on/off/open/closed/sliced": what a refused action says about the world.
ALREADY: dict[str, tuple[str, str]] = {i.already: i.belief for i in INTERACTIONS if i.already and i.belief}
# THOR's boolean object flags <-> (attribute, the value that means True).
THOR_FLAGS: dict[str, tuple[str, str]] = {i.thor_flag: i.belief for i in INTERACTIONS
                                          if i.thor_flag and i.thor_value and i.belief}
assert (STATE_EFFECTS["OpenObject"], STATE_EFFECTS["ToggleObjectOn"], STATE_EFFECTS["SliceObject"]) == \
    ((OPENNESS, OPEN), (POWER, ON), (SLICED, TRUE)), "the trace vocabulary's names changed"

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
