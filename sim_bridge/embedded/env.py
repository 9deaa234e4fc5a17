"""The embedded simulator: a ProcTHOR house with THOR semantics, rendered by CPU ray casting.

It implements the Environment seam (reset/step/ground_truth). Failures are unsuccessful steps
with THOR-style messages that name the object id, never exceptions; only a broken house raises
(``HouseError`` at reset). Privileged accessors (``table``, ``collision``, ``agent_pose``) exist
for the oracle planner and tests; an agent under evaluation must use observations only.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Callable, cast

import numpy as np

from household.assets import AssetCatalog, default_catalog
from sim_bridge.embedded.collision import CollisionMap
from household.house_data import HouseError
from household.outcomes import Failure
from household.visible_states import states_from_metadata, with_states
from sim_bridge.embedded.house_geometry import HouseLayout, parse_layout
from sim_bridge.embedded.interactions import InteractionError, ObjectTable, find_spot
from sim_bridge.embedded.metadata import agent_metadata, object_metadata, state_metadata
from sim_bridge.embedded.objects import SimObject, build_objects
from sim_bridge.embedded.placement_checks import PlacementProblem, check_placements
from sim_bridge.embedded.render import SceneRenderer
from household.frames import thor_camera_to_ros_pose, thor_to_ros_points, thor_yaw_to_ros
from household.types import (
    Action,
    ActionFeedback,
    AgentStatus,
    CameraIntrinsics,
    INTERACTION_ACTIONS,
    InstanceLabel,
    Observation,
    PASS,
    RoomInfo,
    StepResult,
    WorldState,
)

log = logging.getLogger(__name__)
# An agent start that is not free floor is moved to the nearest free spot; a move of a robot's
# width or more means the start was inside furniture (an episode whose start lies in a counter
# was moved 1.46 m without a word: issue 32): logged once per start, naming house, episode, distance.
START_MOVE_WARN_M = 0.25
_START_WARNED: set[tuple[str, float, float]] = set()


@dataclass
class EmbeddedConfig:
    width: int = 320
    height: int = 240
    fov_deg: float = 90.0  # vertical, as THOR's fieldOfView
    render: bool = True  # False: observations carry pose and feedback only (fast, for oracles)
    move_step: float = 0.25  # metres; LongAct uses 0.05
    rotate_step: float = 30.0  # degrees
    look_step: float = 30.0
    horizon_min: float = -30.0  # THOR's limits on cameraHorizon
    horizon_max: float = 60.0
    agent_radius: float = 0.2
    camera_height: float = 1.5  # above the floor, standing
    # Crouched, THOR's default agent lowers its camera by its whole standing offset above the body
    # centre (BaseFPSAgentController: crouchingLocalCameraPosition = standing - 0.675 m in the
    # default, "tall" body): the camera sits at agent.position.y. The LoCoBot body drops 0.22 m.
    crouch_camera_height: float = 0.9
    body_height: float = 0.9  # THOR's agent.position.y
    # THOR's visibilityDistance: the interaction range, measured as THOR measures it (see
    # EmbeddedEnvironment.range_distance): from the agent's upright capsule, not from the camera.
    reach: float = 1.5
    render_threads: int = 1
    data_dir: str | None = None  # where episodes' house files are looked up first


@dataclass
class AgentPose:
    """THOR-frame pose: floor position, rotation.y, cameraHorizon and isStanding."""

    x: float
    z: float
    yaw: float
    horizon: float
    standing: bool = True  # False after Crouch: the camera at crouch_camera_height


def type_color(object_type: str) -> np.ndarray:
    """A stable colour per object type (crc-like hash, bright enough to shade)."""
    h = 0
    for ch in object_type:
        h = (h * 131 + ord(ch)) & 0xFFFFFF
    return np.array([64 + (h & 0xBF), 64 + ((h >> 8) & 0xBF), 64 + ((h >> 16) & 0xBF)], dtype=np.uint8)


class EmbeddedEnvironment:
    """One house at a time; ``reset`` loads a house (or an episode carrying one)."""

    name = "embedded"

    def __init__(self, config: EmbeddedConfig | None = None, catalog: AssetCatalog | None = None) -> None:
        self.config = config or EmbeddedConfig()
        self.catalog = catalog or default_catalog()
        self.intrinsics = CameraIntrinsics.from_fov(self.config.width, self.config.height, self.config.fov_deg)
        self.house: dict[str, Any] | None = None
        self.layout: HouseLayout | None = None
        self.table: ObjectTable | None = None
        self.collision: CollisionMap | None = None
        self.renderer: SceneRenderer | None = None
        self.pose = AgentPose(0.0, 0.0, 0.0, 0.0)
        self.step_count = 0
        self.stopped = False
        self._scene_version = -1
        self._render_ids: list[str] = []
        self._render_index: dict[str, int] = {}
        self._last_feedback = ActionFeedback(None, True, "")
        # Objects the house places out of any agent's reach (placement_checks.py), set by reset.
        self.placement_problems: list[PlacementProblem] = []
        self.start_moved_m = 0.0  # how far reset() moved the agent start to free floor

    # Typed views of the fields reset() sets, for the code that runs only after a reset (step()
    # refuses to run before one): there they are never None.
    @property
    def _table(self) -> ObjectTable:
        return cast(ObjectTable, self.table)

    @property
    def _collision(self) -> CollisionMap:
        return cast(CollisionMap, self.collision)

    @property
    def _renderer(self) -> SceneRenderer:
        return cast(SceneRenderer, self.renderer)

    @property
    def _layout(self) -> HouseLayout:
        return cast(HouseLayout, self.layout)

    # ---- seam --------------------------------------------------------------------------------
    def reset(self, episode: Any) -> Observation:
        """Load ``episode.house`` (a house dict) or a bare house dict; start pose from
        ``episode.agent_start`` or the house's metadata.agent, moved to the nearest free spot."""
        house: dict[str, Any] | None
        if isinstance(episode, dict) and "rooms" in episode:
            house = episode
        elif hasattr(episode, "resolve_house"):
            house = episode.resolve_house(self.config.data_dir)
        else:
            house = getattr(episode, "house", None)
        if not isinstance(house, dict):
            raise HouseError(f"reset() needs a house dict or an episode with a resolved .house, got {type(house).__name__}")
        previous = self.collision if house is self.house else None  # the same house again
        self.house = house
        self.layout = parse_layout(house)
        self.table = ObjectTable(build_objects(house, self.catalog), self.catalog)
        self.table.apply_effects()
        self.placement_problems = check_placements(house, self.layout, self.table.objects)
        self.collision = CollisionMap(self.layout, self.config.agent_radius)
        self.renderer = SceneRenderer(self.layout, self.config.width, self.config.height, self.config.fov_deg,
                                      nthreads=self.config.render_threads)
        self._scene_version = -1
        self._sync_scene()
        if previous is not None:
            self.collision.reuse_grids(previous)
        start: Any = getattr(episode, "agent_start", None)  # an AgentStart, a dict or None
        start = start.to_dict() if hasattr(start, "to_dict") else start
        start = start or (house.get("metadata") or {}).get("agent") or {}
        self.pose = self._start_pose(start, getattr(episode, "id", None))
        self.step_count = 0
        self.stopped = False
        self._last_feedback = ActionFeedback(None, True, "")
        return self._observe()

    def step(self, action: Action) -> StepResult:
        if self.table is None:
            raise RuntimeError("step() before reset()")
        self.step_count += 1
        try:
            self._dispatch(action)
            feedback = ActionFeedback(action.name, True, "")
        except InteractionError as exc:
            feedback = ActionFeedback(action.name, False, str(exc), exc.failure.value)
        self._last_feedback = feedback
        obs = self._observe()
        return StepResult(obs, feedback.success, feedback.error)

    def ground_truth(self) -> WorldState:
        assert self.table is not None and self.layout is not None
        meta = self.metadata()
        rooms = [RoomInfo(r.id, r.room_type, list(r.polygon)) for r in self.layout.rooms]
        return WorldState(objects=meta["objects"], agent=meta["agent"], rooms=rooms,
                          held_object_id=self.table.held, house_id=self.layout.house_id)

    # ---- THOR-shaped metadata ----------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        assert self.table is not None
        self._sync_scene()
        cam = self.camera_position()
        objs = list(self.table.objects.values())
        visible = self._visible_set([o for o in objs if o.active and not o.is_picked_up])
        children: dict[str, list[str]] = {}
        for o in objs:
            if o.active and o.parent:
                children.setdefault(o.parent, []).append(o.id)
        out = []
        for o in objs:
            parents = [a.id for a in self.table.ancestors(o)] if o.active else []
            dist = o.distance_to_point(cam)
            out.append(object_metadata(o, children.get(o.id, []), parents, o.id in visible,
                                       o.id in visible and self.range_distance(o) <= self.config.reach, dist))
        agent = agent_metadata(self.pose.x, self.config.body_height, self.pose.z, self.pose.yaw, self.pose.horizon,
                               standing=self.pose.standing)
        held = self.table.objects[self.table.held] if self.table.held else None
        return {
            "objects": out,
            "agent": agent,
            "inventoryObjects": [{"objectId": held.id, "objectType": held.type}] if held else [],
            "lastAction": self._last_feedback.action,
            "lastActionSuccess": self._last_feedback.success,
            "errorMessage": self._last_feedback.error,
            "sceneName": self.layout.house_id if self.layout else "",
            "screenWidth": self.config.width,
            "screenHeight": self.config.height,
            "fov": self.config.fov_deg,
            "cameraPosition": {"x": float(cam[0]), "y": float(cam[1]), "z": float(cam[2])},
            "depthFormat": "Meters",
        }

    # ---- privileged helpers (oracle, tests) ----------------------------------------------------
    def camera_position(self, pose: AgentPose | None = None) -> np.ndarray:
        p = pose or self.pose
        return np.array([p.x, self.camera_height(p.standing), p.z])

    def camera_height(self, standing: bool = True) -> float:
        """Camera height above the floor standing or crouched (THOR's Crouch/Stand)."""
        return self.config.camera_height if standing else self.config.crouch_camera_height

    def forward(self, yaw: float | None = None) -> np.ndarray:
        y = math.radians(self.pose.yaw if yaw is None else yaw)
        return np.array([math.sin(y), 0.0, math.cos(y)])

    def is_visible(self, object_id: str, pose: AgentPose | None = None) -> bool:
        """In the camera frustum and not occluded (THOR's visible, without the distance cap)."""
        self._sync_scene()
        idx = self._render_index.get(object_id)
        if idx is None:
            return False
        p = pose or self.pose
        return bool(self._renderer.visible_objects(self.camera_position(p), p.yaw, p.horizon,
                                                  np.array([idx]), max_distance=1e9)[0])

    def range_span(self) -> tuple[float, float]:
        """The heights of the segment THOR measures the interaction range from: its default
        visibility scheme (Collider) collects the objects whose colliders lie within
        visibilityDistance of the agent's capsule, an upright segment from the bottom sphere's
        centre (one radius above the floor) to the top sphere's centre stretched up by
        visibilityDistance. Crouching lowers the camera, not the capsule. So an object on a bed
        or a low table counts its horizontal distance from the agent's axis, not its distance from
        the camera 0.7 m above it."""
        c = self.config
        return c.agent_radius, 2.0 * c.body_height - c.agent_radius + c.reach

    def range_distance(self, obj: SimObject, pose: AgentPose | None = None) -> float:
        """Distance from the agent's range segment (``range_span``) to the object's body."""
        p = pose or self.pose
        lo, hi = self.range_span()
        return obj.distance_to_upright(p.x, p.z, lo, hi)

    def in_reach(self, object_id: str, pose: AgentPose | None = None) -> bool:
        obj = self._table.objects.get(object_id)
        return obj is not None and self.range_distance(obj, pose) <= self.config.reach

    def interactable(self, object_id: str, pose: AgentPose | None = None) -> bool:
        return self.in_reach(object_id, pose) and self.is_visible(object_id, pose)

    # ---- internals ---------------------------------------------------------------------------
    def _start_pose(self, start: dict[str, Any], episode_id: str | None = None) -> AgentPose:
        pos = start.get("position") or {}
        rot = start.get("rotation") or {}
        x = float(pos.get("x", 0.0))
        z = float(pos.get("z", 0.0))
        yaw = float(rot.get("y", 0.0)) % 360.0 if isinstance(rot, dict) else float(rot) % 360.0
        horizon = float(start.get("horizon", start.get("cameraHorizon", 30.0)))
        fx, fz = self._nearest_free(x, z)
        self.start_moved_m = math.hypot(fx - x, fz - z)
        if self.start_moved_m >= START_MOVE_WARN_M:  # a start inside a counter: say so, once per start
            where = f"house {self._layout.house_id}" + (f", episode {episode_id}" if episode_id else "")
            key = (where, round(x, 3), round(z, 3))
            if key not in _START_WARNED:
                _START_WARNED.add(key)
                log.warning(f"{where}: the agent start ({x:.2f}, {z:.2f}) is not free floor (inside furniture or "
                            f"a wall); moved {self.start_moved_m:.2f} m to ({fx:.2f}, {fz:.2f})")
        x, z = fx, fz
        standing = bool(start.get("standing", start.get("isStanding", True)))  # THOR: metadata.agent.standing
        return AgentPose(x, z, yaw, float(np.clip(horizon, self.config.horizon_min, self.config.horizon_max)), standing)

    def _nearest_free(self, x: float, z: float) -> tuple[float, float]:
        if self._collision.is_free(x, z):
            return x, z
        for r in np.arange(0.05, 3.0, 0.05):
            for k in range(int(max(8, 2 * math.pi * r / 0.05))):
                a = 2 * math.pi * k / max(8, int(2 * math.pi * r / 0.05))
                cx, cz = x + r * math.cos(a), z + r * math.sin(a)
                if self._collision.is_free(cx, cz):
                    return float(cx), float(cz)
        raise HouseError(f"house {self._layout.house_id}: no free floor within 3 m of the agent start ({x:.2f}, {z:.2f})")

    def _sync_scene(self) -> None:
        """Push object boxes to the renderer and collision map after any geometric change."""
        if self._table.version == self._scene_version:
            return
        shown = [o for o in self._table.objects.values() if o.active and not o.is_picked_up]
        self._render_ids = [o.id for o in shown]
        self._render_index = {oid: i for i, oid in enumerate(self._render_ids)}
        if shown:
            # One box per object, several for a compound body (an L or C counter, shapes.py).
            boxes = [o.render_boxes() for o in shown]
            counts = [len(c) for c, _ in boxes]
            owner = np.repeat(np.arange(len(shown)), counts)
            centers = np.concatenate([c for c, _ in boxes])
            sizes = np.concatenate([sz for _, sz in boxes])
            yaws = np.array([o.yaw_deg for o in shown])[owner]
            colors = np.array([type_color(o.type) for o in shown])[owner]
            faces = np.array([o.open_faces() for o in shown], dtype=bool).reshape(-1, 2)
            open_front, open_top = faces[owner, 0], faces[owner, 1]
        else:
            centers = sizes = np.zeros((0, 3))
            yaws = np.zeros(0)
            colors = np.zeros((0, 3), dtype=np.uint8)
            open_front = open_top = np.zeros(0, dtype=bool)
            owner = np.zeros(0, dtype=np.int64)
        self._renderer.set_objects(centers, sizes, yaws, colors, open_front=open_front, open_top=open_top,
                                  owner=owner)
        self._collision.set_objects(list(self._table.objects.values()))
        self._scene_version = self._table.version

    def _visible_set(self, candidates: list) -> set[str]:
        cam = self.camera_position()
        near = [o for o in candidates if o.id in self._render_index and self.range_distance(o) <= self.config.reach]
        if not near:
            return set()
        idx = np.array([self._render_index[o.id] for o in near])
        vis = self._renderer.visible_objects(cam, self.pose.yaw, self.pose.horizon, idx, max_distance=1e9)
        return {o.id for o, v in zip(near, vis) if v}

    def _dispatch(self, action: Action) -> None:
        name = action.name
        cfg = self.config
        if self.stopped and name != "Stop":
            raise InteractionError(f"{name}: the episode was stopped; call reset()", Failure.BAD_REQUEST)
        if name in ("MoveAhead", "MoveBack", "MoveLeft", "MoveRight"):
            offset = {"MoveAhead": 0.0, "MoveRight": 90.0, "MoveBack": 180.0, "MoveLeft": 270.0}[name]
            self._move(self.pose.yaw + offset, float(action.args.get("moveMagnitude", cfg.move_step)), name)
        elif name in ("RotateLeft", "RotateRight"):
            deg = float(action.args.get("degrees", cfg.rotate_step))
            self.pose.yaw = (self.pose.yaw + (deg if name == "RotateRight" else -deg)) % 360.0
        elif name in ("LookUp", "LookDown"):
            deg = float(action.args.get("degrees", cfg.look_step))
            target = self.pose.horizon + (deg if name == "LookDown" else -deg)
            if target < cfg.horizon_min - 1e-6 or target > cfg.horizon_max + 1e-6:
                raise InteractionError(f"{name}: camera horizon {target:.0f} is outside "
                                       f"[{cfg.horizon_min:.0f}, {cfg.horizon_max:.0f}]", Failure.BAD_REQUEST)
            self.pose.horizon = target
        elif name in ("Crouch", "Stand"):
            # THOR refuses a Crouch while crouching and a Stand while standing (a failed action).
            standing = name == "Stand"
            if self.pose.standing == standing:
                raise InteractionError(f"{name}: the agent is already {'standing' if standing else 'crouching'}",
                                       Failure.BAD_REQUEST)
            self.pose.standing = standing
        elif name == "Stop":
            self.stopped = True
        elif name == PASS:
            pass  # nothing moves; the frame is rendered again
        elif name in INTERACTION_ACTIONS:
            self._interact(name, action.object_id, action.args)
        else:
            raise InteractionError(f"Unknown action {name!r}", Failure.BAD_REQUEST)
        if self._table.held is not None:
            self._table.move_held(self._hand_position())

    def _move(self, heading: float, distance: float, name: str) -> None:
        h = math.radians(heading)
        nx = self.pose.x + math.sin(h) * distance
        nz = self.pose.z + math.cos(h) * distance
        # Probe along the way at most a radius apart, so no step length can tunnel through a wall.
        probes = max(2, math.ceil(abs(distance) / self.config.agent_radius))
        for k in range(1, probes + 1):
            f = k / probes
            hit = self._collision.collision(self.pose.x + f * (nx - self.pose.x), self.pose.z + f * (nz - self.pose.z))
            if hit is not None:
                raise InteractionError(f"{name} blocked: the agent would collide with {hit.kind} {hit.id}", Failure.BLOCKED)
        self.pose.x, self.pose.z = nx, nz

    def _hand_position(self) -> np.ndarray:
        return self.camera_position() + 0.4 * self.forward() - np.array([0.0, 0.3, 0.0])

    def _interact(self, name: str, object_id: str | None, args: dict[str, Any] | None = None) -> None:
        if not object_id:
            raise InteractionError(f"{name} needs an objectId", Failure.BAD_REQUEST)
        table = self._table
        obj = table.objects.get(object_id)
        if obj is None:
            raise InteractionError(f"{name}: object {object_id} does not exist in house {self._layout.house_id}", Failure.UNKNOWN_OBJECT)
        if not obj.active:
            raise InteractionError(f"{name}: object {object_id} no longer exists (it was sliced)", Failure.UNKNOWN_OBJECT)
        if obj.is_picked_up:
            raise InteractionError(f"{name}: object {object_id} is being held", Failure.UNKNOWN)
        dist = self.range_distance(obj)
        if dist > self.config.reach:
            raise InteractionError(f"{name}: object {object_id} is out of reach ({dist:.2f} m > "
                                   f"{self.config.reach:.2f} m)", Failure.OUT_OF_REACH)
        if not self.is_visible(object_id):
            raise InteractionError(f"{name}: object {object_id} is not visible from the agent's view", Failure.NOT_VISIBLE)
        executor = EXECUTORS.get(name)
        if executor is None:  # an interaction added to the vocabulary but not here must not do anything
            raise InteractionError(f"{name}: the embedded simulator has no such interaction", Failure.BAD_REQUEST)
        executor(self, object_id, args or {})

    def _observe(self) -> Observation:
        cfg = self.config
        cam = self.camera_position()
        pose_ros = thor_camera_to_ros_pose(cam, self.pose.yaw, self.pose.horizon)
        held = self._table.objects[self._table.held] if self._table.held else None
        floor_ros = thor_to_ros_points(np.array([self.pose.x, 0.0, self.pose.z]))
        agent = AgentStatus((float(floor_ros[0]), float(floor_ros[1]), float(floor_ros[2])),
                            thor_yaw_to_ros(self.pose.yaw), self.pose.horizon,
                            held.id if held else None, held.type if held else None)
        obs = Observation(self.step_count, self.intrinsics, pose_ros, agent, self._last_feedback)
        if cfg.render:
            self._sync_scene()
            frame = self._renderer.render(cam, self.pose.yaw, self.pose.horizon)
            obs.rgb, obs.depth = frame.rgb, frame.depth
            obs.instance_ids = frame.instance
            # the ids present (0 is no object; ids are never negative): a count per id, not a sort
            present = np.flatnonzero(np.bincount(frame.instance.ravel()))
            labels = {}
            for k in present[present > 0]:
                oid = self._render_ids[int(k) - 1]
                labels[int(k)] = InstanceLabel(oid, self._table.objects[oid].type)
            # what a close look shows of each (household.visible_states)
            obs.id_to_label = with_states(frame.instance, frame.depth, labels,
                                          lambda oid: states_from_metadata(state_metadata(self._table.objects[oid])))
        return obs


# Interaction -> how this simulator executes it (one row per row of household.interactions;
# tests/test_interaction_table.py fails when one is missing).
EXECUTORS: dict[str, Callable[[EmbeddedEnvironment, str, dict[str, Any]], object]] = {  # (results unused)
    "PickupObject": lambda env, oid, args: env._table.pickup(oid, env._hand_position()),
    "PutObject": lambda env, oid, args: env._table.put(
        oid, lambda obj, rec, sibs: find_spot(obj, rec, sibs, near=env._hand_position())),
    "OpenObject": lambda env, oid, args: env._table.open(oid, True),
    "CloseObject": lambda env, oid, args: env._table.open(oid, False),
    "ToggleObjectOn": lambda env, oid, args: env._table.toggle(oid, True),
    "ToggleObjectOff": lambda env, oid, args: env._table.toggle(oid, False),
    "SliceObject": lambda env, oid, args: env._table.slice(oid),
    "FillObjectWithLiquid": lambda env, oid, args: env._table.fill(oid, str(args.get("fillLiquid", ""))),
    "BreakObject": lambda env, oid, args: env._table.break_object(oid),
}
