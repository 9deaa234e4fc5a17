"""Contract tests of the habitat backend against a stand-in ``habitat_sim`` (and ``magnum``).

habitat-sim has no Linux/Python 3.11 build here, so the stand-in implements the documented API
surface the backend uses, and only that: SimulatorConfiguration / CameraSensorSpec / SensorType,
agent.AgentConfiguration / ActionSpec / ActuationSpec / AgentState, Configuration, Simulator
(step, get_sensor_observations, get_agent, pathfinder, recompute_navmesh, seed, close,
get_rigid_object_manager, get_object_template_manager, semantic_scene), nav.NavMeshSettings,
physics.MotionType, utils.common.quat_from_coeffs / quat_to_coeffs, and magnum's Vector3, Rad,
Quaternion.rotation, Range3D. Its world is a 6 x 6 m kitchen with a table; it renders by
casting rays against boxes so visibility and semantic ids are real. Semantics follow habitat:
y up, agents look down -z, ``turn_left`` turns counter-clockwise seen from above, a move the
navmesh stops sets ``collided`` and (no sliding) ends at the navmesh border.
"""

from __future__ import annotations

import json
import math
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from household.checklist import ChecklistItem, evaluate_checklist
from sim_bridge.factory import make_environment
from sim_bridge.habitat.backend import HabitatConfig, HabitatEnvironment, HabitatUnavailableError
from sim_bridge.habitat.episode import HabitatDatasetError, HabitatError
from household.types import Action

W, H = 64, 48
ROOM = 3.0  # the kitchen spans x, z in [-3, 3]
TABLE = ((-0.5, 0.0, -2.5), (0.5, 0.8, -1.5))
TEMPLATES = {"objects/mug.object_config.json": 0.1, "objects/apple.object_config.json": 0.08}  # half sizes


# ---- the stand-in ----------------------------------------------------------------------------

class Vector3(tuple):
    def __new__(cls, x: float = 0.0, y: float = 0.0, z: float = 0.0) -> "Vector3":
        return super().__new__(cls, (float(x), float(y), float(z)))


class Quaternion:
    def __init__(self, angle: float = 0.0, axis: tuple = (0.0, 1.0, 0.0)) -> None:
        self.angle, self.axis = angle, tuple(axis)

    @classmethod
    def rotation(cls, angle: float, axis: tuple) -> "Quaternion":
        return cls(float(angle), axis)


class Range3D:
    def __init__(self, lo: tuple, hi: tuple) -> None:
        self.min, self.max = Vector3(*lo), Vector3(*hi)


class Attrs:
    """Plain attribute bag with defaults (the bound config classes behave like this)."""

    defaults: dict[str, Any] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for key, value in {**self.defaults, **dict(zip(self.defaults, args, strict=False)), **kwargs}.items():
            setattr(self, key, value() if callable(value) else value)


class ActuationSpec(Attrs):
    defaults = {"amount": 0.25, "constraint": None}


class ActionSpec(Attrs):
    defaults = {"name": "", "actuation": None}


class AgentConfiguration(Attrs):
    defaults = {"height": 1.5, "radius": 0.1, "sensor_specifications": list, "action_space": dict}


class AgentState(Attrs):
    defaults = {"position": lambda: np.zeros(3), "rotation": lambda: np.array([0.0, 0.0, 0.0, 1.0]),
                "sensor_states": dict}


class SixDOFPose(Attrs):
    defaults = {"position": lambda: np.zeros(3), "rotation": lambda: np.array([0.0, 0.0, 0.0, 1.0])}


class NavMeshSettings(Attrs):
    defaults = {"agent_radius": 0.1, "agent_height": 1.5}

    def set_defaults(self) -> None:
        self.agent_radius, self.agent_height = 0.1, 1.5


