"""A fake of the narrow ``AgentView`` the skills use (planner.skills), for tests that drive one
skill by hand: the agent's memory says every object is in view and within reach, experience
suggests nothing, and the critic is whatever the test scripts."""
from __future__ import annotations

from collections import Counter
from typing import Any

from household.types import Observation
from planner.agent_config import AgentConfig
from planner.critic import ExperiencePool
from planner.refusals import ReceptacleRefusals


class FakeAgentView:
    held_id: str | None = "Mug|1|2"
    held_type: str | None = "Mug"

    def __init__(self) -> None:
        self.config = AgentConfig()
        self.stats: Counter = Counter()
        self.notes: list[str] = []
        self.excluded_now: set[str] = set()
        self.grounded_as: dict[str, str] = {}  # object id -> its type when the goal was grounded
        self.refusals = ReceptacleRefusals(ExperiencePool())

    def camera_thor(self) -> Any:
        return (0.0, 0.0, 0.0)

    def reach_distance(self, obj: Any) -> float:
        return float(obj.distance_3d(self.camera_thor()))

    def reach_wanted(self, object_id: str, reach: float) -> float:
        return reach

    def views_refused(self, object_id: str) -> list[tuple[float, float]]:
        return []

    def take_shut_in(self, object_id: str) -> str | None:
        return None

    def experience_fix(self, action: str, object_type: str) -> None:
        return None

    def experience_closer(self, action: str, object_type: str) -> bool:
        return False

    def experience_attempted(self, action: str, object_type: str) -> None:
        pass

    def after_interaction(self, name: str, object_id: str, obs: Observation) -> None:
        pass

    def note(self, text: str) -> None:
        self.notes.append(text)
