"""Starting, watching and stopping the THOR player behind an ``ai2thor.Controller``.

ai2thor 5.0 has two ways to hang forever and one way to spin: its FIFO server ``open()``s the
player's pipe without a timeout (a player that never connects, or dies first, blocks the
Controller for good), and once a player is dead its ``select()`` loop sees end-of-file and spins
until the action timeout. So the Controller is built on a worker thread that this module
supervises: a start-up time limit, early-exit detection, and a way to free the stuck thread
(kill the player, wake the blocked ``open()`` with a partner that leaves at once, close the
pipe the ``select()`` loop reads). During an episode a watcher closes that pipe as soon as the
player exits, so a crash surfaces in a fraction of a second.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from sim_bridge.thor.errors import ThorStartError


def log_hint() -> str:
    return (f"{Path.home() / '.ai2thor' / 'log' / 'unity.log'} (the player's output) and Unity's "
            "~/.config/unity3d/Allen Institute for Artificial Intelligence/AI2-THOR/Player.log")


def release_folder(kwargs: dict[str, Any]) -> Path:
    """Where ai2thor keeps the build for these Controller arguments (platform + commit)."""
    return Path.home() / ".ai2thor" / "releases" / f"thor-{kwargs['platform'].name()}-{kwargs['commit_id']}"


def no_build_message(folder: Path) -> str:
    return (f"no AI2-THOR build at {folder}: ai2thor downloads it from its public bucket on first use, "
            "which needs network access. Run once where the network is reachable, copy an unzipped build "
            "(with its metadata.json) to that folder, or pass local_executable_path=<build executable>")


def download_build(kwargs: dict[str, Any]) -> None:
    """Let ai2thor fetch the build (``download_only``), turning its failure into a clear error."""
    from ai2thor.controller import Controller

    try:
        Controller(download_only=True, **{k: kwargs[k] for k in ("platform", "commit_id", "x_display", "width",
                                                                  "height")})
    except Exception as exc:  # ai2thor reports a failed lookup or download in several exception types
        raise ThorStartError(f"{no_build_message(release_folder(kwargs))} (ai2thor: {type(exc).__name__}: {exc})") \
            from exc


def start_controller(kwargs: dict[str, Any], timeout_s: float) -> Any:
    """``Controller(**kwargs)``, bounded by ``timeout_s`` whatever the player does."""
    from ai2thor.controller import Controller

    controller = Controller.__new__(Controller)  # so the supervisor can reach its server mid-start
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        try:
            controller.__init__(**kwargs)
        except BaseException as exc:  # handed over to the supervising thread below
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="thor-controller-start", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    problem = ""
    while thread.is_alive() and not problem:
        thread.join(0.05)
        proc = getattr(getattr(controller, "server", None), "unity_proc", None)
        if thread.is_alive() and proc is not None and proc.poll() is not None:
            problem = f"the THOR player exited with status {proc.returncode} before it answered"
        elif thread.is_alive() and time.monotonic() > deadline:
            problem = f"the THOR player did not answer within {timeout_s:g} s"
    if problem:
        _abandon(controller, thread)
    elif "error" in outcome:
        shutdown(controller)
        exc = outcome["error"]
        problem = (f"the THOR player did not answer in time ({type(exc).__name__}: {exc})"
                   if isinstance(exc, TimeoutError) else f"AI2-THOR did not start ({type(exc).__name__}: {exc})")
    if problem:
        where = (f"local_executable_path={kwargs['local_executable_path']!r}" if "local_executable_path" in kwargs
                 else f"platform={kwargs['platform'].name()}, commit {kwargs['commit_id']}")
        raise ThorStartError(f"{problem} ({where}); see {log_hint()}. A CloudRendering build needs Vulkan and "
                             "a GPU, a Linux64 build an X server with GLX")
    return controller


def shutdown(controller: Any) -> None:
    """Stop a (possibly half-started) Controller and its player."""
    if getattr(controller, "server", None) is None:
        return
    try:
        controller.stop()
    except (OSError, AttributeError):  # half-initialised: the pipes or the build lock never existed
        controller.server.stop()


def watch_player(server: Any, stop: threading.Event) -> None:
    """Until ``stop`` is set: when the player exits, close the pipe ai2thor reads from."""
    while not stop.wait(0.2):
        if server.unity_proc.poll() is not None:
            pipe = server.server_pipe
            if pipe is not None and not pipe.closed:
                pipe.close()
            return


def _abandon(controller: Any, thread: threading.Thread) -> None:
    """Free a start-up thread stuck on the FIFOs, then clean up."""
    server = getattr(controller, "server", None)
    if server is None:  # stuck before the FIFOs existed (e.g. looking a build up): nothing to free
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
    shutdown(controller)
