"""Issue 32: exit 0 means your result. One run per --out (a second concurrent one is refused with
the holder's PID; a killed holder's lock is gone), no run over its own inputs, one report folder
per episode id, and a rerun never reuses a report made for other inputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from worldmind import cli
from worldmind.cli_common import safe_dir_name

ROOT = Path(__file__).resolve().parents[1]
ONE_LAMP = [{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}]
TWO_LAMPS = [{"object": {"type": "FloorLamp", "count": 2}, "predicate": "isToggled"}]

_HOLD_RUN = r"""
import sys, time
from worldmind.run_folder import lock_run_folder
lock = lock_run_folder(sys.argv[1], "eval longact")
print("ready", flush=True)
time.sleep(60)
"""


def episode(eid: str, checklist: list | None = None) -> dict:
    return {"id": eid, "house": {"file": "houses_dev.jsonl.gz", "index": 0}, "scenario": "test",
            "instructions": {"detailed": "Turn on the floor lamp.", "concise": "Lamp on."},
            "checklist": checklist or ONE_LAMP, "max_steps": 300}


def write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_second_run_into_one_out_is_refused_and_a_killed_holder_frees_it(tmp_path, capsys):
    src = tmp_path / "eps"
    src.mkdir()
    write(src / "a.json", episode("tiny-a"))
    out = tmp_path / "out"
    argv = ["eval", "longact", "--episodes", str(src), "--out", str(out), "--no-render"]
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_RUN, str(out)], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert f"--out {out}" in err and f"process {holder.pid}" in err and "Traceback" not in err
        assert not (out / "summary.json").exists()
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
    assert cli.main(argv) == 0  # the kernel dropped the killed holder's lock
    assert json.loads((out / "summary.json").read_text())["count"] == 1
    assert cli.main(argv) == 0 and "resuming" in capsys.readouterr().out  # and released at our own exit


def test_a_shard_excludes_a_full_run_and_the_same_shard(tmp_path, capsys):
    from worldmind.run_folder import lock_run_folder

    src = tmp_path / "eps"
    src.mkdir()
    write(src / "a.json", episode("tiny-a"))
    out = tmp_path / "out"
    with lock_run_folder(out, "eval longact", (0, 2)):
        assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(out), "--no-render"]) == 2
        assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(out), "--no-render",
                         "--shard", "0/2"]) == 2
        assert "shard 0/2" in capsys.readouterr().err
        assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(out), "--no-render",
                         "--shard", "1/2"]) == 0


def test_out_holding_the_inputs_is_refused_before_running(tmp_path, capsys):
    src = tmp_path / "eps"
    src.mkdir()
    write(src / "a.json", episode("tiny-a"))
    before = (src / "a.json").read_bytes()
    assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(src), "--no-render"]) == 2
    assert f"--out {src}" in capsys.readouterr().err
    (tmp_path / "out").mkdir()
    summary_named = write(tmp_path / "out" / "summary.json", episode("tiny-s"))
    assert cli.main(["eval", "longact", "--episodes", str(summary_named), "--out", str(tmp_path / "out"),
                     "--no-render"]) == 2
    assert str(summary_named) in capsys.readouterr().err
    assert (src / "a.json").read_bytes() == before and json.loads(summary_named.read_text())["id"] == "tiny-s"
    assert sorted(p.name for p in src.iterdir()) == ["a.json"]


def test_report_folder_names_are_distinct_and_safe():
    ids = ["x/y", "x_y", "x%2Fy", "..", ".", "episode", "summary.json", ".lock", "a\x1b[31mb", "é", "x" * 400,
           "x" * 401, "dev-003-0"]
    names = [safe_dir_name(i) for i in ids]
    assert len(set(names)) == len(ids)
    for name in names:
        assert "/" not in name and not name.startswith(".") and len(name) <= 120
        assert all(0x20 < ord(c) < 0x7F for c in name)
    assert safe_dir_name("dev-003-0") == "dev-003-0"  # ordinary ids keep their folders


def test_ids_that_shared_a_folder_get_one_report_each(tmp_path):
    src = tmp_path / "eps"
    src.mkdir()
    write(src / "a.json", episode("x/y"))
    write(src / "b.json", episode("x_y"))
    out = tmp_path / "out"
    assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(out), "--no-render"]) == 0
    ids = {json.loads(p.read_text())["episode_id"] for p in out.glob("*/report.json")}
    assert ids == {"x/y", "x_y"}


def test_duplicate_ids_in_a_selection_are_refused(tmp_path, capsys):
    src = tmp_path / "eps"
    src.mkdir()
    write(src / "a.json", episode("same"))
    write(src / "b.json", episode("same", TWO_LAMPS))
    assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(tmp_path / "o"), "--no-render"]) == 2
    err = capsys.readouterr().err
    assert "duplicate episode id" in err and "b.json" in err
    assert not (tmp_path / "o" / "summary.json").exists()


def _evaluated_once(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """One episode "tiny-a" evaluated into ``out``: (episodes folder, out, the command's argv)."""
    src = tmp_path / "eps"
    src.mkdir()
    write(src / "a.json", episode("tiny-a"))
    out = tmp_path / "out"
    argv = ["eval", "longact", "--episodes", str(src), "--out", str(out), "--no-render"]
    assert cli.main(argv) == 0
    return src, out, argv


def test_a_rerun_with_an_edited_episode_or_other_options_does_not_reuse_reports(tmp_path, capsys):
    src, out, argv = _evaluated_once(tmp_path)
    report = (out / "tiny-a" / "report.json").read_text()
    assert json.loads(report)["extra"]["resume_key"]["episode_sha256"]
    capsys.readouterr()
    assert cli.main(argv + ["--move-step", "0.5"]) == 2
    assert "move_step: stored None, this run 0.5" in capsys.readouterr().err
    assert cli.main(argv + ["--object-memory", "spatial"]) == 2  # another object memory is another agent
    assert "object_memory: stored 'tracker', this run 'spatial'" in capsys.readouterr().err
    write(src / "a.json", episode("tiny-a", TWO_LAMPS))
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "episode_sha256" in err and str(out / "tiny-a" / "report.json") in err
    assert (out / "tiny-a" / "report.json").read_text() == report  # never overwritten


def test_a_second_replay_into_one_out_is_refused(tmp_path, capsys):
    from worldmind.run_folder import lock_run_folder

    bag = tmp_path / "x.mcap"
    bag.write_bytes(b"not read: the lock is checked first")
    out = tmp_path / "r"
    with lock_run_folder(out, "replay"):
        assert cli.main(["replay", str(bag), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--out {out}" in err and f"process {os.getpid()}" in err
    assert not (out / "replay.json").exists()


def test_a_second_single_run_into_one_out_is_refused(tmp_path, capsys):
    from worldmind.run_folder import lock_run_folder

    ep = write(tmp_path / "a.json", episode("tiny-run"))
    out = tmp_path / "one"
    with lock_run_folder(out, "run"):
        assert cli.main(["run", "--episode", str(ep), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--out {out}" in err and f"process {os.getpid()}" in err
    assert not (out / "report.json").exists()


def test_escape_codes_in_ids_and_instructions_are_not_echoed_raw(tmp_path, capsys):
    evil = "\x1b]0;pwned\x07\x1b[2J"
    src = tmp_path / "eps"
    src.mkdir()
    data = episode(f"id{evil}")
    data["instructions"]["detailed"] = f"Turn on the floor lamp.{evil}"
    write(src / "a.json", data)
    write(src / "b.json", dict(episode("bad"), checklist=[{"object": {"type": f"Toaster{evil}"}, "predicate": "isToggled"}]))
    assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(tmp_path / "o"), "--no-render"]) == 0
    assert cli.main(["run", "--episode", str(src / "a.json"), "--out", str(tmp_path / "r"), "--no-render"]) == 0
    captured = capsys.readouterr()
    for stream in (captured.out, captured.err):
        assert "\x1b" not in stream and "\x07" not in stream
    assert "id\\x1b]0;pwned\\x07" in captured.out and "Toaster\\x1b" in captured.err


def test_a_report_written_before_resume_keys_is_reused_only_for_the_checklist_it_scored(tmp_path, capsys):
    src, out, argv = _evaluated_once(tmp_path)
    path = out / "tiny-a" / "report.json"
    old = json.loads(path.read_text())
    del old["extra"]["resume_key"]  # as written before the key existed
    path.write_text(json.dumps(old))
    capsys.readouterr()
    assert cli.main(argv) == 0  # same checklist: reused, not run again (a rerun would write a key)
    assert json.loads(path.read_text()) == old
    write(src / "a.json", episode("tiny-a", TWO_LAMPS))
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "written before resume keys" in err and str(path) in err
    assert json.loads(path.read_text()) == old  # never overwritten
