"""LongAct Steps, the GC timeline and the Improvement Rate."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.metrics import ScoreTimeline, StepCounter, improvement_rate, improvement_rate_paper


def test_steps_count_distance_rotation_and_interactions() -> None:
    c = StepCounter()
    assert c.record("MoveAhead", True, (0.0, 0.0), (0.25, 0.0), 90, 90, 0, 0) == pytest.approx(1.0)
    assert c.record("MoveLeft", True, (0.25, 0.0), (0.25, 0.5), 90, 90, 0, 0) == pytest.approx(2.0)
    assert c.record("RotateRight", True, (0.25, 0.5), (0.25, 0.5), 90, 180, 0, 0) == pytest.approx(3.0)
    assert c.record("RotateRight", True, (0.25, 0.5), (0.25, 0.5), 350, 20, 0, 0) == pytest.approx(1.0)  # wraps
    assert c.record("LookDown", True, (0.25, 0.5), (0.25, 0.5), 20, 20, 0, 30) == pytest.approx(1.0)
    assert c.record("LookUp", True, (0.25, 0.5), (0.25, 0.5), 20, 20, 30, -30) == pytest.approx(2.0)
    assert (c.nav_steps, c.manip_steps) == (pytest.approx(10.0), 0.0)
    assert c.record("PickupObject", True, (0.25, 0.5), (0.25, 0.5), 20, 20, -30, -30) == 1.0
    assert c.record("PutObject", False, (0.25, 0.5), (0.25, 0.5), 20, 20, -30, -30) == 1.0  # attempts cost
    assert c.record("FillObjectWithLiquid", True, (0.25, 0.5), (0.25, 0.5), 20, 20, -30, -30) == 1.0
    assert c.record("Stop", True, (0.25, 0.5), (0.25, 0.5), 20, 20, -30, -30) == 0.0
    assert c.manip_steps == 3.0
    assert c.total == pytest.approx(13.0)
    assert (c.actions, c.failed_actions) == (10, 1)


def test_blocked_moves_cost_only_the_distance_covered() -> None:
    c = StepCounter()
    assert c.record("MoveAhead", False, (1.0, 1.0), (1.0, 1.0), 0, 0, 0, 0) == 0.0
    assert c.record("MoveAhead", True, (1.0, 1.0), (1.0, 1.1), 0, 0, 0, 0) == pytest.approx(0.4)
    assert c.failed_actions == 1 and c.manip_steps == 0.0


def test_timeline_appends_in_order_and_round_trips() -> None:
    t = ScoreTimeline()
    t.append(0, 0.0)
    t.append(1, 0.5)
    t.append(3, 0.5)
    assert (t.steps, t.gc, len(t)) == ([0, 1, 3], [0.0, 0.5, 0.5], 3)
    with pytest.raises(ValueError, match="does not follow"):
        t.append(3, 0.6)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        t.append(4, 1.2)
    assert ScoreTimeline.from_dict(t.to_dict()) == t


def power_curve(a: float, length: int = 301) -> np.ndarray:
    t = np.arange(length, dtype=float)
    return (t / t[-1]) ** a


def test_ir_rises_with_convexity_and_is_zero_for_linear_progress() -> None:
    irs = {a: improvement_rate(power_curve(a)) for a in (0.5, 1.0, 2.0, 3.0)}
    assert irs[0.5] < irs[1.0] < irs[2.0] < irs[3.0]
    assert irs[0.5] < 0 < irs[2.0]
    assert abs(irs[1.0]) < 1e-6 * abs(irs[2.0])


def test_ir_by_hand_and_with_step_values() -> None:
    # Four points allow only k = 2: parts [0, 0] and [0, 1] have slopes 0 and 1; their slope is 1.
    assert improvement_rate([0.0, 0.0, 0.0, 1.0]) == pytest.approx(1.0)
    # Steps spread twice as far halve the first-order slopes, hence the second-order one.
    assert improvement_rate([0.0, 0.0, 0.0, 1.0], steps=[0, 2, 4, 6]) == pytest.approx(0.5)
    # Six points: k = 2 gives parts [0,0,0] / [0,.5,1] -> slopes 0, .5 -> 0.5; k = 3 gives
    # [0,0] / [0,0] / [.5,1] -> slopes 0, 0, .5 -> slope .25. Mean 0.375.
    assert improvement_rate([0.0, 0.0, 0.0, 0.0, 0.5, 1.0], n=3) == pytest.approx(0.375)
    assert improvement_rate([0.0, 0.0, 0.0, 0.0, 0.5, 1.0], n=2) == pytest.approx(0.5)


def test_ir_short_sequences_and_bad_input() -> None:
    assert improvement_rate([]) == 0.0
    assert improvement_rate([0.0, 0.5, 1.0]) == 0.0  # no k has two points in every part
    with pytest.raises(ValueError, match="n >= 2"):
        improvement_rate([0.0, 1.0, 1.0, 1.0], n=1)
    with pytest.raises(ValueError, match="3 step values for 4 GC values"):
        improvement_rate([0.0, 1.0, 1.0, 1.0], steps=[0, 1, 2])


def test_ir_sees_regressions_as_recorded() -> None:
    """An undone condition is a drop in the curve, not hidden behind a running maximum."""
    up_then_down = [0.0, 0.25, 0.5, 0.75, 0.75, 0.5, 0.25, 0.0]
    plateau = np.maximum.accumulate(up_then_down)
    assert improvement_rate(up_then_down) < improvement_rate(plateau) < 0


def test_ir_paper_scale_on_power_curves() -> None:
    """The issue's figures for s_t = (t/T)^a: GC in percent, time in [0, 1], T = 1000 steps,
    the same two-level OLS over k = 2..10. Per-step units give the same curve shape but 1e-4."""
    steps = np.arange(1001, dtype=float)
    irs = {a: improvement_rate_paper((steps / 1000.0) ** a, steps) for a in (1.0, 1.03, 1.43, 2.0)}
    assert irs[1.03] == pytest.approx(1.71, abs=0.01)
    assert irs[1.43] == pytest.approx(22.0, abs=0.05)
    assert irs[2.0] == pytest.approx(42.9, abs=0.05)
    assert abs(irs[1.0]) < 1e-9
    # Continuous limit for a = 2: first-order slopes are 200 x at part midpoints 1/k apart, so
    # the second-order slope at resolution k is 200 / k; mean over k = 2..10 is 200 (H_10 - 1) / 9.
    harmonic_10 = sum(1.0 / i for i in range(1, 11))
    dense = np.arange(100_001, dtype=float)
    assert improvement_rate_paper((dense / dense[-1]) ** 2, dense) == pytest.approx(200 * (harmonic_10 - 1) / 9, rel=1e-3)
    # The per-step value is the same fit in other units: exactly 1 / (100 T) of it.
    per_step = improvement_rate((steps / 1000.0) ** 2.0, steps)
    assert per_step == pytest.approx(irs[2.0] / (100 * 1000))
    assert per_step < 1e-3


def test_ir_paper_scale_ignores_where_time_starts_and_its_unit() -> None:
    gc = [0.0, 0.0, 0.1, 0.3, 0.6, 1.0]
    base = improvement_rate_paper(gc, [0, 1, 2, 3, 4, 5])
    assert improvement_rate_paper(gc, [10, 12, 14, 16, 18, 20]) == pytest.approx(base)
    assert improvement_rate_paper(gc) == pytest.approx(base)
    assert improvement_rate_paper([0.5] * 6) == 0.0
    assert improvement_rate_paper([]) == 0.0
    with pytest.raises(ValueError, match="2 step values for 3 GC values"):
        improvement_rate_paper([0.0, 0.5, 1.0], [0, 1])
