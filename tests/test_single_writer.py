"""Issue 32: one writer per belief log, one run per output folder; a second one is refused with the
holder's PID, readers stay allowed, and the lock goes with its holder (kill -9 included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from household.locks import LockHeld, acquire
from memory.belief import BeliefTracker
from memory.belief.log import DurableLog, LogFormatError

ROOT = Path(__file__).resolve().parents[1]
_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

_HOLDER = r"""
import sys, time
from memory.belief import BeliefTracker
tr = BeliefTracker(sys.argv[1])
tr.ingest([{"id": "first", "t": 1.0, "actor": "robot", "kind": "observation", "action": "inspect",
            "observers": [], "effects": [["mug_1", "location", "table"]]}])
print("ready", flush=True)
time.sleep(60)
"""


def _event(i: int) -> dict:
    return {"id": f"e{i}", "t": float(i), "actor": "robot", "kind": "observation", "action": "inspect",
            "observers": [], "effects": [["mug_1", "location", f"t_{i}"]]}


def _start_holder(log: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(log)], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT, env=_ENV, start_new_session=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # bounded: the holder prints at once or dies (EOF)
    assert line.strip() == "ready", line
    return proc


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def test_a_second_writer_process_is_refused_naming_the_log_and_the_holder_pid(tmp_path):
    log = tmp_path / "log.jsonl"
    proc = _start_holder(log)
    try:
        with pytest.raises(LockHeld) as err:
            BeliefTracker.open(log)
        assert str(log) in str(err.value) and f"process {proc.pid}" in str(err.value)
        # a reader is allowed, sees the acknowledged event and cuts nothing
        size = log.stat().st_size
        reader = BeliefTracker.open(log, read_only=True)
        assert reader.event_by_id("first") is not None
        assert reader.ingest([_event(1)]).acknowledged == []
        reader.close()
        assert log.stat().st_size == size
    finally:
        _stop(proc)
    # the holder was killed with -9: the kernel released its lock; a relaunch writes and keeps "first"
    tr = BeliefTracker.open(log)
    assert tr.ingest([_event(2)]).acknowledged == ["e2"]
    tr.close()
    again = BeliefTracker.open(log)
    assert again.event_by_id("first") is not None and again.event_by_id("e2") is not None
    assert again.log is not None and again.log.problems == []
    again.close()


def test_two_writers_in_one_process_are_refused_and_close_releases(tmp_path):
    path = tmp_path / "log.jsonl"
    first = DurableLog(path)
    with pytest.raises(LockHeld, match=f"process {os.getpid()}"):
        DurableLog(path)
    first.close()
    DurableLog(path).close()


def test_a_reader_does_not_cut_a_record_in_progress(tmp_path):
    path = tmp_path / "log.jsonl"
    tr = BeliefTracker(path)
    tr.ingest([_event(0)])
    tr.close()
    with open(path, "ab") as fh:
        fh.write(b'{"id": "e1", "t"')  # a writer's line half written
    reader = DurableLog(path, writable=False)
    assert [r["id"] for _, r in reader.scan()] == ["e0"] and reader.problems == []
    with pytest.raises(LogFormatError, match="read-only"):
        reader.append(_event(3))
    reader.close()
    assert path.read_bytes().endswith(b'"t"')


def test_shared_holders_exclude_an_exclusive_one(tmp_path):
    lock = tmp_path / ".lock"
    a = acquire(lock, "run folder x", shared=True)
    b = acquire(lock, "run folder x", shared=True)
    with pytest.raises(LockHeld, match="run folder x: in use by"):
        acquire(lock, "run folder x")
    a.release()
    b.release()
    acquire(lock, "run folder x").release()
    assert lock.exists()  # never unlinked (see household/locks.py)


def test_lock_wait_is_not_blocking(tmp_path):
    lock = acquire(tmp_path / ".lock", "x")
    t0 = time.monotonic()
    with pytest.raises(LockHeld):
        acquire(tmp_path / ".lock", "x")
    assert time.monotonic() - t0 < 1.0
    lock.release()


_POOL_WRITER = r"""
import sys
from planner.critic import ExperiencePool
pool = ExperiencePool.load(sys.argv[1])
tag, n = sys.argv[2], int(sys.argv[3])
for i in range(n):
    pool.record("OpenObject", "closed", f"{tag}{i}", "open")
    shared = pool.record("PutObject", "closed", "Fridge", "open")
    pool.attempted("PickupObject", "Mug")
    pool.validate(shared)  # validate() saves
pool.save()
"""


def test_two_processes_saving_one_experience_pool_lose_no_entry_or_count(tmp_path):
    from planner.critic import ExperiencePool

    path = tmp_path / "experience_pool.json"
    n = 40
    procs = [subprocess.Popen([sys.executable, "-c", _POOL_WRITER, str(path), tag, str(n)], cwd=ROOT, env=_ENV,
                              start_new_session=True) for tag in ("A", "B")]
    try:
        assert [p.wait(timeout=120) for p in procs] == [0, 0]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
    pool = ExperiencePool.load(path)
    assert {f"OpenObject|closed|{t}{i}" for t in "AB" for i in range(n)} <= set(pool.entries)
    shared = pool.entries["PutObject|closed|Fridge"]
    assert (shared.seen, shared.validated) == (2 * n, 2 * n)
    assert pool.attempts == {"PickupObject|Mug": 2 * n}  # the tries merge as the counts do


def test_a_pool_saved_twice_in_one_process_does_not_double_count(tmp_path):
    from planner.critic import ExperiencePool

    path = tmp_path / "pool.json"
    pool = ExperiencePool.load(path)
    exp = pool.record("OpenObject", "closed", "Fridge", "open")
    pool.save()
    pool.save()
    other = ExperiencePool.load(path)
    other.validate(other.entries[exp.key])
    pool.validate(exp)
    again = ExperiencePool.load(path).entries[exp.key]
    assert (again.seen, again.validated) == (1, 2) and (exp.seen, exp.validated) == (1, 2)


def test_a_pool_given_as_a_symbolic_link_is_written_through_it(tmp_path):
    """Issue 32: saving through a link to a shared pool replaced the link by a private copy."""
    from planner.critic import ExperiencePool

    shared = tmp_path / "shared" / "pool.json"
    shared.parent.mkdir()
    first = ExperiencePool.load(shared)
    first.record("OpenObject", "closed", "Fridge", "open")
    first.save()
    link = tmp_path / "run" / "experience_pool.json"
    link.parent.mkdir()
    link.symlink_to(shared)
    pool = ExperiencePool.load(link)
    pool.record("OpenObject", "closed", "Cabinet", "open")
    pool.save()
    assert link.is_symlink() and link.resolve() == shared.resolve()
    types = {e.object_type for e in ExperiencePool.load(shared).entries.values()}
    assert types == {"Fridge", "Cabinet"}
    assert (shared.parent / "pool.json.lock").exists() and not (link.parent / "experience_pool.json.lock").exists()
