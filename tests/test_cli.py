"""Behaviour of the ``worldmind`` command line: run, eval longact (with resume), generate's
argument handling, and the error paths (exit status 2, one clear line, no traceback)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation import dev_set, runner
from worldmind import cli

REPO = Path(__file__).resolve().parents[1]
REQUIRED_KEYS = {"gc", "sr", "steps_nav", "steps_manip", "steps_total", "ir", "checklist"}


def episode_dict(eid: str, checklist: list[dict], index: int = 0) -> dict:
    return {
        "id": eid,
        "house": {"file": "houses_dev.jsonl.gz", "index": index},
        "scenario": "test",
        "instructions": {"detailed": "Turn on both floor lamps.", "concise": "Lamps on."},
        "checklist": checklist,
        "max_steps": 300,
    }


# House 0 has two floor lamps, one on at the start: asking for both makes the oracle walk and act.
LAMPS = [{"object": {"type": "FloorLamp", "count": 2}, "predicate": "isToggled"}]
ONE_LAMP = [{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}]


def write_episode(path: Path, eid: str, checklist: list[dict]) -> Path:
    path.write_text(json.dumps(episode_dict(eid, checklist)), encoding="utf-8")
    return path


def test_run_writes_reports_and_summary(tmp_path, capsys):
    ep = write_episode(tmp_path / "lamps.json", "cli-lamps", LAMPS)
    out = tmp_path / "out"
    assert cli.main(["run", "--episode", str(ep), "--out", str(out), "--no-render"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert REQUIRED_KEYS <= set(report)
    assert report["gc"] == 1.0 and report["sr"] == 1.0
    assert report["steps_manip"] >= 1 and report["steps_total"] == report["steps_nav"] + report["steps_manip"]
    assert report["episode_id"] == "cli-lamps" and report["planner"] == "oracle"
    assert (out / "report.md").read_text().startswith("# Episode `cli-lamps`")
    assert (out / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "GC 1.000" in printed and "SR 1" in printed and str(out / "report.json") in printed


def test_run_defaults_to_first_committed_episode_and_runs_dir(tmp_path, monkeypatch):
    episodes = tmp_path / "episodes_dev"
    episodes.mkdir()
    write_episode(episodes / "b.json", "second", LAMPS)
    write_episode(episodes / "a.json", "first", ONE_LAMP)
    monkeypatch.setattr(dev_set, "DEMO_EPISODES_DIR", episodes)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "--no-render"]) == 0
    assert json.loads((tmp_path / "runs" / "first" / "report.json").read_text())["gc"] == 1.0
    assert not (tmp_path / "runs" / "second").exists()


def test_run_without_committed_episodes_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(dev_set, "DEMO_EPISODES_DIR", tmp_path / "nothing")
    assert cli.main(["run"]) == 2
    assert "--episode" in capsys.readouterr().err


def test_unknown_planner_exits_2_and_lists_planners(tmp_path, capsys):
    ep = write_episode(tmp_path / "e.json", "e", ONE_LAMP)
    assert cli.main(["run", "--episode", str(ep), "--planner", "holomind", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "holomind" in err and "oracle" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_missing_episode_file_exits_2_naming_it(tmp_path, capsys):
    missing = tmp_path / "no-such-episode.json"
    assert cli.main(["run", "--episode", str(missing)]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and len(err.strip().splitlines()) == 1


def test_absent_object_type_exits_2_naming_episode_and_item(tmp_path, capsys):
    checklist = ONE_LAMP + [{"object": {"type": "Toaster"}, "predicate": "isToggled"}]
    ep = write_episode(tmp_path / "toaster.json", "cli-toaster", checklist)
    assert cli.main(["run", "--episode", str(ep), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "cli-toaster" in err and "checklist[1].object.type" in err and "Toaster" in err
    assert not (tmp_path / "o").exists()


def test_malformed_episode_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "x", ', encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "worldmind.cli", "run", "--episode", str(bad)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert str(bad) in proc.stderr and "malformed JSON" in proc.stderr and "Traceback" not in proc.stderr


def test_eval_longact_writes_summary_and_resumes(tmp_path, monkeypatch, capsys):
    src = tmp_path / "episodes"
    src.mkdir()
    write_episode(src / "a.json", "tiny-a", ONE_LAMP)
    write_episode(src / "b.json", "tiny-b", LAMPS)
    out = tmp_path / "eval"
    calls: list[str] = []
    real = runner.run_episode

    def counting(env, agent, episode, **kw):
        calls.append(episode.id)
        return real(env, agent, episode, **kw)

    monkeypatch.setattr(runner, "run_episode", counting)
    argv = ["eval", "longact", "--episodes", str(src), "--out", str(out), "--no-render"]
    assert cli.main(argv) == 0
    assert calls == ["tiny-a", "tiny-b"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["count"] == 2 and summary["means"]["gc"] == 1.0
    assert {r["episode_id"] for r in summary["episodes"]} == {"tiny-a", "tiny-b"}
    assert (out / "summary.md").exists()
    first = {eid: (out / eid / "report.json").read_text() for eid in ("tiny-a", "tiny-b")}

    # Rerun: both reports exist, so nothing runs again and nothing stored changes.
    assert cli.main(argv) == 0
    assert calls == ["tiny-a", "tiny-b"]
    assert {eid: (out / eid / "report.json").read_text() for eid in first} == first
    assert json.loads((out / "summary.json").read_text())["count"] == 2
    assert "resuming" in capsys.readouterr().out

    # An interrupted run (one report missing) runs only the missing episode.
    (out / "tiny-b" / "report.json").unlink()
    assert cli.main(argv) == 0
    assert calls == ["tiny-a", "tiny-b", "tiny-b"]

    # Reports of another instruction kind are never overwritten.
    assert cli.main(argv + ["--instruction", "concise"]) == 2
    assert "use another --out" in capsys.readouterr().err


def test_eval_longact_reports_bad_episodes_and_goes_on(tmp_path, capsys):
    src = tmp_path / "episodes"
    src.mkdir()
    write_episode(src / "a.json", "ok", ONE_LAMP)
    (src / "b.json").write_text('{"id": "broken"}', encoding="utf-8")
    write_episode(src / "c.json", "no-toaster", [{"object": {"type": "Toaster"}, "predicate": "isToggled"}])
    assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(tmp_path / "o"), "--no-render"]) == 0
    err = capsys.readouterr().err
    assert "b.json" in err and "no-toaster" in err and "Toaster" in err
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["count"] == 1


def test_a_damaged_earlier_report_is_named_not_dropping_the_others(tmp_path, capsys):
    """A NaN (or garbage) in one stored report.json used to shrink the summary to the episodes
    before it and crash every rerun: now it is skipped, named, and never overwritten."""
    src = tmp_path / "episodes"
    src.mkdir()
    for name in ("a", "b", "c"):
        write_episode(src / f"{name}.json", f"tiny-{name}", ONE_LAMP)
    out = tmp_path / "eval"
    argv = ["eval", "longact", "--episodes", str(src), "--out", str(out), "--no-render"]
    assert cli.main(argv) == 0
    report = out / "tiny-a" / "report.json"
    damaged = report.read_text().replace('"gc": 1.0', '"gc": NaN', 1)
    report.write_text(damaged)
    (out / "tiny-b" / "report.json").write_text("{not json")
    capsys.readouterr()
    assert cli.main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["count"] == 1 and summary["episodes"][0]["episode_id"] == "tiny-c"
    assert set(summary["skipped"]) == {"tiny-a", "tiny-b"} and "'gc' is nan" in summary["skipped"]["tiny-a"]
    assert "tiny-a" in (out / "summary.md").read_text()
    assert report.read_text() == damaged  # not overwritten by a rerun
    assert "Traceback" not in capsys.readouterr().err


def test_a_damaged_houses_file_skips_its_episodes_and_the_rest_run(tmp_path, capsys):
    import gzip

    houses = tmp_path / "houses.jsonl.gz"
    good = Path(REPO, "household", "data", "houses_dev.jsonl.gz")
    with gzip.open(good, "rb") as fh:
        first = fh.readline()
    houses.write_bytes(gzip.compress(first + first)[:-40])  # truncated: house 1 is cut off
    src = tmp_path / "episodes"
    src.mkdir()
    write_episode(src / "a.json", "tiny-a", ONE_LAMP)
    ep = json.loads((src / "a.json").read_text())
    ep.update(id="cut-off", house={"file": str(houses), "index": 1})
    (src / "b.json").write_text(json.dumps(ep))
    assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(tmp_path / "o"), "--no-render"]) == 0
    err = capsys.readouterr().err
    assert "damaged or truncated gzip" in err and str(houses) in err and "Traceback" not in err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["count"] == 1 and "cut-off" in summary["skipped"]


def test_eval_longact_missing_source_exits_2(tmp_path, capsys):
    assert cli.main(["eval", "longact", "--episodes", str(tmp_path / "none"), "--out", str(tmp_path / "o")]) == 2
    assert str(tmp_path / "none") in capsys.readouterr().err


def test_parse_indices():
    assert cli.parse_indices("0-3,12,15-16") == [0, 1, 2, 3, 12, 15, 16]
    assert cli.parse_indices(" 2 , 2-3 ") == [2, 3]
    for bad in ("3-1", "a", "1,,2", "-2"):
        with pytest.raises(cli.CliError):
            cli.parse_indices(bad)
    # issue 32: a huge range is refused before it is expanded (it built 3 GB of indices)
    with pytest.raises(cli.CliError, match="beyond the last index accepted"):
        cli.parse_indices("0-999999999")
    assert len(cli.parse_indices("0-99999")) == 100_000


def test_generate_rejects_bad_indices(tmp_path, capsys):
    argv = ["generate", "--houses", "houses_dev.jsonl.gz", "--indices", "0-x", "--out", str(tmp_path / "g")]
    assert cli.main(argv) == 2
    assert "0-x" in capsys.readouterr().err


def test_generate_missing_houses_file_exits_2(tmp_path, capsys):
    argv = ["generate", "--houses", "nope.jsonl.gz", "--indices", "0", "--out", str(tmp_path / "g")]
    assert cli.main(argv) == 2
    assert "nope.jsonl.gz" in capsys.readouterr().err


def test_progress_lines_when_not_a_terminal():
    stream = io.StringIO()
    reporter = cli.StepReporter(stream, label="[1/2] ep", every_steps=100, every_s=1e9)
    for step in range(1, 251):
        reporter(runner.StepProgress(step, 250, step / 250, "MoveAhead", True))
    reporter.close()
    lines = stream.getvalue().splitlines()
    assert lines == ["[1/2] ep step 100/250  GC 0.400  MoveAhead", "[1/2] ep step 200/250  GC 0.800  MoveAhead",
                     "[1/2] ep step 250/250  GC 1.000  MoveAhead"]


def test_help_exits_0(capsys):
    assert cli.main(["--help"]) == 0
    assert "run" in capsys.readouterr().out


def test_missing_system_library_is_explained(tmp_path, monkeypatch, capsys):
    ep = write_episode(tmp_path / "e.json", "e", ONE_LAMP)

    def no_libusb(args):
        raise ImportError("libusb-1.0.so.0: cannot open shared object file: No such file or directory")

    monkeypatch.setattr(cli, "make_env", no_libusb)
    assert cli.main(["run", "--episode", str(ep), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "libusb-1.0-0" in err and "libgomp1" in err and "Traceback" not in err


def test_eval_longact_empty_folder_exits_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert cli.main(["eval", "longact", "--episodes", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 2
    assert "no usable episodes" in capsys.readouterr().err


def test_eval_worldlines_passes_its_options_to_the_harness(monkeypatch):
    import evaluation.worldlines.harness as harness

    seen: list[list[str]] = []
    monkeypatch.setattr(harness, "main_worldlines", lambda argv: seen.append(list(argv)) or 7)
    assert cli.main(["eval", "worldlines", "--days", "2", "--houses", "0"]) == 7
    assert seen == [["--days", "2", "--houses", "0"]]


def test_run_through_thor_contract_player_drives_the_oracle_by_its_embedded_twin(tmp_path):
    """--sim thor with the real ai2thor Controller and the stand-in player: the oracle plans on an
    embedded twin and the thor backend's own ground truth scores the same GC and Steps."""
    pytest.importorskip("ai2thor")
    from sim_bridge.thor import fake_player

    ep = write_episode(tmp_path / "lamps.json", "cli-thor", LAMPS)
    assert cli.main(["run", "--episode", str(ep), "--out", str(tmp_path / "emb"), "--no-render"]) == 0
    assert cli.main(["run", "--episode", str(ep), "--out", str(tmp_path / "thor"), "--sim", "thor",
                     "--thor-build", fake_player.command()]) == 0
    emb = json.loads((tmp_path / "emb" / "report.json").read_text())
    thor = json.loads((tmp_path / "thor" / "report.json").read_text())
    assert thor["gc"] == emb["gc"] == 1.0
    assert (thor["steps_nav"], thor["steps_manip"]) == (emb["steps_nav"], emb["steps_manip"])
    assert thor["extra"]["oracle_twin"] == "embedded"


