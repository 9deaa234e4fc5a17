"""Validation of an episode against the house it runs in (split out of evaluation/episodes.py).

Parsing (episodes.py) checks the schema; this checks what only a concrete house and asset database
can tell: that a Toaster, a Garage or object "4|1" exist, that the predicate's object has the
property it needs, that the agent starts inside a room, and that the house's numbers are finite
and of household size (issue 32: a NaN position or a 1e306 m room used to pass and score GC 0).
Errors are ``EpisodeError``, one line per problem naming the episode id and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from evaluation.episode_errors import EpisodeError, _join
from household.checklist import PREDICATES, ObjectSelector, sliced_base_type
from household.house_data import HouseError
from household.house_limits import object_number_problems
from household.types import point_in_polygon
from household.assets import RECEPTACLE_ADDED
from sim_bridge.embedded.house_geometry import parse_layout


def _walk(objects: list[Any]) -> Iterator[dict[str, Any]]:
    for obj in objects:
        if isinstance(obj, dict):
            yield obj
            yield from _walk(obj.get("children") or [])


def _has_property(asset: dict[str, Any], prop: str) -> bool:
    """From the asset database record, with the catalog's additions (a ShelvingUnit is a
    receptacle: household/assets.py RECEPTACLE_ADDED), so validation agrees with the simulator."""
    if prop == "Receptacle" and asset.get("objectType") in RECEPTACLE_ADDED:
        return True
    return asset.get("primaryProperty") == prop or prop in (asset.get("secondaryProperties") or ())


@dataclass
class _HouseIndex:
    """What validation needs to know about a house: object types (with their asset records),
    object ids, and rooms."""

    label: str
    by_type: dict[str, list[dict[str, Any]]]
    by_id: dict[str, dict[str, Any] | None]  # objectId -> asset record (None: asset unknown)
    room_types: set[str]
    room_ids: set[str]

    @classmethod
    def build(cls, house: dict[str, Any], asset_db: dict[str, list[dict[str, Any]]], label: str) -> "_HouseIndex":
        assets = {a["assetId"]: a for group in asset_db.values() for a in group}
        by_type: dict[str, list[dict[str, Any]]] = {}
        by_id: dict[str, dict[str, Any] | None] = {}
        for obj in _walk(house.get("objects") or []):
            asset = assets.get(str(obj.get("assetId")))
            by_id[str(obj.get("id"))] = asset
            if asset is not None:
                by_type.setdefault(asset["objectType"], []).append(asset)
        rooms = [r for r in house.get("rooms") or [] if isinstance(r, dict)]
        return cls(label, by_type, by_id, {str(r.get("roomType")) for r in rooms}, {str(r.get("id")) for r in rooms})

    def room_problem(self, room: str) -> str | None:
        if room.startswith("room|"):
            return None if room in self.room_ids else f"no room with id {room!r} in house {self.label}"
        if room in self.room_types:
            return None
        return f"no room of type {room!r} in house {self.label} (rooms: {', '.join(sorted(self.room_types))})"


def _selector_problems(sel: ObjectSelector, path: str, requires: tuple[str, str, str] | None,
                       idx: _HouseIndex, asset_db: dict[str, list[dict[str, Any]]]) -> list[tuple[str, str]]:
    """Problems with one selector in this house, as (field path, message). ``requires`` is
    (asset property, field path to blame, what needs it) when the predicate needs a property."""
    out: list[tuple[str, str]] = []
    base = sliced_base_type(sel.type) if sel.type not in idx.by_type else None
    present = sel.type in idx.by_type
    if not present and base is not None and base in idx.by_type:
        if not any(_has_property(a, "CanBeSliced") for a in idx.by_type[base]):
            out.append((f"{path}.type",
                        f"{sel.type!r} needs a sliceable {base}, and no {base} in house {idx.label} is"))
    elif not present:
        if base is not None:
            unknown = f" (needs a sliceable {base})"
        else:
            unknown = "" if sel.type in asset_db else " (not an object type in the asset database)"
        out.append((f"{path}.type", f"no object of type {sel.type!r} in house {idx.label}{unknown}"))
    if sel.room is not None:
        problem = idx.room_problem(sel.room)
        if problem:
            out.append((f"{path}.room", problem))
    for k, oid in enumerate(sel.ids or ()):
        asset = idx.by_id.get(oid)
        if oid not in idx.by_id:
            out.append((f"{path}.ids[{k}]", f"no object with id {oid!r} in house {idx.label}"))
        elif asset is not None and asset["objectType"] != sel.type:
            out.append((f"{path}.ids[{k}]", f"object {oid!r} is a {asset['objectType']}, not a {sel.type}"))
    id_ok = sel.id is None
    if sel.id is not None:
        asset = idx.by_id.get(sel.id)
        if base is not None:
            out.append((f"{path}.id", "a sliced-piece selector takes no id (slicing creates new objects); "
                                      "select the pieces by type and room"))
        elif sel.id not in idx.by_id:
            out.append((f"{path}.id", f"no object with id {sel.id!r} in house {idx.label}"))
        elif asset is None:
            out.append((f"{path}.id", f"object {sel.id!r} has an asset missing from the asset database"))
        elif asset["objectType"] != sel.type:
            out.append((f"{path}.id", f"object {sel.id!r} is a {asset['objectType']}, not a {sel.type}"))
        else:
            id_ok = True
    if present and sel.count is not None and sel.count > len(idx.by_type[sel.type]):
        out.append((f"{path}.count", f"{sel.count} objects asked for, but house {idx.label} has only "
                                     f"{len(idx.by_type[sel.type])} of type {sel.type!r}"))
    # The asset database describes whole objects, not sliced pieces, so pieces are not checked.
    if present and id_ok and requires is not None:
        prop, blame, needs = requires
        assets = [idx.by_id[sel.id]] if sel.id is not None else idx.by_type[sel.type]
        if not any(a is not None and _has_property(a, prop) for a in assets):
            which = f"{sel.type} {sel.id}" if sel.id is not None else f"{sel.type} in house {idx.label}"
            out.append((blame, f"{needs} {prop}, and no {which} has it (asset database)"))
    return out


def validate_episode(episode: Any, house: dict[str, Any], asset_db: dict[str, list[dict[str, Any]]]) -> None:
    """Check an episode (evaluation.episodes.Episode) against the house it runs in; raise EpisodeError listing every problem,
    one per line, each naming the episode id and the field ("checklist[4].object.type").

    Beyond the schema this checks that selected types exist in the house (a sliced type such as
    "AppleSliced" needs a sliceable "Apple"), rooms and ids exist, ids have the selected type,
    counts do not exceed the objects present, the object (and target) assets have the property
    the predicate needs (isOpen: CanOpen, inReceptacle target: Receptacle, ...), and the agent
    start lies inside a room. All of these would otherwise surface as a silent GC of 0."""
    label = str(house.get("id") or episode.house_label)
    try:
        layout = parse_layout(house)
    except HouseError as exc:
        raise EpisodeError(f"episode {episode.id}: house: {exc}") from exc
    idx = _HouseIndex.build(house, asset_db, label)
    # NaN or astronomically large object coordinates (rooms and walls: parse_layout above).
    found: list[tuple[str, str]] = [(f"house.{f}", m) for f, m in object_number_problems(house)]
    for i, item in enumerate(episode.checklist):
        where = f"checklist[{i}]"
        found.extend((_join(where, f), m) for f, m in item.problems())
        pred = PREDICATES.get(item.predicate)
        needs = ((pred.requires, f"{where}.predicate", f"predicate {pred.name!r} needs")
                 if pred and pred.requires else None)
        found.extend(_selector_problems(item.object, f"{where}.object", needs, idx, asset_db))
        if item.target is not None:
            needs = ((pred.target_requires, f"{where}.target", f"predicate {pred.name!r} needs a target with")
                     if pred and pred.target_requires else None)
            found.extend(_selector_problems(item.target, f"{where}.target", needs, idx, asset_db))
        if pred is not None and pred.value_kind == "room" and isinstance(item.value, str) and item.value:
            problem = idx.room_problem(item.value)
            if problem:
                found.append((f"{where}.value", problem))
    for i, state in enumerate(episode.object_states or ()):
        where = f"object_states[{i}]"
        if state["id"] not in idx.by_id:
            found.append((f"{where}.id", f"no object with id {state['id']!r} in house {label}"))
            continue
        asset = idx.by_id[state["id"]]
        if state.get("isDirty") and (asset is None or not _has_property(asset, "CanBeDirty")):
            found.append((f"{where}.isDirty", f"object {state['id']!r} cannot be dirty (no CanBeDirty in the asset "
                                              "database)"))
    if episode.agent_start is not None:
        x, _, z = episode.agent_start.position
        if not any(point_in_polygon(x, z, list(room.polygon)) for room in layout.rooms):
            found.append(("agent_start.position",
                          f"(x, z) = ({x:.2f}, {z:.2f}) lies outside every room of house {label}"))
    if found:
        raise EpisodeError([f"episode {episode.id}: {path}: {message}" for path, message in found])
