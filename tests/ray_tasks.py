"""Task functions for the executor tests (a module, so Ray workers can import them by name)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def square(x: int) -> int:
    return x * x


def die_hard(marker: str) -> int:
    """Record the attempt, then SIGKILL this worker process (as the OOM killer would)."""
    with Path(marker).open("a", encoding="utf-8") as fh:
        fh.write(f"{os.getpid()}\n")
    os.kill(os.getpid(), signal.SIGKILL)
    return -1


def raise_error(message: str) -> int:
    raise RuntimeError(message)


def sleep_for(seconds: float) -> float:
    time.sleep(seconds)
    return seconds
