"""The ``habitat`` backend: habitat_sim behind the Environment seam.

Scenes and object assets are the user's; the backend expects a habitat scene dataset:

    <dataset>/
      <name>.scene_dataset_config.json   habitat's dataset config (stages, objects, scene instances)
      stages/ ...                        stage meshes (+ *.stage_config.json)
      objects/*.object_config.json       object templates the episodes place (with their meshes)
      scenes/<scene>.scene_instance.json scene instances (an episode's "scene" is one of these names)
      semantics/ ...                     semantic annotations (object categories, regions = rooms)
      navmeshes/<scene>.navmesh          optional; recomputed from the scene when missing

``HabitatConfig.dataset`` is the config file or the folder holding it (sim_bridge/habitat/README.md).

What the backend does with habitat_sim's API: one agent with RGB, depth and semantic camera
sensors; ALFRED moves, turns and looks as ``move_forward``/``turn_left``/``look_up``-style
actions (a blocked move is undone so it fails as in THOR); episode objects added through the
rigid object manager as kinematic objects with their own semantic ids; PickupObject removes the
object from the scene, PutObject re-adds it on top of the receptacle's bounding box; the
navmesh bounds motion and places the agent. Semantic ids become instance ids labelled from the
semantic scene (scene objects: their category) and from the episode (added objects: their type).
habitat_sim has no THOR object states: open/toggled are bookkeeping of this backend, and
SliceObject is not supported (a failed step).

Frames and the THOR-shaped object records: ``sim_bridge.habitat.items``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from transforms3d.quaternions import quat2mat

from household.frames import world_from_camera
from household.interactions import BY_ACTION, INTERACTIONS
from household.outcomes import Failure
from sim_bridge.habitat.episode import (
    HabitatDatasetError,
    HabitatEpisode,
    HabitatError,
    HabitatObject,
    dataset_config,
    scene_names,
)
from sim_bridge.habitat.items import ROS_FROM_HABITAT, THOR_FROM_HABITAT, SceneItem
from household.types import (
    Action,
    ActionFeedback,
    AgentStatus,
    CameraIntrinsics,
    InstanceLabel,
    Observation,
    PASS,
    POSTURE_ACTIONS,
    RoomInfo,
    StepResult,
    WorldState,
)

# ALFRED action -> (habitat_sim registered control, config field with its magnitude, Action.args key)
CONTROLS = {
    "MoveAhead": ("move_forward", "move_step", "moveMagnitude"),
    "MoveBack": ("move_backward", "move_step", "moveMagnitude"),
    "MoveLeft": ("move_left", "move_step", "moveMagnitude"),
    "MoveRight": ("move_right", "move_step", "moveMagnitude"),
    "RotateLeft": ("turn_left", "rotate_step", "degrees"),
    "RotateRight": ("turn_right", "rotate_step", "degrees"),
    "LookUp": ("look_up", "look_step", "degrees"),
    "LookDown": ("look_down", "look_step", "degrees"),
}
SENSORS = ("rgb", "depth", "semantic")


class HabitatUnavailableError(HabitatError, ImportError):
    """habitat_sim (or its magnum bindings) is not importable."""


# What this backend executes: the interaction table's rows marked ``habitat`` (open/closed and
# on/off are the only object states it keeps; the rest fail as NOT_CAPABLE).
HABITAT_INTERACTIONS = frozenset(i.action for i in INTERACTIONS if i.habitat)


class _Failed(Exception):
    """An action that cannot be done; becomes a failed step with this message and typed outcome."""

    def __init__(self, message: str, failure: Failure = Failure.UNKNOWN) -> None:
        super().__init__(message)
        self.failure = failure


def import_habitat() -> tuple[Any, Any]:
    try:
        import habitat_sim
        import magnum
    except ImportError as exc:
        raise HabitatUnavailableError(
            f"the habitat backend needs habitat-sim ({exc}). PyPI has no Linux wheel for it: install it with "
            "conda (`conda install habitat-sim -c conda-forge -c aihabitat`) or build it from source "
            "(github.com/facebookresearch/habitat-sim), in the environment that runs worldmind") from exc
    return habitat_sim, magnum


@dataclass
class HabitatConfig:
    dataset: str = ""  # *.scene_dataset_config.json, or the folder holding it
    width: int = 320
    height: int = 240
    hfov_deg: float = 90.0  # habitat cameras take a horizontal field of view
    sensor_height: float = 1.5
    agent_radius: float = 0.2
    agent_height: float = 1.5
    move_step: float = 0.25
    rotate_step: float = 30.0
    look_step: float = 30.0
    horizon_min: float = -30.0  # THOR's limits, so planners see the same camera
    horizon_max: float = 60.0
    reach: float = 1.5
    gpu_device_id: int = 0
    enable_physics: bool = False  # kinematic objects need no Bullet
    seed: int = 0


class HabitatEnvironment:
    name = "habitat"

    def __init__(self, config: HabitatConfig | None = None) -> None:
        self.hs, self.mn = import_habitat()
        self.config = config or HabitatConfig()
        self.dataset_file = dataset_config(self.config.dataset)
        self.sim: Any = None
        self.scene = ""
        self.items: dict[str, SceneItem] = {}
        self.rooms: list[RoomInfo] = []
        self.horizon = 0.0
        self.held: SceneItem | None = None
        self.step_count = 0
        self.stopped = False
        self._frame: dict[str, Any] = {}
        self._feedback = ActionFeedback(None, True, "")

    # ---- seam --------------------------------------------------------------------------------
    def reset(self, episode: Any) -> Observation:
        spec = HabitatEpisode.of(episode)
        if self.sim is None or spec.scene != self.scene:
            self._load_scene(spec.scene)
        rom = self.sim.get_rigid_object_manager()
        for item in self.items.values():
            if item.rigid is not None:
                rom.remove_object_by_handle(item.rigid.handle)
        self._index_scene()
        next_id = max([i.semantic_id for i in self.items.values()] + [0]) + 1
        for k, obj in enumerate(spec.objects):
            if obj.id in self.items:
                raise HabitatError(f"episode object id {obj.id!r} is used twice (or by a scene object)")
            item = SceneItem(obj.id, obj.type, next_id + k, np.zeros(3), np.zeros(3), obj, handle=self._template(obj))
            self._place(item, np.array(obj.position), obj.yaw_deg)
            self.items[obj.id] = item
        self._place_agent(spec)
        self.held, self.step_count, self.stopped = None, 0, False
        self._frame = self.sim.get_sensor_observations()
        looks = round(spec.start_horizon_deg / self.config.look_step)  # sensors start level
        for _ in range(abs(looks)):
            self._act("LookDown" if looks > 0 else "LookUp", self.config.look_step)
        self.horizon = looks * self.config.look_step
        self._feedback = ActionFeedback(None, True, "")
        return self._observe()

    def step(self, action: Action) -> StepResult:
        if self.sim is None:
            raise RuntimeError("step() before reset()")
        self.step_count += 1
        try:
            if self.stopped and action.name != "Stop":
                raise _Failed(f"{action.name}: the episode was stopped; call reset()", Failure.BAD_REQUEST)
            self._dispatch(action)
            self._feedback = ActionFeedback(action.name, True, "")
        except _Failed as exc:
            self._feedback = ActionFeedback(action.name, False, str(exc), exc.failure.value)
        return StepResult(self._observe(), self._feedback.success, self._feedback.error)

    def ground_truth(self) -> WorldState:
        if self.sim is None:
            raise RuntimeError("ground_truth() before reset()")
        visible = self._visible_ids()
        camera = self._camera_position()
        objects = [item.metadata(camera, item.semantic_id in visible) for item in self.items.values()]
        state = self.sim.get_agent(0).get_state()
        pos = THOR_FROM_HABITAT @ np.asarray(state.position, dtype=float)
        agent = {"name": "agent", "position": dict(zip("xyz", map(float, pos), strict=True)),
                 "rotation": {"x": 0.0, "y": float((-self._yaw_ros(state)) % 360.0), "z": 0.0},
                 "cameraHorizon": self.horizon, "isStanding": True}
        return WorldState(objects, agent, list(self.rooms), self.held.id if self.held else None, self.scene)

    def close(self) -> None:
        if self.sim is not None:
            self.sim.close()
            self.sim = None

    # ---- scene -------------------------------------------------------------------------------
    def _load_scene(self, scene: str) -> None:
        known = scene_names(self.dataset_file)
        if scene not in known:
            shown = ", ".join(sorted(known)[:10]) + (" ..." if len(known) > 10 else "")
            raise HabitatDatasetError(f"scene {scene!r} is not in dataset {self.dataset_file} "
                                      f"(scenes: {shown or 'none'})")
        self.close()
        self.sim = self.hs.Simulator(self._configuration(scene))
        self.scene = scene
        self.items = {}
        pathfinder = self.sim.pathfinder
        navmesh = self.dataset_file.parent / "navmeshes" / f"{scene}.navmesh"
        if not pathfinder.is_loaded and navmesh.is_file():
            pathfinder.load_nav_mesh(str(navmesh))
        if not pathfinder.is_loaded:
            settings = self.hs.nav.NavMeshSettings()
            settings.set_defaults()
            settings.agent_radius, settings.agent_height = self.config.agent_radius, self.config.agent_height
            self.sim.recompute_navmesh(pathfinder, settings)
        if not pathfinder.is_loaded:
            raise HabitatDatasetError(f"scene {scene!r}: no navmesh at {navmesh} and none could be computed "
                                      "from the scene's collision geometry")

    def _configuration(self, scene: str) -> Any:
        hs, cfg = self.hs, self.config
        sim_cfg = hs.SimulatorConfiguration()
        sim_cfg.scene_dataset_config_file = str(self.dataset_file)
        sim_cfg.scene_id = scene
        sim_cfg.enable_physics = cfg.enable_physics
        sim_cfg.gpu_device_id = cfg.gpu_device_id
        sim_cfg.allow_sliding = False
        sim_cfg.random_seed = cfg.seed
        specs = []
        for uuid, kind in zip(SENSORS, (hs.SensorType.COLOR, hs.SensorType.DEPTH, hs.SensorType.SEMANTIC), strict=True):
            spec = hs.CameraSensorSpec()
            spec.uuid, spec.sensor_type = uuid, kind
            spec.resolution = [cfg.height, cfg.width]
            spec.position = [0.0, cfg.sensor_height, 0.0]
            spec.hfov = cfg.hfov_deg
            specs.append(spec)
        agent = hs.agent.AgentConfiguration()
        agent.height, agent.radius, agent.sensor_specifications = cfg.agent_height, cfg.agent_radius, specs
        agent.action_space = {name: hs.agent.ActionSpec(control, hs.agent.ActuationSpec(amount=getattr(cfg, size)))
                              for name, (control, size, _) in CONTROLS.items()}
        return hs.Configuration(sim_cfg, [agent])

    def _index_scene(self) -> None:
        """Annotated scene objects become items; regions become rooms."""
        self.items, self.rooms = {}, []
        semantic = self.sim.semantic_scene
        for obj in semantic.objects:
            if obj is None or obj.category is None:
                continue
            lo, hi = np.asarray(list(obj.aabb.min), float), np.asarray(list(obj.aabb.max), float)
            self.items[obj.id] = SceneItem(obj.id, obj.category.name(), int(obj.semantic_id), lo, hi)
        for region in semantic.regions:
            lo, hi = np.asarray(list(region.aabb.min), float), np.asarray(list(region.aabb.max), float)
            corners = [THOR_FROM_HABITAT @ np.array([x, 0.0, z]) for x, z in
                       ((lo[0], lo[2]), (hi[0], lo[2]), (hi[0], hi[2]), (lo[0], hi[2]))]
            polygon = [(float(c[0]), float(c[2])) for c in corners]
            self.rooms.append(RoomInfo(region.id, region.category.name(), polygon))

    def _template(self, obj: HabitatObject) -> str:
        handles = list(self.sim.get_object_template_manager().get_template_handles(obj.template))
        exact = [h for h in handles if h == obj.template]
        if exact or len(handles) == 1:
            return (exact or handles)[0]
        problem = f"matches {len(handles)} templates ({', '.join(handles[:5])})" if handles else "matches no template"
        raise HabitatDatasetError(f"object {obj.id}: template {obj.template!r} {problem} in dataset "
                                  f"{self.dataset_file}; "
                                  "templates come from the dataset's objects/*.object_config.json")

    def _place(self, item: SceneItem, position: np.ndarray, yaw_deg: float) -> None:
        """Add the item's template to the scene at ``position`` (its origin), kinematic."""
        hs, mn = self.hs, self.mn
        rigid = self.sim.get_rigid_object_manager().add_object_by_template_handle(item.handle)
        if rigid is None:
            raise HabitatDatasetError(f"object {item.id}: habitat_sim could not instance template {item.handle!r}")
        rigid.motion_type = hs.physics.MotionType.KINEMATIC
        rigid.translation = mn.Vector3(*map(float, position))
        rigid.rotation = mn.Quaternion.rotation(mn.Rad(math.radians(yaw_deg)), mn.Vector3(0.0, 1.0, 0.0))
        rigid.semantic_id = item.semantic_id
        bb = rigid.root_scene_node.cumulative_bb
        item.rigid = rigid
        item.lo = np.asarray(position, float) + np.asarray(list(bb.min), float)  # rotation ignored: yaw-only,
        item.hi = np.asarray(position, float) + np.asarray(list(bb.max), float)  # small objects

    def _place_agent(self, spec: HabitatEpisode) -> None:
        pathfinder = self.sim.pathfinder
        if spec.start_position is None:
            self.sim.seed(self.config.seed)
            position = np.asarray(list(pathfinder.get_random_navigable_point()), float)
        else:
            position = np.asarray(spec.start_position, float)
            if not pathfinder.is_navigable(position):
                position = np.asarray(list(pathfinder.snap_point(position)), float)
            if not np.all(np.isfinite(position)):
                raise HabitatError(f"agent_start {spec.start_position} is off the navmesh of scene {self.scene!r}")
        half = math.radians(spec.start_yaw_deg) / 2.0
        state = self.hs.agent.AgentState()
        state.position = position
        state.rotation = self.hs.utils.common.quat_from_coeffs([0.0, math.sin(half), 0.0, math.cos(half)])
        self.sim.get_agent(0).set_state(state)

    # ---- actions -----------------------------------------------------------------------------
    def _act(self, name: str, amount: float) -> bool:
        agent = self.sim.get_agent(0)
        agent.agent_config.action_space[name].actuation.amount = amount
        self._frame = self.sim.step(name)
        return bool(self._frame.get("collided", False))

    def _dispatch(self, action: Action) -> None:
        name, cfg = action.name, self.config
        if name in CONTROLS:
            _, size, arg = CONTROLS[name]
            amount = float(action.args.get(arg, getattr(cfg, size)))
            if name in ("LookUp", "LookDown"):
                target = self.horizon + (amount if name == "LookDown" else -amount)
                if not cfg.horizon_min - 1e-6 <= target <= cfg.horizon_max + 1e-6:
                    raise _Failed(f"{name}: camera horizon {target:.0f} is outside "
                                  f"[{cfg.horizon_min:.0f}, {cfg.horizon_max:.0f}]", Failure.BAD_REQUEST)
                self._act(name, amount)
                self.horizon = target
                return
            agent = self.sim.get_agent(0)
            before = agent.get_state()
            if self._act(name, amount) and name.startswith("Move"):
                agent.set_state(before, reset_sensors=False)  # THOR semantics: a blocked move does not move
                self._frame = self.sim.get_sensor_observations()
                raise _Failed(f"{name} blocked: the navmesh ends there (collision)", Failure.BLOCKED)
        elif name == "Stop":
            self.stopped = True
        elif name == PASS:
            pass  # nothing moves; the frame is observed again
        elif name in POSTURE_ACTIONS:  # the sensor is mounted at one height (HabitatConfig.sensor_height)
            raise _Failed(f"{name} is not supported by the habitat backend (its camera has one height, "
                          f"{cfg.sensor_height:g} m)", Failure.NOT_CAPABLE)
        elif name in HABITAT_INTERACTIONS:
            self._interact(name, action.object_id)
        elif name in BY_ACTION:
            raise _Failed(f"{name} is not supported by the habitat backend (habitat_sim has no such object state)",
                          Failure.NOT_CAPABLE)
        else:
            raise _Failed(f"Unknown action {name!r}", Failure.BAD_REQUEST)

    def _interact(self, name: str, object_id: str | None) -> None:
        item = self.items.get(object_id or "")
        if item is None:
            raise _Failed(f"{name}: object {object_id} does not exist in scene {self.scene}", Failure.UNKNOWN_OBJECT)
        if item.held:
            raise _Failed(f"{name}: object {object_id} is being held", Failure.UNKNOWN)
        camera = self._camera_position()
        dist = item.distance(camera)
        if dist > self.config.reach:
            raise _Failed(f"{name}: object {object_id} is out of reach ({dist:.2f} m > {self.config.reach:.2f} m)", Failure.OUT_OF_REACH)
        if item.semantic_id not in self._visible_ids():
            raise _Failed(f"{name}: object {object_id} is not visible from the agent's view", Failure.NOT_VISIBLE)
        rom = self.sim.get_rigid_object_manager()
        if name == "PickupObject":
            if not item.affords("pickupable"):
                raise _Failed(f"PickupObject: {object_id} ({item.type}) is not pickupable", Failure.NOT_CAPABLE)
            if self.held is not None:
                raise _Failed(f"PickupObject: already holding {self.held.id}", Failure.HAND_FULL)
            rom.remove_object_by_handle(item.rigid.handle)
            item.rigid, item.held, item.parents, self.held = None, True, [], item
        elif name == "PutObject":
            if self.held is None:
                raise _Failed("PutObject: nothing is held", Failure.NOT_HOLDING)
            if not item.affords("receptacle"):
                raise _Failed(f"PutObject: {object_id} ({item.type}) is not a receptacle", Failure.WRONG_RECEPTACLE)
            if item.affords("openable") and not item.is_open:
                raise _Failed(f"PutObject: {object_id} is closed", Failure.CLOSED)
            held, self.held = self.held, None
            assert held is not None  # checked above: "nothing is held" fails first
            held.held = False
            yaw = held.spec.yaw_deg if held.spec is not None else 0.0  # a scene object has no episode spec
            self._place(held, np.array([item.center[0], item.hi[1] + 0.01, item.center[2]]), yaw)
            held.parents = [item.id] + item.parents
        else:
            what = "openable" if name in ("OpenObject", "CloseObject") else "toggleable"
            if not item.affords(what):
                raise _Failed(f"{name}: {object_id} ({item.type}) is not {what}", Failure.NOT_CAPABLE)
            if what == "openable":
                item.is_open = name == "OpenObject"
            else:
                item.is_toggled = name == "ToggleObjectOn"
        self._frame = self.sim.get_sensor_observations()

    # ---- observations ------------------------------------------------------------------------
    def _camera_position(self) -> np.ndarray:
        return np.asarray(list(self.sim.get_agent(0).get_state().sensor_states["rgb"].position), float)

    def _visible_ids(self) -> set[int]:
        return {int(k) for k in np.unique(self._frame["semantic"])}

    def _yaw_ros(self, state: Any) -> float:
        x, y, z, w = self.hs.utils.common.quat_to_coeffs(state.rotation)
        forward = ROS_FROM_HABITAT @ (quat2mat([w, x, y, z]) @ np.array([0.0, 0.0, -1.0]))
        return math.degrees(math.atan2(forward[1], forward[0]))

    def _observe(self) -> Observation:
        cfg, frame = self.config, self._frame
        state = self.sim.get_agent(0).get_state()
        yaw = self._yaw_ros(state)
        vfov = math.degrees(2.0 * math.atan(math.tan(math.radians(cfg.hfov_deg) / 2.0) * cfg.height / cfg.width))
        base = ROS_FROM_HABITAT @ np.asarray(state.position, float)
        pose = world_from_camera(ROS_FROM_HABITAT @ self._camera_position(), yaw, self.horizon)
        held = self.held
        status = AgentStatus((float(base[0]), float(base[1]), float(base[2])), yaw, self.horizon,
                             held.id if held else None, held.type if held else None)
        semantic = np.asarray(frame["semantic"]).astype(np.int64)
        by_sid = {item.semantic_id: item for item in self.items.values()}
        present = [int(k) for k in np.unique(semantic) if int(k) in by_sid]
        ids = np.where(np.isin(semantic, present), semantic, 0).astype(np.int32)
        return Observation(self.step_count, CameraIntrinsics.from_fov(cfg.width, cfg.height, vfov), pose, status,
                           self._feedback, rgb=np.ascontiguousarray(np.asarray(frame["rgb"])[..., :3]),
                           depth=np.asarray(frame["depth"], dtype=np.float32), instance_ids=ids,
                           id_to_label={k: InstanceLabel(by_sid[k].id, by_sid[k].type) for k in present})