class PathFinder:
    def __init__(self, sim: "Simulator") -> None:
        self.sim, self.is_loaded, self.loaded_from = sim, False, None

    def load_nav_mesh(self, path: str) -> bool:
        self.is_loaded, self.loaded_from = Path(path).is_file(), path
        return self.is_loaded

    def is_navigable(self, p: Any) -> bool:
        x, _, z = map(float, p)
        r = self.sim.agent_radius
        (x0, _, z0), (x1, _, z1) = TABLE
        inside_room = -ROOM + r <= x <= ROOM - r and -ROOM + r <= z <= ROOM - r
        return inside_room and not (x0 - r < x < x1 + r and z0 - r < z < z1 + r)

    def snap_point(self, p: Any) -> np.ndarray:
        x, y, z = (float(np.clip(v, -ROOM + 0.3, ROOM - 0.3)) for v in p)
        return np.array([x, 0.0, z]) if self.is_navigable((x, y, z)) else np.full(3, np.nan)

    def get_random_navigable_point(self) -> np.ndarray:
        return np.array([1.0, 0.0, 1.0])


class SemanticCategory:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self, mapping: str = "") -> str:
        return self._name


class RigidObject(Attrs):
    defaults = {"handle": "", "object_id": 0, "translation": Vector3, "rotation": Quaternion, "motion_type": None,
                "semantic_id": 0, "root_scene_node": None}

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        bb = self.root_scene_node.cumulative_bb
        t = np.array(self.translation)
        return t + np.array(bb.min), t + np.array(bb.max)


class RigidObjectManager:
    def __init__(self) -> None:
        self.objects: dict[str, RigidObject] = {}
        self.count = 0

    def add_object_by_template_handle(self, handle: str) -> RigidObject | None:
        if handle not in TEMPLATES:
            return None
        self.count += 1
        s = TEMPLATES[handle]
        node = types.SimpleNamespace(cumulative_bb=Range3D((-s, 0.0, -s), (s, 2 * s, s)))
        obj = RigidObject(handle=f"{handle}_:{self.count:04d}", object_id=self.count, root_scene_node=node)
        self.objects[obj.handle] = obj
        return obj

    def remove_object_by_handle(self, handle: str) -> None:
        del self.objects[handle]

    def get_object_handles(self) -> list[str]:
        return list(self.objects)


class Agent:
    def __init__(self, config: AgentConfiguration) -> None:
        self.agent_config = config
        self.position, self.yaw, self.pitch = np.zeros(3), 0.0, 0.0  # radians; pitch belongs to the sensors

    def _sensor_position(self) -> np.ndarray:
        return self.position + np.array(self.agent_config.sensor_specifications[0].position, dtype=float)

    def get_state(self) -> AgentState:
        q = np.array([0.0, math.sin(self.yaw / 2), 0.0, math.cos(self.yaw / 2)])
        poses = {s.uuid: SixDOFPose(position=self._sensor_position()) for s in self.agent_config.sensor_specifications}
        return AgentState(position=self.position.copy(), rotation=q, sensor_states=poses)

    def set_state(self, state: AgentState, reset_sensors: bool = True, infer_sensor_states: bool = True,
                  is_initial: bool = False) -> None:
        self.position = np.array(state.position, dtype=float)
        x, y, z, w = state.rotation
        assert abs(x) < 1e-9 and abs(z) < 1e-9, "agent bodies only turn about +y"
        self.yaw = 2.0 * math.atan2(y, w)
        if reset_sensors:
            self.pitch = 0.0


