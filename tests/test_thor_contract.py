"""Contract tests of the thor backend against the REAL ai2thor 5.0 Controller.

The Controller spawns ``sim_bridge.thor.fake_player`` through ``local_executable_path`` and talks
to it over THOR's FIFO protocol; the player runs the embedded simulator. So these tests check
what the bridge really sends to a THOR player (logged by the player), that the answers (msgpack
metadata, bottom-row-first images, instance colours) come back as the same Observation the
embedded simulator produces, and that an episode scores the same GC through both backends.
``HOME`` points at a temporary folder: ai2thor writes logs (and prunes builds) under ~/.ai2thor.
"""

from __future__ import annotations

import copy
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ai2thor", reason="needs the real ai2thor 5.0 Controller: pip install 'worldmind[thor]'")
pytest.importorskip("msgpack", reason="ai2thor's FIFO server needs msgpack: pip install 'worldmind[thor]'")

from evaluation.episodes import Episode  # noqa: E402
from evaluation.runner import run_episode  # noqa: E402
from privileged.oracle import OraclePlanner  # noqa: E402
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment  # noqa: E402
from household.house_data import load_house  # noqa: E402
from sim_bridge.factory import UnknownEnvironmentError, make_environment  # noqa: E402
from sim_bridge.thor import fake_player  # noqa: E402
from sim_bridge.thor.actions import StepSizes, to_thor_call  # noqa: E402
from sim_bridge.thor.backend import ThorConfig, ThorEnvironment  # noqa: E402
from sim_bridge.thor.errors import ThorConnectionError, ThorHouseError, ThorStartError  # noqa: E402
from household.types import Action  # noqa: E402

W, H = 64, 48
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DISPLAY", raising=False)


@pytest.fixture(scope="module")
def house() -> dict[str, Any]:
    return load_house("houses_dev.jsonl.gz", 0)


@pytest.fixture
def thor(tmp_path: Path):
    """A factory of thor environments on the stand-in player; returns (env, log path)."""
    made: list[ThorEnvironment] = []

    def make(**overrides: Any) -> tuple[ThorEnvironment, Path]:
        log = tmp_path / f"actions-{len(made)}.jsonl"
        settings: dict[str, Any] = {"width": W, "height": H, "start_timeout_s": 20.0, "action_timeout_s": 20.0,
                                    **overrides}
        cfg = ThorConfig(local_executable_path=fake_player.command(str(log)), **settings)
        env = ThorEnvironment(cfg)
        made.append(env)
        return env, log

    yield make
    for env in made:
        env.close()


