"""LongAct metrics that are measured along an episode: Steps, the GC timeline, and IR.

GC and SR are properties of a checklist evaluation (``household.checklist.ChecklistResult``):
GC = satisfied units / total units, SR = 1 when every unit is satisfied.

Steps (LongAct): one step per 0.25 m moved, per 30 degrees rotated and per interaction, with
navigation and manipulation reported apart. ``StepCounter`` measures movement from the poses
before and after each action rather than trusting action names, so a MoveAhead that was blocked
after 0.1 m costs 0.4 steps and one that did not move costs nothing, while every attempted
interaction costs one step whether it succeeded or not (the attempt is the cost).

IR (Improvement Rate): see ``improvement_rate`` (the two-level OLS, in whatever units it is
given) and ``improvement_rate_paper`` (the same fit with GC in percent and time normalised to
[0, 1], the scale of LongAct's reported IR). Reports carry both: ``ir`` on the paper's scale and
``ir_per_step`` in GC (fraction) per step.

Source: Zhu et al., "When Robots Do the Chores: A Benchmark and Agent for Long-Horizon Household
Task Execution" (LongAct / HoloMind), arXiv:2605.14504, 2026. Only the paper's abstract could be
read here, not its metric section or appendix D; the definitions below follow the project's
issue text (docs/ARCHITECTURE.md) and every choice it leaves open is stated where it is made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from household.types import CONTROL_ACTIONS, NAVIGATION_ACTIONS, POSTURE_ACTIONS

METRES_PER_STEP = 0.25
DEGREES_PER_STEP = 30.0
DEFAULT_IR_SEGMENTS = 10


def _yaw_delta(before: float, after: float) -> float:
    """Smallest absolute angle between two headings, degrees (350 -> 10 is 20, not 340)."""
    return abs((after - before + 180.0) % 360.0 - 180.0)


@dataclass
class StepCounter:
    """LongAct Steps, fed by the runner after every action.

    - Navigation: displacement / 0.25 m + |yaw change| / 30 deg + |horizon change| / 30 deg,
      measured from the poses the runner passes in, for every action (so a blocked move counts
      only the distance actually covered). LookUp/LookDown count as rotation: 30 degrees of
      camera pitch is one step, like 30 degrees of yaw. A Crouch or Stand that succeeds is one
      step (the camera moves 0.6 m; no pose the runner passes shows it); a refused one is none.
    - Manipulation: one step per attempted interaction, successful or failed. An interaction is
      any action that is neither navigation (MoveAhead ... LookDown) nor control (Stop); that
      takes in backend extras such as FillObjectWithLiquid or a device setter without a list.
    Values are floats (a 90-degree turn is 3.0 steps, a 0.1 m nudge is 0.4)."""

    metres_per_step: float = METRES_PER_STEP
    degrees_per_step: float = DEGREES_PER_STEP
    nav_steps: float = 0.0
    manip_steps: float = 0.0
    actions: int = 0
    failed_actions: int = 0

    def record(self, action_name: str, success: bool, position_before: tuple[float, float],
               position_after: tuple[float, float], yaw_before_deg: float, yaw_after_deg: float,
               horizon_before: float, horizon_after: float) -> float:
        """Account for one action; positions are (x, z) in metres. Returns the steps it added."""
        moved = math.hypot(position_after[0] - position_before[0], position_after[1] - position_before[1])
        turned = _yaw_delta(yaw_before_deg, yaw_after_deg) + abs(horizon_after - horizon_before)
        nav = moved / self.metres_per_step + turned / self.degrees_per_step
        nav += 1.0 if success and action_name in POSTURE_ACTIONS else 0.0
        manip = 0.0 if action_name in NAVIGATION_ACTIONS or action_name in CONTROL_ACTIONS else 1.0
        self.nav_steps += nav
        self.manip_steps += manip
        self.actions += 1
        self.failed_actions += 0 if success else 1
        return nav + manip

    @property
    def total(self) -> float:
        return self.nav_steps + self.manip_steps


@dataclass
class ScoreTimeline:
    """GC after each step, as parallel lists; the runner appends once per step (and may append
    the starting GC at step 0). Steps must strictly increase so the curve is a function of time."""

    steps: list[int] = field(default_factory=list)
    gc: list[float] = field(default_factory=list)

    def append(self, step: int, gc: float) -> None:
        if self.steps and step <= self.steps[-1]:
            raise ValueError(f"timeline step {step} does not follow step {self.steps[-1]}")
        if not 0.0 <= gc <= 1.0:
            raise ValueError(f"GC must lie in [0, 1], got {gc!r} at step {step}")
        self.steps.append(int(step))
        self.gc.append(float(gc))

    def __len__(self) -> int:
        return len(self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {"steps": list(self.steps), "gc": list(self.gc)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ScoreTimeline":
        timeline = cls()
        for step, gc in zip(data.get("steps", []), data.get("gc", []), strict=True):
            timeline.append(step, gc)
        return timeline


def _ols_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of y on x; 0 when x has no spread (a flat or single-point part)."""
    dx = x - x.mean()
    denom = float(dx @ dx)
    return float(dx @ (y - y.mean())) / denom if denom > 0.0 else 0.0


