"""Shared set-up of the ROS layer's tests.

- ``ros_ws/src/worldmind_ros`` goes on sys.path ((pyproject maps the package too; this keeps a checkout without an install working); see
  ros_ws/README.md), so ``import worldmind_ros`` works here and in the node processes.
- ``isolated``: a test that starts rclpy/DDS re-executes itself (pytest on its own node id) inside a
  private network namespace holding only loopback (``unshare -n``, docs/PLATFORM.md) with
  ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, so no DDS traffic ever reaches the host network,
  and on a DDS domain of its own (``next_domain_id``: shared memory crosses namespaces).
  Where ``unshare -n`` is not permitted (not root) such tests are skipped with that reason.
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

REPO = Path(__file__).resolve().parents[2]
ROS_PKG = REPO / "ros_ws" / "src" / "worldmind_ros"
if str(ROS_PKG) not in sys.path:
    sys.path.insert(0, str(ROS_PKG))

NETNS_FLAG = "WORLDMIND_NETNS"
_NETNS_SH = 'ip link set lo up && ip link set lo multicast on && exec "$@"'


@functools.lru_cache(maxsize=1)
def netns_problem() -> str | None:
    """None if ``unshare -n`` works here, else why not."""
    try:
        r = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True,
                           timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare -n is not available: {exc}"
    return None if r.returncode == 0 else f"unshare -n is not permitted here (needs root): {r.stderr.strip()[:200]}"


_DOMAINS = itertools.count()


def next_domain_id() -> int:
    """A DDS domain for the next isolated run: unique among the runs of this pytest worker and
    apart from the other workers' (gw0: 1-50, gw1: 51-100, ...; the worker's 50 rotate). Why: a
    network namespace does not isolate shared memory, and Fast DDS discovers participants over its
    shared-memory transport too, so two isolated runs on one domain (two xdist workers, or a node
    process an earlier run left behind) see each other's servers ("more than one action server
    for the action '/worldmind/execute_skill'", a goal answered by the wrong simulator). Domain
    ids stay within 1-232, the range whose UDP ports are valid."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    return 1 + (index * 50 + next(_DOMAINS) % 50) % 232


def netns_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({NETNS_FLAG: "1", "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
                "ROS_DOMAIN_ID": os.environ["ROS_DOMAIN_ID"] if in_netns() and "ROS_DOMAIN_ID" in os.environ
                else str(next_domain_id()),
                "PYTHONPATH": os.pathsep.join([str(ROS_PKG), str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])),
                "FASTRTPS_DEFAULT_PROFILES_FILE": str(ROS_PKG / "config" / "fastdds_large_frames.xml"),
                "RCUTILS_COLORIZED_OUTPUT": "0"})
    env.update(extra or {})
    return env


def run_in_netns(argv: Sequence[str], timeout: float, env: dict[str, str] | None = None,
                 cwd: Path = REPO) -> subprocess.CompletedProcess:
    """Run ``argv`` in a fresh network namespace (loopback only, multicast on).

    Past ``timeout`` the whole process group is killed (the run and every node process it
    started: none may be left spinning) and the result says so, with what the run printed,
    so a hang shows the failure that preceded it (returncode -9)."""
    proc = subprocess.Popen(["unshare", "-n", "sh", "-c", _NETNS_SH, "sh", *argv], env=env or netns_env(),
                            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        err += f"\n[run_in_netns: killed with its process group after {timeout:g} s]"
        return subprocess.CompletedProcess(proc.args, -9, out, err)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def in_netns() -> bool:
    return os.environ.get(NETNS_FLAG) == "1"


def isolated(timeout: float = 240.0) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: run this test's body inside a private network namespace (see module docstring)."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if in_netns():
                return fn(*args, **kwargs)
            problem = netns_problem()
            if problem:
                pytest.skip(problem)
            nodeid = os.environ["PYTEST_CURRENT_TEST"].rsplit(" ", 1)[0]
            r = run_in_netns([sys.executable, "-m", "pytest", "-q", "-x", "-s", nodeid], timeout=timeout)
            tail = (r.stdout + r.stderr)[-6000:]
            if r.returncode == 5 or " skipped" in r.stdout and " passed" not in r.stdout:
                pytest.skip(f"skipped inside the namespace: {tail[-500:]}")
            assert r.returncode == 0, f"isolated run of {nodeid} failed (status {r.returncode}):\n{tail}"

        return wrapper

    return deco