def test_memory_eval_passes_its_options_to_the_memory_evaluation(monkeypatch):
    import evaluation.memory_eval as memory_eval

    seen: list[list[str]] = []
    monkeypatch.setattr(memory_eval, "main_memory_eval", lambda argv: seen.append(list(argv)) or 0)
    assert cli.main(["memory-eval", "--index", "0", "--out", "x"]) == 0
    assert seen == [["--index", "0", "--out", "x"]]


@pytest.mark.parametrize("argv, option", [
    (["ros", "up", "sim", "--max-runtime", "nan"], "--max-runtime"),
    (["ros", "up", "sim", "--max-runtime", "inf"], "--max-runtime"),
    (["ros", "up", "sim", "--shutdown-timeout", "-1"], "--shutdown-timeout"),
    (["record", "--rate", "inf", "--out", "x.mcap"], "--rate"),
    (["eval", "longact", "--episodes", "x", "--out", "y", "--task-timeout", "nan"], "--task-timeout"),
])
def test_time_and_rate_options_must_be_finite_and_positive(argv: list[str], option: str, tmp_path) -> None:
    """Issue 32: `ros up --max-runtime nan` never stopped, `record --rate inf` was accepted."""
    r = subprocess.run([sys.executable, "-m", "worldmind.cli", *argv], capture_output=True, text=True, timeout=60,
                       cwd=tmp_path)
    assert r.returncode == 2 and f"argument {option}: must be a finite number above 0" in r.stderr, r.stderr


def test_the_demo_episode_is_the_first_of_the_longact_like_set():
    """``worldmind run`` with no episode shows a v2 episode (people's wording); the v1 set stays the
    regression set the tests and benchmarks read."""
    assert dev_set.demo_episode_file().name == "dev-000-0.json"
    assert dev_set.demo_episode_file().parent.name == "episodes_dev_v2"
    assert dev_set.default_episode_file().parent.name == "episodes_dev"
