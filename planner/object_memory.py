"""What the planner needs from an object memory, as a protocol (issue 28, item 4).

The HoloMind agent, its skills and its goal check read objects through this interface only, so
the memory behind it can change: ``planner.object_tracker.ObjectTracker`` (a box and a
centroid per segmenter instance, cheap to update every frame; the default),
``planner.spatial_object_memory.SpatialObjectMemory`` (the scene map of ``memory.spatial``: its
object rows, keyed by the segmenter's ids), or a robot's own tracker. Every member here is one
the planner calls; nothing is added for symmetry. Rooms are not part of it: the agent names
them from its occupancy map (``planner.rooms``), whatever memory holds the objects.

An implementation hands out ``TrackedObject`` records (a plain dataclass, defined here so that a
second implementation needs nothing of the tracker's code). The skills mark a record in place
(``state["open_checked"]``), so a record handed out must be the one the memory keeps. What every
implementation does alike once it has records (states, the agent's moves, lookups) is
``RecordKeeping``, which both inherit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, runtime_checkable

import numpy as np

from household.types import Observation

if TYPE_CHECKING:
    from planner.agent_config import AgentConfig


# A box with the depth noise (sigma, metres) of the views it was built from.
Look = tuple[np.ndarray, np.ndarray, float]


def best_looks(best: Look | None, lo: np.ndarray, hi: np.ndarray, sigma: float, moved: bool) -> Look:
    """The box of an object's best looks after a new view (lo, hi, of noise sigma): the view
    replaces it when there is none yet, the object was moved (the box is stale), the view has
    under half its noise (a much better look), or, with noise, lies clear of it by three of the
    view's sigma (someone moved it); widens it when its noise is within twice the box's (without
    noise both are 0: always the union); else the box stays (a worse look). The object tracker's
    box and the spatial memory's cut (``SpatialObjectMemory._bounded``) both follow it."""
    if best is None or moved or sigma < best[2] / 2.0 or (sigma > 0 and bool(
            np.any((lo > best[1] + 3.0 * sigma) | (hi < best[0] - 3.0 * sigma)))):
        return lo, hi, sigma
    if sigma <= 2.0 * best[2]:
        return np.minimum(best[0], lo), np.maximum(best[1], hi), best[2]
    return best


@dataclass
class TrackedObject:
    """One object as the agent's memory knows it, in THOR (x, y, z) (the lattice planner's frame)."""

    object_id: str
    object_type: str
    centroid: np.ndarray  # THOR (x, y, z)
    box_min: np.ndarray
    box_max: np.ndarray
    first_seen: int
    last_seen: int
    seen_count: int = 1
    pixels: int = 0
    state: dict[str, Any] = field(default_factory=dict)  # what the agent's own actions did, or a close look saw
    state_seen: dict[str, int] = field(default_factory=dict)  # flag -> step of the last close look that showed it
    moved: bool = False  # moved by the agent since last seen: the box is stale
    sigma: float = 0.0  # depth noise (m) of the views the box is built from (noisy depth only)
    gone: bool = False  # sliced away or otherwise no longer an object
    type_votes: dict[str, int] = field(default_factory=dict)  # label -> views that gave it (a detector confuses look-alikes)
    # THOR centroid where the agent found it, kept from the first time the agent moved it: where
    # the household keeps it, which is what it says about its room (``RoomSegmenter`` naming)
    found_at: np.ndarray | None = None

    @property
    def home(self) -> np.ndarray:
        """Where the object tells of its room: where it was found, not where the agent put it.
        A spatula and two eggs the agent dropped into a living-room bin made that region's
        objects (bin, sofa, spatula) name it nothing, and "the trash can in the living room"
        was searched for across the house (dev-087-0, both object memories)."""
        return self.centroid if self.found_at is None else self.found_at

    def distance_xz(self, x: float, z: float) -> float:
        dx = max(self.box_min[0] - x, 0.0, x - self.box_max[0])
        dz = max(self.box_min[2] - z, 0.0, z - self.box_max[2])
        return float(np.hypot(dx, dz))

    def distance_3d(self, p: np.ndarray) -> float:
        d = np.maximum(np.maximum(self.box_min - p, 0.0), p - self.box_max)
        return float(np.linalg.norm(d))

    def distance_to_upright(self, x: float, z: float, y_lo: float, y_hi: float) -> float:
        """Distance from the upright segment at (x, z), heights y_lo..y_hi, to the box: how THOR
        measures its interaction range (AgentConfig.reach_span)."""
        dy = max(float(self.box_min[1]) - y_hi, 0.0, y_lo - float(self.box_max[1]))
        return math.hypot(self.distance_xz(x, z), dy)


