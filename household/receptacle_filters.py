"""Which receptacles may take an object, for each purpose, written once.

The planner, the oracle and memory-eval each pick receptacles: a surface in a room for an
"in the kitchen" goal, a spot to free the hand, a box to search for something unseen. Each used
to write its own combination of "is a receptacle", "is not a lidded or boxed thing", "is not
itself carried", a list of types to skip, and THOR's object-specific restrictions
(``AssetCatalog.accepts``), so a rule fixed in one copy stayed wrong in the others. Here every
purpose is one named ``ReceptacleFilter``; the callers add only what needs the simulator's or
the agent's state (a free footprint on the top, an excluded id, the room).

The filters differ on purpose and say why: the oracle (ground truth, privileged) skips boxed
receptacles (``CONTAINER_TYPES``: contents sit inside, it places on tops), the agent skips
openable ones (it cannot see whether they are open from its memory's type alone).
"""

from __future__ import annotations

from dataclasses import dataclass

from household.assets import CONTAINER_TYPES, MUST_BE_OPEN_TYPES, AssetCatalog, AssetInfo, default_catalog

# Devices and cookware: they take objects (a mug in a coffee machine, bread in a toaster) but a
# goal that names only a room never means "put it in the toaster".
DEVICE_AND_COOKWARE_TYPES = frozenset({"Microwave", "Toaster", "CoffeeMachine", "StoveBurner", "Pan", "Pot"})

# Furniture one sits or lies on, and basins: THOR lets you put things there, but a robot freeing
# its hand should not leave a knife on a chair or an apple in the bath.
SEATS = frozenset({"Bed", "Sofa", "ArmChair", "Chair"})
# Basins that wash and fill: a goal that names only a room ("carry the book to the bathroom") never
# means the sink, and a thing left there takes the place a later washing goal needs (dev-008-0:
# the book went into the bathroom sink, and the pan could not be washed).
WASH_BASINS = frozenset({"Sink", "SinkBasin", "Bathtub", "BathtubBasin"})
SEATS_AND_BASINS = SEATS | frozenset({"Toilet"}) | WASH_BASINS
# Bins: a thing put there is thrown away. A goal that names only a room never means the bin, and a
# robot freeing its hand must not throw the thing it carries away. (The agent reads a type's
# affordances from all its assets, ``AssetCatalog.type_affordances``, and garbage cans take
# things; where things are searched for, a bin is looked into like any other fixed receptacle.)
WASTE_BINS = frozenset({"GarbageCan"})


@dataclass(frozen=True)
class ReceptacleFilter:
    """One purpose's rule for "may this receptacle take an object of this type".

    ``no_openable``: skip receptacles with a door or lid (``CanOpen``); ``no_must_open``: skip
    those that take nothing while shut (``MUST_BE_OPEN_TYPES``: a fridge, a box; a toilet's lid
    does not stop a placement); ``no_container``: skip
    those whose contents sit inside (``CONTAINER_TYPES``); ``fixed_only``: skip receptacles that
    can themselves be picked up (a bowl, a box); ``excluded_types``: skip these types outright.
    THOR's object-specific restrictions (a toaster takes only bread slices) always apply."""

    name: str
    no_openable: bool = False
    no_must_open: bool = False
    no_container: bool = False
    fixed_only: bool = False
    excluded_types: frozenset[str] = frozenset()

    def admits_receptacle(self, receptacle_type: str, *, receptacle: bool, openable: bool = False,
                          pickupable: bool = False) -> bool:
        """The part that does not depend on what is placed (to shortlist receptacles once)."""
        if not receptacle or receptacle_type in self.excluded_types:
            return False
        if (self.no_openable and openable) or (self.fixed_only and pickupable):
            return False
        if self.no_must_open and receptacle_type in MUST_BE_OPEN_TYPES:
            return False
        return not (self.no_container and receptacle_type in CONTAINER_TYPES)

    def admits(self, receptacle_type: str, object_type: str, *, receptacle: bool, openable: bool = False,
               pickupable: bool = False, catalog: AssetCatalog | None = None) -> bool:
        """From an object's own affordances (a sliced piece overrides its asset's)."""
        return (self.admits_receptacle(receptacle_type, receptacle=receptacle, openable=openable, pickupable=pickupable)
                and (catalog or default_catalog()).accepts(receptacle_type, object_type))

    def admits_info(self, info: AssetInfo | None, object_type: str, catalog: AssetCatalog | None = None) -> bool:
        """From a type's affordances in the asset database (what the agent's memory knows)."""
        if info is None:
            return False
        return self.admits(info.object_type, object_type, receptacle=info.receptacle, openable=info.openable,
                           pickupable=info.pickupable, catalog=catalog)


# The agent, placing an object for a goal that names a room ("put the apple in the kitchen").
# Not one that must be open to take anything (the agent's memory knows the type, not whether its
# door is open), nor a sink or a bath (``WASH_BASINS``), nor a bin (``WASTE_BINS``); a toilet is
# the one surface some bathrooms have.
ROOM_SURFACE = ReceptacleFilter("room surface", no_must_open=True,
                                excluded_types=DEVICE_AND_COOKWARE_TYPES | WASH_BASINS | WASTE_BINS)
# The agent, freeing its hand: an open, fixed surface that is not a seat, a basin, a bin or a device.
AGENT_PUT_DOWN = ReceptacleFilter("agent put-down", no_openable=True, fixed_only=True,
                                  excluded_types=SEATS_AND_BASINS | DEVICE_AND_COOKWARE_TYPES | WASTE_BINS)
# Any receptacle that is not itself carried: where the agent looks for something unseen (closed
# ones are opened and looked into), and where memory-eval moves objects behind the agent's back.
FIXED_RECEPTACLE = ReceptacleFilter("fixed receptacle", fixed_only=True)
# The agent surveying a house for its memory (``HoloMindAgent.explore_house(survey=True)``): the
# open, fixed surfaces small things lie on, looked at from close by; nothing is opened.
SURVEY_SURFACE = ReceptacleFilter("survey surface", no_openable=True, fixed_only=True)
# The oracle, placing for a room goal: a top (not a box) it can put the object on.
ORACLE_ROOM_SURFACE = ReceptacleFilter("oracle room surface", no_container=True)
# The oracle, freeing its hand: a top that is not a seat.
ORACLE_PUT_DOWN = ReceptacleFilter("oracle put-down", no_container=True, excluded_types=SEATS)

FILTERS: tuple[ReceptacleFilter, ...] = (ROOM_SURFACE, AGENT_PUT_DOWN, FIXED_RECEPTACLE, ORACLE_ROOM_SURFACE,
                                         ORACLE_PUT_DOWN)
