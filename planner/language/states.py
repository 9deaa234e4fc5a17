"""Which states an object type can take, by the asset database: one rule for every reader of an
instruction (the deterministic parser's goals, the LLM roles' answers).

A goal whose object cannot take the state is met before the agent moves ("clean the table": a
table is never dirty; "close the pen": a pen is never open) or never ("boil the kettle", "turn on
the apple"), and either way says nothing about the chore; issue 29 asks that no goal be silently
done. So such an item is refused where the instruction is read, with the database's reason. Judged
where one interaction sets the state on the object where it stands: washing, filling, cooking,
slicing, opening and switching. A type can take a state when any of its assets can
(``AssetCatalog.type_affords``: a type's first asset may be a static prop, as the database's first
television is), and a type the database does not know is not judged.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping

from household.checklist import PREDICATES, ChecklistItem
from planner.language.nouns import _affordances

# A checklist predicate's required asset property (household.checklist.Predicate.requires) as
# the parser's affordance flag (planner.language.types._FLAGS); a property without a flag is not checked.
FLAG_OF_PROPERTY = {"CanPickup": "pickupable", "Receptacle": "receptacle", "CanOpen": "openable",
                    "CanToggleOnOff": "toggleable", "CanBeSliced": "sliceable", "CanBeCooked": "cookable",
                    "CanBeFilled": "fillable", "CanBeDirty": "dirtyable"}
# The states judged against the database before a goal is made.
JUDGED = frozenset({"isDirty", "isFilledWithLiquid", "isCooked", "isSliced", "isOpen", "isToggled"})


def with_slices(flags: dict[str, frozenset[str]]) -> dict[str, str]:
    """Add the pieces of every sliceable type to ``flags`` (a slice is picked up and cooked: THOR
    cooks sliced produce though the database marks only the potato); returns base -> sliced type."""
    sliced: dict[str, str] = {}
    for t, f in list(flags.items()):
        if "sliceable" in f:
            st = "EggCracked" if t == "Egg" else f"{t}Sliced"
            sliced[t] = st
            flags.setdefault(st, frozenset({"pickupable", "cookable"}))
    return sliced


@lru_cache(maxsize=1)
def default_flags() -> Mapping[str, frozenset[str]]:
    """The packaged asset database's type -> flags, slices included (read once)."""
    flags = _affordances(None)
    with_slices(flags)
    return flags


def state_refusal(flags: Mapping[str, frozenset[str]], item: ChecklistItem) -> str | None:
    """"<Type> is not <flag>" where the item asks a state the database says its object's type
    cannot take (``JUDGED`` states, known types only); None otherwise."""
    if item.predicate not in JUDGED:
        return None
    flag = FLAG_OF_PROPERTY.get(PREDICATES[item.predicate].requires or "")
    known = flags.get(item.object.type)
    if flag is None or known is None or flag in known:
        return None
    return f"{item.object.type} is not {flag}"
