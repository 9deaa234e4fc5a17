"""The planners behind ``worldmind run`` / ``eval longact``: oracle, deterministic (HoloMind) and
llm:<model>; their option checks (exit 2 with one clear line), the planner label used by resume,
the agent statistics in summaries, and the replay backend in the simulator factory.

No test reaches the network: the llm agent is only built (its roles are never asked), with
LITELLM_LOCAL_MODEL_COST_MAP set before anything can import litellm.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from evaluation import runner  # noqa: E402
from household.checklist import evaluate_checklist  # noqa: E402
from evaluation.episodes import Episode  # noqa: E402
from evaluation.metrics import ScoreTimeline, StepCounter  # noqa: E402
from evaluation.report import EpisodeResult, write_summary  # noqa: E402
from household.types import WorldState  # noqa: E402
from worldmind import cli, cli_common  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EPISODES_DEV = REPO / "evaluation" / "data" / "episodes_dev"
ONE_LAMP = [{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}]


def write_episode(path: Path, eid: str, checklist: list[dict] = ONE_LAMP) -> Path:
    path.write_text(json.dumps({
        "id": eid, "house": {"file": "houses_dev.jsonl.gz", "index": 0}, "scenario": "test",
        "instructions": {"detailed": "Turn on a floor lamp.", "concise": "Lamp on."},
        "checklist": checklist, "max_steps": 300,
    }), encoding="utf-8")
    return path


def smallest_committed_episode() -> Path:
    """The committed dev episode with the smallest step budget (the quickest real HoloMind run)."""
    files = sorted(EPISODES_DEV.glob("*.json"))
    assert files, f"no committed episodes in {EPISODES_DEV}"
    return min(files, key=lambda f: (json.loads(f.read_text(encoding="utf-8"))["max_steps"], f.name))


# --- option checks -------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["--planner", "holomind"], ["holomind", "oracle", "deterministic", "llm:<model>"]),
    (["--planner", "llm:"], ["llm:", "model"]),
    (["--planner", "llm:   "], ["llm:", "model"]),
    (["--planner", "deterministic", "--ablate", "memory"], ["--ablate", "memory", "critic", "episodic", "high-level"]),
    (["--planner", "deterministic", "--no-render"], ["--no-render", "deterministic"]),
    (["--planner", "llm:openai/gpt-4o-mini", "--no-render"], ["--no-render", "llm:openai/gpt-4o-mini"]),
    (["--planner", "oracle", "--ablate", "critic"], ["--ablate", "oracle"]),
    (["--planner", "deterministic", "--llm-config", "x.yaml"], ["--llm-config", "deterministic"]),
])
def test_bad_planner_options_exit_2_with_one_clear_line(tmp_path, capsys, argv, words):
    ep = write_episode(tmp_path / "e.json", "e")
    for command in (["run", "--episode", str(ep), "--out", str(tmp_path / "o")],
                    ["eval", "longact", "--episodes", str(ep), "--out", str(tmp_path / "o")]):
        assert cli.main(command + argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and err.startswith("worldmind: error: ")
        assert all(w in err for w in words), err
        assert "Traceback" not in err and not (tmp_path / "o").exists()


def test_check_planner_accepts_any_llm_model_string():
    for name in ("oracle", "deterministic", "llm:openai/gpt-4o-mini", "llm:ollama/llama3", "llm:mock/model"):
        cli.check_planner(name)
    with pytest.raises(cli.CliError):
        cli.check_planner("llm")


def test_cli_ablations_match_the_agent():
    from planner.agent_config import ABLATIONS

    assert tuple(cli.ABLATIONS) == tuple(ABLATIONS)


# --- make_agent ----------------------------------------------------------------------------------

def test_make_agent_deterministic_label_config_and_experience(tmp_path):
    from planner.holomind import HoloMindAgent

    agent = cli.make_agent("deterministic", None)  # the positional form other modules use
    assert isinstance(agent, HoloMindAgent) and agent.name == "deterministic" and not agent.privileged

    pool = tmp_path / "pool.json"
    agent = cli.make_agent("deterministic", None, instruction_kind="concise", ablate=["critic"], experience_path=pool)
    assert agent.name == "deterministic-no-critic"
    assert agent.config.instruction_kind == "concise" and agent.config.ablate == frozenset({"critic"})
    assert agent.experience.path == pool
    assert cli.make_agent("deterministic", None, ablate=("high-level", "critic")).name == \
        "deterministic-no-critic-no-high-level"

    bad = tmp_path / "bad.json"
    bad.write_text('{"entries": [{"nope": 1}]}', encoding="utf-8")
    with pytest.raises(cli.CliError, match="--experience"):
        cli.make_agent("deterministic", None, experience_path=bad)
    with pytest.raises(cli.CliError, match="unknown planner"):
        cli.make_agent("holomind", None)


def test_make_agent_takes_the_depth_noise_of_the_sensor_profile_or_the_caller():
    """The agent's map must know the camera's noise (planner.occupancy): from the environment's
    sensor profile in simulation, from the caller (a robot's datasheet, the planner node's
    depth_noise_k parameter) otherwise; nonsense is refused by name."""
    from sim_bridge.sensors import SensorNoise, sensor_profile

    realistic = SensorNoise(object(), sensor_profile("realistic"))
    assert cli.make_agent("deterministic", realistic).config.depth_noise_k == 0.0036  # D435-class
    assert cli.make_agent("deterministic", SensorNoise(object(), sensor_profile("ideal"))).config.depth_noise_k == 0.0
    assert cli.make_agent("deterministic", None).config.depth_noise_k == 0.0
    assert cli.make_agent("deterministic", None, depth_noise_k=0.012).config.depth_noise_k == 0.012
    assert cli.make_agent("deterministic", realistic, depth_noise_k=0.0).config.depth_noise_k == 0.0
    for bad in (-0.1, 2.0, "0.005"):
        with pytest.raises(cli.CliError, match="depth_noise_k"):
            cli.make_agent("deterministic", None, depth_noise_k=bad)


def test_make_agent_takes_pose_tolerance_and_confirmation_from_the_profile_or_the_caller():
    """Like the depth noise: the sensor profile's localiser and detector in simulation, the caller's
    figures on a robot (the planner node's pose_tolerance and confirm_views parameters)."""
    from sim_bridge.sensors import SensorNoise, sensor_profile

    realistic = SensorNoise(object(), sensor_profile("realistic"))
    config = cli.make_agent("deterministic", realistic).config
    assert config.pose_tolerance == 0.05 and config.confirm_views == 2
    config = cli.make_agent("deterministic", None).config
    assert config.pose_tolerance == 0.0 and config.confirm_views == 1
    config = cli.make_agent("deterministic", None, pose_tolerance=0.03, confirm_views=3).config
    assert config.pose_tolerance == 0.03 and config.confirm_views == 3
    assert cli.make_agent("deterministic", realistic, pose_tolerance=0.0, confirm_views=1).config.confirm_views == 1
    for bad in (-0.01, 0.5, "0.05"):
        with pytest.raises(cli.CliError, match="pose_tolerance"):
            cli.make_agent("deterministic", None, pose_tolerance=bad)
    for bad in (0, 11, 1.5, True):
        with pytest.raises(cli.CliError, match="confirm_views"):
            cli.make_agent("deterministic", None, confirm_views=bad)


def test_make_agent_llm_has_deterministic_fallbacks_and_no_network(monkeypatch):
    from planner.critic import RuleCritic
    from planner.deterministic import NearestGrounder, RecipeTranslator, RuleRefiner
    from planner.holomind import HoloMindAgent
    from planner.instruction_parser import InstructionParser
    from planner.llm.client import LLMClient

    def no_call(*args, **kwargs):
        raise AssertionError("building an llm agent must not call the model")

    monkeypatch.setattr(LLMClient, "call_json", no_call)
    agent = cli.make_agent("llm:mock/model", None)
    assert isinstance(agent, HoloMindAgent) and agent.name == "llm:mock/model"
    roles = {"decomposer": (agent.decomposer, InstructionParser), "refiner": (agent.refiner, RuleRefiner),
             "grounder": (agent.ground_role, NearestGrounder), "translator": (agent.translator, RecipeTranslator),
             "critic": (agent.critic, RuleCritic)}
    for name, (role, fallback) in roles.items():
        assert type(role).__module__ == "planner.llm.roles", name
        assert isinstance(role.fallback, fallback), name
        assert role.client is agent.llm_client
    assert agent.llm_client.config.model == "mock/model"
    assert cli.make_agent("llm:mock/model", None, ablate=["episodic"]).name == "llm:mock/model-no-episodic"


def test_make_agent_llm_config_file_problems_are_cli_errors(tmp_path):
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"api_key": "sk-nope"}), encoding="utf-8")
    with pytest.raises(cli.CliError) as info:
        cli.make_agent("llm:mock/model", None, llm_config=cfg)
    assert "sk-nope" not in str(info.value)
    with pytest.raises(FileNotFoundError):  # main() reports it as one line, exit 2
        cli.make_agent("llm:mock/model", None, llm_config=tmp_path / "missing.yaml")


