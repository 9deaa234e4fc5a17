"""Secret values this process knows (API keys), and their removal from anything written.

An API key is read from the environment variable a config names, at call time; the reader
registers its value here. ``redact`` replaces every registered value with "***". It is applied
where text leaves the process: model answers as they arrive (so goal texts, plans, bag payloads
and ROS messages derived from them never hold a key) and every text file written through
``household.atomic_io`` (reports, summaries, caches, traces, experience pools), so a key that
reaches a file by any other path is still not written.
"""
from __future__ import annotations

import threading

MASK = "***"
_MIN_LENGTH = 4  # shorter values would mask ordinary words
_lock = threading.Lock()
_secrets: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a secret value so ``redact`` removes it from everything written from now on."""
    if value and len(value) >= _MIN_LENGTH:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by "***" (longest first)."""
    if not _secrets:
        return text
    with _lock:
        values = sorted(_secrets, key=len, reverse=True)
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    return text


def forget_secrets() -> None:
    """Drop every registered value (tests)."""
    with _lock:
        _secrets.clear()
