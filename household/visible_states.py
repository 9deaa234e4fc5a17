"""What a close look shows of an object's state: the seam for a state classifier.

THOR renders the states LongAct's checklists ask about: a dirty mug has a dirty material, a filled
one shows its liquid, a lamp that is on is lit, an open fridge stands open, a cooked potato is
browned, a broken vase lies in pieces. A robot reads them with a state classifier on the instance's
crop (a VLM asked "is this cup dirty?"); a simulator's segmenter reports them beside each
instance's label (``household.types.InstanceLabel.states``) for instances it sees closely enough:
within ``MAX_STATE_RANGE_M`` (their mean depth) and at least ``MIN_STATE_PIXELS`` in the frame (a
robot's classifier reads a higher-resolution crop than the 320x240 the planner's frames have; a
mug at arm's length covers 50 to 200 of those pixels).
A backend with no classifier (Habitat, a robot without one) reports none, and the agent is back to
what its own actions did.

Values are THOR's metadata values, except that ``isFilledWithLiquid`` carries the liquid's name
("water", "coffee", "wine") when filled and False when empty: what a look at the liquid tells.
Sensor profiles flip a share of what the classifier reports (``flip_states``), per object, flag
and step by a hash, so the other noise streams do not move.
"""

from __future__ import annotations

import zlib
from dataclasses import replace
from typing import Any, Callable, Mapping

import numpy as np

from household.types import InstanceLabel

# THOR flag -> the capability field of THOR's metadata that says the object can have it
STATE_FLAGS: dict[str, str] = {"isOpen": "openable", "isToggled": "toggleable", "isDirty": "dirtyable",
                               "isFilledWithLiquid": "canFillWithLiquid", "isCooked": "cookable",
                               "isBroken": "breakable"}
MAX_STATE_RANGE_M = 1.5  # a close look: within arm's length and a step
MIN_STATE_PIXELS = 40  # the realistic detector's smallest instance (sim_bridge.sensors.profiles)
LIQUIDS = ("water", "coffee", "wine")

States = tuple[tuple[str, Any], ...]


def states_from_metadata(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The flags an object can have, from THOR-shaped metadata (THOR's own or the embedded
    simulator's), liquid named."""
    out: dict[str, Any] = {}
    for flag, capability in STATE_FLAGS.items():
        if not meta.get(capability):
            continue
        if flag == "isFilledWithLiquid":
            out[flag] = (str(meta.get("fillLiquid") or "water") if meta.get(flag) else False)
        else:
            out[flag] = bool(meta.get(flag))
    return out


def visible_states(flags: Mapping[str, Any], n_pixels: int, mean_depth_m: float) -> States:
    """What the classifier reports for one instance in one frame: the flags, when the instance is
    close enough (``MAX_STATE_RANGE_M``) and shows enough pixels to tell; nothing otherwise."""
    if not flags or n_pixels < MIN_STATE_PIXELS or not 0.0 < mean_depth_m <= MAX_STATE_RANGE_M:
        return ()
    return tuple(sorted(flags.items()))


def with_states(instance_ids: np.ndarray, depth: np.ndarray | None, labels: Mapping[int, InstanceLabel],
                flags_of: Callable[[str], Mapping[str, Any] | None]) -> dict[int, InstanceLabel]:
    """The frame's labels with what the classifier reports for each (``flags_of(object_id)``:
    the flags the object can have, or None for an object the backend knows nothing of). Without
    depth nothing is close enough to tell."""
    if depth is None or not instance_ids.size or not labels:
        return dict(labels)
    ids, weights = instance_ids.ravel(), depth.ravel()
    if ids.min() < 0:  # a backend's "no instance": left out (the embedded renderer has none)
        keep = ids >= 0
        ids, weights = ids[keep], weights[keep]
    size = max(labels) + 1
    counts = np.bincount(ids, minlength=size)
    depth_sums = np.bincount(ids, weights=weights.astype(np.float64), minlength=size)
    out: dict[int, InstanceLabel] = {}
    for k, lab in labels.items():
        flags = flags_of(lab.object_id)
        n = int(counts[k]) if 0 < k < len(counts) else 0
        states = visible_states(flags, n, float(depth_sums[k]) / n) if flags and n else ()
        out[k] = replace(lab, states=states) if states else lab
    return out


def _unit(*key: object) -> float:
    """A uniform number in [0, 1) from the key (crc32): the same object, flag and step always
    draw the same, whatever else the frame's noise drew."""
    return zlib.crc32(repr(key).encode()) / 2.0 ** 32


def flip_states(states: States, p: float, object_id: str, step: int, seed: int = 0) -> States:
    """Each reported flag wrong with probability ``p``: a boolean flips; a liquid is missed
    (False) or an empty vessel read as holding water."""
    if p <= 0 or not states:
        return states
    out = []
    for flag, value in states:
        if _unit(seed, object_id, flag, step) < p:
            if flag == "isFilledWithLiquid":
                value = False if value else "water"
            else:
                value = not value
        out.append((flag, value))
    return tuple(out)
