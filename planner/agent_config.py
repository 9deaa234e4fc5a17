"""The HoloMind agent's settings (reach, step sizes, step allowances, ablations): a module of its
own so the skills and the agent factory can read them without importing the agent."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from planner.planning_budget import ACT_EXPANSIONS

# What an ablation switches off (LongAct Table 4): the critic (a failed action just fails its goal
# attempt), episodic memory (no experience pool, no remembered object states, no action evidence
# in the belief tracker), the high level (no DAG ordering, refinement or deferring: goals in
# instruction order). Each names a component that planner.ablations swaps for a no-op one; the
# names here are what the CLI checks and the run's planner label carries.
ABLATIONS = ("critic", "episodic", "high-level")
# What the agent grounds objects through, by name: "module:function(config) -> ObjectMemory" (the
# planner.object_memory protocol), imported only when an agent is built (this module stays light
# for the CLI). "tracker", a box per segmenter id for the planner alone; "spatial", the scene map's
# object table with its voxels and text index. The one table of them (planner.holomind reads it).
OBJECT_MEMORIES: dict[str, str] = {
    "tracker": "planner.object_tracker:tracker_memory",
    "spatial": "planner.spatial_object_memory:spatial_memory",
}


def load_entry(spec: str) -> Any:
    """What a "module:function" entry of a table by name stands for (``OBJECT_MEMORIES`` here,
    ``planner.factory.PLUGINS``), imported now; ModuleNotFoundError where the module is not installed."""
    module_name, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module_name), attr)


@dataclass
class AgentConfig:
    reach: float = 1.5
    approach_reach: float = 1.4
    # Where ``reach`` is measured from: None, from the camera (a robot's arm, Habitat, and the
    # default everywhere); or the heights (THOR y, above the floor) of an upright segment through
    # the agent's axis, as THOR and the embedded simulator measure their range (their
    # ``range_span()``: the capsule stretched up by the range, so an object on a bed counts its
    # horizontal distance). Not the default on those backends: measured on the whole v2 set it
    # cost SR 0.750 -> 0.712 (README, issue 30): standing 1.4 m across from a low object, the
    # camera sees it too small or hidden to confirm, and the approach goes round.
    reach_span: tuple[float, float] | None = None
    move_step: float = 0.25
    rotate_step: float = 30.0
    goal_step_cap: int = 500  # steps one goal may take before it is set aside
    search_step_cap: int = 350  # steps of exploration for one missing object
    approach_step_cap: int = 160  # steps of exploring towards a seen object with no path to it yet
    # Lattice expansions after which one decision starts no further plan: the next waits a Pass
    # step (planner.planning_budget). None: unbounded.
    act_expansions: int | None = ACT_EXPANSIONS
    inspect_step_cap: int = 250  # steps of visiting receptacles once exploration found nothing
    ablate: frozenset[str] = frozenset()
    instruction_kind: str = "detailed"
    # The depth camera's noise model, sigma(z) = k z^2 in metres (a datasheet figure on a robot;
    # the sensor profile's in simulation): the occupancy map weighs returns by it. 0: noise-free.
    depth_noise_k: float = 0.0
    # How far the pose the agent reads may be off, frame to frame, in metres (a localiser's stated
    # accuracy on a robot; the sensor profile's in simulation): the map's obstacles are smeared
    # by about that much, and plans that find no way otherwise allow for it. 0: exact pose.
    pose_tolerance: float = 0.0
    # Views of an object that must agree on where it is before the agent believes it: 1 for a
    # segmenter that reports only what is there; 2 for a detector with false detections.
    confirm_views: int = 1
    # A segmenter whose masks bleed over silhouettes (a learned detector): each object's pixels
    # the depth puts apart from it are dropped before its box is built (perception/mask_edges.py).
    mask_edge_check: bool = False
    # A robot without a localiser (its pose is odometry, REP 105 ``odom``): each depth frame is
    # registered against the agent's own map and the pose corrected before anything uses it
    # (perception/pose_correction.py). False where a localiser keeps the pose in ``map``.
    pose_correction: bool = False
    # Instances smaller than this many pixels a learned detector does not report (0: a segmenter
    # that reports whatever shows). The search then walks on over a surface to the parts a small
    # thing would not show on from where the visit ended (planner/surface_look.py).
    detector_min_pixels: int = 0
    # Where the agent keeps the objects it has seen (OBJECT_MEMORIES).
    object_memory: str = "tracker"

    def __post_init__(self) -> None:
        if self.object_memory not in OBJECT_MEMORIES:
            raise ValueError(f"AgentConfig.object_memory: {self.object_memory!r} is not one of "
                             f"{', '.join(OBJECT_MEMORIES)}")
        unknown = sorted(set(self.ablate) - set(ABLATIONS))
        if unknown:  # a misspelt ablation would otherwise switch nothing off, silently
            raise ValueError(f"AgentConfig.ablate: unknown ablation {', '.join(map(repr, unknown))} "
                             f"(known: {', '.join(ABLATIONS)})")
        self.ablate = frozenset(self.ablate)

    @property
    def edge_reach(self) -> float:
        """The farthest the agent plans to stand from what it acts on (the arm's reach, less a
        margin for the box it estimated from depth)."""
        return self.reach - 0.03
