"""HoloMind in closed loop on the embedded simulator (small renders), through the evaluation runner.

The agent may see observations and the instruction only. A guard wraps the agent: while its
``reset``/``act`` run, or whenever planner code is on the call stack, any read of the simulator's
ground truth or privileged accessors fails (and is recorded, since the runner turns agent
exceptions into an "agent error"), and the episode it is handed exposes the instruction only (no
checklist, goals or oracle). The runner, outside the agent, still reads ground truth to score.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from household.checklist import ChecklistItem, ObjectSelector
from evaluation.episodes import AgentStart, Episode, HouseRef, load_episode
from evaluation.report import EpisodeResult
from evaluation.runner import run_episode
from planner.critic import ExperiencePool
from planner.holomind import HoloMindAgent
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
from household.types import Action, Observation

EPISODES_DEV = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev"
W, H = 160, 120
CRITIC_FIELDS = ("critic_interventions", "critic_refine", "critic_replan", "failed_actions", "experience_reused",
                 "experience_rules")
PRIVILEGED = ("ground_truth", "metadata", "is_visible", "in_reach", "interactable", "agent_pose")


# ==== the guard ==============================================================================

def _planner_caller() -> str | None:
    """The first planner module on the call stack, if any."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name == "planner" or name.startswith("planner."):
            return f"{name}:{frame.f_code.co_name}"
        frame = frame.f_back
    return None


class GroundTruthGuard:
    """Records (and refuses) privileged reads made by the agent; counts the runner's reads."""

    def __init__(self) -> None:
        self.agent_running = False
        self.violations: list[str] = []
        self.runner_reads = 0

    @contextlib.contextmanager
    def agent(self) -> Iterator[None]:
        self.agent_running = True
        try:
            yield
        finally:
            self.agent_running = False

    def check(self, what: str) -> None:
        caller = _planner_caller()
        if self.agent_running or caller is not None:
            self.violations.append(f"{what} read by {caller or 'the agent'}")
            raise AssertionError(f"privileged read: {what} ({caller or 'while the agent runs'})")
        if what == "ground_truth":
            self.runner_reads += 1

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Wrap the simulator's privileged accessors (class-wide: any handle is covered)."""
        for attr in PRIVILEGED:
            original = getattr(EmbeddedEnvironment, attr, None)
            if original is None:
                continue

            def guarded(env: EmbeddedEnvironment, *args: Any, _attr: str = attr, _orig: Any = original,
                        **kwargs: Any) -> Any:
                if _attr == "ground_truth" or not self._inside_env_step():
                    self.check(_attr)
                return _orig(env, *args, **kwargs)

            monkeypatch.setattr(EmbeddedEnvironment, attr, guarded)

    @staticmethod
    def _inside_env_step() -> bool:
        """The simulator's own step()/ground_truth() use its accessors internally; that is fine."""
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_globals.get("__name__", "").startswith("sim_bridge.embedded") and \
                    frame.f_code.co_name in ("step", "reset", "ground_truth"):
                return True
            frame = frame.f_back
        return False


class InstructionOnly:
    """The episode as the agent may see it: its id and its instructions, nothing else."""

    def __init__(self, episode: Episode, guard: GroundTruthGuard) -> None:
        self._episode = episode
        self._guard = guard
        self.id = episode.id

    def instruction(self, kind: str) -> str:
        return self._episode.instruction(kind)

    def __getattr__(self, name: str) -> Any:
        self._guard.violations.append(f"episode.{name} read by the agent")
        raise AssertionError(f"the agent read episode.{name}")


class WatchedAgent:
    """Runs an agent under the guard."""

    def __init__(self, agent: Any, guard: GroundTruthGuard) -> None:
        self.inner = agent
        self.guard = guard
        self.name = agent.name

    def reset(self, episode: Episode, observation: Observation) -> None:
        with self.guard.agent():
            self.inner.reset(InstructionOnly(episode, self.guard), observation)

    def act(self, observation: Observation) -> Action:
        with self.guard.agent():
            return self.inner.act(observation)

    def report_extra(self) -> dict[str, Any]:
        extra = getattr(self.inner, "report_extra", None)
        return extra() if callable(extra) else {}


