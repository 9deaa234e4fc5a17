"""Routines: intent words ("tidy up", "set the table", "desk setup") expanded into goals from where
ProcTHOR houses typically put things, marked as inferred.

Why: a concise request names a scenario more than its end state. Without an LLM the parser can
not understand "Do a general tidy", and it must not claim to; what it can do, when asked
(``InstructionParser(routines=True)``, ``worldmind parse --routines``), is make the routine
concrete from data: the observed placement frequencies of the asset data
(``household/data/receptacles.json``: receptacle type -> object type -> count, p). Every item
added or changed here sits in a goal whose hints say ``inferred: <routine>`` and the basis, so a
report can show it was not stated.

The routines:
- ``tidy``: objects sent to a room with no place named go to their most frequent receptacle
  (furniture) in the data, in that room. With no object named at all nothing is invented: the
  routine is reported as needing objects.
- ``set the table``: the tableware (receptacles and fillables) typically on a dining table
  (p >= 0.2) goes on the dining table, unless the instruction already places it.
- ``desk setup``: what typically sits on a desk (p >= 0.3) goes on the desk, and the desk's
  typical toggleables (p >= 0.25) are switched on, unless already stated.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable

from household.checklist import ChecklistItem, ObjectSelector

ROUTINE_PHRASES: dict[str, tuple[str, ...]] = {
    "tidy": ("tidy", "tidy up", "tidy-up", "clean up", "declutter", "put away", "put things away", "sort out",
             "straighten up"),
    "set the table": ("set the table", "lay the table", "table setting", "set a table"),
    "desk setup": ("desk setup", "desk set up", "study setup", "work setup", "set up my desk", "set up the desk",
                   "study session", "workspace setup"),
}
BASIS = "typical placements (household/data/receptacles.json)"
_SET_TABLE_MIN_P = 0.2
_DESK_MIN_P = 0.3
_DESK_TOGGLE_MIN_P = 0.25

Raw = list[tuple[list[ChecklistItem], str, dict[str, str]]]


def routines_in(text: str) -> list[str]:
    """The routines an instruction's words name, in a fixed order."""
    low = " " + re.sub(r"[^a-z]+", " ", text.lower()) + " "
    return [name for name, phrases in ROUTINE_PHRASES.items()
            if any(f" {re.sub(r'[^a-z]+', ' ', p).strip()} " in low for p in phrases)]


class RoutineExpander:
    """Expands routines over a decomposition's raw goals (``[(items, text, hints)]``)."""

    def __init__(self, frequencies: dict[str, dict[str, dict[str, float]]] | None,
                 affords: Callable[[str, str], bool]) -> None:
        self.freq = frequencies if frequencies is not None else _load_frequencies()
        self.affords = affords
        self.best: dict[str, str] = {}
        counts: dict[str, list[tuple[float, str]]] = {}
        for receptacle, objs in self.freq.items():
            if self.affords(receptacle, "pickupable"):
                continue  # furniture only: "put away" means a place, not another object
            for obj, v in objs.items():
                counts.setdefault(obj, []).append((float(v.get("count", 0)), receptacle))
        for obj, rows in counts.items():
            self.best[obj] = sorted(rows, key=lambda r: (-r[0], r[1]))[0][1]

    def expand(self, text: str, raw: Raw, unparsed: list[Any], make_unparsed: Callable[[str, str], Any]) -> Raw:
        for name in routines_in(text):
            if name == "tidy":
                self._tidy(raw, unparsed, make_unparsed)
            elif name == "set the table":
                self._place_typical(raw, name, "DiningTable", _SET_TABLE_MIN_P,
                                    lambda t: self.affords(t, "receptacle") or self.affords(t, "fillable"))
            elif name == "desk setup":
                self._place_typical(raw, name, "Desk", _DESK_MIN_P, lambda t: True)
                self._switch_typical(raw, name, "Desk", _DESK_TOGGLE_MIN_P)
        return raw

    # -------------------------------------------------------------------------------- routines
    def _tidy(self, raw: Raw, unparsed: list[Any], make_unparsed: Callable[[str, str], Any]) -> None:
        inferred: list[ChecklistItem] = []
        for items, _, _ in raw:
            for _k, item in enumerate(list(items)):
                if item.predicate != "inRoom" or not isinstance(item.value, str):
                    continue
                where = self.best.get(item.object.type)
                if where is None:
                    continue
                items.remove(item)
                inferred.append(ChecklistItem(replace(item.object, room=None), "inReceptacle",
                                              ObjectSelector(where, item.value)))
        if inferred:
            raw.append((inferred, "tidy: put away where such things usually go",
                        {"inferred": "tidy", "basis": BASIS}))
        elif not any(items for items, _, _ in raw):
            unparsed.append(make_unparsed("tidy", "routine 'tidy' names no objects: nothing is inferred "
                                                  "(say which things to put away)"))

    def _place_typical(self, raw: Raw, name: str, receptacle: str, min_p: float, keep: Callable[[str], bool]) -> None:
        stated = {i.object.type for items, _, _ in raw for i in items}
        rows = sorted(self.freq.get(receptacle, {}).items(), key=lambda kv: (-kv[1].get("p", 0.0), kv[0]))
        add = [ChecklistItem(ObjectSelector(t), "inReceptacle", ObjectSelector(receptacle))
               for t, v in rows if v.get("p", 0.0) >= min_p and t not in stated and keep(t)
               and self.affords(t, "pickupable")]
        if add:
            raw.append((add, f"{name}: what usually goes on the {receptacle}", {"inferred": name, "basis": BASIS}))

    def _switch_typical(self, raw: Raw, name: str, receptacle: str, min_p: float) -> None:
        stated = {i.object.type for items, _, _ in raw for i in items}
        rows = sorted(self.freq.get(receptacle, {}).items(), key=lambda kv: (-kv[1].get("p", 0.0), kv[0]))
        add = [ChecklistItem(ObjectSelector(t), "isToggled", None, True)
               for t, v in rows if v.get("p", 0.0) >= min_p and t not in stated and self.affords(t, "toggleable")]
        if add:
            raw.append((add, f"{name}: switch on what usually sits on the {receptacle}",
                        {"inferred": name, "basis": BASIS}))


def _load_frequencies() -> dict[str, dict[str, dict[str, float]]]:
    from household.house_data import load_receptacle_frequencies

    return load_receptacle_frequencies()
