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

The Controller is started on the first ``reset`` (it needs the house), from a watchdog thread:
ai2thor blocks forever in ``open()`` on its FIFO when the player never connects, so the start
is bounded by ``start_timeout_s`` whatever the player does.
"""

from __future__ import annotations

import ctypes.util
import os
import shlex
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim_bridge.embedded.house_data import load_asset_database
from sim_bridge.thor.actions import ActionError, StepSizes, to_thor_call
from sim_bridge.thor.conversion import InstanceIds, observation_from_event, rooms_from_house, world_state_from_metadata
from sim_bridge.types import Action, ActionFeedback, Observation, RoomInfo, StepResult, WorldState

PLATFORMS = ("CloudRendering", "Linux64")


class ThorError(RuntimeError):
    """Base of the thor backend's errors."""


class ThorUnavailableError(ThorError, ImportError):
    """ai2thor (or msgpack) is not installed, or is not the 5.x API this backend speaks."""


class ThorStartError(ThorError):
    """No player could be started: missing build, no Vulkan/X display, timeout, early exit."""


class ThorHouseError(ThorError):
    """THOR rejected the house (e.g. an assetId its build does not know) or the agent start."""


class ThorConnectionError(ThorError):
    """The player stopped answering mid-episode; the episode cannot go on."""


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
        if self.controller is None:
            event = self._start(house)
        else:
            event = self._call("reset", lambda: self.controller.reset(scene=house))
        house_id = str(house.get("id", "<inline house>"))
        if not event.metadata["lastActionSuccess"]:
            unknown = unknown_assets(house)
            hint = (f"; assetIds missing from the ProcTHOR asset database: {', '.join(unknown)}" if unknown else "")
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
            return self._failed(action, f"{action.name}: the episode was stopped; call reset()")
        try:
            call = to_thor_call(action, self._sizes)
        except ActionError as exc:
            return self._failed(action, str(exc))
        try:
            event = self._call(call["action"], lambda: self.controller.step(call))
            error = str(event.metadata.get("errorMessage") or "")
        except ValueError as exc:  # errorCode InvalidAction / MissingArguments / ...: still an event
            event, error = self.controller.last_event, str(exc)
        success = bool(event.metadata["lastActionSuccess"])
        self.stopped = self.stopped or (action.name == "Stop" and success)
        self._event = event
        feedback = ActionFeedback(action.name, success, "" if success else error)
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
            _shutdown(self.controller)
            self.controller = None
            self._event = None

    def __enter__(self) -> "ThorEnvironment":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- internals ---------------------------------------------------------------------------
    def _failed(self, action: Action, error: str) -> StepResult:
        feedback = ActionFeedback(action.name, False, error)
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
            self.close()
            if isinstance(exc, TimeoutError):
                why = f"did not answer within {self.config.action_timeout_s:g} s"
            else:
                why = f"exited (status {proc.returncode if proc is not None else 'unknown'})"
            raise ThorConnectionError(f"the THOR player {why} during {what} ({type(exc).__name__}: {exc}); "
                                      f"see {_log_hint()}") from exc

    def _teleport(self, start: dict[str, Any], house_id: str) -> Any:
        call = {"action": "TeleportFull", "position": start["position"], "rotation": start["rotation"],
                "horizon": start["horizon"], "standing": True}
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
        folder = Path.home() / ".ai2thor" / "releases" / f"thor-{platform}-{commit}"
        if not folder.is_dir() and not cfg.download:
            raise ThorStartError(_no_build_message(folder))
        kwargs.update(platform=STR_PLATFORM_MAP[platform], commit_id=commit, x_display=display,
                      gpu_device=cfg.gpu_device)
        return kwargs

    def _start(self, house: dict[str, Any]) -> Any:
        from ai2thor.controller import Controller

        kwargs = self._controller_kwargs(house)
        controller = Controller.__new__(Controller)  # so the watchdog can reach its server mid-start
        outcome: dict[str, BaseException] = {}

        def run() -> None:
            try:
                controller.__init__(**kwargs)
            except BaseException as exc:  # handed to the caller's thread below
                outcome["error"] = exc

        thread = threading.Thread(target=run, name="thor-controller-start", daemon=True)
        thread.start()
        deadline = time.monotonic() + self.config.start_timeout_s
        problem = ""
        while thread.is_alive() and not problem:
            thread.join(0.05)
            proc = getattr(getattr(controller, "server", None), "unity_proc", None)
            if thread.is_alive() and proc is not None and proc.poll() is not None:
                problem = f"the THOR player exited with status {proc.returncode} before it answered"
            elif thread.is_alive() and time.monotonic() > deadline:
                problem = f"the THOR player did not answer within {self.config.start_timeout_s:g} s"
        if problem:
            _abandon(controller, thread)
        elif "error" in outcome:
            _shutdown(controller)
            problem = _explain(outcome["error"], kwargs)
        if problem:
            raise ThorStartError(f"{problem} ({_player_label(kwargs)}); see {_log_hint()}. A CloudRendering build "
                                 "needs Vulkan and a GPU, a Linux64 build an X server with GLX")
        self.controller = controller
        self._watch_stop = threading.Event()
        threading.Thread(target=_watch_player, args=(controller.server, self._watch_stop),
                         name="thor-player-watch", daemon=True).start()
        return controller.last_event


