"""The objects the habitat backend tracks, and habitat's frame relative to REP 103 and THOR.

habitat_sim knows meshes and semantic ids; checklists need THOR-shaped records (ids, types,
states, receptacles, THOR-frame positions). A ``SceneItem`` is that bridge for one object: an
annotated scene object (static; accepts things on top) or an object the episode placed.

Frames: habitat is y up, right-handed, agents face -z. REP 103 = (-z, -x, y) of habitat (a
rotation); THOR = (x, y, -z) of habitat (a reflection, as THOR is left-handed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sim_bridge.habitat.episode import HabitatObject

ROS_FROM_HABITAT = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
THOR_FROM_HABITAT = np.diag([1.0, 1.0, -1.0])


@dataclass
class SceneItem:
    """An episode object (``spec`` set) or an annotated scene object (``spec`` None)."""

    id: str
    type: str
    semantic_id: int
    lo: np.ndarray  # axis-aligned box, habitat frame
    hi: np.ndarray
    spec: HabitatObject | None = None
    rigid: Any = None  # its ManagedRigidObject while it is in the scene
    handle: str = ""  # object template handle
    held: bool = False
    is_open: bool = False
    is_toggled: bool = False
    parents: list[str] = field(default_factory=list)

    @property
    def center(self) -> np.ndarray:
        return (self.lo + self.hi) / 2.0

    def distance(self, point: np.ndarray) -> float:
        """From a point to the box (0 inside), as THOR measures reach."""
        return float(np.linalg.norm(point - np.clip(point, self.lo, self.hi)))

    def affords(self, what: str) -> bool:
        if self.spec is None:
            return what == "receptacle"  # annotated scene objects accept things on top, nothing else
        return bool(getattr(self.spec, what))

    def metadata(self, camera: np.ndarray, visible: bool) -> dict[str, Any]:
        """THOR-shaped record (THOR frame) with the fields checklists read; a held object is
        where the camera is, as THOR reports objects in hand."""
        pos = THOR_FROM_HABITAT @ (camera if self.held else self.center)
        return {
            "objectId": self.id, "name": self.id, "objectType": self.type,
            "position": dict(zip("xyz", map(float, pos), strict=True)),
            "rotation": {"x": 0.0, "y": float(-self.spec.yaw_deg % 360.0) if self.spec else 0.0, "z": 0.0},
            "visible": visible, "pickupable": self.affords("pickupable"), "isPickedUp": self.held,
            "receptacle": self.affords("receptacle"), "parentReceptacles": list(self.parents) or None,
            "openable": self.affords("openable"), "isOpen": self.is_open,
            "toggleable": self.affords("toggleable"), "isToggled": self.is_toggled,
            "sliceable": False, "isSliced": False, "isCooked": False, "isDirty": False,
            "isFilledWithLiquid": False, "fillLiquid": None,
        }