class Simulator:
    def __init__(self, config: Any) -> None:
        self.config = config
        agent_cfg = config.agents[0]
        self.agent_radius = agent_cfg.radius
        self.agents = [Agent(agent_cfg)]
        self.pathfinder = PathFinder(self)
        self.navmesh_settings = None
        self.rom = RigidObjectManager()
        self.closed = False
        table = types.SimpleNamespace(id="table_0", semantic_id=5, category=SemanticCategory("table"),
                                      aabb=Range3D(*TABLE))
        kitchen = types.SimpleNamespace(id="region_0", category=SemanticCategory("Kitchen"),
                                        aabb=Range3D((-ROOM, 0, -ROOM), (ROOM, 2.5, ROOM)))
        self.semantic_scene = types.SimpleNamespace(objects=[None, table], regions=[kitchen])

    def get_agent(self, agent_id: int) -> Agent:
        return self.agents[agent_id]

    def recompute_navmesh(self, pathfinder: PathFinder, settings: NavMeshSettings) -> bool:
        pathfinder.is_loaded, self.navmesh_settings = True, settings
        return True

    def seed(self, seed: int) -> None:
        self.seeded = seed

    def close(self, destroy: bool = True) -> None:
        self.closed = True

    def get_rigid_object_manager(self) -> RigidObjectManager:
        return self.rom

    def get_object_template_manager(self) -> Any:
        return types.SimpleNamespace(get_template_handles=lambda s="": [h for h in TEMPLATES if s in h])

    def step(self, action: Any) -> dict[str, Any]:
        agent = self.agents[0]
        spec = agent.agent_config.action_space[action]
        amount, collided = spec.actuation.amount, False
        forward = np.array([-math.sin(agent.yaw), 0.0, -math.cos(agent.yaw)])
        right = np.array([math.cos(agent.yaw), 0.0, -math.sin(agent.yaw)])
        moves = {"move_forward": forward, "move_backward": -forward, "move_right": right, "move_left": -right}
        if spec.name in moves:
            start, end = agent.position, agent.position + amount * moves[spec.name]
            if not self.pathfinder.is_navigable(end):  # no sliding: stop at the last navigable point
                collided = True
                ts = [t for t in np.linspace(0, 1, 51) if self.pathfinder.is_navigable(start + t * (end - start))]
                end = start + max(ts) * (end - start)
            agent.position = end
        else:
            delta = {"turn_left": 1, "turn_right": -1, "look_up": 1, "look_down": -1}[spec.name] * math.radians(amount)
            if spec.name.startswith("turn"):
                agent.yaw += delta
            else:
                agent.pitch += delta
        return {**self.get_sensor_observations(), "collided": collided}

    def get_sensor_observations(self) -> dict[str, Any]:
        """Ray-cast boxes (table, rigid objects) and the floor, habitat camera conventions."""
        agent = self.agents[0]
        spec = agent.agent_config.sensor_specifications[0]
        h, w = spec.resolution
        f = (w / 2.0) / math.tan(math.radians(float(spec.hfov)) / 2.0)
        u, v = np.meshgrid(np.arange(w) - (w - 1) / 2.0, np.arange(h) - (h - 1) / 2.0)
        cam = np.stack([u / f, -v / f, -np.ones_like(u)], axis=-1)
        cy, sy, cp, sp = math.cos(agent.yaw), math.sin(agent.yaw), math.cos(agent.pitch), math.sin(agent.pitch)
        rot = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]]) @ np.array([[1, 0, 0], [0, cp, -sp], [0, sp, cp]])
        rays = cam @ rot.T
        origin = agent._sensor_position()
        with np.errstate(divide="ignore", invalid="ignore"):
            t_floor = np.where(rays[..., 1] < 0, -origin[1] / rays[..., 1], np.inf)
            best, sem = t_floor, np.zeros((h, w), dtype=np.uint32)
            boxes = [(np.array(TABLE[0]), np.array(TABLE[1]), 5)]
            boxes += [(*o.box(), o.semantic_id) for o in self.rom.objects.values()]
            for lo, hi, sid in boxes:
                t0, t1 = (lo - origin) / rays, (hi - origin) / rays
                near = np.minimum(t0, t1).max(axis=-1)
                far = np.maximum(t0, t1).min(axis=-1)
                hit = (near <= far) & (near > 0) & (near < best)
                best, sem = np.where(hit, near, best), np.where(hit, sid, sem)
        depth = np.where(np.isfinite(best), best, 0.0).astype(np.float32)  # unit z in camera frame: t = z-depth
        rgba = np.zeros((h, w, 4), dtype=np.uint8)
        rgba[..., 0], rgba[..., 3] = (sem * 40 % 256).astype(np.uint8), 255
        return {"rgb": rgba, "depth": depth, "semantic": sem}


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    mn = types.ModuleType("magnum")
    mn.Vector3, mn.Rad, mn.Quaternion, mn.Range3D = Vector3, float, Quaternion, Range3D
    hs = types.ModuleType("habitat_sim")
    hs.SensorType = types.SimpleNamespace(COLOR="COLOR", DEPTH="DEPTH", SEMANTIC="SEMANTIC")
    hs.CameraSensorSpec = type("CameraSensorSpec", (Attrs,), {"defaults": {
        "uuid": "", "sensor_type": "COLOR", "resolution": lambda: [128, 128], "position": lambda: [0.0, 1.5, 0.0],
        "hfov": 90.0}})
    hs.SimulatorConfiguration = type("SimulatorConfiguration", (Attrs,), {"defaults": {
        "scene_id": "", "scene_dataset_config_file": "default", "enable_physics": False, "gpu_device_id": 0,
        "allow_sliding": True, "random_seed": 0}})
    hs.Configuration = type("Configuration", (Attrs,), {"defaults": {"sim_cfg": None, "agents": list}})
    hs.Simulator = Simulator
    hs.agent = types.ModuleType("habitat_sim.agent")
    hs.agent.AgentConfiguration, hs.agent.AgentState = AgentConfiguration, AgentState
    hs.agent.ActionSpec, hs.agent.ActuationSpec = ActionSpec, ActuationSpec
    hs.nav = types.SimpleNamespace(NavMeshSettings=NavMeshSettings)
    hs.physics = types.SimpleNamespace(MotionType=types.SimpleNamespace(STATIC=0, KINEMATIC=1, DYNAMIC=2))
    common = types.SimpleNamespace(quat_from_coeffs=lambda c: np.array(c, dtype=float),
                                   quat_to_coeffs=lambda q: np.array(q, dtype=float))
    hs.utils = types.SimpleNamespace(common=common)
    monkeypatch.setitem(sys.modules, "magnum", mn)
    monkeypatch.setitem(sys.modules, "habitat_sim", hs)
    monkeypatch.setitem(sys.modules, "habitat_sim.agent", hs.agent)
    return hs


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "demo_dataset"
    (root / "scenes").mkdir(parents=True)
    (root / "scenes" / "kitchen.scene_instance.json").write_text("{}")
    (root / "demo.scene_dataset_config.json").write_text(json.dumps(
        {"scene_instances": {"paths": {".json": ["scenes/*.scene_instance.json"]}}}))
    return root


