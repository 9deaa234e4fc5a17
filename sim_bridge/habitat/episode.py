"""What a habitat episode is made of, and checks of the user's dataset before habitat_sim runs.

habitat_sim scenes carry geometry and semantic annotations but no THOR-style affordances, and the
objects a task moves are the user's assets. So a habitat episode names a scene of the dataset
plus the objects to place in it (template, id, THOR-style type, pose and what they afford);
ids and types are what checklists and actions refer to, exactly as in THOR.

JSON form (a file, an inline dict, or the ``"habitat"`` field of a LongAct episode)::

    {"scene": "apartment_0",
     "agent_start": {"position": [x, y, z], "yaw_deg": 0, "horizon_deg": 0},
     "objects": [{"id": "Mug|1", "type": "Mug", "template": "mug",
                  "position": [x, y, z], "yaw_deg": 0, "pickupable": true}]}

Positions are in habitat's own frame (y up, -z forward, metres), as the dataset's tools show them.
"""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class HabitatError(RuntimeError):
    """Base of the habitat backend's errors."""


class HabitatDatasetError(HabitatError):
    """The dataset, a scene, a navmesh or an object template the episode needs is missing."""


Vec3 = tuple[float, float, float]


def _vec3(value: Any, where: str) -> Vec3:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise HabitatError(f"{where}: expected [x, y, z], got {value!r}")
    return float(value[0]), float(value[1]), float(value[2])


@dataclass(frozen=True)
class HabitatObject:
    """One object the episode adds to the scene through the rigid object manager."""

    id: str  # what actions and checklists use, e.g. "Mug|1"
    type: str  # THOR-style objectType, e.g. "Mug"
    template: str  # object template handle, or a substring matching exactly one handle
    position: Vec3  # habitat frame
    yaw_deg: float = 0.0  # about +y (habitat up), counter-clockwise seen from above
    pickupable: bool = True
    receptacle: bool = False
    openable: bool = False
    toggleable: bool = False

    @classmethod
    def from_dict(cls, data: Any, where: str) -> "HabitatObject":
        if not isinstance(data, dict):
            raise HabitatError(f"{where}: expected an object, got {data!r}")
        for key in ("id", "type", "template", "position"):
            if key not in data:
                raise HabitatError(f"{where}.{key}: missing field")
        flags = {k: bool(data[k]) for k in ("pickupable", "receptacle", "openable", "toggleable") if k in data}
        return cls(str(data["id"]), str(data["type"]), str(data["template"]),
                   _vec3(data["position"], f"{where}.position"), float(data.get("yaw_deg", 0.0)), **flags)


@dataclass(frozen=True)
class HabitatEpisode:
    scene: str
    objects: tuple[HabitatObject, ...] = ()
    start_position: Vec3 | None = None  # None: a navigable point drawn with the config's seed
    start_yaw_deg: float = 0.0
    start_horizon_deg: float = 0.0

    @classmethod
    def from_dict(cls, data: Any, where: str = "habitat episode") -> "HabitatEpisode":
        if not isinstance(data, dict) or not isinstance(data.get("scene"), str) or not data["scene"]:
            raise HabitatError(f"{where}.scene: expected a scene name of the dataset")
        start = data.get("agent_start") or {}
        objects = data.get("objects") or []
        if not isinstance(objects, list):
            raise HabitatError(f"{where}.objects: expected a list")
        parsed = tuple(HabitatObject.from_dict(o, f"{where}.objects[{i}]") for i, o in enumerate(objects))
        return cls(data["scene"], parsed,
                   _vec3(start["position"], f"{where}.agent_start.position") if "position" in start else None,
                   float(start.get("yaw_deg", 0.0)), float(start.get("horizon_deg", 0.0)))

    @classmethod
    def of(cls, episode: Any) -> "HabitatEpisode":
        """A HabitatEpisode from itself, a dict, or a LongAct Episode with a ``habitat`` field."""
        if isinstance(episode, cls):
            return episode
        if isinstance(episode, dict):
            return cls.from_dict(episode)
        spec = (getattr(episode, "extra", None) or {}).get("habitat")
        if spec is None:
            eid = getattr(episode, "id", type(episode).__name__)
            raise HabitatError(f"episode {eid}: the habitat backend runs habitat scenes, and this episode has no "
                               "'habitat' field ({scene, objects, agent_start}); ProcTHOR houses run on the "
                               "embedded or thor backends")
        return cls.from_dict(spec, f"episode {episode.id}: habitat")


def dataset_config(path: str) -> Path:
    """The ``*.scene_dataset_config.json`` named by ``path`` (the file, or a folder holding one)."""
    p = Path(path).expanduser()
    if not path or not p.exists():
        raise HabitatDatasetError(
            f"habitat dataset {path or '<not set>'!r} does not exist; pass dataset=<folder or "
            "*.scene_dataset_config.json> (layout: sim_bridge/habitat/README.md). Habitat datasets are "
            "downloaded separately, e.g. `python -m habitat_sim.utils.datasets_download --uids hssd-hab`")
    if p.is_dir():
        found = sorted(p.glob("*.scene_dataset_config.json"))
        if len(found) != 1:
            raise HabitatDatasetError(f"habitat dataset folder {p} must hold exactly one *.scene_dataset_config.json "
                                      f"(found {len(found)})")
        p = found[0]
    return p


def scene_names(config_file: Path) -> set[str]:
    """Scene and stage names the dataset config declares (file names without their suffixes),
    so an unknown scene is reported before habitat_sim silently loads an empty world."""
    try:
        config = json.loads(config_file.read_text())
    except (OSError, ValueError) as exc:
        raise HabitatDatasetError(f"{config_file}: unreadable scene dataset config ({exc})") from exc
    names: set[str] = set()
    for section in ("scene_instances", "stages"):
        for patterns in ((config.get(section) or {}).get("paths") or {}).values():
            for pattern in patterns:
                for hit in glob.glob(str(config_file.parent / pattern), recursive=True):
                    names.add(Path(hit).name.split(".")[0])
    return names
