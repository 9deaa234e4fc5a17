"""worldmind.tether: a child started through ``tethered`` ends when its parent is killed with
SIGKILL (what ``ros up`` killed by a supervisor, or a test process killed at its timeout, did to
its nodes: they ran on for ever)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from worldmind.tether import tethered

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead but still listed until reaped
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tether", [True, False], ids=["tethered", "plain"])
def test_a_tethered_child_dies_with_its_parent_killed_by_sigkill(tether):
    parent = textwrap.dedent(f"""
        import subprocess, sys, time
        from worldmind.tether import tethered
        argv = [sys.executable, "-c", "import time; time.sleep(60)"]
        child = subprocess.Popen(tethered(argv) if {tether} else argv, start_new_session=True)
        print(child.pid, flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    child = int(proc.stdout.readline())
    try:
        time.sleep(0.5)  # the trampoline has exec'd the command
        assert _alive(child)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive(child) is (not tether)
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)


def test_the_command_keeps_its_pid_and_arguments(tmp_path):
    out = tmp_path / "pid"
    code = f"import os, sys; open({str(out)!r}, 'w').write(str(os.getpid()) + ' ' + ' '.join(sys.argv[1:]))"
    p = subprocess.Popen(tethered([sys.executable, "-c", code, "a b", "--x=1"]))
    assert p.wait(timeout=30) == 0
    pid, args = out.read_text().split(" ", 1)
    assert int(pid) == p.pid and args == "a b --x=1"


def test_a_child_whose_parent_is_already_gone_does_not_start():
    # the trampoline compares its parent with the pid it was given: a wrong one means "gone"
    argv = tethered([sys.executable, "-c", "print('started')"])
    argv[3] = str(os.getpid() + 10_000_000)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert r.returncode == 143 and "started" not in r.stdout
