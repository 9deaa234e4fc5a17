"""An episode's step budget, as the evaluation runner and the ROS planner node both keep it.

The budget counts the agent's actions other than ``Pass`` (``household.types.PASS``): a Pass is a
step in which the agent only goes on planning (``planner.planning_budget``), and how finely a
deployment spreads its planning must not decide how much of the task it gets to do. Passes are
bounded all the same, by as many again. One record for both callers, so the two cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass

from household.types import PASS


@dataclass
class StepBudget:
    """Actions counted against ``limit`` (``acted``) and the Pass steps beside them (``passes``)."""

    limit: int
    acted: int = 0
    passes: int = 0

    def spent(self) -> bool:
        """The actions that count have used the whole budget."""
        return self.acted >= self.limit

    def take(self, action_name: str) -> bool:
        """Count one action; False, and nothing counted, for a Pass once ``limit`` Passes were
        taken (the episode ends there: "planning passes")."""
        if action_name == PASS:
            if self.passes >= self.limit:
                return False
            self.passes += 1
        else:
            self.acted += 1
        return True
