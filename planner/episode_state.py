"""What the goal loop learns about objects and goals during one episode, in one typed record.

Why a record: these sets decide which object a goal may bind next (excluded for this goal,
rejected for every goal, unreachable so far, used by a finished goal) and what the report says
per goal (status, outcome, steps, the observation check). Spread over a dozen agent attributes
they were reset in one place and read in many; here they are one value, made new per episode,
that tests can build and inspect directly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from planner.goal_check import GoalCheck


@dataclass
class EpisodeState:
    excluded_now: set[str] = field(default_factory=set)  # will not do for the current goal
    rejected_ids: set[str] = field(default_factory=set)  # will not do for any goal (not an object, cannot do it)
    relaxed_goals: set[str] = field(default_factory=set)  # goals grounded with the room names relaxed
    relaxed_relations: set[str] = field(default_factory=set)  # goals grounded with their relations relaxed
    unreachable: set[str] = field(default_factory=set)  # navigation to it failed: others of the type first
    # object id -> the nearest the agent believed it was when an interaction with it was refused
    # as out of reach: the next try comes nearer than that (``HoloMindAgent.reach_wanted``)
    refused_reach: dict[str, float] = field(default_factory=dict)
    # object id -> where the agent stood (x, z, its belief) when an interaction with it was refused
    # as not visible: the simulator's verdict from a pose does not change, so the next try stands
    # elsewhere (``HoloMindAgent.views_refused``)
    refused_views: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    used_ids: set[str] = field(default_factory=set)  # bound by a finished goal
    group_used: dict[str, set[str]] = field(default_factory=dict)  # distinct_group -> objects bound in it
    failed_frontiers: list[tuple[float, float, int]] = field(default_factory=list)  # (x, z, weight)
    inspected: set[str] = field(default_factory=set)  # receptacles looked at closely or opened while searching
    looked_again: set[str] = field(default_factory=set)  # glimpses walked up to (planner.surface_look.look_again)
    goal_status: dict[str, str] = field(default_factory=dict)  # pending / deferred / done / failed
    # why a goal attempt ended as it did (a GOAL_REASONS category, the detail, what it was bound to)
    goal_outcome: dict[str, dict[str, Any]] = field(default_factory=dict)
    goal_steps: Counter = field(default_factory=Counter)  # steps spent in each goal's attempts
    goal_checks: dict[str, GoalCheck] = field(default_factory=dict)  # the latest observation check of each goal
    rechecked: set[str] = field(default_factory=set)  # goals retried once after a contradicted check
    # object id -> (step, action) of the agent's latest successful interaction with it (a later
    # goal may undo an earlier one: planner.goal_check.recheck_after_own_actions)
    touched: dict[str, tuple[int, str]] = field(default_factory=dict)
    # object id -> the box the agent shut it in: seen inside while the box was open, out of view
    # once it was closed. Opened again before an action on the object (``Skills.interact``).
    shut_in: dict[str, str] = field(default_factory=dict)
    # object id -> the type the memory gave it when the current attempt grounded it: a closer look
    # that names it otherwise before the agent acts on it sends the goal to ground again
    grounded_as: dict[str, str] = field(default_factory=dict)
    # goal -> (object, why its description may name another) as an attempt chose it
    choice_doubts: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    redone: set[str] = field(default_factory=set)  # goals done again once after a later goal undid them
    # planner.end_checks: the own-action recheck is due until it runs, and again once a goal is
    # redone after it; the description recheck runs once
    end_recheck_due: bool = True
    descriptions_rechecked: bool = False
