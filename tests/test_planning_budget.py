"""The planning budget of one decision (issue 27: no act may stall; ``planner.planning_budget``):

- a request is made in the act that asks for it while the act has spent less than its budget,
  else after exactly one ``Pass`` step, and is never cut: its answer is the unbounded one;
- the navigator charges every lattice expansion to the act, and a fresh act starts at nothing;
- a plan request comes in stages (the fine search, the coarse one, the same two on the tight
  grid), each started only while the act's budget is not spent, and a search itself pauses after
  every slice of expansions: an act expands at most its budget and one slice, the search goes on
  where it paused on the next act, on the map it started on (a wall a later frame shows does
  not change its goal test), and the staged answer is the one-call answer;
- over a whole episode the agent's actions, Pass steps left out, are those of the agent without
  a budget (nothing moves in a Pass, and the frame seen again maps the same), while no act plans
  past the budget and one request;
- a Pass spends none of the agent's step allowances (a goal's, a search's, an approach's): with
  allowances small enough to decide the episode, the agent gives up on the same goals for the
  same reasons and makes the same moves with and without Passes between them;
- Pass moves nothing in the embedded simulator, adds no LongAct step, and is the robot's ``wait``.

No timings: the decision-time figures live in ``benchmarks/bench_agent_decision.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import planner.navigation as navigation
from evaluation.episodes import load_episode
from evaluation.metrics import StepCounter
from evaluation.runner import run_episode
from household.types import PASS, Action, Observation
from planner.agent_config import AgentConfig
from planner.holomind import HoloMindAgent
from planner.navigation import MAX_EXPANSIONS, Navigator, Pose
from planner.object_memory import TrackedObject
from planner.occupancy import OccupancyMap
from planner.planning_budget import ACT_EXPANSIONS, SLICE_EXPANSIONS, ActBudget, planned_in_stages
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.ros import skills as robot_skills
from tests.test_decision_tail import _walled  # two halves of a floor, a wall between, no doorway

EPISODES = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev_v2"


def _drive(gen, frame: Observation | None = None) -> tuple[list[Action], object]:
    """Run a skill generator to its end; returns what it yielded and what it returned."""
    yielded: list[Action] = []
    try:
        action = next(gen)
        while True:
            yielded.append(action)
            action = gen.send(frame)
    except StopIteration as stop:
        return yielded, stop.value


def _one_stage(request, *args, **kwargs):
    """A request of one stage: made when first advanced, whole."""
    return request(*args, **kwargs)
    yield  # a generator with no pause in it


def test_a_request_waits_one_pass_only_once_the_act_spent_its_budget() -> None:
    budget = ActBudget(100)
    calls: list[tuple] = []

    def request(*args, **kwargs):
        calls.append((args, kwargs))
        return "plan"

    assert _drive(planned_in_stages(budget, _one_stage(request, 1, r=2))) == ([], "plan")  # nothing spent: made at once
    budget.charge(99)
    assert _drive(planned_in_stages(budget, _one_stage(request, 3))) == ([], "plan")  # under the budget: still made now
    budget.charge(1)
    assert not budget.can_start()
    yielded, answer = _drive(planned_in_stages(budget, _one_stage(request, 4)))
    assert [a.name for a in yielded] == [PASS] and answer == "plan" and budget.passes == 1
    assert calls == [((1,), {"r": 2}), ((3,), {}), ((4,), {})]  # each made once, whole, as asked
    budget.begin_act()
    assert budget.spent == 0 and budget.can_start()
    unbounded = ActBudget(None)
    unbounded.charge(10**9)
    assert unbounded.can_start()


def test_the_navigator_charges_its_searches_and_the_answer_is_the_unbounded_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(navigation, "connected", lambda *a, **k: True)  # let the search itself run
    start = Pose(-1.0, 0.0, 90.0, 30.0)
    bounded, free = Navigator(_walled(5), max_expansions=60, act_expansions=60), Navigator(_walled(5), max_expansions=60)
    bounded.budget.begin_act()
    yielded, first = _drive(planned_in_stages(bounded.budget, _one_stage(bounded.plan_to_point, start, 1.0, 0.0)))
    assert yielded == [] and first is None and bounded.capped_searches == 1
    assert bounded.budget.spent >= 60  # the fine search and the coarse one, each to its cap
    # a second request in the same act waits a Pass; after it (a fresh act) it is made whole
    gen = planned_in_stages(bounded.budget, _one_stage(bounded.plan_to_point, start, -1.5, 1.0))
    assert next(gen).name == PASS
    bounded.budget.begin_act()
    with pytest.raises(StopIteration) as done:
        gen.send(None)
    plan, expected = done.value.value, free.plan_to_point(start, -1.5, 1.0)
    assert plan is not None and expected is not None
    assert plan.actions == expected.actions and plan.cost == expected.cost
    assert 0 < bounded.budget.spent < 60  # charged to the new act


def _acts(budget: ActBudget, gen) -> tuple[list[str], list[int], object]:
    """Run a request made over acts (a fresh act after each Pass, as the agent's ``act`` begins
    one); returns what it yielded, the expansions each act spent, and the answer."""
    budget.begin_act()
    yielded: list[str] = []
    spent: list[int] = []
    try:
        action = next(gen)
        while True:
            yielded.append(action.name)
            spent.append(budget.spent)
            budget.begin_act()
            action = gen.send(None)
    except StopIteration as stop:
        spent.append(budget.spent)
        return yielded, spent, stop.value


def _tolerant_walled() -> OccupancyMap:
    """``_walled(5)`` on a map that allows for pose error: a failed plan is tried again on the
    tight grid (here as wide as the usual one: the wall is drawn without dilation)."""
    occ = _walled(5)
    occ.config.pose_tolerance = 0.1
    occ._tight_disc = np.ones((1, 1), dtype=bool)
    return occ


def _opened() -> OccupancyMap:
    """``_tolerant_walled`` with a doorway at the wall's end: a way across, round the wall."""
    opened = _tolerant_walled()
    j0, j1 = opened.cell(0.0, -2.0)[1], opened.cell(0.0, -1.4)[1]
    door = np.zeros_like(opened.wall)
    door[:, j0:j1] = opened.wall[:, j0:j1]
    opened.floor[door], opened.obstacle[door], opened.wall[door] = True, False, False
    opened._grid = None
    return opened


