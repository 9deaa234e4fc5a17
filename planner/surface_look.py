"""Looking over a whole surface from close by, for a small thing a detector misses from afar, and
into a container the search opened.

Why a module: a learned detector drops instances smaller than a number of pixels
(``AgentConfig.detector_min_pixels``; the ``realistic`` sensor profile's: 40 at 320x240). A credit
card flat on a dining table covers that many only within about a metre of the camera, so a
receptacle visit of the search (``planner.goal_search``), which ends where the table first shows
within reach, never sees what lies at the table's far end or on a long dresser's other half: under
``--sensors realistic`` the cards of dev-039-1 and dev-076-1 and most other things the search gave
up on were in no frame at all. After such a visit the agent walks on to the parts of the top that
lie beyond the distance at which the detector would show the wanted type and looks at them. With
a segmenter that sees whatever shows (``detector_min_pixels`` 0, the ideal sensors) nothing here
runs.

A container opened by the search (a fridge, a cabinet) was walked to and opened with the camera
pitched at its middle from close by; from there its upper shelves or its floor often lie outside
the image. ``look_into`` pitches the camera over the rest of its height, with any sensors: under
``--sensors realistic`` dev-001-1's tomato on a fridge shelf 1.37 m up was never in a frame (the
fridge opened looking 60 degrees down), and the search went on to the house's drawers.

The distance is a pinhole estimate from the type's median asset size (``AssetCatalog.typical_size``):
the object lies on the top, seen from the standing camera at the depression angle of the view, its
upper face foreshortened by the sine of that angle and its side by the cosine. That is what a robot
knows of its own detector (a stated minimum size in pixels) and of the object types; it is not a
figure read off the simulator's renderer, which showed dev-039-1's card (larger and thicker in that
house than the median asset) with 48 pixels at 1.26 m where the estimate gives about 20: the
estimate is the cautious side, a stop more rather than a miss.
"""

from __future__ import annotations

import math
from typing import Callable, Generator, Protocol

import numpy as np

from household.assets import AssetCatalog
from household.types import Action, Observation
from planner.agent_config import AgentConfig
from planner.exploration import Moves
from planner.navigation import HORIZONS, Navigator, Pose
from planner.object_memory import ObjectMemory, TrackedObject
from planner.planning_budget import planned_in_stages

MAX_STOPS = 3  # further stops at one surface: a long counter is searched, not surveyed
GRID_M = 0.2  # spacing of the points of a top that must come within the detection distance
# A stop is planned within the horizontal detection distance of a point of the top (the square goal
# region of ``plan_to_point``: up to sqrt(2) times that at its corners; the look decides). Points
# deep in a wide top have no floor that near: the next best of a few is tried.
_TRIES = 4
_MIN_REACH_M = 0.3  # a detection distance shorter than this over the top: no stop can help


class LookingAgent(Protocol):
    """What the look reads and calls on the agent (``planner.holomind.HoloMindAgent``)."""

    config: AgentConfig
    obs: Observation
    catalog: AssetCatalog
    navigator: Navigator
    skills: Moves
    tracker: ObjectMemory

    @property
    def pose(self) -> Pose: ...
    def note(self, text: str) -> None: ...


def detection_distance(size: tuple[float, float, float], drop: float, focal_px: float, min_pixels: int) -> float:
    """The farthest camera distance (metres, straight line) at which an object of box extents
    ``size`` (x, y, z, y up) lying on a surface ``drop`` metres below the camera covers
    ``min_pixels`` pixels of a camera with focal length ``focal_px``: its upper face x*z
    foreshortened by sin (the depression angle, drop over distance), its larger side by cos, the
    area over the distance squared. Infinite where ``min_pixels`` <= 0 (every instance is kept);
    ``drop`` when even the nearest view falls short."""
    if min_pixels <= 0:
        return math.inf
    x, y, z = size
    top, side = x * z, max(x, z) * y

    def pixels(d: float) -> float:
        s = min(drop / d, 1.0)
        return focal_px * focal_px * (top * s + side * math.sqrt(1.0 - s * s)) / (d * d)

    lo, hi = max(drop, 0.05), 20.0
    if pixels(lo) < min_pixels:
        return lo
    if pixels(hi) >= min_pixels:
        return hi
    for _ in range(40):  # the area shrinks with distance from the nearest view on: bisect
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if pixels(mid) >= min_pixels else (lo, mid)
    return lo