def _messages(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _episode(items: list[dict[str, Any]], **extra: Any) -> Episode:
    return Episode.from_dict({"id": "contract", "house": {"file": "houses_dev.jsonl.gz", "index": 0},
                              "scenario": "Dining & Kitchen", "instructions": {"detailed": "d", "concise": "c"},
                              "max_steps": 400, "checklist": items, **extra})


def _embedded() -> EmbeddedEnvironment:
    return EmbeddedEnvironment(EmbeddedConfig(width=W, height=H))


# ---- the wire ---------------------------------------------------------------------------------

def test_contract_start_hands_the_house_over_with_create_house(thor, house):
    env, log = thor()
    obs = env.reset(house)
    sent = _messages(log)
    assert [m["action"] for m in sent] == ["ChangeResolution", "Reset", "Initialize", "CreateHouse"]
    assert sent[0] == {"action": "ChangeResolution", "x": W, "y": H, "sequenceId": 1}
    assert sent[1] == {"action": "Reset", "sceneName": "Procedural", "sequenceId": 0}
    assert sent[2] == {"action": "Initialize", "gridSize": 0.25, "snapToGrid": False, "rotateStepDegrees": 30.0,
                       "visibilityDistance": 1.5, "fieldOfView": 90.0, "renderDepthImage": True,
                       "renderInstanceSegmentation": True, "agentMode": "default", "sequenceId": 1}
    assert sent[3] == {"action": "CreateHouse", "house": house, "sequenceId": 2}
    assert obs.rgb.shape == (H, W, 3) and obs.rgb.dtype == np.uint8
    assert obs.depth.shape == (H, W) and obs.depth.dtype == np.float32
    assert obs.instance_ids.shape == (H, W) and obs.id_to_label
    assert obs.intrinsics.fx == pytest.approx(H / 2.0)  # 90 degrees vertical field of view


def test_contract_actions_go_out_as_thor_5_calls(thor, house):
    env, log = thor()
    start = {"position": {"x": 4.25, "y": 0.95, "z": 10.5}, "rotation": {"x": 0.0, "y": 90.0, "z": 0.0},
             "horizon": 30.0}
    env.reset(_episode([{"object": {"type": "Fridge"}, "predicate": "isOpen"}], agent_start=start))
    actions = [Action("MoveAhead"), Action("RotateLeft"), Action("LookDown"), Action("PickupObject", "small|4|6"),
               Action("PutObject", "4|1"), Action("PutObject", "small|4|6", {"receptacleObjectId": "4|1"}),
               Action("OpenObject", "6|1"), Action("CloseObject", "6|1"), Action("ToggleObjectOn", "7|2"),
               Action("ToggleObjectOff", "7|2"), Action("SliceObject", "small|6|34"),
               Action("MoveBack", args={"moveMagnitude": 0.5}), Action("Stop"), Action("MoveAhead")]
    results = [env.step(a) for a in actions]
    sent = _messages(log)[4:]
    expected = [
        {"action": "TeleportFull", "position": start["position"], "rotation": start["rotation"], "horizon": 30.0,
         "standing": True},
        {"action": "MoveAhead", "moveMagnitude": 0.25},
        {"action": "RotateLeft", "degrees": 30.0},
        {"action": "LookDown", "degrees": 30.0},
        {"action": "PickupObject", "objectId": "small|4|6", "forceAction": False, "manualInteract": False},
        {"action": "PutObject", "objectId": "4|1", "forceAction": False, "placeStationary": True},
        {"action": "PutObject", "objectId": "4|1", "forceAction": False, "placeStationary": True},
        {"action": "OpenObject", "objectId": "6|1", "openness": 1.0, "forceAction": False},
        {"action": "CloseObject", "objectId": "6|1", "forceAction": False},
        {"action": "ToggleObjectOn", "objectId": "7|2", "forceAction": False},
        {"action": "ToggleObjectOff", "objectId": "7|2", "forceAction": False},
        {"action": "SliceObject", "objectId": "small|6|34", "forceAction": False},
        {"action": "MoveBack", "moveMagnitude": 0.5},
        {"action": "Done"},
    ]
    assert [{k: v for k, v in m.items() if k != "sequenceId"} for m in sent] == expected
    assert [m["sequenceId"] for m in sent] == list(range(3, 3 + len(expected)))
    assert results[-2].success  # Stop
    assert not results[-1].success and "stopped" in results[-1].error  # refused locally, never sent


def _pixel_object_ids(obs: Any) -> np.ndarray:
    """Per pixel the object id (not the backend's integer), so two backends can be compared."""
    names = {0: ""} | {k: lab.object_id for k, lab in obs.id_to_label.items()}
    return np.vectorize(names.__getitem__)(obs.instance_ids)


def test_contract_observations_match_the_embedded_simulator(thor, house):
    env, _ = thor()
    ref = _embedded()
    pairs = [(env.reset(house), ref.reset(house))]
    for name in ["RotateRight", "MoveAhead", "LookDown", "Crouch", "RotateLeft", "RotateLeft", "Stand", "MoveAhead",
                 "LookUp", "MoveBack"]:
        pairs.append((env.step(Action(name)).observation, ref.step(Action(name)).observation))
    for got, want in pairs:
        assert np.array_equal(got.rgb, want.rgb)
        assert np.array_equal(got.depth, want.depth)
        assert np.array_equal(_pixel_object_ids(got), _pixel_object_ids(want))
        assert {lab.object_id: lab.object_type for lab in got.id_to_label.values()} == \
               {lab.object_id: lab.object_type for lab in want.id_to_label.values()}
        assert np.allclose(got.world_from_camera, want.world_from_camera, atol=1e-6)
        assert got.intrinsics == want.intrinsics
        assert got.agent == want.agent
        assert got.feedback.success == want.feedback.success
    assert len({tuple(np.round(o.world_from_camera[:3, 3], 3)) for o, _ in pairs}) > 1  # the agent did move
    heights = [round(float(o.world_from_camera[2, 3]), 3) for o, _ in pairs]  # ROS z: camera height
    assert heights[4] == pytest.approx(0.9) and heights[7] == pytest.approx(1.5)  # Crouch, Stand went through


class _Recording:
    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.actions = inner, inner.name, []

    def reset(self, episode: Episode, observation: Any) -> None:
        self.inner.reset(episode, observation)

    def act(self, observation: Any) -> Action:
        action = self.inner.act(observation)
        self.actions.append(action)
        return action


class _Replay:
    name = "replay"

    def __init__(self, actions: list[Action]) -> None:
        self.actions = actions

    def reset(self, episode: Episode, observation: Any) -> None:
        self._next = iter(self.actions)

    def act(self, observation: Any) -> Action:
        return next(self._next, Action("Stop"))


def test_contract_episode_scored_through_thor_has_the_embedded_gc(thor):
    episode = _episode([
        {"object": {"type": "Laptop"}, "predicate": "inReceptacle", "target": {"type": "Dresser"}},
        {"object": {"type": "Fridge"}, "predicate": "isOpen"},
        {"object": {"type": "FloorLamp"}, "predicate": "isToggled", "value": False},
        {"object": {"type": "Tomato"}, "predicate": "isSliced"},
    ])
    ref = EmbeddedEnvironment(EmbeddedConfig(width=W, height=H, render=False))
    oracle = _Recording(OraclePlanner(ref))
    want, want_world = run_episode(ref, oracle, episode)
    assert want.gc == 1.0 and len(oracle.actions) > 50
    env, _ = thor()
    got, got_world = run_episode(env, _Replay(oracle.actions[:-1]), episode)  # the oracle's last action is Stop
    assert got.gc == want.gc and got.sr == want.sr
    assert got.timeline.gc == want.timeline.gc  # step by step, not just at the end
    assert (got.steps_nav, got.steps_manip) == (want.steps_nav, want.steps_manip)
    fields = ("isPickedUp", "isOpen", "isToggled", "isSliced", "parentReceptacles", "position")
    assert {o["objectId"]: {f: o[f] for f in fields} for o in got_world.objects} == \
           {o["objectId"]: {f: o[f] for f in fields} for o in want_world.objects}
    partial, _ = run_episode(env, _Replay(oracle.actions[:40]), episode)  # stops half way: GC in (0, 1)
    partial_ref, _ = run_episode(ref, _Replay(oracle.actions[:40]), episode)
    assert 0.0 < partial.gc == partial_ref.gc < 1.0


@pytest.mark.timeout(240)
def test_contract_holomind_runs_through_thor_as_in_process_with_a_pour(thor):
    """The HoloMind agent (deterministic roles, its own perception) through the THOR contract path:
    a watering goal compiles to a pour (FillObjectWithLiquid with fillLiquid), which the stand-in
    player must carry to the simulator; the run matches the in-process one action for action."""
    from planner.holomind import HoloMindAgent

    episode = _episode([{"object": {"type": "HousePlant"}, "predicate": "isFilledWithLiquid", "value": "water"}],
                       instructions={"detailed": "Water the house plant.", "concise": "Water the plant."},
                       max_steps=900)
    size = {"width": 160, "height": 120}
    ref_agent = _Recording(HoloMindAgent())
    want, _ = run_episode(EmbeddedEnvironment(EmbeddedConfig(**size)), ref_agent, episode)
    assert want.gc == 1.0, "the in-process run waters the plant"
    assert any(a.name == "FillObjectWithLiquid" and a.args.get("fillLiquid") == "water" for a in ref_agent.actions)
    env, log = thor(**size)
    thor_agent = _Recording(HoloMindAgent())
    got, _ = run_episode(env, thor_agent, episode)
    assert [(a.name, a.object_id) for a in thor_agent.actions] == [(a.name, a.object_id) for a in ref_agent.actions]
    assert (got.gc, got.sr) == (want.gc, want.sr)
    pours = [m for m in _messages(log) if m["action"] == "FillObjectWithLiquid"]
    assert pours and all(m["fillLiquid"] == "water" for m in pours)


# ---- failures ---------------------------------------------------------------------------------

def test_contract_thor_errors_are_failed_steps_not_exceptions(thor, house):
    env, log = thor()
    env.reset(house)
    unknown = env.step(Action("FlyAway"))  # THOR errorCode InvalidAction: the Controller raises ValueError
    assert not unknown.success and "Invalid action" in unknown.error and unknown.failure == "bad_request"
    missing = env.step(Action("OpenObject", "no|such|object"))
    assert not missing.success and "no|such|object" in missing.error and missing.failure == "unknown_object"
    no_target = env.step(Action("PickupObject"))
    assert not no_target.success and "needs an objectId" in no_target.error and no_target.failure == "bad_request"
    too_far_up = [env.step(Action("LookUp")) for _ in range(4)]
    assert not too_far_up[-1].success and "horizon" in too_far_up[-1].error
    assert too_far_up[-1].observation.feedback.failure  # typed, whatever the player's wording
    assert [m["action"] for m in _messages(log)[4:]] == ["FlyAway", "OpenObject"] + ["LookUp"] * 4
    assert env.step(Action("MoveAhead")).observation.feedback.action == "MoveAhead"  # still alive


def test_contract_house_with_an_unknown_asset_is_a_clear_error(thor, house):
    env, _ = thor()
    bad = copy.deepcopy(house)
    bad["objects"][0]["assetId"] = "Gramophone_9"
    with pytest.raises(ThorHouseError, match=r"Gramophone_9.*asset database"):
        env.reset(bad)
    assert env.reset(house).rgb is not None  # the same player takes the next house


def _players_alive(marker: str) -> list[int]:
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes().decode(errors="replace"):
                pids.append(int(cmdline.parent.name))
        except OSError:
            pass
    return pids


@pytest.mark.parametrize("stall", ["open", "hello"])
def test_contract_start_times_out_when_the_player_never_answers(tmp_path, house, stall):
    marker = str(tmp_path / f"stalled-{stall}.jsonl")
    env = ThorEnvironment(ThorConfig(width=W, height=H, start_timeout_s=2.0,
                                     local_executable_path=fake_player.command(marker, stall=stall)))
    began = time.monotonic()
    with pytest.raises(ThorStartError, match="did not answer"):
        env.reset(house)
    assert time.monotonic() - began < 5.0
    assert _players_alive(marker) == []  # the stalled player was killed, not left behind
    assert not [t for t in threading.enumerate() if t.name == "thor-controller-start"]  # nor a stuck thread


def test_contract_player_that_exits_at_once_is_reported(house):
    env = ThorEnvironment(ThorConfig(width=W, height=H, start_timeout_s=10.0, local_executable_path="false"))
    began = time.monotonic()
    with pytest.raises(ThorStartError, match="exited with status 1"):
        env.reset(house)
    assert time.monotonic() - began < 5.0


def test_contract_missing_build_vulkan_or_display_is_named(house, monkeypatch):
    import ctypes.util

    real_find = ctypes.util.find_library
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None if name == "vulkan" else real_find(name))
    with pytest.raises(ThorStartError, match=r"CloudRendering needs a Vulkan driver.*Linux64"):
        ThorEnvironment(ThorConfig(platform="CloudRendering")).reset(house)
    with pytest.raises(ThorStartError, match=r"Linux64 needs an X server"):
        ThorEnvironment(ThorConfig(platform="Linux64")).reset(house)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: "libvulkan.so.1")
    with pytest.raises(ThorStartError, match=r"no AI2-THOR build at .*thor-CloudRendering-.*local_executable_path"):
        ThorEnvironment(ThorConfig(platform="CloudRendering", download=False)).reset(house)
    with pytest.raises(ThorStartError, match="does not exist"):
        ThorEnvironment(ThorConfig(local_executable_path="/nonexistent/thor-Linux64")).reset(house)