EPISODE = {"scene": "kitchen", "agent_start": {"position": [0.0, 0.0, -0.3], "yaw_deg": 0.0},
           "objects": [{"id": "Mug|1", "type": "Mug", "template": "mug", "position": [0.3, 0.0, -0.9]},
                       {"id": "Box|1", "type": "Box", "template": "apple", "position": [-0.4, 0.0, -0.9],
                        "pickupable": False, "receptacle": True, "openable": True, "toggleable": True}]}


def _env(dataset: Path, **overrides: Any) -> HabitatEnvironment:
    return HabitatEnvironment(HabitatConfig(dataset=str(dataset), width=W, height=H, **overrides))


# ---- tests ------------------------------------------------------------------------------------

def test_habitat_contract_configures_sensors_actions_and_navmesh(stub, dataset):
    env = _env(dataset)
    env.reset(EPISODE)
    cfg = env.sim.config
    assert cfg.sim_cfg.scene_id == "kitchen" and cfg.sim_cfg.allow_sliding is False
    assert cfg.sim_cfg.scene_dataset_config_file == str(dataset / "demo.scene_dataset_config.json")
    specs = {s.uuid: s for s in cfg.agents[0].sensor_specifications}
    assert {u: s.sensor_type for u, s in specs.items()} == {"rgb": "COLOR", "depth": "DEPTH", "semantic": "SEMANTIC"}
    assert all(s.resolution == [H, W] and s.position == [0.0, 1.5, 0.0] and s.hfov == 90.0 for s in specs.values())
    space = cfg.agents[0].action_space
    assert {k: (a.name, a.actuation.amount) for k, a in space.items()} == {
        "MoveAhead": ("move_forward", 0.25), "MoveBack": ("move_backward", 0.25), "MoveLeft": ("move_left", 0.25),
        "MoveRight": ("move_right", 0.25), "RotateLeft": ("turn_left", 30.0), "RotateRight": ("turn_right", 30.0),
        "LookUp": ("look_up", 30.0), "LookDown": ("look_down", 30.0)}
    assert env.sim.navmesh_settings.agent_radius == 0.2  # no navmesh file: recomputed for this agent
    (dataset / "navmeshes").mkdir()
    (dataset / "navmeshes" / "kitchen.navmesh").write_bytes(b"navmesh")
    env.close()
    env.reset(EPISODE)
    assert env.sim.pathfinder.loaded_from == str(dataset / "navmeshes" / "kitchen.navmesh")


