"""kill -9 at seeded points of `eval longact` and `record` (issue 16): nothing acknowledged is lost.

`eval longact` writes each report atomically and the summary after every episode, so a SIGKILL at
any moment leaves whole files only; the same command rerun into the same --out keeps every
finished report byte for byte and runs the rest. `record` writes its bag beside the final name
and moves it into place when complete, so a killed recording leaves no file under the final
name (never half a bag) and the rerun records it whole.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEV = REPO / "evaluation" / "data" / "episodes_dev"
# Three short oracle episodes (a few seconds each without rendering).
EPISODES = ("dev-090-0", "dev-097-1", "dev-098-0")


def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "worldmind.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _reports(out: Path) -> dict[str, bytes]:
    return {p.parent.name: p.read_bytes() for p in sorted(out.glob("*/report.json"))}


def _kill_when(proc: subprocess.Popen, ready, delay_s: float, limit_s: float = 240.0) -> None:
    """SIGKILL ``proc`` ``delay_s`` after ``ready()`` first holds (or when it exits by itself)."""
    end = time.monotonic() + limit_s
    while not ready() and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    time.sleep(delay_s)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.mark.parametrize("seed", [0, 1])
def test_eval_longact_killed_at_a_random_point_loses_no_finished_report(tmp_path: Path, seed: int) -> None:
    eps = tmp_path / "eps"
    eps.mkdir()
    for eid in EPISODES:
        shutil.copy(DEV / f"{eid}.json", eps / f"{eid}.json")
    out = tmp_path / "out"
    args = ["eval", "longact", "--episodes", str(eps), "--planner", "oracle", "--no-render", "--out", str(out)]
    rng = random.Random(seed)
    proc = _start(args, REPO)
    # Killed somewhere after the first episode finished: mid-episode, or while files are written.
    _kill_when(proc, lambda: (out / "summary.json").exists(), rng.uniform(0.0, 3.0))
    before = _reports(out)
    assert before, "the first episode's report should exist before the kill"
    for raw in before.values():
        json.loads(raw)  # whole files only: never a torn report
    json.loads((out / "summary.json").read_text())

    rerun = _start(args, REPO)
    assert rerun.wait(timeout=600) == 0
    after = _reports(out)
    assert sorted(after) == sorted(EPISODES)
    for eid, raw in before.items():
        assert after[eid] == raw, f"{eid}: a finished report changed on the rerun"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["count"] == len(EPISODES) and summary["skipped"] == {}


def test_record_killed_mid_recording_leaves_no_half_bag(tmp_path: Path) -> None:
    bag = tmp_path / "run.mcap"
    args = ["record", "--out", str(bag), "--max-steps", "400", "--width", "64", "--height", "48"]
    proc = _start(args, tmp_path)
    # Killed once the recording is under way (its temporary folder exists beside the bag).
    _kill_when(proc, lambda: any(p.name.startswith(".run.") for p in tmp_path.iterdir()), 1.0)
    assert not bag.exists(), "a killed recording must not leave a (half) bag under the final name"
    rerun = _start(args, tmp_path)
    assert rerun.wait(timeout=600) == 0 and bag.is_file()
    from sim_bridge.replay.bag import BagReader, FrameItem

    reader = BagReader(bag)
    frames = [i for i in reader if isinstance(i, FrameItem)]
    assert frames and reader.stats.error is None
