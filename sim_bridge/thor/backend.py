"""The ``thor`` backend: ``ai2thor.Controller`` (ai2thor 5.0) behind the Environment seam.

A house dict goes to THOR with ``CreateHouse`` (the Controller's ``scene=<dict>`` path), ALFRED
actions become 5.0 calls (``sim_bridge.thor.actions``), events become REP 103 Observations and
THOR-shaped WorldStates (``sim_bridge.thor.conversion``). Action failures, including the
``ValueError`` the Controller raises for ``InvalidAction``-class error codes, are failed steps.
Exceptions are kept for what makes an episode impossible: no build, a player that never
answers or dies (``ThorStartError``, ``ThorConnectionError``) and a house THOR rejects
(``ThorHouseError``); each message names the missing piece and how to get it.

Where the player comes from (``ThorConfig``):
- ``local_executable_path``: any program speaking THOR's FIFO protocol: an unzipped Unity build,
  or ``sim_bridge.thor.fake_player.command()``. ai2thor starts it with the Linux64 launch
  environment, which needs a DISPLAY value even for a headless player, so ``":0"`` is passed
  when neither ``x_display`` nor ``$DISPLAY`` is set.
- ``platform="CloudRendering"`` (headless, needs Vulkan and in practice an NVIDIA GPU) or
  ``"Linux64"`` (needs an X server with GLX): the build ai2thor keeps under
  ``~/.ai2thor/releases/thor-<platform>-<commit>/`` and downloads on first use. The default
  is CloudRendering when no display is configured, else Linux64.

The Controller is started on the first ``reset`` (it needs the house) under the supervision of
``sim_bridge.thor.player``, so neither a player that never answers nor one that dies can hang
the caller: start-up is bounded by ``start_timeout_s``, a crash mid-episode is reported at once.
Errors: ``sim_bridge.thor.errors``.
"""

from __future__ import annotations

import ctypes.util
import os
import shlex
import shutil
import threading
from dataclasses import dataclass, field
from typing import Any

from household.house_data import load_asset_database
from household.outcomes import Failure
from sim_bridge.thor.actions import ActionError, StepSizes, to_thor_call
from sim_bridge.thor.conversion import InstanceIds, observation_from_event, rooms_from_house, world_state_from_metadata
from sim_bridge.thor.failures import thor_failure
from sim_bridge.thor.errors import (
    ThorConnectionError,
    ThorHouseError,
    ThorStartError,
    ThorUnavailableError,
)
from sim_bridge.thor.player import (
    download_build,
    log_hint,
    no_build_message,
    release_folder,
    shutdown,
    start_controller,
    watch_player,
)
from household.types import Action, ActionFeedback, Observation, RoomInfo, StepResult, WorldState

PLATFORMS = ("CloudRendering", "Linux64")


@dataclass
class ThorConfig:
    width: int = 320
    height: int = 240
    fov_deg: float = 90.0  # vertical, THOR's fieldOfView
    move_step: float = 0.25  # metres per MoveAhead/Back/Left/Right (also THOR's gridSize)
    rotate_step: float = 30.0  # degrees per RotateLeft/Right
    look_step: float = 30.0  # degrees per LookUp/Down
    visibility_distance: float = 1.5  # interaction range
    render_depth: bool = True
    render_instances: bool = True
    platform: str | None = None  # "CloudRendering", "Linux64" or None (see module doc)
    local_executable_path: str | None = None
    commit_id: str | None = None  # default: the build ai2thor 5.0.0 pins
    x_display: str | None = None
    gpu_device: int | None = None
    download: bool = True  # let ai2thor fetch a missing build (needs network access)
    start_timeout_s: float = 120.0
    action_timeout_s: float = 100.0
    data_dir: str | None = None  # where episodes' house files are looked up first
    initialize: dict[str, Any] = field(default_factory=dict)  # extra Initialize parameters


def require_ai2thor() -> None:
    """Fail early, with the install line, when the optional dependency is missing or too old."""
    try:
        import ai2thor
        import msgpack  # noqa: F401  (the FIFO server's metadata codec)
    except ImportError as exc:
        raise ThorUnavailableError(
            f"the thor backend needs ai2thor 5.0 and msgpack ({exc}); install them with "
            "`pip install 'worldmind[thor]'` or `pip install ai2thor==5.0.0 msgpack`") from exc
    version = str(getattr(ai2thor, "__version__", None) or "")
    if not version.startswith("5."):
        raise ThorUnavailableError(f"the thor backend speaks the ai2thor 5.x API (PutObject takes the receptacle "
                                   f"as objectId), but ai2thor {version or '<unknown version>'} is installed; "
                                   "`pip install ai2thor==5.0.0`")


