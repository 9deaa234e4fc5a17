"""Where things are kept: P(receptacle type | object type), counted on the DEV houses.

An object the agent has not seen after exploring is in or on something it did not look at closely
(an apple in the fridge, a pencil in a desk drawer, a remote on the TV stand). Which receptacles to
visit first is a question of where a household keeps that kind of thing, which the ProcTHOR houses
state: each receptacle lists what it holds (``children``). The counts come from the packaged DEV
houses only, never the test houses, with add-one smoothing so a pairing never seen is unlikely but
possible. The search ranks receptacles by walking distance over how likely the object still is
there (``still_there``: where it is kept, given exploring did not show it), so a fridge 10 m away
goes before a sofa 2 m away when looking for an apple.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from dataclasses import dataclass

FLOOR_PROBABILITY = 0.01  # no pairing is ruled out: a type the houses never showed anywhere
# After exploring without seeing the object, an open surface the agent looked at from afar may
# still hold it (small things show only from close by), a closed one certainly could: the
# chance that exploring missed it on an open surface (chosen, not measured).
MISSED_ON_OPEN_SURFACE = 0.25
# Receptacles the house files never name, counted as the furniture they are part of: a dresser's
# drawers (the simulator derives them from what rests inside a dresser; the houses list those
# things as the dresser's children), so a pencil is looked for in a dresser's drawers as often as
# the houses keep pencils in dressers.
PART_OF_TYPE = {"Drawer": "Dresser"}


@dataclass(frozen=True)
class PlacementPrior:
    counts: dict[str, Counter[str]]  # object type -> receptacle type -> how many the houses hold
    receptacle_types: frozenset[str]

    def probability(self, receptacle_type: str, object_type: str) -> float:
        """P(the object stands in or on this type | it stands in or on some receptacle), add-one."""
        seen = self.counts.get(object_type)
        if not seen:
            return FLOOR_PROBABILITY
        receptacle_type = PART_OF_TYPE.get(receptacle_type, receptacle_type)
        total = sum(seen.values()) + len(self.receptacle_types) + 1
        return (seen.get(receptacle_type, 0) + 1) / total

    def still_there(self, receptacle_type: str, object_type: str, closed: bool) -> float:
        """How likely (up to a constant) the object is in or on this receptacle after exploring
        did not show it: where it is kept, times the chance exploring missed it there (certain
        for a closed one, ``MISSED_ON_OPEN_SURFACE`` for an open one). A wine bottle is kept on
        counters more than in fridges, but one not seen on any counter is likelier in the fridge."""
        return self.probability(receptacle_type, object_type) * (1.0 if closed else MISSED_ON_OPEN_SURFACE)


@functools.lru_cache(maxsize=1)
def dev_placement_prior() -> PlacementPrior:
    """Count (held type, receptacle type) over the packaged dev houses' ``children`` lists."""
    from household.assets import default_catalog
    from household.house_data import load_houses_file, resolve_data_file

    catalog = default_catalog()

    def type_of(obj: dict) -> str | None:
        info = catalog.get(str(obj.get("assetId", "")))
        return info.object_type if info is not None else None

    counts: dict[str, Counter[str]] = defaultdict(Counter)
    receptacles: set[str] = set()

    def walk(obj: dict) -> None:
        parent = type_of(obj)
        for child in obj.get("children") or []:
            held = type_of(child)
            if parent and held:
                counts[held][parent] += 1
                receptacles.add(parent)
            walk(child)

    for house in load_houses_file(resolve_data_file("houses_dev.jsonl.gz")).houses:
        for obj in house.get("objects", []):
            walk(obj)
    return PlacementPrior(dict(counts), frozenset(receptacles))