def test_habitat_contract_moves_turns_and_looks_in_rep_103(stub, dataset):
    env = _env(dataset)
    obs = env.reset({**EPISODE, "agent_start": {"position": [0.0, 0.0, 0.0]}})
    assert obs.agent.position == pytest.approx((0.0, 0.0, 0.0)) and obs.agent.yaw_deg == pytest.approx(0.0)
    assert obs.intrinsics.fx == pytest.approx(W / 2.0) and obs.intrinsics.fy == pytest.approx(W / 2.0)
    assert np.allclose(obs.world_from_camera[:3, 2], [1.0, 0.0, 0.0])  # optical z looks along ROS +x
    assert obs.world_from_camera[2, 3] == pytest.approx(1.5)
    back = env.step(Action("MoveBack")).observation  # habitat +z = ROS -x
    assert back.agent.position == pytest.approx((-0.25, 0.0, 0.0))
    left = env.step(Action("RotateLeft", args={"degrees": 90.0})).observation
    assert left.agent.yaw_deg == pytest.approx(90.0)  # counter-clockwise: now facing ROS +y
    ahead = env.step(Action("MoveAhead")).observation
    assert ahead.agent.position == pytest.approx((-0.25, 0.25, 0.0))
    down = env.step(Action("LookDown")).observation
    assert down.agent.horizon_deg == 30.0 and down.world_from_camera[2, 2] == pytest.approx(-0.5)
    assert not env.step(Action("LookDown", args={"degrees": 60.0})).success  # past THOR's 60 degrees
    assert env.sim.get_agent(0).pitch == pytest.approx(math.radians(-30.0))  # refused before habitat moved
    tilted = env.reset({**EPISODE, "agent_start": {"position": [0.0, 0.0, 0.0], "yaw_deg": 90.0, "horizon_deg": 60}})
    assert tilted.agent.horizon_deg == 60.0 and env.sim.get_agent(0).pitch == pytest.approx(math.radians(-60.0))
    assert tilted.agent.yaw_deg == pytest.approx(90.0)


def test_habitat_contract_blocked_move_fails_without_moving(stub, dataset):
    env = _env(dataset)
    env.reset({**EPISODE, "agent_start": {"position": [0.0, 0.0, -0.9]}})
    first = env.step(Action("MoveAhead", args={"moveMagnitude": 1.0}))  # the table's navmesh hole is 0.4 m ahead
    assert not first.success and "blocked" in first.error
    assert first.observation.agent.position == pytest.approx((0.9, 0.0, 0.0))


def test_habitat_contract_semantic_ids_become_labelled_instances(stub, dataset):
    env = _env(dataset)
    env.reset(EPISODE)
    obs = env.step(Action("LookDown")).observation
    labels = {lab.object_id: lab.object_type for lab in obs.id_to_label.values()}
    assert labels == {"table_0": "table", "Mug|1": "Mug", "Box|1": "Box"}
    for k in obs.id_to_label:
        assert (obs.instance_ids == k).any()
    assert set(np.unique(obs.instance_ids)) == {0} | set(obs.id_to_label)
    assert obs.depth.dtype == np.float32 and obs.rgb.shape == (H, W, 3)