# ---- pieces -----------------------------------------------------------------------------------

def test_contract_alfred_put_object_targets_the_receptacle():
    sizes = StepSizes(move=0.05, rotate=30.0, look=15.0)
    assert to_thor_call(Action("PutObject", "Fridge|1"), sizes)["objectId"] == "Fridge|1"
    alfred = to_thor_call(Action("PutObject", "Apple|2", {"receptacleObjectId": "Fridge|1"}), sizes)
    assert alfred["objectId"] == "Fridge|1" and "receptacleObjectId" not in alfred
    assert to_thor_call(Action("MoveAhead"), sizes) == {"action": "MoveAhead", "moveMagnitude": 0.05}
    assert to_thor_call(Action("LookUp"), sizes) == {"action": "LookUp", "degrees": 15.0}
    assert to_thor_call(Action("PickupObject", "Apple|2", {"forceAction": True}), sizes)["forceAction"] is True
    assert to_thor_call(Action("FillObjectWithLiquid", "Cup|3", {"fillLiquid": "coffee"}), sizes) == \
        {"action": "FillObjectWithLiquid", "objectId": "Cup|3", "fillLiquid": "coffee", "forceAction": False}


def test_contract_factory_builds_thor_and_names_the_kinds(tmp_path):
    env = make_environment("thor", width=W, height=H, local_executable_path=fake_player.command())
    assert isinstance(env, ThorEnvironment) and env.config.width == W
    with pytest.raises(UnknownEnvironmentError, match=r"'unreal'.*embedded, thor, habitat"):
        make_environment("unreal")
    with pytest.raises(TypeError, match=r"thor.*'fov'.*fov_deg"):
        make_environment("thor", fov=60)
    assert make_environment("embedded", width=W, height=H, render=False).config.width == W
    assert os.environ["HOME"].startswith(str(tmp_path))  # ai2thor never saw the real home


def test_contract_player_dying_mid_episode_is_reported_at_once(thor, house):
    env, _ = thor(action_timeout_s=30.0)
    env.reset(house)
    env.controller.server.unity_proc.kill()
    began = time.monotonic()
    with pytest.raises(ThorConnectionError, match=r"exited \(status -9\) during MoveAhead"):
        env.step(Action("MoveAhead"))
    assert time.monotonic() - began < 5.0  # not the 30 s ai2thor would spin on the dead pipe
    assert env.controller is None


def test_contract_failed_build_download_names_the_folder(house, monkeypatch):
    import ai2thor.build
    import requests

    def offline(*args: Any, **kwargs: Any) -> Any:
        raise requests.ConnectionError("network unreachable")

    monkeypatch.setattr(ai2thor.build.requests, "head", offline)  # what this machine's network does
    monkeypatch.setattr("ctypes.util.find_library", lambda name: "libvulkan.so.1")
    began = time.monotonic()
    with pytest.raises(ThorStartError, match=r"no AI2-THOR build at .*thor-CloudRendering-.*Invalid commit_id"):
        ThorEnvironment(ThorConfig(platform="CloudRendering")).reset(house)
    assert time.monotonic() - began < 5.0
