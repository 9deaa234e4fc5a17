"""The thor backend's errors. Each message names the missing piece and how to get it."""

from __future__ import annotations


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
