"""The evaluation executor (evaluation/executor.py) behind ``eval longact``.

Without Ray: the in-process executor turns a crashing task into a failed outcome; the experience
pool is shared in waves (one snapshot per wave, merged in episode order); an unreachable or
malformed ``--ray-address`` fails fast with exit status 2 and one line.

With Ray (skipped, with the reason, where Ray is not installed or ``unshare -n`` is not
permitted): every such test runs in a private network namespace holding only loopback, with
usage stats and the dashboard off, the node on 127.0.0.1 and a private auth token; it checks
identical per-episode reports with 1 and 2 workers (oracle, --no-render, short dev episodes), a
SIGKILLed worker retried once then recorded failed, a raising and an overlong task recorded
failed while the rest finish, and a simulated cluster (``ray start --head`` plus a worker node as
separate processes) joined with ``--ray-address``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from evaluation.executor import InProcessExecutor, Task
from planner.critic import Experience, ExperiencePool
from worldmind import cli
from worldmind.longact_job import PoolSnapshot, merge_experience, snapshot_pool

REPO = Path(__file__).resolve().parents[1]
DEV = REPO / "evaluation" / "data" / "episodes_dev"
SHORT = ("dev-000-0", "dev-001-1", "dev-003-0")  # three houses; cut to SHORT_STEPS steps to stay fast
SHORT_STEPS = 40
COMPARED = ("episode_id", "gc", "sr", "steps_nav", "steps_manip", "steps_total", "ir", "num_actions",
            "failed_actions", "checklist", "timeline", "agent_path")  # everything but wall_time_s
NETNS_SH = 'ip link set lo up && ip link set lo multicast on && exec "$@"'


# --- helpers -------------------------------------------------------------------------------------

def short_episodes(folder: Path, ids=SHORT, steps: int = SHORT_STEPS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for eid in ids:
        data = json.loads((DEV / f"{eid}.json").read_text(encoding="utf-8"))
        data["max_steps"] = steps
        (folder / f"{eid}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ray_problem() -> str | None:
    if importlib.util.find_spec("ray") is None:
        return "ray is not installed (pip install 'worldmind[ray]')"
    try:
        r = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare -n is not available: {exc}"
    return None if r.returncode == 0 else f"unshare -n is not permitted here (needs root): {r.stderr.strip()[:200]}"


needs_ray = pytest.mark.skipif(ray_problem() is not None, reason=str(ray_problem()))


def netns_env(tmp: Path) -> dict[str, str]:
    """Loopback-only Ray: no usage stats, a private token (never the user's ~/.ray one)."""
    token = tmp / "ray_token"
    token.write_text(secrets.token_hex(32), encoding="utf-8")
    token.chmod(0o600)
    env = dict(os.environ)
    paths = [str(REPO), str(REPO / "tests")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env.update({"PYTHONPATH": os.pathsep.join(paths), "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
                "RAY_AUTH_TOKEN_PATH": str(token), "PYTHONUNBUFFERED": "1"})
    return env


def in_netns(argv: list[str], tmp: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(["unshare", "-n", "sh", "-c", NETNS_SH, "sh", *argv], env=netns_env(tmp), cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def per_episode(out: Path) -> dict[str, dict]:
    reports = {}
    for path in sorted(out.glob("*/report.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        reports[data["episode_id"]] = {k: data[k] for k in COMPARED} | {"stop": data["extra"].get("stop_reason")}
    return reports


def longact_cmd(src: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "worldmind.cli", "eval", "longact", "--episodes", str(src), "--out", str(out),
            "--no-render", *extra]


# --- without Ray ---------------------------------------------------------------------------------

def _boom(x: int) -> int:
    if x == 1:
        raise ValueError("episode 1 is broken")
    return x + 10


def test_in_process_executor_records_a_crash_and_runs_the_rest():
    tasks = [Task(i, f"t{i}", i) for i in range(3)]
    outcomes = list(InProcessExecutor().run(_boom, tasks))
    assert [o.task.key for o in outcomes] == ["t0", "t1", "t2"]
    assert [o.value for o in outcomes] == [10, None, 12]
    assert not outcomes[1].ok and "ValueError" in outcomes[1].error and "episode 1 is broken" in outcomes[1].error


def test_merge_experience_adds_each_episodes_increments_in_order():
    pool = ExperiencePool(None)
    pool.entries = {e.key: e for e in [Experience("Open", "closed", "Fridge", "open", seen=2, validated=1)]}
    pool.attempts = {"Open|Fridge": 5}
    snap = snapshot_pool(pool)
    fridge0 = snap.entries[0]
    a = PoolSnapshot([dict(fridge0, seen=3, validated=2), {"action": "Pick", "situation": "out_of_reach",
                                                           "object_type": "Mug", "fix": "closer", "seen": 1,
                                                           "validated": 0}],
                     {"Open|Fridge": 7, "Pick|Mug": 2})
    b = PoolSnapshot([dict(fridge0, seen=4, validated=1), {"action": "Pick", "situation": "out_of_reach",
                                                           "object_type": "Mug", "fix": "closer (b)", "seen": 2,
                                                           "validated": 1}],
                     {"Open|Fridge": 5, "Pick|Mug": 3})
    merge_experience(pool, snap, a)
    merge_experience(pool, snap, b)
    fridge, mug = pool.entries["Open|closed|Fridge"], pool.entries["Pick|out_of_reach|Mug"]
    assert (fridge.seen, fridge.validated) == (2 + 1 + 2, 1 + 1 + 0)
    assert (mug.seen, mug.validated, mug.fix) == (3, 1, "closer")  # the first episode in order names the fix
    assert pool.attempts == {"Open|Fridge": 5 + 2 + 0, "Pick|Mug": 2 + 3}  # the tries grow by each one's count
    merge_experience(pool, snap, None)  # a planner without a pool changes nothing
    assert len(pool.entries) == 2 and pool.attempts == {"Open|Fridge": 7, "Pick|Mug": 5}


def test_experience_pool_is_one_snapshot_per_wave_merged_in_episode_order(tmp_path, monkeypatch):
    """Episodes of a wave all start from the pool as it was when the wave began; the next wave
    sees every earlier episode's lesson; the pool file holds them all afterwards."""
    from worldmind import cli_longact, longact_job

    src = short_episodes(tmp_path / "eps", steps=5)
    seen: dict[str, list[str]] = {}
    tries: dict[str, dict[str, int]] = {}
    real = longact_job.run_longact_job

    def learning_job(job, progress=None):
        seen[job.episode.id] = sorted(e["object_type"] for e in job.experience.entries)
        tries[job.episode.id] = dict(job.experience.attempts)
        output = real(longact_job.LongActJob(job.episode, dict(job.options, planner="oracle", no_render=True)),
                      progress=progress)
        output.result.planner = "deterministic"
        lesson = {"action": "Pick", "situation": "out_of_reach", "object_type": job.episode.id, "fix": "closer",
                  "seen": 1, "validated": 0}
        output.experience = longact_job.PoolSnapshot(
            list(job.experience.entries) + [lesson],
            dict(job.experience.attempts, **{f"Pick|{job.episode.id}": 2}))
        return output

    monkeypatch.setattr(cli_longact, "run_longact_job", learning_job)
    out = tmp_path / "out"
    assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(out), "--planner", "deterministic",
                     "--experience-wave", "2"]) == 0
    assert seen == {"dev-000-0": [], "dev-001-1": [], "dev-003-0": ["dev-000-0", "dev-001-1"]}
    assert tries["dev-003-0"] == {"Pick|dev-000-0": 2, "Pick|dev-001-1": 2}  # the tries travel with the entries
    pool = json.loads((out / "experience_pool.json").read_text())
    assert sorted(e["object_type"] for e in pool["entries"]) == list(SHORT)
    assert pool["attempts"] == {f"Pick|{e}": 2 for e in SHORT}


def test_with_several_slots_a_wave_is_handed_out_longest_first_and_reported_in_episode_order(tmp_path, monkeypatch):
    """Each wave's episodes go to the workers by their step budget, longest first (a long one
    drawn last would run alone while the other worker idles); the summary stays in episode
    order (the pool's merge order: the wave test above). One slot keeps the file order."""
    from evaluation.executor import InProcessExecutor
    from worldmind import cli_longact

    src = short_episodes(tmp_path / "eps", steps=5)
    for eid, budget in zip(SHORT, (5, 9, 7)):
        path = src / f"{eid}.json"
        data = json.loads(path.read_text())
        data["max_steps"] = budget
        path.write_text(json.dumps(data))
    handed: list[list[str]] = []

    class Recording(InProcessExecutor):
        def run(self, fn, tasks, progress=None):
            handed.append([t.key for t in tasks])
            yield from super().run(fn, tasks, progress)

    for slots, out in ((2, "two"), (1, "one")):
        executor = Recording()
        executor.slots = slots
        monkeypatch.setattr(cli_longact, "executor_from_args", lambda args, e=executor: e)
        assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(tmp_path / out), "--planner",
                         "oracle", "--no-render", "--experience-wave", "3"]) == 0
    assert handed == [[SHORT[1], SHORT[2], SHORT[0]], list(SHORT)]
    for out in ("two", "one"):
        summary = json.loads((tmp_path / out / "summary.json").read_text())
        assert [e["episode_id"] for e in summary["episodes"]] == list(SHORT)
    assert cli_longact.longest_first([0, 1, 2], [SimpleNamespace(max_steps=m) for m in (4, 4, 6)]) == [2, 0, 1]


def test_unreachable_ray_address_exits_2_quickly(tmp_path, capsys):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'worldmind[ray]')")
    src = short_episodes(tmp_path / "eps", ids=SHORT[:1], steps=5)
    address = f"127.0.0.1:{free_port()}"  # bound and released: nothing listens there
    started = time.monotonic()
    assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(tmp_path / "o"), "--no-render",
                     "--ray-address", address]) == 2
    assert time.monotonic() - started < 20
    err = capsys.readouterr().err
    assert address in err and "no Ray head answers" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o" / "summary.json").exists()


