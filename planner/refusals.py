"""One store for "this receptacle refused this object type".

A put that fails because the receptacle has no room (``no_room``) or does not take the type
(``wrong_receptacle``) teaches two things at once: this receptacle will not take this type for
the rest of the episode (whatever goal asks next), and, as experience across episodes, that
type pairs like it are worth avoiding where the agent chooses the receptacle itself. They used to
be two stores written from two call sites under slightly different conditions (the goal loop's
``misfits`` only when the receptacle was the goal's target, the experience pool only when the
first of two attempts had failed that way), so one failure could teach one and not the other.
Here one ``record`` writes both; the experience pool keeps only the type-level fact (it
persists), and the instance-level fact lives for the episode.
"""

from __future__ import annotations

from household.outcomes import Failure
from planner.critic import ExperienceStore

REFUSED_SITUATIONS = frozenset({Failure.NO_ROOM.value, Failure.WRONG_RECEPTACLE.value})
REFUSAL_FIX = "choose another receptacle"


class ReceptacleRefusals:
    """What refused what in this episode, and (through the experience pool, unless the
    ``episodic`` ablation switched experience off) across episodes."""

    def __init__(self, experience: ExperienceStore | None) -> None:
        self._experience = experience
        self._by_receptacle: dict[str, set[str]] = {}

    def record(self, action: str, situation: str, receptacle_id: str, receptacle_type: str, object_type: str) -> None:
        """``receptacle_id`` (of ``receptacle_type``) refused ``object_type`` with ``situation``."""
        if situation not in REFUSED_SITUATIONS:
            raise ValueError(f"not a refusal: {situation!r} (expected one of {sorted(REFUSED_SITUATIONS)})")
        self._by_receptacle.setdefault(receptacle_id, set()).add(object_type)
        if self._experience is not None:
            self._experience.record(action, situation, f"{object_type}>{receptacle_type}", REFUSAL_FIX)
            self._experience.save()

    def refused_here(self, object_type: str) -> set[str]:
        """Receptacle ids that refused ``object_type`` earlier in this episode."""
        return {rid for rid, types in self._by_receptacle.items() if object_type in types}

    def refuses_type(self, receptacle_type: str, object_type: str, action: str = "PutObject") -> bool:
        """Experience says ``object_type`` does not go on/in ``receptacle_type``."""
        return self._experience is not None and self._experience.avoid(action, object_type, receptacle_type)

    def by_receptacle(self) -> dict[str, frozenset[str]]:
        return {rid: frozenset(types) for rid, types in self._by_receptacle.items()}
