"""The receptacle filters, written once (issue 17): each purpose's rule, and the same answers as
the inline conditions they replaced, over every type pair of the asset database."""
from __future__ import annotations

import pytest

from household.assets import CONTAINER_TYPES, default_catalog
from household.receptacle_filters import (AGENT_PUT_DOWN, FIXED_RECEPTACLE, ORACLE_PUT_DOWN, ORACLE_ROOM_SURFACE,
                                          ROOM_SURFACE)

CATALOG = default_catalog()
TYPES = sorted(CATALOG.object_types)
PLACED = ["Mug", "BreadSliced", "Apple", "Towel", "Book", "ToiletPaper"]

# The conditions as they were written inline before (planner/deterministic.py, planner/holomind.py,
# privileged/oracle.py, evaluation/memory_eval.py at 44cc39f).
_DEVICES = {"Microwave", "Toaster", "CoffeeMachine", "StoveBurner", "Pan", "Pot"}
_PUT_DOWN = {"Bed", "Sofa", "ArmChair", "Chair", "Toilet", "Sink", "SinkBasin", "Bathtub", "BathtubBasin"} | _DEVICES


def _before(purpose: str, r: str, t: str) -> bool:
    info = CATALOG.type_info(r)
    acc = CATALOG.accepts(r, t)
    if purpose == "room surface":  # changed on purpose since: a toilet (a lid, no door) takes things shut,
        # and no sink or bath is a room's surface (household/receptacle_filters.py WASH_BASINS)
        return (r not in _DEVICES and r not in {"Sink", "SinkBasin", "Bathtub", "BathtubBasin"} and info is not None
                and info.receptacle and (not info.openable or r == "Toilet") and acc)
    if purpose == "agent put-down":
        return (info is not None and info.receptacle and not info.openable and not info.pickupable
                and r not in _PUT_DOWN and acc)
    if purpose == "fixed receptacle":
        return info is not None and info.receptacle and not info.pickupable and acc
    if purpose == "oracle put-down":
        return info.receptacle and r not in CONTAINER_TYPES and r not in ("Bed", "Sofa", "ArmChair", "Chair") and acc
    if purpose == "oracle room surface":
        return info.receptacle and r not in CONTAINER_TYPES and acc
    raise AssertionError(purpose)


@pytest.mark.parametrize("flt", [ROOM_SURFACE, AGENT_PUT_DOWN, FIXED_RECEPTACLE, ORACLE_PUT_DOWN, ORACLE_ROOM_SURFACE],
                         ids=lambda f: f.name)
def test_same_answers_as_the_inline_rules_they_replaced(flt):
    differ = [(r, t) for r in TYPES for t in PLACED
              if flt.admits_info(CATALOG.type_info(r), t, CATALOG) != _before(flt.name, r, t)]
    assert differ == []
    assert any(flt.admits_info(CATALOG.type_info(r), "Mug", CATALOG) for r in TYPES)  # not vacuous


def test_each_purpose_says_what_it_skips():
    info = CATALOG.type_info
    assert not ROOM_SURFACE.admits_info(info("Fridge"), "Apple")  # a door the agent's memory cannot see open
    assert not ROOM_SURFACE.admits_info(info("Toaster"), "BreadSliced")  # a device, not a place in a room
    assert ROOM_SURFACE.admits_info(info("CounterTop"), "Apple")
    assert ROOM_SURFACE.admits_info(info("Toilet"), "Book")  # some bathrooms have no other surface
    assert not ROOM_SURFACE.admits_info(info("Sink"), "Book")  # a washing station, not a place to leave things
    assert not AGENT_PUT_DOWN.admits_info(info("Chair"), "Mug") and ROOM_SURFACE.admits_info(info("Chair"), "Mug")
    assert not FIXED_RECEPTACLE.admits_info(info("Bowl"), "Apple")  # carried itself
    assert FIXED_RECEPTACLE.admits_info(info("Fridge"), "Apple")  # opened and looked into while searching
    assert not ORACLE_ROOM_SURFACE.admits("Bowl", "Apple", receptacle=True)  # contents go inside: not a top
    # THOR's object-specific restrictions apply to every purpose
    assert not FIXED_RECEPTACLE.admits_info(info("Toaster"), "Mug")
    assert FIXED_RECEPTACLE.admits_info(info("TowelHolder"), "Towel")
    assert not FIXED_RECEPTACLE.admits_info(info("TowelHolder"), "Mug")


def test_an_objects_own_affordances_win_over_its_types():
    # a sliced piece is no receptacle whatever its asset says (sim_bridge overrides it)
    assert not ORACLE_PUT_DOWN.admits("AppleSliced", "Mug", receptacle=False)
    assert not ROOM_SURFACE.admits_info(None, "Mug")  # a type the asset database does not know


def test_the_agent_reads_what_any_asset_of_a_type_affords():
    """The agent knows a type, not an asset: ``type_affordances`` is the union over the type's
    assets, where the first asset (``type_info``) is sometimes a static RoboTHOR prop."""
    from planner.recipes import pickupable_type
    from planner.support import catalog_place_watcher

    agent = CATALOG.type_affordances
    for t in ("Vase", "Pillow", "SprayBottle", "SaltShaker", "TennisRacket"):
        assert not CATALOG.type_info(t).pickupable and agent(t).pickupable, t  # the prop, then the type
        assert pickupable_type(t, CATALOG), t
    assert not CATALOG.type_info("Television").toggleable and agent("Television").toggleable
    assert not CATALOG.type_info("GarbageCan").receptacle and agent("GarbageCan").receptacle
    assert agent("Sink").receptacle and not agent("Pen").openable and not agent("CounterTop").pickupable
    assert agent("Vase").asset_id == CATALOG.type_info("Vase").asset_id  # a real asset's size and id
    assert agent("NoSuchType") is None
    watcher = catalog_place_watcher(CATALOG)
    assert watcher.is_pickupable("Vase") and watcher.is_receptacle("GarbageCan")


def test_a_bin_is_searched_but_never_where_the_agent_leaves_things():
    agent = CATALOG.type_affordances
    assert FIXED_RECEPTACLE.admits_info(agent("GarbageCan"), "Apple", CATALOG)  # looked into for unseen things
    assert not ROOM_SURFACE.admits_info(agent("GarbageCan"), "Apple", CATALOG)  # "the apple in the kitchen"
    assert not AGENT_PUT_DOWN.admits_info(agent("GarbageCan"), "Mug", CATALOG)  # freeing the hand
    assert AGENT_PUT_DOWN.admits_info(agent("CounterTop"), "Mug", CATALOG)  # not vacuous
