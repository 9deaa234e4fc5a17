"""Pose error profiles (issue 31): under ``realistic`` the pose the planner reads in ``map`` is a
localiser's (bounded, corrected in steps, with rare relocalisation jumps; REP 105), under
``odom-only`` it is odometry that drifts without bound, and ``ideal`` is exact. Seeded random
walks on the pose model alone (no rendering), and one short run through ``SensorNoise``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from household.types import Action
from sim_bridge.sensors import SensorNoise, sensor_profile
from sim_bridge.sensors.pose import LocaliserModel, PoseError, PoseModel

STEP_M, TURN_RAD = 0.25, math.radians(30)  # the embedded simulator's MoveAhead and Rotate


def walk(metres: float, seed: int, step_m: float = STEP_M, turn_rad: float = TURN_RAD):
    """A random walk of moves and turns: yields true (x, y, yaw) and the distance so far."""
    rng = np.random.default_rng(seed)
    x = y = yaw = dist = 0.0
    yield x, y, yaw, dist
    while dist < metres:
        if rng.random() < 0.3:
            yaw += float(rng.choice([-1.0, 1.0])) * turn_rad
        else:
            x, y, dist = x + step_m * math.cos(yaw), y + step_m * math.sin(yaw), dist + step_m
        yield x, y, yaw, dist


def errors(err: np.ndarray, x: float, y: float) -> tuple[float, float]:
    """Position (m) and heading (deg) error of the pose an error matrix gives at the true (x, y)."""
    px, py = (err @ np.array([x, y, 1.0]))[:2]
    return math.hypot(px - x, py - y), abs(math.degrees(math.atan2(err[1, 0], err[0, 0])))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_realistic_pose_error_stays_bounded_over_200_m(seed: int) -> None:
    pose = PoseError(sensor_profile("realistic").pose, np.random.default_rng(seed))
    jump_frames = normal_frames = 0
    for x, y, yaw, _ in walk(200.0, seed):
        pos, head = errors(pose.update(x, y, yaw), x, y)
        assert head < 3.0
        if pose.in_jump:  # a wrong hypothesis held: bounded by the jump (0.3 m) and one update's drift
            jump_frames += 1
            assert pos < 0.3 + 0.02
        else:
            normal_frames += 1
            assert pos < 0.1
    assert pose.jumps >= 1 and jump_frames > 0  # the jump windows were exercised (~3 per 100 m)
    assert normal_frames > 10 * jump_frames


def test_realistic_corrections_come_in_steps_and_odometry_drifts_between_them() -> None:
    """Small motions (5 cm, 3 degrees): the localiser corrects after 0.25 m or 0.2 rad, exactly;
    between corrections the error moves by odometry drift only, at a correction it jumps."""
    loc = LocaliserModel(jumps_per_100m=0.0)
    pose = PoseError(PoseModel(drift_per_m=0.02, yaw_drift_per_rad=0.011, localiser=loc), np.random.default_rng(4))
    since_d = since_a = 0.0
    last: tuple[float, float, float] | None = None
    prev_err = None
    at_update, between = [], []
    for x, y, yaw, _ in walk(60.0, 5, step_m=0.05, turn_rad=math.radians(3)):
        err = pose.update(x, y, yaw)
        if last is not None:
            since_d += math.hypot(x - last[0], y - last[1])
            since_a += abs(yaw - last[2])
            due = since_d >= loc.update_min_d - 1e-9 or since_a >= loc.update_min_a - 1e-9
            assert pose.corrected == due
            if due:
                since_d = since_a = 0.0
        last = (x, y, yaw)
        if prev_err is not None:
            change = float(np.hypot(*(err[:2, 2] - prev_err[:2, 2])))
            (at_update if pose.corrected else between).append(change)
        prev_err = err.copy()
    assert len(at_update) > 100 and len(between) > 300
    assert np.mean(between) > 0  # odometry drift accumulates between corrections
    assert np.median(at_update) > 5 * np.median(between)  # corrections arrive as steps, not smoothly


def test_odom_only_pose_error_grows_with_distance() -> None:
    early, late = [], []
    for seed in range(8):
        pose = PoseError(sensor_profile("odom-only").pose, np.random.default_rng(seed))
        for x, y, yaw, dist in walk(200.0, 100 + seed):
            pos, _ = errors(pose.update(x, y, yaw), x, y)
            if dist <= 10.0:
                early.append(pos)
            elif dist >= 150.0:
                late.append(pos)
        assert pose.jumps == 0
    assert np.mean(late) > 5 * np.mean(early)
    assert np.mean(late) > 0.3  # far past anything the localised profile allows


def test_ideal_pose_is_exact_and_pose_model_defaults_are_exact() -> None:
    assert sensor_profile("ideal").pose == PoseModel() and PoseModel().is_exact
    pose = PoseError(PoseModel(), np.random.default_rng(0))
    for x, y, yaw, _ in walk(20.0, 0):
        assert np.array_equal(pose.update(x, y, yaw), np.eye(3)) and not pose.corrected


def test_profiles_differ_only_in_the_pose_model() -> None:
    realistic, odom = sensor_profile("realistic"), sensor_profile("odom-only")
    assert realistic.depth == odom.depth and realistic.segmentation == odom.segmentation
    assert realistic.pose.localiser is not None and odom.pose.localiser is None
    assert realistic.depth.noise_k == pytest.approx(3.6e-3)  # D435: z^2 * 0.08 px / (447 px * 50 mm)


def _poses(profile: str, width: int, seed: int = 0) -> list[tuple[tuple[float, float, float], float]]:
    from evaluation.dev_set import default_episode_file
    from evaluation.episodes import load_episode
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    env = SensorNoise(EmbeddedEnvironment(EmbeddedConfig(width=width, height=width * 3 // 4)),
                      sensor_profile(profile), seed=seed)
    frames = [env.reset(load_episode(default_episode_file()))]
    frames += [env.step(Action(m)).observation for m in ["MoveAhead", "RotateLeft", "MoveAhead", "MoveAhead"]]
    return [(f.agent.position, f.agent.yaw_deg) for f in frames]


def test_pose_error_is_deterministic_per_seed_and_independent_of_the_images() -> None:
    a = _poses("realistic", 80)
    assert a == _poses("realistic", 80)
    assert a == _poses("realistic", 64)  # its own random stream: image size does not change it
    assert a != _poses("realistic", 80, seed=1)


def test_cli_accepts_odom_only_wherever_sensors_is(capsys: pytest.CaptureFixture[str]) -> None:
    from evaluation.memory_eval import main_memory_eval
    from worldmind.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["run", "--sensors", "odom-only"]).sensors == "odom-only"
    assert parser.parse_args(["eval", "longact", "--episodes", "x", "--out", "y", "--sensors", "odom-only"]).sensors == "odom-only"
    with pytest.raises(SystemExit) as exc:
        main_memory_eval(["--help"])
    assert exc.value.code == 0 and "odom-only" in capsys.readouterr().out


def test_filtering_recorded_frames_matches_the_wrapper() -> None:
    """``begin`` + ``degrade`` over recorded true frames gives the poses the wrapped environment
    gives (what benchmarks/bench_pose_profiles.py relies on)."""
    from evaluation.dev_set import default_episode_file
    from evaluation.episodes import load_episode
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    episode = load_episode(default_episode_file())
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    truth = [env.reset(episode)] + [env.step(Action(m)).observation for m in ["MoveAhead", "RotateLeft", "MoveAhead"]]
    noise = SensorNoise(None, sensor_profile("realistic"))
    noise.begin(episode)
    filtered = [(f.agent.position, f.agent.yaw_deg) for f in map(noise.degrade, truth)]
    wrapped = SensorNoise(EmbeddedEnvironment(EmbeddedConfig(render=False)), sensor_profile("realistic"))
    seen = [wrapped.reset(episode)] + [wrapped.step(Action(m)).observation for m in ["MoveAhead", "RotateLeft", "MoveAhead"]]
    assert filtered == [(f.agent.position, f.agent.yaw_deg) for f in seen]