def improvement_rate(gc: Sequence[float] | np.ndarray, steps: Sequence[float] | np.ndarray | None = None,
                     n: int = DEFAULT_IR_SEGMENTS) -> float:
    """Improvement Rate: does the agent's progress speed up (IR > 0) or stall (IR < 0)?

    For each resolution k = 2..n: split the accumulated GC sequence (GC after each step, in step
    order, as recorded, no running maximum, so undoing a condition shows as a drop) into k
    contiguous, equal parts (``numpy.array_split``: when k does not divide the length, the first
    parts are one point longer); fit an ordinary-least-squares line to each part, GC against step
    index, giving k slopes (GC per step); fit an OLS line to those k slopes against the part
    index 0..k-1; its slope is the second-order slope at resolution k (change of GC-per-step
    from one part to the next). IR is the mean of the second-order slopes over the resolutions
    used. A linear curve therefore scores 0, a convex one (late progress) > 0, a concave one
    (early progress, then a plateau) < 0; averaging over k makes it robust to where a single
    segmentation happens to cut.

    Short sequences: resolution k is used only when every part has at least two points
    (k <= len // 2), since one point has no slope. With fewer than 4 points no resolution
    qualifies and IR is 0.0 (no measurable change in progress).

    ``steps`` gives the x values (the timeline's step indices); default 0, 1, 2, ...
    """
    if n < 2:
        raise ValueError(f"IR needs n >= 2 segments, got {n}")
    y = np.asarray(gc, dtype=float)
    x = np.arange(len(y), dtype=float) if steps is None else np.asarray(steps, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"IR: {len(x)} step values for {len(y)} GC values")
    second_order = []
    for k in range(2, min(n, len(y) // 2) + 1):
        slopes = [_ols_slope(px, py) for px, py in zip(np.array_split(x, k), np.array_split(y, k))]
        second_order.append(_ols_slope(np.arange(k, dtype=float), np.asarray(slopes)))
    return float(np.mean(second_order)) if second_order else 0.0


def improvement_rate_paper(gc: Sequence[float], steps: Sequence[float] | None = None,
                           n: int = DEFAULT_IR_SEGMENTS) -> float:
    """IR on the LongAct paper's scale: ``improvement_rate`` with GC in percent (0-100) and time
    normalised to [0, 1] over the episode (t / T, from the first to the last recorded step).

    Why: the paper reports IR of 0.8-1.7 for HoloMind agents and sweeps about 0-22 over
    synthetic curves s_t = (t/T)^a (its Appendix D). Those magnitudes come out of the same
    two-level fit only in these units: for s_t = 100 (t/T)^a sampled at T = 1000 steps,
    a = 1.03 gives 1.71, a = 1.43 gives 22.0 and a = 2 gives 42.9 (in the continuous limit
    a = 2 gives 200 (H_10 - 1) / 9 = 42.87, H_10 the tenth harmonic number); GC per step gives
    values around 1e-4. Since both rescalings are linear, this equals
    ``100 * T * improvement_rate(gc, steps)``; it is computed through the fit itself so the two
    cannot drift apart. An episode with no elapsed time (T = 0) scores 0.0."""
    y = np.asarray(gc, dtype=float) * 100.0
    x = np.arange(len(y), dtype=float) if steps is None else np.asarray(steps, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"IR: {len(x)} step values for {len(y)} GC values")
    if len(x) == 0:
        return improvement_rate(y, x, n)
    span = float(x[-1] - x[0])
    if span <= 0.0:
        return improvement_rate(y, np.zeros_like(x), n) if len(x) else 0.0
    return improvement_rate(y, (x - x[0]) / span, n)
