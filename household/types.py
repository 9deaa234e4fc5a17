"""The records that cross the Environment seam (docs/ARCHITECTURE.md, "The seams").

Every backend (embedded, thor, habitat, ros, replay) produces these and nothing else, so the
planner, perception and evaluation never learn which simulator (or robot) they are talking to.

Frames: every pose and point in an Observation is in the ROS REP 103 world frame (x forward,
y left, z up, metres). The camera pose ``world_from_camera`` maps points from the camera
*optical* frame (REP 103 optical convention: x right, y down, z forward) into the world, which is
what a pinhole back-projection with ``intrinsics`` produces. ``WorldState`` is the evaluation-only
ground truth and keeps THOR's field names and THOR's frame (y up), because checklists and THOR
metadata are written in those terms; ``household.frames`` converts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from household.interactions import INTERACTION_ACTIONS as _INTERACTION_ACTIONS

# The ALFRED/LongAct action vocabulary. Backends may add actions (e.g. a device setter) but must
# accept all of these.
# Posture: THOR's Crouch lowers the camera (to the body centre, 0.9 m, in the default agent) and
# Stand raises it again; what ProcTHOR puts on a low shelf or in a bottom drawer is seen only so.
# A robot maps them onto a torso lift or a camera mast (sim_bridge/ros/skills.py: ``posture``).
POSTURE_ACTIONS = ("Crouch", "Stand")
NAVIGATION_ACTIONS = (
    "MoveAhead",
    "MoveBack",
    "MoveLeft",
    "MoveRight",
    "RotateLeft",
    "RotateRight",
    "LookUp",
    "LookDown",
) + POSTURE_ACTIONS
# Object interactions: one table in household.interactions (THOR call, robot skill, planner
# skill, belief effect per interaction), read by every backend and the planner.
INTERACTION_ACTIONS = _INTERACTION_ACTIONS
# Stop ends the episode. Pass (THOR's own no-op) is a step in which nothing moves: the agent
# hands it in when one decision's planning would run past its budget (planner.planning_budget)
# and decides on the next frame; a robot holds still for it (the ``wait`` skill of ExecuteSkill).
PASS = "Pass"
CONTROL_ACTIONS = (PASS, "Stop")
ACTIONS = NAVIGATION_ACTIONS + INTERACTION_ACTIONS + CONTROL_ACTIONS


@dataclass(frozen=True)
class Action:
    """One atomic action. ``object_id`` is the target for interactions (for PutObject: the
    receptacle, as in ai2thor 5.0); ``args`` carries backend extras (e.g. ``degrees``)."""

    name: str
    object_id: str | None = None
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def is_navigation(self) -> bool:
        return self.name in NAVIGATION_ACTIONS

    @property
    def is_interaction(self) -> bool:
        return self.name in INTERACTION_ACTIONS

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.name}
        if self.object_id is not None:
            out["objectId"] = self.object_id
        out.update(self.args)
        return out


@dataclass(frozen=True)
class CameraIntrinsics:
    """Pinhole intrinsics in pixels (u to the right, v down, principal point at cx, cy)."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float

    @classmethod
    def from_fov(cls, width: int, height: int, vertical_fov_deg: float) -> "CameraIntrinsics":
        """THOR's ``fieldOfView`` is vertical; square pixels."""
        f = 0.5 * height / np.tan(np.radians(vertical_fov_deg) / 2.0)
        return cls(width, height, float(f), float(f), (width - 1) / 2.0, (height - 1) / 2.0)

    def matrix(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class InstanceLabel:
    """What an instance id in the segmentation image stands for, and what a state classifier
    reports of it in this frame (``household.visible_states``: THOR flag -> value, sorted pairs;
    empty where the instance is too small in the frame or the backend has no classifier)."""

    object_id: str
    object_type: str
    states: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class AgentStatus:
    """What the agent knows of itself (proprioception): pose in REP 103 and what it holds."""

    position: tuple[float, float, float]
    yaw_deg: float  # counter-clockwise about +z, 0 = facing +x
    horizon_deg: float  # camera pitch, positive looks down (THOR's cameraHorizon)
    held_object_id: str | None = None
    held_object_type: str | None = None


@dataclass(frozen=True)
class ActionFeedback:
    """What the last action did. ``failure`` is the typed outcome (a ``household.outcomes.Failure``
    value, "" on success): backends set it where they know why; "" with ``success`` False means the
    backend sent only text, and ``household.outcomes.failure_of`` falls back to reading it."""

    action: str | None
    success: bool
    error: str = ""
    failure: str = ""


@dataclass
class Observation:
    """One sensor frame. Image fields are None when the backend was asked not to render."""

    step: int
    intrinsics: CameraIntrinsics
    world_from_camera: np.ndarray  # 4x4, optical camera frame -> REP 103 world
    agent: AgentStatus
    feedback: ActionFeedback
    rgb: np.ndarray | None = None  # HxWx3 uint8
    depth: np.ndarray | None = None  # HxW float32 metres (z-depth); 0 where nothing was hit
    instance_ids: np.ndarray | None = None  # HxW int32; 0 = no object (walls, floor, void)
    id_to_label: dict[int, InstanceLabel] = field(default_factory=dict)
    room_id: str | None = None  # only if the backend knows it without ground truth (None here)


@dataclass
class StepResult:
    observation: Observation
    success: bool
    error: str = ""

    @property
    def failure(self) -> str:
        """The typed outcome the backend reported (``observation.feedback.failure``)."""
        return self.observation.feedback.failure


@dataclass
class RoomInfo:
    id: str
    room_type: str
    polygon: list[tuple[float, float]]  # THOR (x, z) floor polygon


@dataclass
class WorldState:
    """Ground truth for evaluation only: THOR-shaped object metadata (THOR frame, THOR field
    names), the agent's THOR metadata, and the rooms. Never handed to a non-privileged agent."""

    objects: list[dict[str, Any]]
    agent: dict[str, Any]
    rooms: list[RoomInfo]
    held_object_id: str | None = None
    house_id: str = ""

    def object(self, object_id: str) -> dict[str, Any]:
        for obj in self.objects:
            if obj["objectId"] == object_id:
                return obj
        raise KeyError(f"unknown object id {object_id!r} in house {self.house_id!r}")

    def room_of_point(self, x: float, z: float) -> RoomInfo | None:
        for room in self.rooms:
            if point_in_polygon(x, z, room.polygon):
                return room
        return None

    def room_of(self, obj: dict[str, Any]) -> RoomInfo | None:
        p = obj["position"]
        return self.room_of_point(p["x"], p["z"])


def point_in_polygon(x: float, z: float, polygon: list[tuple[float, float]]) -> bool:
    """Even-odd rule; points on an edge count as inside for one of the two rooms sharing it."""
    inside = False
    n = len(polygon)
    for i in range(n):
        x1, z1 = polygon[i]
        x2, z2 = polygon[(i + 1) % n]
        if (z1 > z) != (z2 > z):
            xc = x1 + (z - z1) * (x2 - x1) / (z2 - z1)
            if x < xc:
                inside = not inside
    return inside


@runtime_checkable
class Environment(Protocol):
    """The seam every backend implements."""

    def reset(self, episode: Any) -> Observation: ...

    def step(self, action: Action) -> StepResult: ...

    def ground_truth(self) -> WorldState: ...
