"""An interrupted ``worldmind record`` (issue 32): Ctrl-C, SIGTERM or an error mid-run never leaves a
bag under the final --out name that replays as a whole run. The frames so far are kept as
``<name>.partial.mcap``, which ``replay`` names as partial (with its frame count) and exits 1 on;
no temporary folder stays behind; a 0-frame recording leaves nothing; a rerun is not refused.
Real processes, each in its own process group, killed by group at the end."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli_process import start_cli
# long enough that no idle machine finishes it before the signal (400 steps took under 1.5 s)
ARGS = ["--max-steps", "3000", "--width", "64", "--height", "48"]


def _signal_mid_recording(proc: subprocess.Popen, folder: Path, sig: int, delay_s: float = 1.5) -> tuple[str, str]:
    end = time.monotonic() + 120
    try:
        while (not any(p.name.startswith(".run.rec") for p in folder.iterdir()) and proc.poll() is None
               and time.monotonic() < end):
            time.sleep(0.05)
        time.sleep(delay_s)
        assert proc.poll() is None, "the recording ended before it could be interrupted"
        os.killpg(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
        return out, err
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_record_keeps_a_partial_bag_that_replay_names(tmp_path: Path, sig: int) -> None:
    bag = tmp_path / "run.mcap"
    proc = start_cli(["record", "--out", str(bag), *ARGS], tmp_path)
    _out, err = _signal_mid_recording(proc, tmp_path, sig)
    assert proc.returncode == 130, err
    assert not bag.exists(), "an interrupted recording must not be under the final name"
    partial = tmp_path / "run.partial.mcap"
    assert partial.is_file() and str(partial) in err
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".run.")], "temporary folder left behind"
    from sim_bridge.replay.bag import BagReader, FrameItem

    reader = BagReader(partial)
    n = sum(isinstance(i, FrameItem) for i in reader)
    assert n > 0 and reader.stats.error is None
    rep = start_cli(["replay", str(partial), "--out", str(tmp_path / "rep")], tmp_path)
    _o, rerr = rep.communicate(timeout=300)
    assert rep.returncode == 1 and "partial recording" in rerr and str(partial) in rerr and f"{n} frame(s)" in rerr
    # a rerun is not refused for the leftover, and a second interruption does not overwrite the first
    rerun = start_cli(["record", "--out", str(bag), *ARGS], tmp_path)
    _signal_mid_recording(rerun, tmp_path, sig, delay_s=0.5)
    assert (tmp_path / "run.partial-2.mcap").is_file() and partial.is_file() and not bag.exists()


def test_a_killed_record_leaves_its_temporary_folder_for_the_next_one_to_remove(tmp_path: Path) -> None:
    bag = tmp_path / "run.mcap"
    proc = start_cli(["record", "--out", str(bag), *ARGS], tmp_path)
    _signal_mid_recording(proc, tmp_path, signal.SIGKILL, delay_s=0.5)
    assert not bag.exists() and [p for p in tmp_path.iterdir() if p.name.startswith(".run.rec")]
    from sim_bridge.replay.bag import BagWriter

    with BagWriter(bag):  # 0 frames, completed: an empty but whole bag; the dead one's folder is gone
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".run.rec") and str(os.getpid()) not in p.name]


def test_a_failing_recording_with_no_frame_leaves_nothing(tmp_path: Path) -> None:
    from sim_bridge.replay.bag import BagWriter

    bag = tmp_path / "run.mcap"
    with pytest.raises(RuntimeError):
        with BagWriter(bag):
            raise RuntimeError("crash before the first frame")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_bag_is_written_beside_and_moved_into_place(tmp_path: Path) -> None:
    from household.types import Action
    from evaluation.dev_set import default_episode_file
    from evaluation.episodes import load_episode
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
    from sim_bridge.replay.bag import BagReader, BagWriter, FrameItem

    env = EmbeddedEnvironment(EmbeddedConfig(width=32, height=24))
    obs = env.reset(load_episode(default_episode_file()))
    bag = tmp_path / "runbag"
    with pytest.raises(KeyboardInterrupt):
        with BagWriter(bag) as w:
            w.write_observation(obs)
            assert not bag.exists()
            raise KeyboardInterrupt
    partial = tmp_path / "runbag.partial"
    assert not bag.exists() and partial.is_dir()
    reader = BagReader(partial)
    assert sum(isinstance(i, FrameItem) for i in reader) == 1
    assert "/worldmind/recording_interrupted" in reader.stats.ignored_topics
    with BagWriter(bag) as w:
        w.write_observation(env.step(Action("RotateLeft")).observation)
    assert bag.is_dir() and sorted(p.name for p in tmp_path.iterdir()) == ["runbag", "runbag.partial"]


def test_record_refuses_a_huge_frame_before_rendering(tmp_path: Path) -> None:
    proc = start_cli(["record", "--out", str(tmp_path / "w.mcap"), "--width", "100000"], tmp_path)
    _o, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "--width 100000" in err and not list(tmp_path.iterdir())
