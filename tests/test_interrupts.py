"""Ctrl-C in the long evaluation commands (issue 32): one "interrupted" line and exit status 130,
never a traceback; and an --out that is a file or a device is refused before anything runs.
Real processes in their own process group; the SIGINT goes to the whole group, as a terminal's
Ctrl-C does (workers included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_process import REPO, start_cli

# Workloads far longer than the wait before the interrupt, so an idle machine is still busy with
# them then (a smaller one finished inside the wait on an idle machine and exited 0).
COMMANDS = {
    "memory-eval": ["memory-eval", "--index", "0-40", "--out", "{out}"],
    "audit houses": ["audit", "houses", "--houses", "houses_dev.jsonl.gz", "--indices", "0-99", "--act", "--out", "{out}"],
    "eval worldlines": ["eval", "worldlines", "--houses", "0-40", "--out", "{out}"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_ctrl_c_ends_a_long_command_without_a_traceback(tmp_path: Path, name: str) -> None:
    proc = start_cli([a.format(out=tmp_path / "out") for a in COMMANDS[name]], tmp_path)
    try:
        time.sleep(6.0)
        assert proc.poll() is None, f"{name} ended before the interrupt: {proc.communicate()[1][-500:]}"
        os.killpg(proc.pid, signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert "Traceback" not in err, err[-2000:]
    assert proc.returncode == 130 and "interrupted" in err


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("out", ["a-file", "/dev/full"])
def test_an_out_that_is_not_a_folder_is_refused_before_the_run(tmp_path: Path, name: str, out: str) -> None:
    if out == "a-file":
        out = str(tmp_path / "a-file")
        Path(out).write_text("x")
    t0 = time.monotonic()
    proc = start_cli([a.format(out=out) for a in COMMANDS[name]], tmp_path)
    _o, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and f"--out {out}: is " in err, err[-800:]
    assert time.monotonic() - t0 < 30


@pytest.mark.parametrize("log_dir", ["a-file", "/dev/full"])
def test_ros_up_refuses_a_log_dir_that_is_not_a_folder_before_any_node_starts(tmp_path: Path, log_dir: str) -> None:
    import shutil

    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rn", "true"]).returncode != 0:
        pytest.skip("needs unshare -rn (a private network namespace: docs/PLATFORM.md)")
    if log_dir == "a-file":
        log_dir = str(tmp_path / "a-file")
        Path(log_dir).write_text("x")
    env = dict(os.environ, PYTHONPATH=str(REPO), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    proc = subprocess.run(["unshare", "-rn", sys.executable, "-m", "worldmind.cli", "ros", "up", "sim",
                           "--log-dir", log_dir], cwd=tmp_path, env=env, text=True, capture_output=True, timeout=60,
                          start_new_session=True)
    assert proc.returncode == 2 and f"--log-dir {log_dir}: is " in proc.stderr and "Traceback" not in proc.stderr
