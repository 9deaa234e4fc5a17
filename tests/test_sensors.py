"""Sensor profiles (issue 14): ideal is the identity; realistic and harsh degrade depth, pose and
segmentation as documented in sim_bridge/sensors/profiles.py, deterministically per episode, and
never touch the simulator's own state; bad frames are skipped by the memory pipeline with a
warning while the memory already built is kept."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from evaluation.dev_set import default_episode_file
from evaluation.episodes import load_episode
from household.types import Action, InstanceLabel, Observation
from memory.pipeline import MemoryPipeline
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.sensors import SensorNoise, sensor_profile
from sim_bridge.sensors.noise import SPURIOUS_PREFIX
from sim_bridge.sensors.profiles import DepthModel, SegmentationModel, SensorProfile

MOVES = ["MoveAhead", "RotateLeft", "MoveAhead", "MoveAhead", "RotateRight", "MoveAhead"]


@pytest.fixture(scope="module")
def episode():
    return load_episode(default_episode_file())


def _env() -> EmbeddedEnvironment:
    return EmbeddedEnvironment(EmbeddedConfig(width=160, height=120))


def _run(profile: str, episode, seed: int = 0) -> list:
    env = SensorNoise(_env(), sensor_profile(profile), seed=seed)
    frames = [env.reset(episode)]
    frames += [env.step(Action(m)).observation for m in MOVES]
    return frames


def test_ideal_is_the_identity(episode) -> None:
    clean = _env()
    obs = clean.reset(episode)
    assert SensorNoise(None, sensor_profile("ideal")).degrade(obs) is obs
    wrapped = _run("ideal", episode)
    plain = [clean.reset(episode)] + [clean.step(Action(m)).observation for m in MOVES]
    for a, b in zip(wrapped, plain):
        assert a.depth.tobytes() == b.depth.tobytes() and np.array_equal(a.instance_ids, b.instance_ids)
        assert a.agent == b.agent and np.array_equal(a.world_from_camera, b.world_from_camera)


def test_profiles_are_deterministic_per_episode_and_seed(episode) -> None:
    a, b = _run("realistic", episode), _run("realistic", episode)
    for x, y in zip(a, b):
        assert np.array_equal(x.depth, y.depth) and np.array_equal(x.instance_ids, y.instance_ids)
        assert x.id_to_label == y.id_to_label and x.agent == y.agent
    c = _run("realistic", episode, seed=1)
    assert any(not np.array_equal(x.depth, z.depth) for x, z in zip(a, c))


def test_unknown_profile_names_the_choices() -> None:
    with pytest.raises(ValueError, match="ideal, realistic, odom-only, harsh"):
        sensor_profile("perfect")


def test_depth_noise_grows_with_distance_and_returns_go_missing(episode) -> None:
    clean = _env().reset(episode)
    model = DepthModel(noise_k=0.01)
    noisy = SensorNoise(None, SensorProfile("k", depth=model), seed=3).degrade(clean)
    hit = clean.depth > 0
    err = (noisy.depth - clean.depth)[hit]
    z = clean.depth[hit]
    near, far = err[z < np.percentile(z, 30)], err[z > np.percentile(z, 70)]
    assert far.std() > 2 * near.std()  # sigma = k z^2
    assert (noisy.depth >= 0).all()
    cut = SensorNoise(None, SensorProfile("r", depth=DepthModel(max_range_m=2.0, edge_dropout=1.0)), 0).degrade(clean)
    assert not ((cut.depth > 2.0)).any()  # beyond range: no return (0)
    assert (cut.depth[hit] == 0).mean() > (clean.depth[hit] == 0).mean()


def test_segmentation_ids_change_every_frame_small_instances_vanish_and_spurious_ones_are_named(episode) -> None:
    env = _env()
    clean = env.reset(episode)
    seg = SegmentationModel(min_pixels=30, spurious_per_frame=3.0, per_frame_ids=True)
    noise = SensorNoise(None, SensorProfile("s", segmentation=seg), seed=5)
    first, second = noise.degrade(clean), noise.degrade(clean)
    assert set(first.id_to_label) != set(second.id_to_label)  # a new numbering each frame, same view
    real = {lab.object_id for lab in first.id_to_label.values() if not lab.object_id.startswith(SPURIOUS_PREFIX)}
    ids, counts = np.unique(clean.instance_ids[clean.instance_ids > 0], return_counts=True)
    big = {clean.id_to_label[i].object_id for i, n in zip(ids.tolist(), counts.tolist()) if n >= 30}
    assert real <= {lab.object_id for lab in clean.id_to_label.values()}
    assert real <= big  # nothing under min_pixels survives (spurious boxes may cover some others)
    assert any(lab.object_id.startswith(SPURIOUS_PREFIX) for lab in first.id_to_label.values())
    for iid in first.id_to_label:  # every label has pixels, every pixel a label
        assert (first.instance_ids == iid).any()
    assert set(np.unique(first.instance_ids)) - {0} == set(first.id_to_label)
    # Each false detection is its own: the next frame's never share a name with this frame's, so
    # a tracker keyed by id cannot take random boxes in two frames for one object.
    later = noise.degrade(dataclasses.replace(clean, step=clean.step + 1))

    def ghosts(obs: Observation) -> set[str]:
        return {lab.object_id for lab in obs.id_to_label.values() if lab.object_id.startswith(SPURIOUS_PREFIX)}
    assert ghosts(first) and ghosts(later) and not ghosts(first) & ghosts(later)


def test_confusion_swaps_look_alike_labels_only(episode) -> None:
    clean = _env().reset(episode)
    fake = dict(clean.id_to_label)
    some = next(iter(fake))
    fake[some] = InstanceLabel(fake[some].object_id, "Mug")
    frame = dataclasses.replace(clean, id_to_label=fake)
    out = SensorNoise(None, SensorProfile("c", segmentation=SegmentationModel(confusion_p=1.0)), 0).degrade(frame)
    by_obj = {lab.object_id: lab.object_type for lab in out.id_to_label.values()}
    assert by_obj[fake[some].object_id] == "Cup"
    for lab in fake.values():
        if lab.object_type not in ("Mug",) and lab.object_type not in sensor_profile("harsh").segmentation.confusion:
            assert by_obj.get(lab.object_id, lab.object_type) == lab.object_type


def test_pose_drift_accumulates_with_motion_and_never_moves_the_simulator(episode) -> None:
    noisy_env, clean_env = SensorNoise(_env(), sensor_profile("harsh"), seed=2), _env()
    first, clean = noisy_env.reset(episode), clean_env.reset(episode)
    assert first.agent == clean.agent  # no motion yet, no drift
    errors, yaw_errors = [], []
    for m in ["MoveAhead"] * 6 + ["RotateLeft"] * 3 + ["MoveAhead"] * 6:
        seen, truth = noisy_env.step(Action(m)).observation, clean_env.step(Action(m)).observation
        assert noisy_env.env.pose == clean_env.pose  # the simulator itself is not moved by the drift
        errors.append(float(np.hypot(seen.agent.position[0] - truth.agent.position[0],
                                     seen.agent.position[1] - truth.agent.position[1])))
        yaw_errors.append(abs(seen.agent.yaw_deg - truth.agent.yaw_deg))
        # the camera pose drifts with the base: same rigid error applied to both
        assert np.allclose(seen.world_from_camera[3], [0, 0, 0, 1])
        assert seen.world_from_camera[2, 3] == pytest.approx(truth.world_from_camera[2, 3])
    assert errors[-1] > 0.0 and max(yaw_errors) > 0.0


def test_memory_pipeline_skips_bad_frames_and_keeps_what_it_built(episode) -> None:
    env = _env()
    obs = env.reset(episode)
    pipe = MemoryPipeline.build()
    pipe.process(obs)
    built = len(pipe.memory)
    assert built > 0
    nan_depth = dataclasses.replace(obs, step=obs.step + 1, depth=np.full_like(obs.depth, np.nan))
    empty_seg = dataclasses.replace(obs, step=obs.step + 2, instance_ids=np.zeros_like(obs.instance_ids),
                                    id_to_label={})
    unknown = dataclasses.replace(obs, step=obs.step + 3, id_to_label={
        i: InstanceLabel(lab.object_id, "FluxCapacitor") for i, lab in obs.id_to_label.items()})
    for bad in (nan_depth, empty_seg, unknown):
        pipe.process(bad)  # no exception escapes: skipped or degraded with a warning
        assert len(pipe.memory) >= built


def test_cli_sensor_option_unknown_profile_and_no_mixing_in_one_out(tmp_path, capsys) -> None:
    from worldmind.cli import main

    assert main(["run", "--sensors", "perfect", "--out", str(tmp_path / "x")]) == 2
    assert "realistic" in capsys.readouterr().err  # the choices are named
    eps = tmp_path / "eps"
    eps.mkdir()
    (eps / "dev-098-0.json").write_text(
        (default_episode_file().parent / "dev-098-0.json").read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "out"
    base = ["eval", "longact", "--episodes", str(eps), "--planner", "oracle", "--out", str(out)]
    assert main(base + ["--sensors", "realistic"]) == 0
    report = (out / "dev-098-0" / "report.json").read_text(encoding="utf-8")
    assert '"sensors": "realistic"' in report
    assert main(base) == 2  # an ideal run into the realistic run's folder is refused, not mixed
    assert "--sensors realistic" in capsys.readouterr().err
