"""memory-eval with the agent's own exploration (``--explorer agent``, issue 31 item 4): the
HoloMind agent chooses every action (frontiers of its own map, its own planner), the simulator
only executes them, and the memory is built from the frames of that walk; never a teleport."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evaluation import memory_agent_explorer
from evaluation.memory_eval import MemoryEvalConfig, main_memory_eval, run_memory_eval
from household.house_data import load_house
from household.types import Action
from sim_bridge.embedded.env import EmbeddedEnvironment


def test_the_agent_walks_and_the_memory_gets_what_its_frames_show(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []
    jumps: list[float] = []  # metres the true pose moved per step: never more than a move
    step = EmbeddedEnvironment.step

    def record(self: EmbeddedEnvironment, action: Action):  # type: ignore[no-untyped-def]
        sent.append(action.name)
        before = self.pose.x, self.pose.z
        out = step(self, action)
        jumps.append(math.hypot(self.pose.x - before[0], self.pose.z - before[1]))
        return out

    monkeypatch.setattr(EmbeddedEnvironment, "step", record)
    cfg = MemoryEvalConfig(explorer="agent", agent_step_cap=80, move_objects=1, width=160, height=120)
    result = run_memory_eval("houses_dev.jsonl.gz", 0, tmp_path, config=cfg)
    saved = json.loads((tmp_path / "memory_eval.json").read_text())
    assert "the agent's own exploration" in saved["privileged"] and saved["config"]["explorer"] == "agent"
    walk = saved["explored"]["timing"]
    # the agent looked round first, then walked (moves among its actions, metres covered)
    assert sent[:9] == ["RotateRight"] * 9
    assert any(a.startswith("Move") for a in sent) and walk["path_m"] > 2.0
    assert 80 <= walk["agent_steps"] <= 80 + 64 and walk["stop_reason"] == "step cap"
    assert walk["frames"] == walk["agent_steps"] + 1  # every frame of the walk, and the first
    r = result["explored"]
    assert r["memory_objects"] > 5 and r["gt_visible"] > 5
    assert r["recall_visible"] > 0.8 and r["precision"] > 0.8 and r["centroid_error_mean"] < 0.15
    assert r["recall_all"] < r["recall_visible"]  # 80 steps do not show the whole house
    assert saved["after_move"]["timing"]["agent_steps"] >= 80  # a second walk, with a new map
    assert max(jumps) <= 0.25 + 1e-6 and sum(j > 0 for j in jumps) > 10


def test_the_agent_stops_when_its_map_has_no_frontier_left() -> None:
    """An agent with nothing left to explore stops by itself and says why."""
    env = EmbeddedEnvironment()
    first = env.reset(load_house("houses_dev.jsonl.gz", 0))
    agent = memory_agent_explorer.make_explorer_agent(env)
    agent.reset(memory_agent_explorer.ExploreOnly("t"), first)
    agent.skills.explore_once = lambda toward=None: iter(())  # a map with no frontier: explore_once returns None
    agent.explore_house(50)
    actions = []
    obs = first
    for _ in range(20):
        a = agent.act(obs)
        actions.append(a.name)
        if a.name == "Stop":
            break
        obs = env.step(a).observation
    assert actions[-1] == "Stop" and actions[:9] == ["RotateRight"] * 9
    assert any("no frontier left" in n for n in agent.notes_log)


def test_bad_explorer_options_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_memory_eval(["--index", "0", "--out", str(tmp_path / "o"), "--explorer", "agent",
                             "--agent-steps", "0"]) == 2
    assert "--agent-steps must be >= 1" in capsys.readouterr().err
    with pytest.raises(ValueError, match="explorer"):
        run_memory_eval("houses_dev.jsonl.gz", 0, tmp_path, config=MemoryEvalConfig(explorer="teleport"))
    with pytest.raises(SystemExit):
        main_memory_eval(["--index", "0", "--out", str(tmp_path / "o"), "--explorer", "walk"])


def test_a_survey_walks_up_to_the_open_surfaces_seen_and_glances_at_each() -> None:
    """After the frontiers (here: none), the agent walks up to each open surface it has seen,
    nearest first, and looks at it from close by with a turn to each side; a surface with a door
    (a fridge, a cabinet) is not opened."""
    from planner.house_survey import SURVEY_GLANCES

    env = EmbeddedEnvironment()
    first = env.reset(load_house("houses_dev.jsonl.gz", 0))
    agent = memory_agent_explorer.make_explorer_agent(env)
    agent.reset(memory_agent_explorer.ExploreOnly("t"), first)
    agent.skills.explore_once = lambda toward=None: iter(())
    agent.explore_house(400, survey=True)
    actions: list[str] = []
    obs = first
    while len(actions) < 500:
        a = agent.act(obs)
        actions.append(a.name)
        if a.name == "Stop":
            break
        obs = env.step(a).observation
    assert "OpenObject" not in actions
    assert agent.stats["surfaces_surveyed"] >= 3
    assert any(n.startswith("step") and "survey:" in n for n in agent.notes_log)
    text = " ".join(actions[9:])
    assert text.count(" ".join(SURVEY_GLANCES)) >= 2  # walked up to surfaces and glanced at them
    assert any(a.startswith("Move") for a in actions)


def test_an_agent_error_ends_the_walk_and_what_was_seen_is_still_scored(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.holomind import HoloMindAgent

    act = HoloMindAgent.act
    calls = {"n": 0}

    def failing(self: HoloMindAgent, observation):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] > 30:
            raise ValueError("could not broadcast")
        return act(self, observation)

    monkeypatch.setattr(HoloMindAgent, "act", failing)
    cfg = MemoryEvalConfig(explorer="agent", agent_step_cap=200, move_objects=0, width=160, height=120)
    result = run_memory_eval("houses_dev.jsonl.gz", 0, tmp_path, config=cfg)
    walk = result["explored"]["timing"]
    assert walk["stop_reason"].startswith("agent error at step 30: ValueError: could not broadcast")
    assert walk["agent_steps"] == 30 and result["explored"]["memory_objects"] > 0
    assert json.loads((tmp_path / "memory_eval.json").read_text())["explored"]["timing"]["stop_reason"] == walk["stop_reason"]