# --- worldmind run with the deterministic planner --------------------------------------------------

def test_run_deterministic_writes_critic_fields(tmp_path, capsys):
    episode = smallest_committed_episode()
    out = tmp_path / "run"
    assert cli.main(["run", "--planner", "deterministic", "--episode", str(episode), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["planner"] == "deterministic"
    extra = report["extra"]
    for key in ("critic_interventions", "critic_refine", "critic_replan", "failed_actions", "experience_reused"):
        assert isinstance(extra[key], int) and extra[key] >= 0, key
    assert extra["critic_interventions"] == extra["critic_refine"] + extra["critic_replan"]
    assert "llm" not in extra
    assert "Planner deterministic" in capsys.readouterr().out


# --- eval longact: resume by planner label ---------------------------------------------------------

def test_eval_longact_resume_compares_the_agent_label(tmp_path, monkeypatch, capsys):
    src = tmp_path / "episodes"
    src.mkdir()
    write_episode(src / "a.json", "tiny-a")
    write_episode(src / "b.json", "tiny-b")
    out = tmp_path / "eval"
    calls: list[str] = []
    real = runner.run_episode

    def counting(env, agent, episode, **kw):
        calls.append(episode.id)
        return real(env, agent, episode, **kw)

    monkeypatch.setattr(runner, "run_episode", counting)
    base = ["eval", "longact", "--episodes", str(src), "--out", str(out), "--limit", "1"]
    assert cli.main(base + ["--no-render"]) == 0  # the oracle
    assert calls == ["tiny-a"]
    assert not (out / cli.EXPERIENCE_FILE).exists()  # the oracle keeps no pool
    capsys.readouterr()

    # A different planner label: refused before anything runs, the report is untouched.
    report = out / "tiny-a" / "report.json"
    before = report.read_text()
    assert cli.main(base + ["--planner", "deterministic"]) == 2
    err = capsys.readouterr().err
    assert "oracle" in err and "deterministic" in err and "use another --out" in err
    assert calls == ["tiny-a"] and report.read_text() == before

    # The label is agent.name, not --planner: a "deterministic" report resumes under plain
    # deterministic, but not under an ablation of it.
    data = json.loads(before)
    data["planner"] = "deterministic"
    report.write_text(json.dumps(data), encoding="utf-8")
    assert cli.main(base + ["--planner", "deterministic", "--ablate", "critic"]) == 2
    assert "deterministic-no-critic" in capsys.readouterr().err
    assert cli.main(base + ["--planner", "deterministic"]) == 0
    printed = capsys.readouterr().out
    assert "planner deterministic" in printed and "resuming" in printed and "done earlier" in printed
    assert calls == ["tiny-a"]
    assert str(out / cli.EXPERIENCE_FILE) in printed  # the default pool lives in --out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["count"] == 1 and summary["episodes"][0]["planner"] == "deterministic"


# --- summaries -----------------------------------------------------------------------------------

@pytest.fixture
def world() -> WorldState:
    objects = [{"objectId": "lamp", "objectType": "FloorLamp", "position": {"x": 1.0, "y": 0.5, "z": 1.0},
                "isToggled": True}]
    return WorldState(objects=objects, agent={}, rooms=[], house_id="h")


def make_result(world: WorldState, eid: str, planner: str, extra: dict | None = None, failed: int = 0) -> EpisodeResult:
    episode = Episode.from_dict({"id": eid, "house": {"file": "houses_dev.jsonl.gz", "index": 0}, "scenario": "s",
                                 "instructions": {"detailed": "Lamp on.", "concise": "Lamp."},
                                 "checklist": ONE_LAMP, "max_steps": 10})
    steps, timeline = StepCounter(), ScoreTimeline()
    timeline.append(0, 1.0)
    for i in range(1, 4):
        steps.record("MoveAhead", i > failed, (0.0, 0.0), (0.25 * i, 0.0), 0, 0, 0, 0)
        timeline.append(i, 1.0)
    return EpisodeResult.from_run(episode, instruction_kind="detailed", planner=planner,
                                  checklist=evaluate_checklist(episode.checklist, world), steps=steps,
                                  timeline=timeline, agent_path=[(0.0, 0.0)], wall_time_s=1.0, extra=extra)


def holomind_extra(critic: int, reused: int, llm: dict | None = None) -> dict:
    extra = {"stop_reason": "stop", "critic_interventions": critic, "critic_refine": critic, "critic_replan": 0,
             "failed_actions": 99, "experience_reused": reused}
    if llm is not None:
        extra["llm"] = llm
    return extra


def test_summary_agent_columns_dash_for_oracle_numbers_for_holomind(tmp_path, world):
    oracle = make_result(world, "o", "oracle", {"stop_reason": "stop"})
    det1 = make_result(world, "d1", "deterministic", holomind_extra(2, 1), failed=1)
    det2 = make_result(world, "d2", "deterministic", holomind_extra(4, 0), failed=2)
    paths = write_summary(tmp_path, [oracle, det1, det2])
    data = json.loads(paths["json"].read_text())
    rows = {r["episode_id"]: r for r in data["episodes"]}
    assert rows["o"]["critic_interventions"] is None and rows["o"]["experience_reused"] is None
    assert rows["o"]["failed_actions"] == 0.0  # counted by the runner for every planner
    assert rows["d1"]["critic_interventions"] == 2.0 and rows["d2"]["failed_actions"] == 2.0
    assert data["means"]["critic_interventions"] == pytest.approx(3.0)  # over the episodes that have it
    assert data["totals"]["critic_interventions"] == 6.0 and data["totals"]["experience_reused"] == 1.0
    assert data["means"]["gc"] == 1.0 and data["means"]["llm_calls"] is None
    groups = {g["planner"]: g for g in data["groups"]}
    assert groups["oracle"]["means"]["critic_interventions"] is None
    assert groups["deterministic"]["totals"]["failed_actions"] == 3.0

    md = paths["md"].read_text()
    assert "Critic interventions" in md and "Experience reused" in md and "LLM calls" not in md
    line = {ln.split("|")[1].strip(): ln for ln in md.splitlines() if ln.startswith("| ")}
    assert line["o"].endswith("| 0 | - | - |")
    assert line["d1"].endswith("| 1 | 2 | 1 |") and line["d2"].endswith("| 2 | 4 | 0 |")
    assert line["**mean**"].endswith("| 1.00 | 3.00 | 0.50 |")
    assert line["**total**"].endswith("| 3 | 6 | 1 |")
    assert "| oracle | detailed | 1 |" in md and line["oracle"].endswith("| 0.00 / 0 | - | - |")
    assert line["deterministic"].endswith("| 1.50 / 3 | 3.00 / 6 | 0.50 / 1 |")


def test_summary_llm_usage_columns(tmp_path, world):
    usage = {"model": "openai/gpt-4o-mini", "calls": 5, "prompt_tokens": 1000, "completion_tokens": 200,
             "cost_usd": 0.0012, "cost_status": "known"}
    unpriced = dict(usage, calls=3, prompt_tokens=10, completion_tokens=2, cost_usd=0.0, cost_status="unknown")
    oracle = make_result(world, "o", "oracle", {"stop_reason": "stop"})
    llm1 = make_result(world, "l1", "llm:openai/gpt-4o-mini", holomind_extra(1, 0, usage))
    llm2 = make_result(world, "l2", "llm:openai/gpt-4o-mini", holomind_extra(1, 0, unpriced))
    paths = write_summary(tmp_path, [oracle, llm1, llm2])
    data = json.loads(paths["json"].read_text())
    assert data["totals"]["llm_calls"] == 8.0 and data["totals"]["llm_prompt_tokens"] == 1010.0
    assert data["means"]["llm_completion_tokens"] == pytest.approx(101.0)
    assert data["totals"]["llm_cost_usd"] == pytest.approx(0.0012)  # the unpriced episode is unknown, not 0
    rows = {r["episode_id"]: r for r in data["episodes"]}
    assert rows["l2"]["llm_cost_usd"] is None and rows["o"]["llm_calls"] is None

    md = paths["md"].read_text()
    for title in ("LLM calls", "Prompt tokens", "Completion tokens", "Cost (USD)"):
        assert title in md
    line = {ln.split("|")[1].strip(): ln for ln in md.splitlines() if ln.startswith("| ")}
    # The last two columns (LLM decisions, by the model) are "-": these usages predate decision counts.
    assert line["o"].endswith("| - | - | - | - | - | - |")
    assert line["l1"].endswith("| 5 | 1000 | 200 | 0.0012 | - | - |")
    assert line["l2"].endswith("| 3 | 10 | 2 | - | - | - |")
    assert line["**total**"].endswith("| 8 | 1010 | 202 | 0.0012 | - | - |")


def test_old_reports_without_agent_stats_still_read_and_summarise(tmp_path, world):
    data = make_result(world, "old", "oracle").to_dict()
    del data["extra"]  # reports from before ``extra`` was written at all
    result = EpisodeResult.from_dict(json.loads(json.dumps(data)))
    assert result.extra == {} and result.agent_stats()["critic_interventions"] is None
    summary = json.loads(write_summary(tmp_path, [result])["json"].read_text())
    assert summary["episodes"][0]["critic_interventions"] is None and summary["totals"]["experience_reused"] is None


# --- simulator factory ---------------------------------------------------------------------------

def test_factory_registers_the_replay_backend(tmp_path):
    from sim_bridge import factory
    from sim_bridge.replay.backend import ReplayEnvironment

    assert "replay" in factory.KINDS
    env = factory.make_environment("replay", bag=str(tmp_path / "run.mcap"))
    assert isinstance(env, ReplayEnvironment) and env.config.bag == str(tmp_path / "run.mcap")
    with pytest.raises(ValueError, match="bag"):
        factory.make_environment("replay")
    with pytest.raises(TypeError, match="bag"):
        factory.make_environment("replay", bag="x.mcap", rate=2)


# --- progress ------------------------------------------------------------------------------------

class _Tty:
    """A stand-in terminal: isatty() says yes, writes are kept."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


def test_episode_bar_only_on_a_terminal_and_step_text_goes_to_its_postfix(monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert cli_common.episode_bar(3) is None  # piped or logged: plain lines only

    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    bar = cli_common.episode_bar(3)
    assert bar is not None
    reporter = cli.StepReporter(label="ep-1", bar=bar)
    reporter(runner.StepProgress(5, 5, 0.5, "MoveAhead", True))
    reporter.close()
    bar.close()
    assert "ep-1 step 5/5" in tty.text and "episodes" in tty.text