def far_points(box: TrackedObject, stances: list[tuple[float, float]], reach: float) -> list[tuple[float, float]]:
    """Points of the box's footprint (a ``GRID_M`` grid, its edges included) farther than
    ``reach`` (floor plane) from every one of ``stances`` (x, z)."""
    xs = np.linspace(box.box_min[0], box.box_max[0], max(int(math.ceil((box.box_max[0] - box.box_min[0]) / GRID_M)), 1) + 1)
    zs = np.linspace(box.box_min[2], box.box_max[2], max(int(math.ceil((box.box_max[2] - box.box_min[2]) / GRID_M)), 1) + 1)
    gx, gz = np.meshgrid(xs, zs, indexing="ij")
    far = np.ones(gx.shape, dtype=bool)
    for x, z in stances:
        far &= np.hypot(gx - x, gz - z) > reach
    return [(float(a), float(b)) for a, b in zip(gx[far], gz[far])]


def _stops(far: list[tuple[float, float]], p: Pose, reach: float) -> list[tuple[float, float]]:
    """The points of ``far`` to head for, best first: the most of ``far`` within ``reach`` of
    it (standing near it shows them), the nearest to the agent among equals. On a long top
    that is the middle of what is left, not its nearest edge (a stop there gains centimetres)."""
    pts = np.array(far)
    cover = (np.hypot(pts[:, None, 0] - pts[None, :, 0], pts[:, None, 1] - pts[None, :, 1]) <= reach).sum(axis=1)
    dist = np.hypot(pts[:, 0] - p.x, pts[:, 1] - p.z)
    return [(float(pts[k, 0]), float(pts[k, 1])) for k in np.lexsort((dist, -cover))]


def _floor_reach(agent: LookingAgent, size: tuple[float, float, float], drop: float) -> float:
    """How far across the floor (metres) the detector shows a thing of ``size`` lying ``drop``
    below the camera: ``detection_distance`` less the height, by Pythagoras."""
    d = detection_distance(size, drop, float(agent.obs.intrinsics.fy), agent.config.detector_min_pixels)
    return math.sqrt(max(d * d - drop * drop, 0.0))


def look_over(agent: LookingAgent, box: TrackedObject, object_type: str,
              found: Callable[[], bool]) -> Generator[Action, Observation, None]:
    """Walk on to the parts of ``box``'s top the detector would not show ``object_type`` on from
    here and look at them (at most ``MAX_STOPS`` stops, each where it shows the most of what is
    left), until ``found()``."""
    min_pixels = agent.config.detector_min_pixels
    size = agent.catalog.typical_size(object_type)
    if min_pixels <= 0 or size is None:
        return
    top_y = float(box.box_max[1])
    drop = agent.navigator.camera_height - top_y
    if drop <= 0.05:  # a top at eye height or above: nothing lying on it shows from any stance
        return
    reach = _floor_reach(agent, size, drop)
    if reach < _MIN_REACH_M:
        return
    stances = [(agent.pose.x, agent.pose.z)]  # where the top was looked at from so far
    for _ in range(MAX_STOPS):
        p = agent.pose
        far = far_points(box, stances, reach)
        if not far:
            return
        for tx, tz in _stops(far, p, reach)[:_TRIES]:
            plan = yield from planned_in_stages(agent.navigator.budget, agent.navigator.plan_to_point_stages(p, tx, tz, reach))
            if plan is not None and plan.actions:
                break
        else:
            return
        agent.note(f"looking over {box.object_id} for a {object_type}: on to ({tx:.2f}, {tz:.2f})"
                   f" (seen from {reach:.2f} m)")
        ok = yield from agent.skills.walk(plan.actions)
        if not ok:
            return
        stances.append((agent.pose.x, agent.pose.z))
        yield from agent.skills.turn_to(tx, tz)
        yield from agent.skills.set_horizon(agent.navigator.horizon_toward(agent.pose, tx, top_y, tz))
        if (yield from _seen_or_glimpsed(agent, object_type, found)):
            return


