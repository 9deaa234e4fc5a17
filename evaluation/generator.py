"""LongAct-style episode generator: compound tasks of about nine goals over one house, in the four
LongAct scenarios, spread over several rooms, each proven feasible by the oracle before it is
kept. Seeded and deterministic: the same houses, seed and options give the same episodes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from evaluation.checklist import ChecklistItem, evaluate_item
from evaluation.episodes import Episode, validate_episode
from evaluation.goal_templates import BUILDERS, KIND_WEIGHTS, POOLS, SCENARIO_TITLES, SCENARIOS, Goal, HouseIndex
from evaluation.report import atomic_write_text
from evaluation.runner import run_episode
from planner.oracle import OraclePlanner
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.embedded.house_data import HouseError, load_asset_database, load_house


@dataclass
class GeneratorOptions:
    goals: int = 9
    min_goals: int = 7
    min_rooms: int = 3
    draws: int = 400  # goal draws per attempt
    attempts: int = 6  # attempts per (house, scenario) before giving up
    max_steps_factor: float = 3.0  # episode budget = factor x oracle actions (at least 300)


def _draw_goals(index: HouseIndex, scenario: str, rng: random.Random, opts: GeneratorOptions) -> list[Goal]:
    pool = POOLS[scenario]
    kinds = [k for k in KIND_WEIGHTS if k in pool.kinds]
    weights = [KIND_WEIGHTS[k] for k in kinds]
    goals: list[Goal] = []
    moved: set[str] = set()
    targets: dict[str, int] = {}
    for _ in range(opts.draws):
        if len(goals) >= opts.goals:
            break
        goal = BUILDERS[rng.choices(kinds, weights)[0]](index, pool, rng)
        # One goal per object type, and nothing is both moved and a target (a plate that one
        # goal fills and another carries away).
        if goal is None or goal.types & (moved | set(targets)) or goal.targets & moved:
            continue
        if any(targets.get(t, 0) >= 2 for t in goal.targets):
            continue  # at most two things onto one kind of receptacle
        # A goal already true at the start teaches nothing: reject it.
        if any(evaluate_item(ChecklistItem.from_dict(it), index.world).satisfied for it in goal.items):
            continue
        goals.append(goal)
        moved |= goal.types
        for t in goal.targets:
            targets[t] = targets.get(t, 0) + 1
    return goals


def compose_episode(episode_id: str, house_ref: dict[str, Any], scenario: str, goals: list[Goal]) -> Episode:
    checklist = [item for g in goals for item in g.items]
    title = SCENARIO_TITLES[scenario]
    detailed = " ".join(g.detailed for g in goals)
    concise = f"{title}: " + ", ".join(g.concise for g in goals) + "."
    return Episode.from_dict({
        "id": episode_id, "house": house_ref, "scenario": scenario,
        "instructions": {"detailed": detailed, "concise": concise},
        "checklist": checklist, "max_steps": 1000, "goals": [g.to_dict() for g in goals],
    })


def generate_for_house(house: dict[str, Any], house_ref: dict[str, Any], scenario: str, seed: int, episode_id: str,
                       opts: GeneratorOptions | None = None, asset_db: dict | None = None) -> Episode | None:
    """One oracle-verified episode, or None when the house cannot support the scenario."""
    opts = opts or GeneratorOptions()
    asset_db = asset_db if asset_db is not None else load_asset_database()
    rng = random.Random(seed)
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    for _attempt in range(opts.attempts):
        env.reset(house)
        index = HouseIndex(env.table, env.ground_truth())
        goals = _draw_goals(index, scenario, rng, opts)
        # Verify with the oracle; goals it cannot achieve are dropped and the rest re-verified
        # from the start, so every kept episode is solved end to end in one run.
        for _verify in range(2):
            if not _enough(goals, index, opts):
                break
            episode = compose_episode(episode_id, house_ref, scenario, goals)
            validate_episode(episode, house, asset_db)
            result, _ = run_episode(env, OraclePlanner(env), _with_house(episode, house), max_steps=6000)
            if result.sr == 1.0:
                episode.max_steps = max(300, int(opts.max_steps_factor * result.num_actions))
                episode.oracle = {"gc": result.gc, "sr": result.sr, "steps_nav": round(result.steps_nav, 3),
                                  "steps_manip": round(result.steps_manip, 3),
                                  "steps_total": round(result.steps_total, 3), "actions": result.num_actions}
                return episode
            failed = {r.index for r in result.checklist.items if not r.satisfied}
            goals = _drop_failed(goals, failed)
    return None


def _enough(goals: list[Goal], index: HouseIndex, opts: GeneratorOptions) -> bool:
    rooms = set().union(*(g.rooms for g in goals)) if goals else set()
    return len(goals) >= opts.min_goals and len(rooms) >= min(opts.min_rooms, len(index.world.rooms))


def _drop_failed(goals: list[Goal], failed_items: set[int]) -> list[Goal]:
    """The goals none of whose checklist items (by position in the composed checklist) failed."""
    kept, position = [], 0
    for goal in goals:
        span = set(range(position, position + len(goal.items)))
        position += len(goal.items)
        if not span & failed_items:
            kept.append(goal)
    return kept


def _with_house(episode: Episode, house: dict[str, Any]) -> Episode:
    """The same episode with its house already resolved (saves re-reading the houses file)."""
    clone = Episode.from_dict(episode.to_dict())
    clone.house = house
    return clone


# Tab-separated record of (house, j) pairs found infeasible, so a resumed run skips them. Not a
# .json file: episode folders are loaded by extension.
MANIFEST = "generation-manifest.tsv"


def _read_manifest(path: Path, seed: int) -> set[str]:
    if not path.exists():
        return set()
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1] == "infeasible" and parts[2] == f"seed={seed}":
            out.add(parts[0])
    return out


@dataclass(frozen=True)
class GenerateJob:
    """One (house, j) pair for an executor task; everything about it is fixed by (index, j, seed)."""

    houses_file: str
    index: int
    j: int
    scenario: str
    episode_id: str
    seed: int
    opts: GeneratorOptions | None = None


_HOUSE_CACHE: dict[tuple[str, int], Any] = {}  # per process: the last house read (pairs come in house order)
_ASSETS: list[dict] = []  # per process: the asset database, read once


def run_generate_job(job: GenerateJob) -> Episode | HouseError | None:
    """Generate one episode (None: infeasible; a HouseError: the house line is unusable)."""
    key = (job.houses_file, job.index)
    if key not in _HOUSE_CACHE:
        _HOUSE_CACHE.clear()
        try:
            _HOUSE_CACHE[key] = load_house(job.houses_file, job.index)
        except HouseError as exc:  # a malformed line costs its own house only
            _HOUSE_CACHE[key] = exc
    house = _HOUSE_CACHE[key]
    if isinstance(house, HouseError):
        return house
    if not _ASSETS:
        _ASSETS.append(load_asset_database())
    ref = {"file": Path(job.houses_file).name, "index": job.index}
    return generate_for_house(house, ref, job.scenario, job.seed, job.episode_id, job.opts, _ASSETS[0])


def generate_set(houses_file: str, indices: list[int], out_dir: str | Path, *, per_house: int = 1, seed: int = 0,
                 prefix: str = "dev", opts: GeneratorOptions | None = None, resume: bool = True,
                 progress: Callable[[str], None] | None = None, executor: Any = None) -> tuple[list[Path], list[str]]:
    """Generate episodes over houses, cycling through the scenarios by house index; writes one
    JSON per episode (atomically) and returns the paths written and the (house, scenario) pairs
    that failed. Everything about an episode (scenario, seed, id) depends only on (house index,
    j), so a split or resumed run equals one whole run: with ``resume``, episode files already
    there are kept and (house, j) pairs the manifest records as infeasible for this seed are not
    tried again. ``executor`` (evaluation/executor.py; default: in this process) runs one task
    per (house, j) pair; only this function writes files, in whatever order the tasks finish."""
    from evaluation.executor import InProcessExecutor, Task

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / MANIFEST
    infeasible = _read_manifest(manifest, seed) if resume else set()
    name = Path(houses_file).name
    written: list[Path] = []
    failed: list[str] = []
    tasks: list[Task] = []
    for index in indices:
        for j in range(per_house):
            # Keyed on the house index, so a split run gives the same episodes as a whole one.
            scenario = SCENARIOS[(index + j) % len(SCENARIOS)]
            eid = f"{prefix}-{index:03d}-{j}"
            path = out / f"{eid}.json"
            if resume and path.exists():  # written by an earlier (interrupted) run
                written.append(path)
                continue
            if eid in infeasible:
                failed.append(f"{name}#{index} {scenario} (manifest)")
                continue
            job = GenerateJob(houses_file, index, j, scenario, eid, seed * 100_003 + index * 101 + j, opts)
            tasks.append(Task(len(tasks), eid, job))
    bad_houses: set[int] = set()
    for outcome in (executor or InProcessExecutor()).run(run_generate_job, tasks):
        job = outcome.task.payload
        episode = outcome.value
        if isinstance(episode, HouseError):
            if job.index not in bad_houses:
                bad_houses.add(job.index)
                failed.append(f"{name}#{job.index}: {episode}")
                if progress:
                    progress(f"{prefix}-{job.index:03d}: skipped: {episode}")
            continue
        if not outcome.ok:  # the task crashed or its worker died twice: not recorded as infeasible
            failed.append(f"{name}#{job.index} {job.scenario}: {outcome.error}")
            if progress:
                progress(f"{job.episode_id}: {job.scenario}: failed: {outcome.error}")
            continue
        if episode is None:
            failed.append(f"{name}#{job.index} {job.scenario}")
            with open(manifest, "a", encoding="utf-8") as fh:
                fh.write(f"{job.episode_id}\tinfeasible\tseed={seed}\t{job.scenario}\n")
            if progress:
                progress(f"{job.episode_id}: {job.scenario}: no feasible episode")
            continue
        path = atomic_write_text(out / f"{job.episode_id}.json", json.dumps(episode.to_dict(), indent=1) + "\n")
        written.append(path)
        if progress:
            progress(f"{job.episode_id}: {job.scenario}: {len(episode.checklist)} items, "
                     f"oracle {episode.oracle['steps_total']:.0f} steps")
    return sorted(written), failed
