"""The ProcTHOR asset database as THOR object semantics.

Affordances come from the database's ``primaryProperty`` (CanPickup, Moveable, Static) and
``secondaryProperties`` (Receptacle, CanOpen, CanToggleOnOff, CanBeSliced, CanBeCooked,
CanBeFilled, CanBeDirty, isHeatSource, isColdSource, ObjectSpecificReceptacle, ...), so the
embedded simulator behaves like THOR on exactly the objects THOR would let you act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from household.house_data import load_asset_database

# What a sliced object turns into (THOR names); eggs crack rather than slice.
SLICED_TYPE = {"Egg": "EggCracked"}

# THOR's object-specific receptacles and what each accepts (from THOR's ReceptacleRestrictions).
OBJECT_SPECIFIC_RECEPTACLES: dict[str, frozenset[str]] = {
    "CoffeeMachine": frozenset({"Mug", "Cup"}),
    "Toaster": frozenset({"BreadSliced"}),
    "ToiletPaperHanger": frozenset({"ToiletPaper"}),
    "TowelHolder": frozenset({"Towel"}),
    "HandTowelHolder": frozenset({"HandTowel"}),
}

# Receptacles whose contents sit inside the box (not on its top face).
CONTAINER_TYPES = frozenset({
    "Fridge", "Microwave", "Box", "Safe", "LaundryHamper", "WashingMachine", "ClothesDryer",
    "Sink", "GarbageCan", "Cup", "Mug", "Bowl", "Pot", "Pan", "Toaster", "CoffeeMachine", "Cart", "Drawer",
})

# Types the asset database does not mark as receptacles although THOR's objects of the type hold
# things and ProcTHOR places things on them (receptacles.json has a ShelvingUnit row): THOR gives
# a shelving unit shelf receptacles; here the unit is the receptacle (sim_bridge/embedded/levels.py).
RECEPTACLE_ADDED = frozenset({"ShelvingUnit"})

# Types that no asset of the database carries but the embedded simulator makes (a dresser's
# drawers, sim_bridge/embedded/levels.py): the affordances THOR gives them, so that everything that
# looks a type up (the planner, the filters) knows them.
DERIVED_TYPES: dict[str, tuple[str, frozenset[str]]] = {
    "Drawer": ("Static", frozenset({"Receptacle", "CanOpen"})),
}

# How far below its box top a container's inner floor lies, where that is less than the box: a
# sink's box runs from the floor (its cabinet or pedestal) to the rim, but its basin is the top of
# it (THOR's SinkBasin). Measured on the ProcTHOR houses: the 554 objects ProcTHOR puts in a sink
# (dev and small houses) rest 0.00 to 0.18 m below the sink's box top, on every sink asset.
# Containers not listed keep their contents on a floor 10% up the box (a bin, a pot, a fridge).
BASIN_DEPTH: dict[str, float] = {"Sink": 0.18}

# Receptacles that hide their contents and refuse new ones while closed: THOR's
# MustBeOpenToPlaceObjectsIn (Drawer, Cabinet, LaundryHamper, Microwave, Fridge, Box) plus the
# other door-closed appliances of the asset database. A Toilet's lid does not count.
MUST_BE_OPEN_TYPES = frozenset({
    "Drawer", "Cabinet", "LaundryHamper", "Microwave", "Fridge", "Box", "Safe", "WashingMachine", "ClothesDryer",
})

SLICER_TYPES = frozenset({"Knife", "ButterKnife"})


def sliced_type(object_type: str) -> str:
    return SLICED_TYPE.get(object_type, f"{object_type}Sliced")


@dataclass(frozen=True)
class AssetInfo:
    asset_id: str
    object_type: str
    size: tuple[float, float, float]  # bounding box extents (x, y, z) in the asset's frame
    primary: str
    secondary: frozenset[str]

    @property
    def pickupable(self) -> bool:
        return self.primary == "CanPickup"

    @property
    def moveable(self) -> bool:
        return self.primary == "Moveable"

    @property
    def receptacle(self) -> bool:
        return "Receptacle" in self.secondary

    @property
    def openable(self) -> bool:
        return "CanOpen" in self.secondary

    @property
    def toggleable(self) -> bool:
        return "CanToggleOnOff" in self.secondary

    @property
    def sliceable(self) -> bool:
        return "CanBeSliced" in self.secondary

    @property
    def cookable(self) -> bool:
        # THOR makes sliced produce cookable too; the database marks only Potato.
        return "CanBeCooked" in self.secondary

    @property
    def fillable(self) -> bool:
        return "CanBeFilled" in self.secondary

    @property
    def dirtyable(self) -> bool:
        return "CanBeDirty" in self.secondary

    @property
    def breakable(self) -> bool:
        return "CanBreak" in self.secondary

    @property
    def can_be_used_up(self) -> bool:
        return "CanBeUsedUp" in self.secondary

    @property
    def heat_source(self) -> bool:
        return "isHeatSource" in self.secondary

    @property
    def cold_source(self) -> bool:
        return "isColdSource" in self.secondary


def _size(box: dict[str, Any]) -> tuple[float, float, float]:
    return float(box["x"]), float(box["y"]), float(box["z"])


class AssetCatalog:
    """assetId -> AssetInfo, plus per-type lookups."""

    def __init__(self, database: dict[str, list[dict[str, Any]]] | None = None) -> None:
        database = database if database is not None else load_asset_database()
        self._assets: dict[str, AssetInfo] = {}
        self._by_type: dict[str, list[AssetInfo]] = {}
        self._affordances: dict[str, AssetInfo] = {}  # type_affordances, filled on first ask
        for object_type, assets in database.items():
            for a in assets:
                info = AssetInfo(
                    asset_id=a["assetId"],
                    object_type=a.get("objectType", object_type),
                    size=_size(a["boundingBox"]),
                    primary=a.get("primaryProperty", "Static"),
                    secondary=frozenset(a.get("secondaryProperties") or ())
                    | (frozenset({"Receptacle"}) if a.get("objectType", object_type) in RECEPTACLE_ADDED else frozenset()),
                )
                self._assets[info.asset_id] = info
                self._by_type.setdefault(info.object_type, []).append(info)
        for object_type, (primary, secondary) in DERIVED_TYPES.items():
            if object_type not in self._by_type:
                info = AssetInfo(f"embedded_{object_type}", object_type, (0.0, 0.0, 0.0), primary, secondary)
                self._assets[info.asset_id] = info
                self._by_type[object_type] = [info]

    def get(self, asset_id: str) -> AssetInfo | None:
        return self._assets.get(asset_id)

    def __contains__(self, asset_id: str) -> bool:
        return asset_id in self._assets

    @property
    def object_types(self) -> list[str]:
        return sorted(self._by_type)

    def type_info(self, object_type: str) -> AssetInfo | None:
        """The type's first asset: a real asset, to build an object of the type from (its size,
        its id). Not what an object of the type can do: affordances mostly agree within a type,
        but not always, and the database's RoboTHOR props are static (its first television has
        no CanToggleOnOff, its first vase, pillow and spray bottle are not CanPickup, its first
        garbage can no Receptacle). The agent, which knows an object's type and not its asset,
        asks ``type_affordances``; a question about one flag asks ``type_affords``."""
        assets = self._by_type.get(object_type)
        return assets[0] if assets else None

    def type_affordances(self, object_type: str) -> AssetInfo | None:
        """What an object of the type may afford, for an agent that knows the type and not the
        asset: the union of the type's assets' secondary properties, and ``CanPickup`` where any
        of its assets can be picked up (else the first asset's primary property). The size and
        id are the first asset's. Where this one object cannot after all (a static prop among
        the type's assets), the simulator or the robot refuses the action with a typed outcome
        and the agent re-plans, as it does for any refusal; by the first asset alone the agent
        never carried a vase nor looked into a garbage can. None for a type the database does
        not hold."""
        if object_type not in self._affordances:
            assets = self._by_type.get(object_type)
            if not assets:
                return None
            first = assets[0]
            primary = "CanPickup" if any(a.pickupable for a in assets) else first.primary
            secondary = frozenset().union(*(a.secondary for a in assets))
            self._affordances[object_type] = AssetInfo(first.asset_id, object_type, first.size, primary, secondary)
        return self._affordances[object_type]

    def type_affords(self, object_type: str, name: str) -> bool | None:
        """One flag of ``type_affordances`` (an ``AssetInfo`` property: "toggleable",
        "pickupable", ...): whether any asset of the type has it; None for a type the database
        does not hold. What the language readers judge an instruction by, so the parser and the
        agent read one record: a state is refused only where no asset of the type could take it."""
        info = self.type_affordances(object_type)
        return None if info is None else bool(getattr(info, name))

    def typical_size(self, object_type: str) -> tuple[float, float, float] | None:
        """The median box extents (x, y, z, metres, the asset's frame) over the type's assets;
        None for an unknown type or one with no real asset (a derived type such as a slice)."""
        sizes = [a.size for a in self._by_type.get(object_type, ()) if any(a.size)]
        if not sizes:
            return None
        ordered = [sorted(axis) for axis in zip(*sizes)]
        return (ordered[0][len(sizes) // 2], ordered[1][len(sizes) // 2], ordered[2][len(sizes) // 2])

    def accepts(self, receptacle_type: str, object_type: str) -> bool:
        allowed = OBJECT_SPECIFIC_RECEPTACLES.get(receptacle_type)
        return allowed is None or object_type in allowed


_DEFAULT: AssetCatalog | None = None


def default_catalog() -> AssetCatalog:
    """The packaged database, parsed once per process."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = AssetCatalog()
    return _DEFAULT