def run_guarded(episode: Episode, monkeypatch: pytest.MonkeyPatch, agent: Any | None = None,
                max_steps: int | None = None) -> tuple[EpisodeResult, GroundTruthGuard, Any]:
    guard = GroundTruthGuard()
    guard.install(monkeypatch)
    inner = agent if agent is not None else HoloMindAgent()
    env = EmbeddedEnvironment(EmbeddedConfig(width=W, height=H))
    result, _ = run_episode(env, WatchedAgent(inner, guard), episode, max_steps=max_steps)
    return result, guard, inner


@functools.lru_cache(maxsize=1)
def shortest_dev_episode() -> Episode:
    """The committed dev episode with the smallest step budget (callers copy before changing it)."""
    episodes = [load_episode(p) for p in sorted(EPISODES_DEV.glob("*.json"))]
    assert episodes
    return min(episodes, key=lambda e: (e.max_steps, e.id))


@pytest.fixture(scope="module")
def short_run() -> tuple[Episode, EpisodeResult, GroundTruthGuard, HoloMindAgent]:
    """The committed dev episode with the smallest step budget, detailed instructions, guarded."""
    monkeypatch = pytest.MonkeyPatch()
    try:
        episode = shortest_dev_episode()
        result, guard, agent = run_guarded(episode, monkeypatch)
    finally:
        monkeypatch.undo()
    return episode, result, guard, agent


# ==== the guard itself ========================================================================

class CheatingAgent:
    """Reads ground truth through a handle on the simulator."""

    name = "cheater"

    def __init__(self, env: EmbeddedEnvironment, read: str) -> None:
        self.env = env
        self.read = read

    def reset(self, episode: Any, observation: Observation) -> None:
        if self.read == "checklist":
            _ = episode.checklist

    def act(self, observation: Observation) -> Action:
        if self.read == "ground_truth":
            self.env.ground_truth()
        elif self.read == "metadata":
            self.env.metadata()
        return Action("RotateRight")