def test_malformed_ray_address_exits_2(tmp_path, capsys):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'worldmind[ray]')")
    src = short_episodes(tmp_path / "eps", ids=SHORT[:1], steps=5)
    assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(tmp_path / "o"), "--no-render",
                     "--ray-address", "ray://head"]) == 2
    assert "--ray-address 'ray://head'" in capsys.readouterr().err


def test_workers_must_be_positive(tmp_path, capsys):
    assert cli.main(["eval", "longact", "--episodes", str(DEV), "--out", str(tmp_path / "o"), "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err


# --- with Ray, in a private network namespace ----------------------------------------------------

@needs_ray
def test_one_and_two_workers_give_identical_per_episode_reports(tmp_path):
    src = short_episodes(tmp_path / "eps")
    script = " && ".join(" ".join(map(str, longact_cmd(src, tmp_path / name, *extra)))
                         for name, extra in (("w1", ("--workers", "1")), ("w2", ("--workers", "2")),
                                             ("inproc", ())))
    r = in_netns(["sh", "-c", script], tmp_path, timeout=400)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    one, two, here = (per_episode(tmp_path / n) for n in ("w1", "w2", "inproc"))
    assert sorted(one) == sorted(SHORT)
    assert one == two == here
    assert "Ray executor, 2 task(s) at a time" in r.stdout
    summaries = [json.loads((tmp_path / n / "summary.json").read_text()) for n in ("w1", "w2", "inproc")]
    assert [s["episodes"][i]["episode_id"] for s in summaries for i in range(3)] == list(SHORT) * 3
    assert summaries[0]["means"] == summaries[1]["means"] == summaries[2]["means"]


RAY_FAULTS = """
import json, sys
from evaluation.executor import RayExecutor, Task
import ray_tasks
marker = sys.argv[1]
ex = RayExecutor(workers=2, task_timeout_s=8)
try:
    out = {}
    for o in ex.run(ray_tasks.die_hard, [Task(0, "killed", marker)]):
        out[o.task.key] = o.error
    for o in ex.run(ray_tasks.square, [Task(i, f"sq{i}", i) for i in range(3)]):
        out[o.task.key] = o.value
    for o in ex.run(ray_tasks.raise_error, [Task(0, "raises", "bad episode")]):
        out[o.task.key] = o.error
    for o in ex.run(ray_tasks.sleep_for, [Task(0, "slow", 120.0), Task(1, "quick", 0.1)]):
        out[o.task.key] = o.error if o.error else o.value
finally:
    ex.close()
print("RESULT " + json.dumps(out))
"""


@needs_ray
def test_killed_worker_is_retried_once_then_recorded_failed(tmp_path):
    marker = tmp_path / "attempts.txt"
    started = time.monotonic()
    r = in_netns([sys.executable, "-c", RAY_FAULTS, str(marker)], tmp_path, timeout=240)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    out = json.loads(r.stdout.split("RESULT ", 1)[1])
    assert len(marker.read_text().split()) == 2  # first try and one retry, each in a fresh worker
    assert "worker died" in out["killed"] and "retried once" in out["killed"]
    assert [out[f"sq{i}"] for i in range(3)] == [0, 1, 4]  # the executor goes on after the deaths
    assert "RuntimeError" in out["raises"] and "bad episode" in out["raises"]
    assert "timed out after 8 s" in out["slow"] and out["quick"] == 0.1
    assert time.monotonic() - started < 200  # the overlong task was cancelled, never waited for


CLUSTER = """
set -u
T="$1"; SRC="$2"; OUT="$3"; PORT="$4"; RT="$5"
ray_bin="$(dirname "$PY")/ray"
setsid "$ray_bin" start --head --block --node-ip-address=127.0.0.1 --port="$PORT" --num-cpus=1 \\
  --include-dashboard=false --disable-usage-stats --temp-dir="$RT" >"$T/head.log" 2>&1 &
H=$!; echo $H >"$T/pgids"
setsid sh -c 'sleep 4; exec "$0" start --block --address=127.0.0.1:"$1" --node-ip-address=127.0.0.1 --num-cpus=1' \\
  "$ray_bin" "$PORT" >"$T/worker.log" 2>&1 &
W=$!; echo $W >>"$T/pgids"
cleanup() { kill -TERM -$W -$H 2>/dev/null; sleep 2; kill -KILL -$W -$H 2>/dev/null; }
trap cleanup EXIT
i=0; until timeout 20 "$PY" -c "import ray, sys; ray.init(address='127.0.0.1:$PORT', log_to_driver=False); \\
sys.exit(0 if len([n for n in ray.nodes() if n['Alive']]) >= 2 else 1)" >/dev/null 2>&1; do
  i=$((i+1))
  if [ $i -ge 6 ] || ! kill -0 $H 2>/dev/null; then echo "cluster did not come up"; tail -n 20 "$T/head.log" "$T/worker.log"; exit 3; fi
  sleep 2
done
timeout 150 "$PY" -m worldmind.cli eval longact --episodes "$SRC" --out "$OUT" --no-render --ray-address 127.0.0.1:"$PORT"
"""


def kill_groups(listing: Path) -> None:
    """Stop the head and worker process groups this test started (by id), if still there."""
    if not listing.exists():
        return
    for pgid in map(int, listing.read_text().split()):
        for sig in (15, 9):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            time.sleep(1)


@needs_ray
def test_simulated_cluster_head_and_worker_joined_with_ray_address(tmp_path):
    src = short_episodes(tmp_path / "eps", ids=SHORT[:2])
    runtime = tempfile.mkdtemp(prefix="wmray", dir="/tmp")  # Ray's socket paths must stay under 108 bytes
    argv = ["env", f"PY={sys.executable}", "bash", "-c", CLUSTER, "cluster", str(tmp_path), str(src),
            str(tmp_path / "out"), str(free_port()), runtime]
    try:
        r = in_netns(argv, tmp_path, timeout=330)
    finally:
        kill_groups(tmp_path / "pgids")
        shutil.rmtree(runtime, ignore_errors=True)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "Ray executor, 2 task(s) at a time" in r.stdout
    reports = per_episode(tmp_path / "out")
    assert sorted(reports) == sorted(SHORT[:2])
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["count"] == 2


def test_generate_records_a_crashed_pair_as_failed_not_infeasible(tmp_path, monkeypatch):
    """A task that crashes is a failure of this run (retried by the next), never written to the
    manifest as infeasible; the other pairs are generated."""
    import evaluation.generator as generator
    from evaluation.episodes import Episode

    def fake(house, ref, scenario, seed, eid, opts=None, asset_db=None, notes=None):
        if eid == "dev-000-1":
            raise MemoryError("simulated crash")
        return Episode.from_dict({"id": eid, "house": ref, "scenario": scenario,
                                  "instructions": {"detailed": "Turn on the lamp.", "concise": "Lamp."},
                                  "checklist": [{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}],
                                  "max_steps": 300, "oracle": {"steps_total": 10}})

    monkeypatch.setattr(generator, "generate_for_house", fake)
    written, failed = generator.generate_set("houses_dev.jsonl.gz", [0], tmp_path, per_house=3, seed=1)
    assert [p.name for p in written] == ["dev-000-0.json", "dev-000-2.json"]
    assert len(failed) == 1 and "MemoryError" in failed[0] and "simulated crash" in failed[0]
    manifest = tmp_path / generator.MANIFEST
    assert not manifest.exists() or "dev-000-1" not in manifest.read_text()


@needs_ray
def test_worldlines_on_two_workers_equals_in_process(tmp_path):
    """One task per house; rows and summary in house order whatever order the houses finish in."""
    base = [sys.executable, "-m", "worldmind.cli", "eval", "worldlines", "--houses", "0-2", "--days", "3",
            "--memory", "bm25", "--per-family", "3", "--plans", "2"]
    script = " && ".join(" ".join(base + ["--out", str(tmp_path / name), *extra])
                         for name, extra in (("here", []), ("ray", ["--workers", "2"])))
    r = in_netns(["sh", "-c", script], tmp_path, timeout=240)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]

    def load(name: str) -> dict:
        data = json.loads((tmp_path / name / "worldlines_bm25.json").read_text())
        data["timings"] = [t["house"] for t in data["timings"]]  # seconds differ; the house order must not
        return data

    here, ray = load("here"), load("ray")
    assert here["timings"] == [0, 1, 2] and here == ray
    for house in range(3):
        name = f"samples/house{house:03d}_qa.jsonl"
        assert (tmp_path / "here" / name).read_text() == (tmp_path / "ray" / name).read_text()


MEMORY_EVAL = """
import json, sys
from evaluation.executor import InProcessExecutor, RayExecutor, Task
from evaluation.memory_eval import MemoryEvalConfig
from evaluation.memory_eval import MemoryEvalJob, run_memory_eval_job
cfg = MemoryEvalConfig(max_viewpoints=2, move_objects=1, rotations=4, width=160, height=120)
tasks = [Task(0, "house 0", MemoryEvalJob("houses_dev.jsonl.gz", 0, cfg, 0.05, ("hash", None, None)))]
here = next(InProcessExecutor().run(run_memory_eval_job, tasks)).value
ex = RayExecutor(workers=1)
try:
    there = next(ex.run(run_memory_eval_job, tasks)).value
finally:
    ex.close()
for got in (here, there):
    got["result"].pop("wall_time_s")
    for phase in ("explored", "after_move"):
        got["result"][phase].pop("timing")
print("RESULT " + json.dumps({"same_result": here["result"] == there["result"],
                              "files": sorted(there["files"]),
                              "same_png": here["files"]["memory_topdown.png"] == there["files"]["memory_topdown.png"]}))
"""


@needs_ray
def test_memory_eval_house_on_a_ray_worker_equals_in_process(tmp_path):
    r = in_netns([sys.executable, "-c", MEMORY_EVAL], tmp_path, timeout=240)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    out = json.loads(r.stdout.split("RESULT ", 1)[1])
    assert out == {"same_result": True, "same_png": True,
                   "files": ["memory_eval.json", "memory_topdown.png", "memory_topdown_moved.png"]}


def test_a_crashing_episode_is_recorded_failed_and_retried_by_the_rerun(tmp_path, monkeypatch, capsys):
    from worldmind import cli_longact, longact_job

    src = short_episodes(tmp_path / "eps", ids=SHORT[:2], steps=5)
    out = tmp_path / "out"
    real = longact_job.run_longact_job

    def crashing(job, progress=None):
        if job.episode.id == SHORT[0]:
            raise MemoryError("simulated out of memory")
        return real(job, progress=progress)

    monkeypatch.setattr(cli_longact, "run_longact_job", crashing)
    argv = ["eval", "longact", "--episodes", str(src), "--out", str(out), "--no-render"]
    assert cli.main(argv) == 1  # the run finishes, and says that it is incomplete
    record = json.loads((out / SHORT[0] / "failed.json").read_text())
    assert record["episode"] == SHORT[0] and "MemoryError" in record["reason"] and record["executor"] == "in-process"
    assert json.loads((out / "summary.json").read_text())["count"] == 1
    assert f"1 failed: {SHORT[0]}" in capsys.readouterr().out

    monkeypatch.setattr(cli_longact, "run_longact_job", real)
    assert cli.main(argv) == 0  # the rerun runs only the failed episode, and clears its record
    assert not (out / SHORT[0] / "failed.json").exists()
    assert json.loads((out / "summary.json").read_text())["count"] == 2


NO_IMPORT = """
import os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])  # the checkout, for this driver only
import evaluation.executor as executor
shadow = Path(sys.argv[1])
os.environ["PYTHONPATH"] = str(shadow)
(shadow / "evaluation").mkdir(parents=True)
(shadow / "evaluation" / "__init__.py").write_text("raise ImportError('this node has no worldmind')")
executor.REPO_ROOT = shadow  # the workers' path now starts with a checkout that cannot be imported
try:
    executor.RayExecutor(workers=1, connect_timeout_s=90)
except executor.ExecutorError as exc:
    print("RESULT " + str(exc))
"""


@needs_ray
def test_workers_that_cannot_import_the_project_give_a_clear_error(tmp_path):
    started = time.monotonic()
    env = netns_env(tmp_path)
    env.pop("PYTHONPATH")
    r = subprocess.run(["unshare", "-n", "sh", "-c", NETNS_SH, "sh", sys.executable, "-c", NO_IMPORT,
                        str(tmp_path / "shadow"), str(REPO)], env=env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=200)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    message = r.stdout.split("RESULT ", 1)[1]
    assert "Ray workers cannot import the project" in message and str(tmp_path / "shadow") in message
    assert "failed to import on the worker" in message  # Ray's own words for the probe it could not load
    assert time.monotonic() - started < 150


SLOW_PROBE = """
import sys, time
sys.path.insert(0, sys.argv[1])
import evaluation.executor as executor

def slow_probe():
    time.sleep(120)
    return ""

executor._probe_import = slow_probe  # a worker that starts but does not answer in time
started = time.monotonic()
try:
    executor.RayExecutor(workers=1, connect_timeout_s=20)
except executor.ExecutorError as exc:
    print(f"RESULT {time.monotonic() - started:.1f} {exc}")
"""


@needs_ray
def test_workers_that_do_not_answer_in_time_are_not_called_an_import_failure(tmp_path):
    """A busy machine makes the first worker slow; the error says so instead of blaming the
    project's install, and the driver gives up after connect_timeout_s instead of hanging."""
    r = in_netns([sys.executable, "-c", SLOW_PROBE, str(REPO)], tmp_path, timeout=200)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    elapsed, message = r.stdout.split("RESULT ", 1)[1].split(" ", 1)
    assert "did not answer within 20 s" in message and "cannot import" not in message
    assert float(elapsed) < 60