@runtime_checkable
class ObjectMemory(Protocol):
    """The agent's memory of objects: fed every frame, told what the agent's own actions did,
    asked by id, by type, or for everything it holds (callers skip ``gone`` records)."""

    @property
    def objects(self) -> Mapping[str, TrackedObject]:
        """Every object remembered, by id, gone ones included (the agent's context, its goal
        costs and the receptacles it searches iterate it; the goal check counts slices in it)."""
        ...

    @property
    def frame_expansions(self) -> int:
        """What integrating one frame costs beyond the tracker's work, in lattice expansions of
        about the same time: the agent charges it to the act's planning budget
        (``planner.planning_budget``; the tracker's own cost is in ``INTEGRATION_EXPANSIONS``)."""
        ...

    @property
    def visible_now(self) -> Mapping[str, int]:
        """Object id -> pixels of it in the latest frame (the skills look until it shows)."""
        ...

    def integrate(self, obs: Observation) -> None:
        """Update from one observation (called on every frame the agent gets)."""
        ...

    def get(self, object_id: str) -> TrackedObject | None:
        """The record of one object, or None if it was never seen."""
        ...

    def of_type(self, object_type: str) -> list[TrackedObject]:
        """The objects of a type that are not gone."""
        ...

    def glimpses(self, object_type: str) -> dict[str, np.ndarray]:
        """Id -> centre (THOR) of each instance of the type seen too few times to be believed yet
        (a detector's first view: ``AgentConfig.confirm_views``); a search looks at them again."""
        ...

    def seen_state(self, object_id: str, flag: str, since: int) -> tuple[bool, Any]:
        """(seen, value): whether a close look showed ``flag`` at or after step ``since``, and what."""
        ...

    def note_state(self, object_id: str, key: str, value: Any) -> None:
        """What the agent's own action (or its belief tracker) says a state of the object is."""
        ...

    def note_moved(self, object_id: str, to: np.ndarray | None = None) -> None:
        """The agent moved the object (picked it up: no position; put it down: ``to``, THOR)."""
        ...

    def note_gone(self, object_id: str) -> None:
        """The object is no longer one (sliced into pieces)."""
        ...


class RecordKeeping:
    """What every object memory does the same way once it has its records (``objects``, by id):
    the states a close look showed and the agent's own actions set, the agent's moves and
    slices, and lookups. An implementation says only how frames make and update records."""

    objects: dict[str, TrackedObject]

    @staticmethod
    def _saw_states(rec: TrackedObject | None, states: tuple[tuple[str, Any], ...], step: int) -> None:
        """A close look (the state classifier of ``InstanceLabel.states``) showed these; the latest wins."""
        if rec is None:
            return
        for flag, value in states:
            rec.state[flag] = value
            rec.state_seen[flag] = step

    def seen_state(self, object_id: str, flag: str, since: int) -> tuple[bool, Any]:
        """(seen, value): whether a close look at the object showed ``flag`` at or after step
        ``since``, and what it showed."""
        rec = self.objects.get(object_id)
        if rec is None or rec.state_seen.get(flag, -1) < since:
            return False, None
        return True, rec.state.get(flag)

    def note_state(self, object_id: str, key: str, value: Any) -> None:
        if object_id in self.objects:
            self.objects[object_id].state[key] = value

    def note_moved(self, object_id: str, to: np.ndarray | None = None) -> None:
        """Picked up (``to`` None: the box is stale) or put down at ``to`` (THOR): the box moves
        there and stays marked stale until the object is seen again."""
        rec = self.objects.get(object_id)
        if rec is None:
            return
        if rec.found_at is None:
            rec.found_at = np.array(rec.centroid, dtype=float)
        rec.moved = True
        if to is not None:
            half = (rec.box_max - rec.box_min) / 2.0
            rec.centroid = np.asarray(to, dtype=float)
            rec.box_min, rec.box_max = rec.centroid - half, rec.centroid + half

    def note_gone(self, object_id: str) -> None:
        if object_id in self.objects:
            self.objects[object_id].gone = True

    def of_type(self, object_type: str) -> list[TrackedObject]:
        return [o for o in self.objects.values() if o.object_type == object_type and not o.gone]

    def get(self, object_id: str) -> TrackedObject | None:
        return self.objects.get(object_id)


# How the agent gets a fresh memory for each episode (its reset calls it with its settings).
ObjectMemoryFactory = Callable[["AgentConfig"], ObjectMemory]

