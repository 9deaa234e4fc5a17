"""The namespace runner the ROS tests rely on: a run past its time must not leave processes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import netns_problem, run_in_netns


def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        state = next(line for line in status.read_text().splitlines() if line.startswith("State:"))
    except (OSError, StopIteration):
        return False
    return " Z" not in state  # a zombie waiting for its reaper is gone for our purposes


def test_a_run_past_its_time_is_killed_with_every_process_it_started(tmp_path):
    problem = netns_problem()
    if problem:
        pytest.skip(problem)
    marker = tmp_path / "child.pid"
    r = run_in_netns(["sh", "-c", f"sleep 300 & echo $! > {marker}; echo started; wait"], timeout=3)
    assert r.returncode == -9 and "started" in r.stdout, (r.returncode, r.stdout, r.stderr)
    assert "killed with its process group after 3 s" in r.stderr
    child = int(marker.read_text())
    end = time.monotonic() + 5
    while _alive(child) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _alive(child), f"process {child} started by the run is still running"
