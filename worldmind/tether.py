"""Child processes that end with their parent: a launcher killed with SIGKILL (or a test process
killed at its timeout) must not leave its nodes running for ever.

Linux's ``prctl(PR_SET_PDEATHSIG)`` asks the kernel to send a signal to a process when its parent
dies; it survives ``execve``. ``tethered(argv)`` wraps a command in a two-line trampoline that sets
it and then execs the command (same pid, so signals and logs that name the pid stay right). Not
``preexec_fn``: that is unsafe in a process with threads, and the launcher has a reader thread per
node. If the parent died before the trampoline ran, it exits instead of starting an orphan.
Elsewhere than Linux the command is returned unchanged.

The death signal fires when the thread that started the child ends: start children from the
thread that lives as long as they should (the launcher's main thread).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Sequence

PR_SET_PDEATHSIG = 1
_TRAMPOLINE = (
    "import ctypes, os, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, int(sys.argv[2]), 0, 0, 0)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(143)\n"
    "os.execvp(sys.argv[3], sys.argv[3:])\n"
)


def tethered(argv: Sequence[str], on_parent_death: int = signal.SIGTERM) -> list[str]:
    """``argv`` wrapped so that the process gets ``on_parent_death`` when its parent dies."""
    if not sys.platform.startswith("linux") or not argv:
        return list(argv)
    return [sys.executable, "-c", _TRAMPOLINE, str(os.getpid()), str(int(on_parent_death)), *argv]