def test_habitat_contract_pick_and_place_through_the_rigid_object_manager(stub, dataset):
    env = _env(dataset)
    env.reset(EPISODE)
    rom = env.sim.get_rigid_object_manager()
    added = {o.semantic_id: o for o in rom.objects.values()}
    assert all(o.motion_type == 1 for o in added.values()) and len(added) == 2
    env.step(Action("LookDown"))
    assert not env.step(Action("PickupObject", "Box|1")).success  # not pickupable
    picked = env.step(Action("PickupObject", "Mug|1"))
    assert picked.success and picked.observation.agent.held_object_id == "Mug|1"
    assert len(rom.objects) == 1  # removed from the scene while held
    assert not env.step(Action("PutObject", "Box|1")).success  # a closed box takes nothing
    assert env.step(Action("OpenObject", "Box|1")).success and env.step(Action("ToggleObjectOn", "Box|1")).success
    put = env.step(Action("PutObject", "table_0"))
    assert put.success and put.observation.agent.held_object_id is None
    mug = next(o for o in rom.objects.values() if o.handle.startswith("objects/mug"))
    assert mug.translation[1] == pytest.approx(0.81) and mug.semantic_id not in (0, 5)
    sliced = env.step(Action("SliceObject", "table_0"))
    assert not sliced.success and "not supported" in sliced.error
    crouched = env.step(Action("Crouch"))  # one sensor height: a typed refusal, not an unknown action
    assert not crouched.success and "one height" in crouched.error
    assert crouched.observation.feedback.failure == "not_capable"
    world = env.ground_truth()
    items = [ChecklistItem.from_dict(d) for d in (
        {"object": {"type": "Mug"}, "predicate": "inReceptacle", "target": {"type": "table"}},
        {"object": {"type": "Mug"}, "predicate": "inRoom", "value": "Kitchen"},
        {"object": {"type": "Box"}, "predicate": "isOpen"}, {"object": {"type": "Box"}, "predicate": "isToggled"},
        {"object": {"type": "Mug"}, "predicate": "isHeld"})]
    assert [r.satisfied for r in evaluate_checklist(items, world).items] == [True, True, True, True, False]
    assert world.object("Mug|1")["position"]["z"] == pytest.approx(2.0)  # THOR z = -habitat z (table centre)


def test_habitat_contract_bad_input_names_the_missing_piece(stub, dataset, monkeypatch):
    with pytest.raises(HabitatDatasetError, match=r"'/no/such/dataset' does not exist.*README"):
        HabitatEnvironment(HabitatConfig(dataset="/no/such/dataset"))
    env = _env(dataset)
    with pytest.raises(HabitatDatasetError, match=r"scene 'garage' is not in dataset .*scenes: kitchen"):
        env.reset({**EPISODE, "scene": "garage"})
    bad = {**EPISODE, "objects": [{"id": "Cup|1", "type": "Cup", "template": "teacup", "position": [0, 0, -1]}]}
    with pytest.raises(HabitatDatasetError, match=r"Cup\|1: template 'teacup' matches no template.*objects/"):
        env.reset(bad)
    with pytest.raises(HabitatError, match="no 'habitat' field"):
        env.reset(types.SimpleNamespace(id="dev-000-0", extra={}))
    assert isinstance(make_environment("habitat", dataset=str(dataset)), HabitatEnvironment)
    with pytest.raises(TypeError, match=r"habitat.*'scene'.*dataset"):
        make_environment("habitat", scene="kitchen")
    monkeypatch.setitem(sys.modules, "habitat_sim", None)  # what a machine without habitat-sim sees
    with pytest.raises(HabitatUnavailableError, match="conda install habitat-sim"):
        make_environment("habitat", dataset=str(dataset))