def look_into(agent: LookingAgent, box: TrackedObject, object_type: str,
              found: Callable[[], bool]) -> Generator[Action, Observation, None]:
    """Pitch the camera over the part of the opened ``box``'s height the current view leaves out
    (``Navigator.horizons_over``), until ``found()``."""
    p = agent.pose
    x, z = float(box.centroid[0]), float(box.centroid[2])
    if (yield from _seen_or_glimpsed(agent, object_type, found)):
        return
    for h in agent.navigator.horizons_over(p, x, z, float(box.box_min[1]), float(box.box_max[1])):
        yield from agent.skills.set_horizon(h)
        if (yield from _seen_or_glimpsed(agent, object_type, found)):
            return


MAX_GLIMPSES = 3  # glimpses of one type looked at again per call, nearest first


def look_again(agent: LookingAgent, object_type: str, found: Callable[[], bool],
               looked: set[str]) -> Generator[Action, Observation, None]:
    """Walk up to where the memory glimpsed the type once (``ObjectMemory.glimpses``: seen from
    a walk, out of view before a second frame could confirm it) and look at it again, until
    ``found()``; ``looked`` (ids) keeps each glimpse to one visit. Nothing waits to be believed
    behind a segmenter trusted at once (``confirm_views`` 1). Under ``--sensors realistic``
    dev-047-1's key ring showed once, 72 pixels, while the look over its table walked between
    stops, and the search went on to every other table in the house."""
    size = agent.catalog.typical_size(object_type)
    cam = agent.navigator.camera_height
    for _ in range(MAX_GLIMPSES):
        p = agent.pose
        waiting = {oid: c for oid, c in agent.tracker.glimpses(object_type).items() if oid not in looked}
        if not waiting or found():
            return
        oid, c = min(waiting.items(), key=lambda kv: math.hypot(kv[1][0] - p.x, kv[1][2] - p.z))
        looked.add(oid)
        x, y, z = (float(v) for v in c)
        drop = max(cam - y, 0.05)
        # well within the distance the detector shows it at (the goal square's corners too): it
        # showed from where it was glimpsed only just, most likely
        reach = _floor_reach(agent, size, drop) if size is not None else math.sqrt(max(1.0 - drop * drop, 0.0))
        near = 0.5 * min(reach, 1.5)
        if math.hypot(x - p.x, z - p.z) > max(near, _MIN_REACH_M):
            plan = yield from planned_in_stages(agent.navigator.budget,
                                                agent.navigator.plan_to_point_stages(p, x, z, max(near, _MIN_REACH_M)))
            if plan is None:
                agent.note(f"no way to look again at a {object_type} glimpsed once at ({x:.2f}, {z:.2f})")
                continue
            agent.note(f"looking again at a {object_type} glimpsed once at ({x:.2f}, {z:.2f})")
            if not (yield from agent.skills.walk(plan.actions)):
                continue
        yield from agent.skills.turn_to(x, z)
        yield from agent.skills.set_horizon(agent.navigator.horizon_toward(agent.pose, x, y, z, centred=True))
        if (yield from _seen_or_glimpsed(agent, object_type, found)):
            return


def glimpsed(agent: LookingAgent, object_type: str) -> bool:
    """Whether the latest frame shows an instance of the type the memory does not hold yet: a
    detector's first view, which it believes only after ``AgentConfig.confirm_views`` (a false
    detection lands somewhere else in the next frame)."""
    return any(lab.object_type == object_type and agent.tracker.get(lab.object_id) is None
               for lab in agent.obs.id_to_label.values())


def _seen_or_glimpsed(agent: LookingAgent, object_type: str,
                      found: Callable[[], bool]) -> Generator[Action, Observation, bool]:
    """``found()``, after looking again where the latest frame only glimpsed the type: the
    camera pitched one step away and back, the second view the same as the first (the look
    would otherwise walk on from a thing seen once, never believed; dev-001-1's tomato)."""
    for _ in range(max(agent.config.confirm_views - 1, 0)):
        if found() or not glimpsed(agent, object_type):
            break
        h = agent.pose.horizon
        away = h - 30.0 if h - 30.0 >= min(HORIZONS) else h + 30.0
        yield from agent.skills.set_horizon(away)
        if not found():
            yield from agent.skills.set_horizon(h)
    return found()
