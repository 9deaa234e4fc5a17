"""Starting ``worldmind`` as a real process for the tests that signal it (tests/test_interrupts.py,
tests/test_record_interrupt.py): its own process group, so a signal reaches it and its workers as
a terminal's would, and SIGINT as a terminal gives it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _default_sigint() -> None:
    """In the child: SIGINT as a terminal gives it. A test run started in the background (`make
    test &`, nohup) inherits SIGINT ignored, and Python then never raises KeyboardInterrupt: the
    command ran on to exit 0 and the test failed for the launcher's reason, not the command's."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_cli(args: list[str], cwd: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "worldmind.cli", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_default_sigint)
