"""THOR-shaped metadata for the embedded simulator (field names as ai2thor 5.0's ObjectMetadata).

Keeping THOR's names and frame means the evaluation code, and anything written against THOR's
event metadata, reads the embedded simulator and the thor backend through one adapter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim_bridge.embedded.objects import SimObject


def _xyz(v: np.ndarray) -> dict[str, float]:
    return {"x": float(v[0]), "y": float(v[1]), "z": float(v[2])}


def state_metadata(obj: SimObject) -> dict[str, Any]:
    """The capability and state fields a state classifier reads (household.visible_states)."""
    a = obj.affords
    return {"openable": a("openable"), "isOpen": obj.is_open, "toggleable": a("toggleable"),
            "isToggled": obj.is_toggled, "dirtyable": a("dirtyable"), "isDirty": obj.is_dirty,
            "canFillWithLiquid": a("fillable"), "isFilledWithLiquid": obj.is_filled, "fillLiquid": obj.fill_liquid,
            "cookable": a("cookable"), "isCooked": obj.is_cooked, "breakable": a("breakable"),
            "isBroken": obj.is_broken}


def object_metadata(obj: SimObject, children: list[str], parents: list[str], visible: bool,
                    interactable: bool, distance: float) -> dict[str, Any]:
    corners = obj.corners()
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    aabb_corners = [[float(x), float(y), float(z)] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    a = obj.affords
    return {
        "name": obj.id,
        "objectId": obj.id,
        "objectType": obj.type,
        "assetId": obj.asset.asset_id,
        "position": _xyz(obj.position),
        "rotation": {"x": 0.0, "y": float(obj.yaw_deg), "z": 0.0},
        "visible": visible,
        "isInteractable": interactable,
        "receptacle": a("receptacle"),
        "receptacleObjectIds": children if a("receptacle") else None,
        "parentReceptacles": parents or None,
        "toggleable": a("toggleable"),
        "isToggled": obj.is_toggled,
        "controlledObjects": None,
        "breakable": a("breakable"),
        "isBroken": obj.is_broken,
        "canFillWithLiquid": a("fillable"),
        "isFilledWithLiquid": obj.is_filled,
        "fillLiquid": obj.fill_liquid,
        "dirtyable": a("dirtyable"),
        "isDirty": obj.is_dirty,
        "canBeUsedUp": a("can_be_used_up"),
        "isUsedUp": False,
        "cookable": a("cookable"),
        "isCooked": obj.is_cooked,
        "temperature": obj.temperature,
        "isHeatSource": a("heat_source"),
        "isColdSource": a("cold_source"),
        "sliceable": a("sliceable"),
        "isSliced": obj.is_sliced,
        "openable": a("openable"),
        "isOpen": obj.is_open,
        "openness": 1.0 if obj.is_open else 0.0,
        "pickupable": a("pickupable"),
        "isPickedUp": obj.is_picked_up,
        "moveable": a("moveable"),
        "mass": 0.0,
        "salientMaterials": [],
        "distance": float(distance),
        "isMoving": False,
        "axisAlignedBoundingBox": {"cornerPoints": aabb_corners, "center": _xyz((lo + hi) / 2.0), "size": _xyz(hi - lo)},
        "objectOrientedBoundingBox": {"cornerPoints": corners.tolist()},
        # Not a THOR field: kept so sliced originals stay scorable (isSliced) but are known gone.
        "isActive": obj.active,
    }


def agent_metadata(x: float, body_y: float, z: float, yaw_deg: float, horizon_deg: float,
                   standing: bool = True) -> dict[str, Any]:
    return {
        "name": "agent",
        "position": {"x": x, "y": body_y, "z": z},
        "rotation": {"x": 0.0, "y": yaw_deg, "z": 0.0},
        "cameraHorizon": horizon_deg,
        "isStanding": standing,
        "inHighFrictionArea": False,
    }
