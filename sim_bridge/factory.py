"""``make_environment(kind, **options)``: the one place that turns a ``--sim`` choice into a backend.

The CLI (and launch files) should not know each backend's module or config class, and optional
backends must not be imported unless chosen: ai2thor and habitat_sim are optional extras, and the
embedded simulator pulls in open3d. Options are the fields of the backend's config dataclass
(``EmbeddedConfig``, ``ThorConfig``, ``HabitatConfig``, ``ReplayEnvConfig``); a misspelt option is an error that lists
the valid ones instead of being silently ignored.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from household.types import Environment


class UnknownEnvironmentError(ValueError):
    """The kind names no backend; the message lists the kinds that exist."""


def _config(kind: str, cls: type, options: dict[str, Any]) -> Any:
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise TypeError(f"{kind} simulator: unknown option{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(repr(u) for u in unknown)} (options: {', '.join(names)})")
    return cls(**options)


def _embedded(options: dict[str, Any]) -> Environment:
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    return EmbeddedEnvironment(_config("embedded", EmbeddedConfig, options))


def _thor(options: dict[str, Any]) -> Environment:
    from sim_bridge.thor.backend import ThorConfig, ThorEnvironment

    return ThorEnvironment(_config("thor", ThorConfig, options))


def _habitat(options: dict[str, Any]) -> Environment:
    from sim_bridge.habitat.backend import HabitatConfig, HabitatEnvironment

    return HabitatEnvironment(_config("habitat", HabitatConfig, options))


def _replay(options: dict[str, Any]) -> Environment:
    """A recorded bag played back (option ``bag``); it cannot act, so it serves consumers of
    observations (perception, memory, the ROS graph in replay mode), not closed-loop runs."""
    from sim_bridge.replay.backend import ReplayEnvConfig, ReplayEnvironment

    return ReplayEnvironment(_config("replay", ReplayEnvConfig, options))


BACKENDS: dict[str, Callable[[dict[str, Any]], Environment]] = {
    "embedded": _embedded,
    "thor": _thor,
    "habitat": _habitat,
    "replay": _replay,
}
KINDS = tuple(BACKENDS)


def make_environment(kind: str, **options: Any) -> Environment:
    """A ready backend of ``kind`` ("embedded", "thor", "habitat" or "replay").

    Raises UnknownEnvironmentError for an unknown kind, TypeError for an unknown option, and the
    backend's own errors for a missing optional dependency (``ThorUnavailableError``,
    ``HabitatUnavailableError``, both ImportErrors with the install line) or bad settings."""
    try:
        build = BACKENDS[kind]
    except KeyError:
        raise UnknownEnvironmentError(f"unknown simulator {kind!r} (available: {', '.join(KINDS)})") from None
    return build(options)
