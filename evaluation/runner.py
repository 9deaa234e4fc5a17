"""Run one LongAct episode: an agent acting on an Environment, scored against the checklist.

The loop is the same for every planner and backend: the agent sees observations only (a
privileged agent such as the oracle holds its own handle on the simulator); ground truth is read
after each step to score GC for the timeline, never passed to the agent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from household.checklist import depends_on_position, evaluate_checklist
from evaluation.episodes import Episode
from evaluation.metrics import DEFAULT_IR_SEGMENTS, ScoreTimeline, StepCounter
from evaluation.report import EpisodeResult
from household.frames import ros_to_thor_points, ros_yaw_to_thor
from household.heap import settle_heap
from household.step_budget import StepBudget
from household.types import PASS, Action, Environment, Observation, WorldState


class Agent(Protocol):
    name: str

    def reset(self, episode: Episode, observation: Observation) -> None: ...

    def act(self, observation: Observation) -> Action: ...


@dataclass
class StepProgress:
    step: int  # the steps that count against the budget so far (a Pass does not: ``run_episode``)
    max_steps: int
    gc: float
    action: str
    success: bool


ProgressCallback = Callable[[StepProgress], None]


def _thor_pose(obs: Observation) -> tuple[tuple[float, float], float, float]:
    """(x, z), yaw and horizon of the agent in THOR terms, from the observation's REP 103 pose."""
    p = ros_to_thor_points(obs.agent.position)
    return (float(p[0]), float(p[2])), ros_yaw_to_thor(obs.agent.yaw_deg), float(obs.agent.horizon_deg)


def run_episode(
    env: Environment,
    agent: Agent,
    episode: Episode,
    *,
    instruction_kind: str = "detailed",
    max_steps: int | None = None,
    ir_segments: int = DEFAULT_IR_SEGMENTS,
    progress: ProgressCallback | None = None,
    time_limit_s: float | None = None,
) -> tuple[EpisodeResult, WorldState]:
    """Run until the agent says Stop, the step budget is spent or, with ``time_limit_s``, that
    many seconds of wall time have passed (checked between steps: a slow model's episode on a
    lent machine is scored as it stands, with ``stop_reason`` "time limit", instead of being
    killed with nothing written); returns the result and the final ground truth (for the
    report's map).

    The step budget counts the agent's actions other than ``Pass``: a Pass is a step in which
    the agent only goes on planning (``planner.planning_budget``: a search spread over steps so
    that no decision stalls), and how finely a deployment spreads its planning must not decide
    how much of the task it gets to do (at an act budget of 2,000 expansions one realistic
    episode spent 548 of its 2,496 steps in Passes and ran out of budget). Passes are bounded
    all the same, by as many again (``stop_reason`` "planning passes" past that); the report
    counts them (``planning_passes``) and every action (``num_actions``)."""
    if time_limit_s is not None and not time_limit_s > 0:
        raise ValueError(f"time limit: expected a positive number of seconds, got {time_limit_s!r}")
    episode.instruction(instruction_kind)  # fail early on a missing instruction kind
    budget = max_steps if max_steps is not None else episode.max_steps
    started = time.perf_counter()
    obs = env.reset(episode)
    agent_error: str | None = None
    try:
        agent.reset(episode, obs)
    except Exception as exc:  # e.g. an instruction the planner cannot read: score the untouched world
        agent_error = f"agent error: {type(exc).__name__}: {exc}"
    settle_heap()  # the collector's full walks between episodes, not in a decision
    counter = StepCounter()
    timeline = ScoreTimeline()
    gc = evaluate_checklist(episode.checklist, env.ground_truth()).gc
    timeline.append(0, gc)
    pos, yaw, horizon = _thor_pose(obs)
    path = [pos]
    errors: list[str] = []
    carried_matters = depends_on_position(episode.checklist)
    stop_reason = "budget" if agent_error is None else agent_error
    steps = StepBudget(budget if agent_error is None else 0)
    step = 0  # every action so far (``steps`` counts those against the budget and the Passes)
    while not steps.spent():
        if time_limit_s is not None and time.perf_counter() - started > time_limit_s:
            stop_reason = f"time limit ({time_limit_s:g} s)"
            break
        try:
            action = agent.act(obs)
        except Exception as exc:  # a planner bug must not lose the run's partial results
            stop_reason = f"agent error: {type(exc).__name__}: {exc}"
            break
        if action.name == "Stop":
            stop_reason = "stop"
            break
        if not steps.take(action.name):
            stop_reason = "planning passes"
            break
        step += 1
        result = env.step(action)
        obs = result.observation
        new_pos, new_yaw, new_horizon = _thor_pose(obs)
        counter.record(action.name, result.success, pos, new_pos, yaw, new_yaw, horizon, new_horizon)
        if new_pos != pos:
            path.append(new_pos)
        pos, yaw, horizon = new_pos, new_yaw, new_horizon
        if not result.success:
            errors.append(f"step {step}: {action.name} {action.object_id or ''}: {result.error}".strip())
        # A navigation step changes GC only by carrying an object, and only where an item reads
        # positions (inRoom, a selector naming a room): skipping the others saves a ground-truth
        # read per step (about 8 ms in a furnished house).
        if not (action.is_navigation or action.name == PASS) or (carried_matters and obs.agent.held_object_id is not None):
            gc = evaluate_checklist(episode.checklist, env.ground_truth()).gc
        timeline.append(step, gc)
        if progress is not None:
            progress(StepProgress(steps.acted, budget, gc, action.name, result.success))
    world = env.ground_truth()
    checklist = evaluate_checklist(episode.checklist, world)
    extra: dict[str, Any] = {"stop_reason": stop_reason, "errors": errors[-50:], "max_steps": budget}
    if time_limit_s is not None:
        extra["time_limit_s"] = time_limit_s
    agent_extra = getattr(agent, "report_extra", None)
    if callable(agent_extra):
        try:
            extra.update(agent_extra())
        except Exception as exc:  # an agent that failed to reset may have no state to report
            extra["report_extra_error"] = f"{type(exc).__name__}: {exc}"
    episode_result = EpisodeResult.from_run(
        episode, instruction_kind=instruction_kind, planner=agent.name, checklist=checklist, steps=counter,
        timeline=timeline, agent_path=path, wall_time_s=time.perf_counter() - started, extra=extra,
        ir_segments=ir_segments,
    )
    return episode_result, world