def test_a_plan_request_comes_in_stages_and_each_waits_for_a_fresh_act(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the wall (no way across): the fine search and the coarse one, on the usual grid
    and then on the tight grid, each to its cap. With the budget at one capped search each act
    runs one of the four, a Pass between two; before the stages, one act ran all four."""
    monkeypatch.setattr(navigation, "connected", lambda *a, **k: True)  # let the searches run
    start = Pose(-1.0, 0.0, 90.0, 30.0)
    bounded = Navigator(_tolerant_walled(), max_expansions=60, act_expansions=60)
    yielded, spent, answer = _acts(bounded.budget, planned_in_stages(bounded.budget,
                                                                     bounded.plan_to_point_stages(start, 1.0, 0.0)))
    assert yielded == [PASS] * 3 and bounded.budget.passes == 3
    assert all(60 <= s <= 2 * 60 for s in spent)  # one capped search an act (a cap is checked per expansion)
    assert answer is None and bounded.capped_searches == 2  # a capped search pair: once per grid
    assert "cap" in bounded.last_failure
    free = Navigator(_tolerant_walled(), max_expansions=60)
    free.budget.begin_act()
    assert free.plan_to_point(start, 1.0, 0.0) is None and free.capped_searches == 2
    assert free.budget.spent == sum(spent)  # the same searches, spread over four acts
    # a way there (the wall's end opened): the same plan staged or in one call (its search, longer
    # than a slice, goes on over acts: a Pass after each slice past the budget)
    opened = _opened()
    staged, whole = Navigator(opened, act_expansions=60), Navigator(opened)
    yielded, _, plan = _acts(staged.budget, planned_in_stages(staged.budget, staged.plan_to_point_stages(start, 1.0, 0.0)))
    expected = whole.plan_to_point(start, 1.0, 0.0)
    assert set(yielded) <= {PASS} and staged.capped_searches == 0
    assert plan is not None and expected is not None and plan.actions == expected.actions


def test_a_search_goes_on_over_acts_a_slice_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A search longer than the act's budget pauses after a slice and goes on, not again from the
    start, on the next act: each act expands at most its budget and one slice, the acts together
    expand what the one call does, and the answer is the one call's (none through the wall; round
    it, the same plan)."""
    monkeypatch.setattr(navigation, "connected", lambda *a, **k: True)  # let the searches run
    monkeypatch.setattr(navigation, "SLICE_EXPANSIONS", 10)
    start = Pose(-1.0, 0.0, 90.0, 30.0)
    bounded, free = Navigator(_walled(5), max_expansions=60, act_expansions=20), Navigator(_walled(5), max_expansions=60)
    yielded, spent, answer = _acts(bounded.budget, planned_in_stages(bounded.budget,
                                                                     bounded.plan_to_point_stages(start, 1.0, 0.0)))
    free.budget.begin_act()
    assert answer is None and free.plan_to_point(start, 1.0, 0.0) is None
    assert sum(spent) == free.budget.spent == 2 * 60  # the fine and the coarse search, each once
    assert set(yielded) == {PASS} and len(yielded) >= 2 * 60 // (20 + 10)
    assert all(s <= 20 + 10 for s in spent)
    staged, whole = Navigator(_opened(), act_expansions=20), Navigator(_opened())
    whole.budget.begin_act()
    yielded, spent, plan = _acts(staged.budget, planned_in_stages(staged.budget,
                                                                  staged.plan_to_point_stages(start, 1.0, 0.0)))
    expected = whole.plan_to_point(start, 1.0, 0.0)
    assert plan is not None and expected is not None
    assert (plan.actions, plan.cost, plan.expanded) == (expected.actions, expected.cost, expected.expanded)
    assert len(yielded) >= 1 and all(s <= 20 + 10 for s in spent) and sum(spent) == whole.budget.spent


def test_a_paused_search_keeps_the_map_it_started_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan to an object through the doorway, paused after its first slice; before it goes on, a
    later frame shows a wall round the vase on every side. The search's goal test still reads the
    wall band it started with: the plan is the one the unchanged map gives (a request made afresh on the
    changed map finds no pose that sees the vase)."""
    monkeypatch.setattr(navigation, "SLICE_EXPANSIONS", 10)
    start = Pose(-1.0, 0.0, 90.0, 30.0)
    c = np.array([1.0, 0.8, 1.0])
    vase = TrackedObject("Vase|1|1", "Vase", c, c - 0.1, c + 0.1, 0, 0)
    expected = Navigator(_opened()).plan_to_object(start, vase)
    occ = _opened()
    staged = Navigator(occ, act_expansions=20)
    gen = planned_in_stages(staged.budget, staged.plan_to_object_stages(start, vase))
    staged.budget.begin_act()
    assert next(gen).name == PASS  # paused part way
    i, j = occ.cell(1.0, 1.0)
    block = np.zeros_like(occ.wall)
    block[i - 6:i + 7, j - 6:j + 7] = True
    occ.wall |= block
    occ.obstacle |= block
    occ._grid = None  # as a new frame leaves it: the next request gets a new grid
    passes = 1
    while True:
        staged.budget.begin_act()
        try:
            assert gen.send(None).name == PASS
            passes += 1
        except StopIteration as done:
            plan = done.value
            break
    assert passes > 1 and plan is not None and expected is not None
    assert (plan.actions, plan.cost, plan.expanded) == (expected.actions, expected.cost, expected.expanded)
    assert Navigator(occ).plan_to_object(start, vase) is None  # the changed map: no pose sees it


class _Recording:
    """The agent as the runner drives it, keeping each action and what its act planned."""

    def __init__(self, agent: HoloMindAgent) -> None:
        self.agent, self.name = agent, agent.name
        self.actions: list[Action] = []
        self.spent: list[int] = []

    def reset(self, episode, observation: Observation) -> None:
        self.agent.reset(episode, observation)

    def act(self, observation: Observation) -> Action:
        action = self.agent.act(observation)
        self.actions.append(action)
        self.spent.append(self.agent.navigator.budget.spent)
        return action

    def report_extra(self) -> dict:
        return self.agent.report_extra()


@pytest.fixture(scope="module")
def budgeted_runs() -> dict:
    """dev-005-0 (its step 199 once ran 13 searches in one act) for its first 260 steps, without
    a budget and with the default budget (``ACT_EXPANSIONS``): the long searches wait Passes,
    fewer than 260 in all (as many Passes as steps end the episode; a budget of one slice makes
    more: step 199's 13 capped searches alone are 416 slices)."""
    episode = load_episode(EPISODES / "dev-005-0.json")
    runs = {}
    for budget in (None, ACT_EXPANSIONS):
        agent = _Recording(HoloMindAgent(config=AgentConfig(act_expansions=budget)))
        result, _ = run_episode(EmbeddedEnvironment(EmbeddedConfig(width=320, height=240)), agent, episode,
                                max_steps=260)
        runs[budget] = (agent.actions, agent.spent, result)
    return runs


def test_over_an_episode_the_agent_does_what_it_did_unbounded_with_passes_between(budgeted_runs: dict) -> None:
    free_actions, free_spent, free_result = budgeted_runs[None]
    actions, spent, result = budgeted_runs[ACT_EXPANSIONS]
    passes = [a for a in actions if a.name == PASS]
    assert passes and result.extra["planning_passes"] == len(passes)
    assert PASS not in {a.name for a in free_actions} and free_result.extra["planning_passes"] == 0
    # the same actions, all 260 of them: a Pass spends none of the episode's step budget
    assert [a for a in actions if a.name != PASS] == free_actions and len(free_actions) == 260
    assert result.extra["stop_reason"] == free_result.extra["stop_reason"] == "budget"
    assert result.num_actions == free_result.num_actions + len(passes)
    # An act runs at most its budget and one slice of searches made in stages (or one request
    # not split), where unbounded one act (step 199) planned far more.
    assert max(spent) <= MAX_EXPANSIONS < max(free_spent)
    assert result.steps_nav == free_result.steps_nav  # a Pass adds no LongAct step


def test_a_pass_spends_no_step_allowance() -> None:
    """dev-005-0 with allowances small enough that they end goals (the search's 20 steps, the
    goal's 40): counted, the Passes of a one-expansion budget ran g2 into its goal step cap (ended as
    unreachable) where the unbounded agent searched on and ended it as not found."""
    episode = load_episode(EPISODES / "dev-005-0.json")
    caps = {"approach_step_cap": 30, "search_step_cap": 20, "goal_step_cap": 40}
    runs = {}
    for budget, max_steps in ((None, 1500), (1, 3000)):
        agent = _Recording(HoloMindAgent(config=AgentConfig(act_expansions=budget, **caps)))
        result, _ = run_episode(EmbeddedEnvironment(EmbeddedConfig(width=320, height=240)), agent, episode,
                                max_steps=max_steps)
        outcomes = {gid: goal.get("reason") for gid, goal in result.extra["goals"].items()}
        runs[budget] = ([a for a in agent.actions if a.name != PASS], outcomes, result.extra["planning_passes"],
                        agent.agent.acting_step, result.num_actions)
    free_actions, free_outcomes, _, free_clock, free_n = runs[None]
    actions, outcomes, passes, clock, n = runs[1]
    assert passes > 100 and free_actions[-1].name == actions[-1].name == "Stop"  # both ended, unhurried
    assert actions == free_actions and outcomes == free_outcomes
    assert n == free_n + passes and clock == free_clock  # the allowances' clock skips the Passes


class _Passing:
    """An agent that hands in ``passes`` Passes before each move (None: only Passes)."""

    name = "passing"

    def __init__(self, passes: int | None) -> None:
        self.passes, self.since = passes, 0

    def reset(self, episode, observation: Observation) -> None:
        self.since = 0

    def act(self, observation: Observation) -> Action:
        if self.passes is None or self.since < self.passes:
            self.since += 1
            return Action(PASS)
        self.since = 0
        return Action("RotateRight")


def test_the_step_budget_counts_no_pass_and_passes_are_bounded_by_as_many_again() -> None:
    episode = load_episode(EPISODES / "dev-005-0.json")
    env = EmbeddedEnvironment(EmbeddedConfig(width=32, height=24))
    result, _ = run_episode(env, _Passing(1), episode, max_steps=5)  # a Pass before each move
    assert result.extra["stop_reason"] == "budget" and result.num_actions == 5 + 5
    result, _ = run_episode(env, _Passing(None), episode, max_steps=5)
    assert result.extra["stop_reason"] == "planning passes" and result.num_actions == 5
    result, _ = run_episode(env, _Passing(3), episode, max_steps=2)  # 2 moves need 6 Passes: 2 allowed
    assert result.extra["stop_reason"] == "planning passes" and result.num_actions == 2


def test_pass_moves_nothing_counts_no_step_and_is_the_robot_skill_wait() -> None:
    env = EmbeddedEnvironment(EmbeddedConfig(width=32, height=24))
    before = env.reset(load_episode(EPISODES / "dev-005-0.json"))
    world = env.ground_truth()
    after = env.step(Action(PASS))
    assert after.success and after.observation.agent.position == before.agent.position
    assert np.array_equal(after.observation.rgb, before.rgb)
    assert env.ground_truth().objects == world.objects
    counter = StepCounter()
    assert counter.record(PASS, True, (0.0, 0.0), (0.0, 0.0), 90.0, 90.0, 30.0, 30.0) == 0.0
    assert counter.actions == 1 and counter.total == 0.0
    goal = robot_skills.goal_for_action(PASS, step=7)  # a robot holds still for one decision
    assert goal.skill == "wait" and robot_skills.action_for_goal(goal) == (PASS, None, {})


def test_the_default_budget_is_a_part_of_a_capped_search_and_a_slice_a_part_of_it() -> None:
    assert AgentConfig().act_expansions == ACT_EXPANSIONS
    assert 0 < SLICE_EXPANSIONS < ACT_EXPANSIONS < MAX_EXPANSIONS


def test_an_act_charges_its_frame_integration_and_a_re_segmentation_to_its_planning(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The work an act does besides searching is charged in expansions (``INTEGRATION_EXPANSIONS``
    for the frame it integrates, ``NOISY_INTEGRATION_EXPANSIONS`` on the noise-aware path,
    ``SEGMENTATION_EXPANSIONS`` for each room re-segmentation), so the searches get what is left.
    The charges are set to values no search charge has here (a search charges slices of 250 or
    what it expanded), to tell them apart."""
    import planner.holomind as holomind

    monkeypatch.setattr(holomind, "INTEGRATION_EXPANSIONS", 333)
    monkeypatch.setattr(holomind, "NOISY_INTEGRATION_EXPANSIONS", 444)
    monkeypatch.setattr(holomind, "SEGMENTATION_EXPANSIONS", 9_999)
    episode = load_episode(EPISODES / "dev-005-0.json")
    for noise, per_frame in ((0.0, 333), (0.0036, 444)):
        spy = _ChargeSpy(HoloMindAgent(config=AgentConfig(depth_noise_k=noise)))
        run_episode(EmbeddedEnvironment(EmbeddedConfig(width=320, height=240)), spy, episode, max_steps=40)
        assert all(c[:1] == [per_frame] for c in spy.charged[1:])  # each act after the first integrates a frame first
        assert sum(spy.segmented) >= 2
        assert [c.count(9_999) for c in spy.charged] == spy.segmented  # each re-segmentation in its act, once


def test_an_act_charges_what_the_spatial_memory_does_beyond_the_tracker(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the spatial memory as the object memory, each frame's charge adds the memory's own
    (``ObjectMemory.frame_expansions``: ``SPATIAL_MEMORY_EXPANSIONS``, or its noisy twin), so its
    perception and free-space judging do not push an act's time past what the tracker's took."""
    import planner.holomind as holomind
    import planner.spatial_object_memory as spatial

    monkeypatch.setattr(holomind, "INTEGRATION_EXPANSIONS", 333)
    monkeypatch.setattr(holomind, "NOISY_INTEGRATION_EXPANSIONS", 444)
    monkeypatch.setattr(spatial, "SPATIAL_MEMORY_EXPANSIONS", 1_000)
    monkeypatch.setattr(spatial, "NOISY_SPATIAL_MEMORY_EXPANSIONS", 2_000)
    episode = load_episode(EPISODES / "dev-005-0.json")
    for noise, per_frame in ((0.0, 1_333), (0.0036, 2_444)):
        agent = HoloMindAgent(config=AgentConfig(depth_noise_k=noise, object_memory="spatial"))
        spy = _ChargeSpy(agent)
        run_episode(EmbeddedEnvironment(EmbeddedConfig(width=320, height=240)), spy, episode, max_steps=12)
        assert agent.tracker.frame_expansions == per_frame - (444 if noise else 333)
        assert len(spy.charged) > 2 and all(c[:1] == [per_frame] for c in spy.charged[1:])


class _ChargeSpy(_Recording):
    """Keeps, per act, what was charged to its planning budget and how many re-segmentations ran."""

    def __init__(self, agent: HoloMindAgent) -> None:
        super().__init__(agent)
        self.charged: list[list[int]] = []
        self.segmented: list[int] = []

    def act(self, observation: Observation) -> Action:
        budget, rooms = self.agent.navigator.budget, self.agent.rooms
        mine: list[int] = []
        real = budget.charge
        budget.charge = lambda n: (mine.append(n), real(n))[1]  # type: ignore[method-assign]
        before = rooms.segmentations
        try:
            return super().act(observation)
        finally:
            budget.charge = real  # type: ignore[method-assign]
            self.charged.append(mine)
            self.segmented.append(rooms.segmentations - before)
