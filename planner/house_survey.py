"""Exploring a house with no goals: the frontier walk, then a survey of the open surfaces seen.

What ``HoloMindAgent.explore_house`` runs instead of the goal loop, for a robot (or the memory
evaluation, ``evaluation.memory_agent_explorer``) that builds its memory of a house by its own
walk. The frontier walk ends when the agent's map has no frontier left, that is, when the floor
has been seen; small things on tables and shelves show only from close by, so the survey then
walks up to each open surface, nearest first, and looks at it.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Generator, Protocol

from household.assets import AssetCatalog
from household.receptacle_filters import SURVEY_SURFACE
from household.types import Action, Observation
from planner.navigation import Pose
from planner.object_memory import ObjectMemory

SkillGen = Generator[Action, Observation, bool]


class SurveySkills(Protocol):
    """The skills a survey walks with (``planner.skills.Skills``)."""

    def look_around(self) -> Generator[Action, Observation, None]: ...
    def explore_once(self, toward: tuple[float, float] | None = None) -> SkillGen: ...
    def navigate_to(self, object_id: str, closer: bool = False) -> SkillGen: ...


class SurveyAgent(Protocol):
    """What exploring alone reads and calls on the agent (``planner.holomind.HoloMindAgent``)."""

    obs: Observation
    catalog: AssetCatalog
    stats: Counter[str]
    exploration_end: str  # how the walk ended: "no frontier left", "surfaces surveyed", "step cap"

    @property
    def skills(self) -> SurveySkills: ...
    @property
    def tracker(self) -> ObjectMemory: ...
    @property
    def pose(self) -> Pose: ...
    def note(self, text: str) -> None: ...

# Turns after walking up to a surface (one rotate step each): turned left, facing it again, turned
# right, facing it again: four more views of what lies on it. A detector's spurious segments come
# and go from frame to frame, so a memory behind one counts an object only after several views
# (memory.spatial.sensor_settings: 3); one look from where the walk ended gave the small things on
# a surface one or two (dev house 1 under the realistic profile, its misses read one by one).
SURVEY_GLANCES = ("RotateLeft", "RotateRight", "RotateRight", "RotateLeft")


def explore_house(agent: SurveyAgent, step_cap: int, survey: bool) -> Generator[Action, Observation, None]:
    """Look around, walk to frontier after frontier until none is left, then (``survey``) look at
    the open surfaces; all within ``step_cap`` steps. Each end is noted ("exploration: ...",
    "survey: ...") and kept in ``agent.exploration_end``."""
    start = agent.obs.step
    yield from agent.skills.look_around()
    while agent.obs.step - start < step_cap:
        progressed = yield from agent.skills.explore_once()
        if not progressed:
            agent.note("exploration: no frontier left on the map")
            agent.exploration_end = "no frontier left"
            break
    else:
        agent.note(f"exploration: step cap of {step_cap} reached")
        agent.exploration_end = "step cap"
        return
    if survey:
        yield from survey_surfaces(agent, start, step_cap)


def survey_surfaces(agent: SurveyAgent, start: int, step_cap: int) -> Generator[Action, Observation, None]:
    """Visit the open surfaces seen (``SURVEY_SURFACE``: fixed, no door; nothing is opened), each
    next the nearest from where the agent stands (ones first seen on the way join the list), and
    look at each from close by, with ``SURVEY_GLANCES``."""
    visited: set[str] = set()
    while True:
        left = [o for o in agent.tracker.objects.values() if not o.gone and o.object_id not in visited
                and (info := agent.catalog.type_affordances(o.object_type)) is not None
                and SURVEY_SURFACE.admits_receptacle(info.object_type, receptacle=info.receptacle,
                                                     openable=info.openable, pickupable=info.pickupable)]
        if not left:
            agent.note(f"survey: looked at {len(visited)} surfaces")
            agent.exploration_end = "surfaces surveyed"
            return
        if agent.obs.step - start >= step_cap:
            agent.note(f"survey: step cap of {step_cap} reached with {len(left)} surfaces left")
            agent.exploration_end = "step cap"
            return
        p = agent.pose
        box = min(left, key=lambda o: math.hypot(o.centroid[0] - p.x, o.centroid[2] - p.z))
        visited.add(box.object_id)
        agent.stats["surfaces_surveyed"] += 1
        seen = yield from agent.skills.navigate_to(box.object_id, closer=True)
        if seen:
            for turn in SURVEY_GLANCES:
                yield Action(turn)
