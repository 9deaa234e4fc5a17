"""THOR events -> the seam's records (Observation, WorldState).

THOR reports the agent and the camera in its own y-up, left-handed frame and segments instances
by colour; the seam wants REP 103 poses and integer instance ids with a label table. This module
does that conversion and nothing else, so it can be tested on a hand-made event and reused by
anything that reads THOR-shaped metadata (the embedded simulator speaks the same field names).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from sim_bridge.embedded.house_geometry import parse_layout
from household.frames import thor_camera_to_ros_pose, thor_to_ros_points, thor_yaw_to_ros
from household.visible_states import states_from_metadata, with_states
from household.types import (
    ActionFeedback,
    AgentStatus,
    CameraIntrinsics,
    InstanceLabel,
    Observation,
    RoomInfo,
    WorldState,
)


def _xyz(d: Mapping[str, Any]) -> np.ndarray:
    return np.array([float(d["x"]), float(d["y"]), float(d["z"])])


def rooms_from_house(house: dict[str, Any]) -> tuple[list[RoomInfo], float]:
    """Rooms (THOR x, z polygons) and the floor height of a ProcTHOR house. THOR's metadata has
    no rooms, so inRoom checklist items are scored against the house that was handed over."""
    layout = parse_layout(house)
    ys = [float(p.get("y", 0.0)) for room in house.get("rooms") or [] for p in room.get("floorPolygon") or []]
    rooms = [RoomInfo(r.id, r.room_type, list(r.polygon)) for r in layout.rooms]
    return rooms, (min(ys) if ys else 0.0)


@dataclass
class InstanceIds:
    """Stable integer ids for THOR object ids within one episode (THOR only gives colours, and a
    colour is not an id a memory can key on). 0 is reserved for "no object"."""

    by_object: dict[str, int] = field(default_factory=dict)

    def get(self, object_id: str) -> int:
        if object_id not in self.by_object:
            self.by_object[object_id] = len(self.by_object) + 1
        return self.by_object[object_id]


def instance_image(colors: np.ndarray, color_to_object_id: Mapping[tuple[int, int, int], str],
                   object_types: Mapping[str, str], ids: InstanceIds) -> tuple[np.ndarray, dict[int, InstanceLabel]]:
    """(H, W, 3) segmentation colours -> (H, W) int32 ids and their labels. Colours of things that
    are not objects in the metadata (walls, floor, ceiling) become 0."""
    packed = (colors[..., 0].astype(np.int64) << 16) | (colors[..., 1].astype(np.int64) << 8) | colors[..., 2]
    keys, inverse = np.unique(packed.ravel(), return_inverse=True)
    lookup = np.zeros(len(keys), dtype=np.int32)
    labels: dict[int, InstanceLabel] = {}
    for i, key in enumerate(keys):
        name = color_to_object_id.get((int(key) >> 16, (int(key) >> 8) & 255, int(key) & 255))
        if name is not None and name in object_types:
            k = ids.get(name)
            lookup[i] = k
            labels[k] = InstanceLabel(name, object_types[name])
    return lookup[inverse].reshape(packed.shape), labels


def observation_from_event(event: Any, step: int, feedback: ActionFeedback, ids: InstanceIds,
                           floor_y: float = 0.0) -> Observation:
    """One ai2thor ``Event`` as an Observation. Depth is ``event.depth_frame`` (metres, as the
    Controller was asked for); intrinsics come from the reported vertical ``fov``."""
    md = event.metadata
    agent = md["agent"]
    intrinsics = CameraIntrinsics.from_fov(int(md["screenWidth"]), int(md["screenHeight"]), float(md["fov"]))
    yaw = float(agent["rotation"]["y"])
    horizon = float(agent["cameraHorizon"])
    pose = thor_camera_to_ros_pose(_xyz(md["cameraPosition"]), yaw, horizon)
    base = _xyz(agent["position"])
    base[1] = floor_y
    floor_ros = thor_to_ros_points(base)
    held = (md.get("inventoryObjects") or [None])[0]
    status = AgentStatus((float(floor_ros[0]), float(floor_ros[1]), float(floor_ros[2])), thor_yaw_to_ros(yaw),
                         horizon, held["objectId"] if held else None, held["objectType"] if held else None)
    obs = Observation(step, intrinsics, pose, status, feedback)
    if event.frame is not None:
        obs.rgb = np.ascontiguousarray(event.frame)
    if event.depth_frame is not None:
        obs.depth = np.ascontiguousarray(event.depth_frame, dtype=np.float32)
    if event.instance_segmentation_frame is not None:
        meta = {o["objectId"]: o for o in md["objects"]}
        types = {k: o["objectType"] for k, o in meta.items()}
        obs.instance_ids, labels = instance_image(event.instance_segmentation_frame, event.color_to_object_id,
                                                  types, ids)
        # what a close look shows (THOR renders these states; household.visible_states)
        obs.id_to_label = with_states(obs.instance_ids, obs.depth, labels, lambda oid: states_from_metadata(meta[oid]))
    return obs


def world_state_from_metadata(md: Mapping[str, Any], rooms: list[RoomInfo], house_id: str) -> WorldState:
    """THOR metadata as evaluation ground truth (THOR frame and field names, as checklists use)."""
    held = (md.get("inventoryObjects") or [None])[0]
    return WorldState(objects=list(md["objects"]), agent=dict(md["agent"]), rooms=rooms,
                      held_object_id=held["objectId"] if held else None, house_id=house_id)