def _player_label(kwargs: dict[str, Any]) -> str:
    if "local_executable_path" in kwargs:
        return f"local_executable_path={kwargs['local_executable_path']!r}"
    return f"platform={kwargs['platform'].name()}, commit {kwargs['commit_id']}"


def _log_hint() -> str:
    return (f"{Path.home() / '.ai2thor' / 'log' / 'unity.log'} (the player's output) and Unity's "
            "~/.config/unity3d/Allen Institute for Artificial Intelligence/AI2-THOR/Player.log")


def _no_build_message(folder: Path) -> str:
    return (f"no AI2-THOR build at {folder}: ai2thor downloads it from its public bucket on first use, "
            "which needs network access. Run once where the network is reachable, copy an unzipped build "
            "(with its metadata.json) to that folder, or pass local_executable_path=<build executable>")


def _explain(exc: BaseException, kwargs: dict[str, Any]) -> str:
    """ai2thor's start-up exceptions, reworded to say what is missing."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ValueError) and "no build exists" in str(exc):
        platform = kwargs["platform"].name()
        return _no_build_message(Path.home() / ".ai2thor" / "releases" / f"thor-{platform}-{kwargs['commit_id']}") \
            + f" (ai2thor: {text})"
    if isinstance(exc, TimeoutError):
        return f"the THOR player did not answer in time ({text})"
    if isinstance(exc, FileNotFoundError):
        return f"the THOR player could not be started ({text})"
    return f"AI2-THOR did not start ({text})"


def _shutdown(controller: Any) -> None:
    """Stop a (possibly half-started) Controller and its player."""
    if getattr(controller, "server", None) is None:
        return
    try:
        controller.stop()
    except (OSError, AttributeError):  # half-initialised: the pipes or the build lock never existed
        controller.server.stop()


def _watch_player(server: Any, stop: threading.Event) -> None:
    """ai2thor reads its FIFO with select() and a timeout; once the player is dead the pipe is at
    end-of-file and the read spins until ``action_timeout_s``. Closing the pipe when the player
    exits makes that read fail at once, so a crash is reported in a fraction of a second."""
    while not stop.wait(0.2):
        if server.unity_proc.poll() is not None:
            pipe = server.server_pipe
            if pipe is not None and not pipe.closed:
                pipe.close()
            return


def _abandon(controller: Any, thread: threading.Thread) -> None:
    """Free a start-up thread stuck on the FIFOs: kill the player, wake any ``open()`` blocked
    on a FIFO with a partner that leaves at once, and close the read pipe so a ``select()`` loop
    spinning on end-of-file fails instead of running until its timeout."""
    server = getattr(controller, "server", None)
    if server is None:
        thread.join(1.0)
        return
    proc = server.unity_proc
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait(5)
    for path, flags in ((server.server_pipe_path, os.O_WRONLY), (server.client_pipe_path, os.O_RDONLY)):
        try:
            os.close(os.open(path, flags | os.O_NONBLOCK))
        except OSError:  # no FIFO yet, or nobody is waiting on it (ENXIO)
            pass
    end = time.monotonic() + 5.0
    while thread.is_alive() and time.monotonic() < end:
        pipe = server.server_pipe
        if pipe is not None and not pipe.closed:
            pipe.close()
        thread.join(0.05)
    _shutdown(controller)