def unknown_assets(house: dict[str, Any]) -> list[str]:
    """assetIds of the house's objects that the packaged ProcTHOR asset database lacks."""
    known = {a["assetId"] for group in load_asset_database().values() for a in group}
    found: set[str] = set()
    stack = list(house.get("objects") or [])
    while stack:
        obj = stack.pop()
        if isinstance(obj, dict):
            found.add(str(obj.get("assetId")))
            stack.extend(obj.get("children") or [])
    return sorted(found - known)


def _house_of(episode: Any, data_dir: str | None) -> dict[str, Any]:
    if isinstance(episode, dict) and "rooms" in episode:
        return episode
    house = episode.resolve_house(data_dir) if hasattr(episode, "resolve_house") else getattr(episode, "house", None)
    if not isinstance(house, dict):
        raise ThorHouseError(f"reset() needs a house dict or an episode with a house, got {type(episode).__name__}")
    return house


class ThorEnvironment:
    """One Controller (started on the first reset) for a sequence of houses."""

    name = "thor"

    def __init__(self, config: ThorConfig | None = None) -> None:
        require_ai2thor()
        self.config = config or ThorConfig()
        self.controller: Any = None
        self.house_id = ""
        self.rooms: list[RoomInfo] = []
        self.floor_y = 0.0
        self.step_count = 0
        self.stopped = False
        self._sizes = StepSizes(self.config.move_step, self.config.rotate_step, self.config.look_step)
        self._ids = InstanceIds()
        self._event: Any = None
        self._watch_stop = threading.Event()

    # ---- seam --------------------------------------------------------------------------------
    def reset(self, episode: Any) -> Observation:
        house = _house_of(episode, self.config.data_dir)
        rooms, floor_y = rooms_from_house(house)  # HouseError for a broken house, before THOR sees it
        self._event = None  # a failed reset leaves no stale world to step in
        if self.controller is None:
            event = self._start(house)
        else:
            event = self._call("reset", lambda: self.controller.reset(scene=house))
        house_id = str(house.get("id", "<inline house>"))
        if not event.metadata["lastActionSuccess"]:
            unknown = unknown_assets(house)
            hint = (f"; assetIds not in the ProcTHOR asset database (household/data/asset-database.json.gz): "
                    f"{', '.join(unknown)}; use assets of that database or a THOR build that ships them"
                    if unknown else "")
            raise ThorHouseError(f"THOR rejected house {house_id} (CreateHouse): "
                                 f"{event.metadata.get('errorMessage') or 'no message'}{hint}")
        start = getattr(episode, "agent_start", None)
        if start is not None:
            event = self._teleport(start.to_dict(), house_id)
        self.house_id, self.rooms, self.floor_y = house_id, rooms, floor_y
        self.step_count = 0
        self.stopped = False
        self._ids = InstanceIds()
        self._event = event
        return observation_from_event(event, 0, ActionFeedback(None, True, ""), self._ids, floor_y)

    def step(self, action: Action) -> StepResult:
        if self._event is None:
            raise RuntimeError("step() before reset()")
        self.step_count += 1
        if self.stopped and action.name != "Stop":
            return self._failed(action, f"{action.name}: the episode was stopped; call reset()", Failure.BAD_REQUEST)
        try:
            call = to_thor_call(action, self._sizes)
        except ActionError as exc:
            return self._failed(action, str(exc), Failure.BAD_REQUEST)
        try:
            event = self._call(call["action"], lambda: self.controller.step(call))
            error = str(event.metadata.get("errorMessage") or "")
        except ValueError as exc:  # errorCode InvalidAction / MissingArguments / ...: still an event
            event, error = self.controller.last_event, str(exc)
        success = bool(event.metadata["lastActionSuccess"])
        self.stopped = self.stopped or (action.name == "Stop" and success)
        self._event = event
        feedback = ActionFeedback(action.name, success, "" if success else error,
                                  "" if success else thor_failure(error).value)
        obs = observation_from_event(event, self.step_count, feedback, self._ids, self.floor_y)
        return StepResult(obs, success, feedback.error)

    def ground_truth(self) -> WorldState:
        if self._event is None:
            raise RuntimeError("ground_truth() before reset()")
        return world_state_from_metadata(self._event.metadata, self.rooms, self.house_id)

    def close(self) -> None:
        """Stop the player. The environment can be reset again (which starts a new one)."""
        self._watch_stop.set()
        if self.controller is not None:
            shutdown(self.controller)
            self.controller = None
            self._event = None

    def __enter__(self) -> "ThorEnvironment":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- internals ---------------------------------------------------------------------------
    def _failed(self, action: Action, error: str, failure: Failure) -> StepResult:
        feedback = ActionFeedback(action.name, False, error, failure.value)
        obs = observation_from_event(self._event, self.step_count, feedback, self._ids, self.floor_y)
        return StepResult(obs, False, error)

    def _call(self, what: str, fn: Any) -> Any:
        """Run a Controller call; ValueError (THOR's action errors) passes through, anything
        else means the player is gone."""
        try:
            return fn()
        except ValueError:
            raise
        except Exception as exc:
            proc = self.controller.server.unity_proc if self.controller.server is not None else None
            status = proc.poll() if proc is not None else None
            self.close()
            if isinstance(exc, TimeoutError):
                why = f"did not answer within {self.config.action_timeout_s:g} s"
            else:
                why = f"exited (status {status})" if status is not None else "failed"
            raise ThorConnectionError(f"the THOR player {why} during {what} ({type(exc).__name__}: {exc}); "
                                      f"see {log_hint()}") from exc

    def _teleport(self, start: dict[str, Any], house_id: str) -> Any:
        call = {"action": "TeleportFull", "position": start["position"], "rotation": start["rotation"],
                "horizon": start["horizon"], "standing": bool(start.get("standing", True))}
        try:
            event = self._call("TeleportFull", lambda: self.controller.step(call))
        except ValueError as exc:
            raise ThorHouseError(f"house {house_id}: THOR rejected the episode's agent_start {start}: {exc}") from exc
        if not event.metadata["lastActionSuccess"]:
            raise ThorHouseError(f"house {house_id}: THOR rejected the episode's agent_start {start}: "
                                 f"{event.metadata.get('errorMessage')}")
        return event

    def _controller_kwargs(self, house: dict[str, Any]) -> dict[str, Any]:
        cfg = self.config
        kwargs: dict[str, Any] = dict(
            scene=house, width=cfg.width, height=cfg.height,
            server_timeout=cfg.action_timeout_s, server_start_timeout=cfg.start_timeout_s,
            gridSize=cfg.move_step, snapToGrid=False, rotateStepDegrees=cfg.rotate_step,
            visibilityDistance=cfg.visibility_distance, fieldOfView=cfg.fov_deg,
            renderDepthImage=cfg.render_depth, renderInstanceSegmentation=cfg.render_instances,
            agentMode="default", **cfg.initialize)
        if cfg.local_executable_path:
            program = shlex.split(cfg.local_executable_path)[0]
            if not (shutil.which(program) or os.path.isfile(program)):
                raise ThorStartError(f"THOR player {program!r} (local_executable_path) does not exist or is not "
                                     "executable; point it at an unzipped AI2-THOR 5.0 build's executable")
            kwargs.update(local_executable_path=cfg.local_executable_path,
                          x_display=cfg.x_display or os.environ.get("DISPLAY") or ":0")
            return kwargs
        from ai2thor.build import COMMIT_ID
        from ai2thor.platform import STR_PLATFORM_MAP

        display = cfg.x_display or os.environ.get("DISPLAY")
        platform = cfg.platform or ("Linux64" if display else "CloudRendering")
        if platform not in PLATFORMS:
            raise ThorStartError(f"unknown THOR platform {platform!r} (use one of: {', '.join(PLATFORMS)})")
        commit = cfg.commit_id or COMMIT_ID
        if platform == "CloudRendering" and ctypes.util.find_library("vulkan") is None:
            raise ThorStartError(
                "platform CloudRendering needs a Vulkan driver (Debian: libvulkan1 plus the GPU vendor's "
                "driver; `vulkaninfo` must list a GPU) and none was found. Without a GPU use platform='Linux64' "
                "with an X server (x_display or $DISPLAY), or local_executable_path=... for another player")
        if platform == "Linux64" and not display:
            raise ThorStartError("platform Linux64 needs an X server with GLX: set $DISPLAY or pass "
                                 "x_display=':0' (e.g. after `sudo ai2thor-xorg start`), or use CloudRendering")
        kwargs.update(platform=STR_PLATFORM_MAP[platform], commit_id=commit, x_display=display,
                      gpu_device=cfg.gpu_device)
        if not release_folder(kwargs).is_dir() and not cfg.download:
            raise ThorStartError(no_build_message(release_folder(kwargs)))
        return kwargs

    def _start(self, house: dict[str, Any]) -> Any:
        kwargs = self._controller_kwargs(house)
        if "platform" in kwargs and not release_folder(kwargs).is_dir():
            download_build(kwargs)  # outside the start-up time limit: a build is a large download
        self.controller = start_controller(kwargs, self.config.start_timeout_s)
        self._watch_stop = threading.Event()
        threading.Thread(target=watch_player, args=(self.controller.server, self._watch_stop),
                         name="thor-player-watch", daemon=True).start()
        return self.controller.last_event