@pytest.mark.parametrize("read", ["ground_truth", "metadata"])
def test_guard_catches_a_cheating_agent(read: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard is not vacuous: a cheating agent's read fails and is recorded; the runner still scores."""
    episode = shortest_dev_episode()
    guard = GroundTruthGuard()
    guard.install(monkeypatch)
    env = EmbeddedEnvironment(EmbeddedConfig(width=32, height=24))
    result, _ = run_episode(env, WatchedAgent(CheatingAgent(env, read), guard), episode, max_steps=3)
    assert result.extra["stop_reason"].startswith("agent error: AssertionError")
    assert guard.violations and read in guard.violations[0]
    assert guard.runner_reads >= 1


def test_guard_catches_an_agent_reading_the_checklist(monkeypatch: pytest.MonkeyPatch) -> None:
    episode = shortest_dev_episode()
    guard = GroundTruthGuard()
    guard.install(monkeypatch)
    env = EmbeddedEnvironment(EmbeddedConfig(width=32, height=24))
    # The runner records an agent that fails in reset as an agent error (nothing crashes).
    result, _ = run_episode(env, WatchedAgent(CheatingAgent(env, "checklist"), guard), episode, max_steps=3)
    assert "episode.checklist" in result.extra["stop_reason"]
    assert guard.violations == ["episode.checklist read by the agent"]


# ==== one committed dev episode ===============================================================

def test_agent_never_touches_ground_truth(short_run: tuple) -> None:
    _, result, guard, _ = short_run
    assert guard.violations == []
    assert not result.extra["stop_reason"].startswith("agent error"), result.extra["stop_reason"]
    assert guard.runner_reads >= 2  # the runner could still score (start, end and interactions)


def test_short_dev_episode_makes_progress(short_run: tuple) -> None:
    episode, result, _, _ = short_run
    assert result.instruction_kind == "detailed"
    assert result.gc > 0.0, result.extra.get("agent_notes")
    assert result.steps_total <= episode.max_steps
    assert result.timeline.gc[-1] == pytest.approx(result.gc)  # the runner scored along the way
    assert max(result.timeline.gc) > result.timeline.gc[0]


def test_short_dev_episode_reports_the_planner_fields(short_run: tuple) -> None:
    episode, result, _, agent = short_run
    extra = result.extra
    for key in CRITIC_FIELDS:
        assert isinstance(extra[key], int) and extra[key] >= 0, key
    assert extra["critic_interventions"] == extra["critic_refine"] + extra["critic_replan"]
    assert extra["goals_parsed"] == len(agent.goals) >= 1
    assert set(extra["goals"]) == {g.id for g in agent.goals}
    assert all(g["status"] in ("done", "failed", "deferred", "not reached") for g in extra["goals"].values())
    assert any(g["status"] == "done" for g in extra["goals"].values())
    assert extra["unparsed"] == []
    # the critic's log agrees with its counters
    assert sum(e["verdict"] != "pass" for e in agent.critic_log) == extra["critic_interventions"]


def test_agent_keeps_its_own_actions_as_belief_evidence(short_run: tuple) -> None:
    """Episodic status lives in the belief tracker: one observed event per successful
    state-changing interaction, and each placed object's believed location is where the agent
    last put it (the robot's own evidence, never ground truth)."""
    _, result, _, agent = short_run
    events = [agent.beliefs.tracker.event(i) for i in range(len(agent.beliefs))]
    assert result.extra["episodic_events"] == len(events) >= 1
    assert all(e.actor == "robot" and e.effects for e in events)
    last_place = {e.target: e.args["to"] for e in events if e.action == "place"}
    assert last_place, "the shortest dev episode places at least one object"
    for obj, receptacle in last_place.items():
        assert agent.beliefs.state_of(obj)["location"] == receptacle
    # what close looks showed is observed evidence too, recorded when it changed, never repeated
    looks = [e for e in events if e.kind == "observation" and e.args.get("by") == "state classifier"]
    assert looks, "the agent looks closely at something with a state in the shortest dev episode"
    last: dict[tuple[str, str], str] = {}
    for e in events:
        for atom in e.effects:
            if e in looks:
                assert last.get((atom.entity, atom.attribute)) != atom.value, (e, atom)
            last[(atom.entity, atom.attribute)] = atom.value
    assert all(agent.tracker.get(e.target) is not None for e in looks)


# ==== the critic and the experience pool in closed loop =========================================

def cup_in_fridge(max_steps: int = 300) -> Episode:
    """Dev house 0, agent in the kitchen; the fridge starts closed, so PutObject fails once."""
    return Episode(id="test-cup-in-fridge", house=HouseRef("houses_dev.jsonl.gz", 0), scenario="test",
                   instructions={"detailed": "Put a cup in the fridge."},
                   checklist=[ChecklistItem(ObjectSelector("Cup"), "inReceptacle", ObjectSelector("Fridge"))],
                   max_steps=max_steps, agent_start=AgentStart((2.5, 0.9, 3.0), (0.0, 270.0, 0.0), 30.0))


def test_critic_refines_and_experience_is_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pool_path = tmp_path / "pool.json"
    first, guard, agent = run_guarded(cup_in_fridge(), monkeypatch,
                                      HoloMindAgent(experience=ExperiencePool.load(pool_path)))
    assert guard.violations == []
    assert first.gc == 1.0
    assert first.extra["critic_refine"] >= 1
    assert any(e["verdict"] == "refine" and "closed" in e["error"] for e in agent.critic_log)
    assert first.extra["experience_rules"] >= 1
    assert ExperiencePool.load(pool_path).proactive_fix("PutObject", "Fridge") == "open"
    # the next episode opens the fridge before putting, so the put does not fail
    second, guard, _ = run_guarded(cup_in_fridge(), monkeypatch,
                                   HoloMindAgent(experience=ExperiencePool.load(pool_path)))
    assert guard.violations == []
    assert second.gc == 1.0
    assert second.extra["experience_reused"] >= 1
    assert not any("PutObject" in e and "closed" in e for e in second.extra["errors"])


def test_episodic_ablation_ignores_the_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.holomind import AgentConfig
    pool_path = tmp_path / "pool.json"
    pool = ExperiencePool.load(pool_path)
    pool.validate(pool.record("PutObject", "closed", "Fridge", "open"))
    result, _, _ = run_guarded(cup_in_fridge(), monkeypatch,
                               HoloMindAgent(AgentConfig(ablate=frozenset({"episodic"})),
                                             experience=ExperiencePool.load(pool_path)))
    assert result.extra["experience_reused"] == 0
    assert result.planner.endswith("no-episodic")


def test_cup_in_fridge_from_the_living_room(monkeypatch: pytest.MonkeyPatch) -> None:
    episode = dataclasses.replace(cup_in_fridge(400), agent_start=None)  # the house's start: living room
    result, guard, _ = run_guarded(episode, monkeypatch)
    assert guard.violations == []
    assert result.gc == 1.0, result.extra.get("agent_notes")


# ==== malformed and partly understood instructions ============================================

def _with_instruction(text: str, max_steps: int = 40) -> Episode:
    return dataclasses.replace(shortest_dev_episode(), instructions={"detailed": text, "concise": text},
                               max_steps=max_steps)


def test_empty_instruction_fails_the_run_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    result, guard, _ = run_guarded(_with_instruction(""), monkeypatch)
    assert result.extra["stop_reason"].startswith("agent error")
    assert "empty instruction" in result.extra["stop_reason"]
    assert guard.violations == []


def test_unknown_object_type_is_reported_unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "Turn on the floor lamp in the bedroom. Put the zorblax in the fridge."
    result, guard, agent = run_guarded(_with_instruction(text), monkeypatch)
    assert guard.violations == []
    assert not result.extra["stop_reason"].startswith("agent error")
    unparsed = agent.report_extra()["unparsed"]
    assert result.extra["unparsed"] == unparsed
    assert len(unparsed) == 1 and "zorblax" in unparsed[0]
    assert result.extra["goals_parsed"] == 1


def test_instruction_with_nothing_understood_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    result, guard, agent = run_guarded(_with_instruction("Put the flux capacitor on the sofa.", 60), monkeypatch)
    assert guard.violations == []
    assert result.extra["stop_reason"] == "stop"
    assert result.extra["goals_parsed"] == 0
    assert "flux" in result.extra["unparsed"][0]


# ==== recipes met on person-like tasks, in closed loop =========================================

def test_a_plant_is_watered_from_a_vessel_in_closed_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing to carry to the faucet: the agent fills a vessel there, carries it and pours (the
    embedded simulator refuses a pour with nothing of the liquid in hand)."""
    episode = Episode(id="test-water-plant", house=HouseRef("houses_dev.jsonl.gz", 0), scenario="test",
                      instructions={"detailed": "Give the plant some water."},
                      checklist=[ChecklistItem(ObjectSelector("HousePlant"), "isFilledWithLiquid", None, "water")],
                      max_steps=900, agent_start=AgentStart((2.5, 0.9, 3.0), (0.0, 270.0, 0.0), 30.0))
    result, guard, agent = run_guarded(episode, monkeypatch)
    assert guard.violations == []
    assert result.gc == 1.0, result.extra.get("agent_notes")
    pours = [s for subs in agent._subgoals.values() for s in subs if s["skill"] == "pour"]
    assert pours and pours[0]["args"]["liquid"] == "water"


# ==== no silent success; goals say how they ended ==============================================

class _BindsAnything:
    """A grounder that binds every role to one id at once (no search)."""

    def ground(self, goal: Any, context: Any) -> Any:
        from planner.deterministic import required_roles
        from planner.roles import Grounding
        return Grounding(goal.id, {role: "Anything|1" for role, _, _ in required_roles(goal)})


class _NoPlan:
    def translate(self, goal: Any, grounding: Any, context: Any) -> list:
        return []


def test_a_goal_with_no_plan_is_failed_with_the_reason_never_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29: a translator that returns no subgoals (an unknown predicate) used to leave the
    goal 'done' with nothing done."""
    agent = HoloMindAgent(roles={"ground": _BindsAnything(), "translate": _NoPlan()})
    result, guard, _ = run_guarded(_with_instruction("Turn on the floor lamp in the bedroom.", 60), monkeypatch,
                                   agent=agent)
    assert guard.violations == []
    goals = result.extra["goals"]
    assert len(goals) == 1
    (goal,) = goals.values()
    assert goal["status"] == "failed" and goal["reason"] == "no_recipe", goal
    assert goal["predicate"] == "isToggled" and goal["object_type"] == "FloorLamp"
    assert any("no plan for isToggled" in n for n in result.extra["agent_notes"])


def test_every_goal_reports_what_it_asked_for_and_how_it_ended(short_run: tuple) -> None:
    from planner.holomind import GOAL_REASONS
    _, result, _, _ = short_run
    goals = result.extra["goals"]
    for gid, g in goals.items():
        assert g["predicate"] and g["object_type"], gid
        assert isinstance(g["steps_spent"], int) and g["steps_spent"] >= 0
        if g["status"] == "done":
            assert g["reason"] == "done" and g["bindings"].get("object"), g
            # done means checked against the agent's own frames, with the outcome stated
            assert g["check"]["status"] in ("verified", "unverified", "contradicted") and g["check"]["reason"], g
        elif g["status"] == "failed":
            assert g["reason"] in GOAL_REASONS and g["reason"] != "done", g
    assert sum(g["steps_spent"] for g in goals.values()) <= result.num_actions


class _SearchThenInspect:
    """A translator (as an LLM might answer) using the two skills that had no executor."""

    def translate(self, goal: Any, grounding: Any, context: Any) -> list:
        from planner.roles import Subgoal
        return [Subgoal("search", {"object_type": "FloorLamp"}, goal.id),
                Subgoal("inspect", {"object_id": "NotSeen|9"}, goal.id)]


def test_search_and_inspect_have_executors_and_an_unknown_id_is_a_replan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28: the LLM schema offered `search` and `inspect`, the skill library ran neither
    (`inspect` with an id ended the episode as an agent error)."""
    agent = HoloMindAgent(roles={"ground": _BindsAnything(), "translate": _SearchThenInspect()})
    result, guard, inner = run_guarded(_with_instruction("Turn on the floor lamp in the bedroom.", 400), monkeypatch,
                                       agent=agent)
    assert guard.violations == []
    assert not result.extra["stop_reason"].startswith("agent error"), result.extra["stop_reason"]
    assert inner.tracker.of_type("FloorLamp"), result.extra["agent_notes"]  # the search found one
    assert any("inspect: 'NotSeen|9' is not in the agent's memory" in n for n in result.extra["agent_notes"])
    (goal,) = result.extra["goals"].values()
    assert goal["status"] == "failed"


def test_every_declared_skill_has_an_executor() -> None:
    """A skill in planner.roles.SKILLS that Skills.run does not know would reach `interact` and
    fail there; an undeclared one is refused by name."""
    import inspect as pyinspect

    from planner.roles import SKILLS
    from planner.skills import _INTERACTION_OF, Replan, Skills
    source = pyinspect.getsource(Skills.run)
    for skill in SKILLS:
        assert skill in _INTERACTION_OF or f'"{skill}"' in source, skill
    gen = Skills(object()).run(__import__("planner.roles", fromlist=["Subgoal"]).Subgoal("fly", {}))
    with pytest.raises(Replan, match="unknown skill 'fly'"):
        next(gen)
