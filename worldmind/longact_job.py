"""One LongAct episode as an executor task, and how the experience pool is shared between tasks.

The task runs where the executor puts it (this process or a Ray worker) and returns everything
the driver needs to write the episode's report; it writes no file of the run itself. Its
simulator is cached per process and per set of simulator options (as ``eval longact`` always
reused one simulator across episodes): ``env.reset(episode)`` starts every episode afresh.

Experience pool (the one piece of state shared between episodes): episodes run in *waves*. Every
episode of a wave starts from the same read-only snapshot of the pool (taken when the wave
starts); the task returns its pool as it ended; after the wave the driver merges each episode's
change (new entries; ``seen``/``validated`` increments; the tries counted per action and type)
into the pool in episode order and saves it. Results therefore depend on the wave size, never on
the number of workers or on which episode finished first. In-process runs use waves of one episode (each episode sees everything
learned before it, as before); Ray runs default to ``DEFAULT_RAY_WAVE``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from worldmind.resume_key import RESUME_KEY, resume_key

DEFAULT_RAY_WAVE = 8
# The options of `eval longact` that shape the simulator and agent (everything else is the driver's).
ENV_OPTIONS = ("sim", "data_dir", "move_step", "no_render", "thor_build", "thor_platform", "habitat_dataset",
               "sensors")
AGENT_OPTIONS = ("planner", "instruction", "ablate", "llm_config", "pose_correction", "object_memory")
RUN_OPTIONS = ("time_limit",)  # how the runner ends an episode

_ENVS: dict[tuple[Any, ...], Any] = {}  # per process: one simulator per set of ENV_OPTIONS
_ASSETS: list[Any] = []  # per process: the asset database, read once


@dataclass(frozen=True)
class PoolSnapshot:
    """An experience pool as plain data, for a wave's tasks and back: its entries as dicts
    (sorted by key) and its tries per "Action|ObjectType" (``ExperiencePool.attempts``, which the
    "come closer" rule's rate needs: a snapshot without them gave every episode an empty count)."""

    entries: list[dict[str, Any]]
    attempts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class LongActJob:
    """What a worker needs for one episode. ``experience`` is the pool snapshot, or None when
    the planner keeps no pool."""

    episode: Any  # evaluation.episodes.Episode
    options: dict[str, Any]
    experience: PoolSnapshot | None = None


@dataclass
class LongActOutput:
    """A finished episode (``result``, ``layout``, ``world`` for the report) or a skipped one
    (``skipped``: the episode or its house is invalid, one message per line)."""

    result: Any = None
    layout: Any = None
    world: Any = None
    experience: PoolSnapshot | None = None
    skipped: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def job_options(args: argparse.Namespace) -> dict[str, Any]:
    """The picklable subset of the parsed command line a worker needs."""
    return {k: getattr(args, k, None) for k in ENV_OPTIONS + AGENT_OPTIONS + RUN_OPTIONS}


def _env_for(options: dict[str, Any]) -> Any:
    from worldmind.cli_common import make_env

    key = tuple(repr(options.get(k)) for k in ENV_OPTIONS)
    env = _ENVS.get(key)
    if env is None:
        env = _ENVS[key] = make_env(argparse.Namespace(**options))
    return env


def run_longact_job(job: LongActJob, progress: Any = None) -> LongActOutput:
    """Validate and run one episode; the driver writes the report from what comes back."""
    from evaluation import runner
    from evaluation.episodes import EpisodeError, validate_episode
    from household.house_data import HouseError, load_asset_database
    from evaluation.layout import report_layout
    from worldmind.cli_common import agent_for, save_experience

    args = argparse.Namespace(**job.options)
    episode = job.episode
    if not _ASSETS:
        _ASSETS.append(load_asset_database())
    try:
        episode.instruction(args.instruction)
        validate_episode(episode, episode.resolve_house(args.data_dir), _ASSETS[0])
    except (EpisodeError, HouseError, FileNotFoundError) as exc:
        return LongActOutput(skipped=str(exc))
    env = _env_for(job.options)
    workdir = None
    pool_path = None
    if job.experience is not None:
        from planner.critic import ExperiencePool

        workdir = Path(tempfile.mkdtemp(prefix="worldmind-exp-"))
        pool_path = workdir / "experience_pool.json"
        snapshot = ExperiencePool(pool_path)
        snapshot.entries = _entries(job.experience.entries)
        snapshot.attempts = dict(job.experience.attempts)
        snapshot.save()
    try:
        agent = agent_for(args, env, pool_path)
        result, world = runner.run_episode(env, agent, episode, instruction_kind=args.instruction, progress=progress,
                                           time_limit_s=getattr(args, "time_limit", None))
        result.extra["sensors"] = args.sensors or "ideal"
        result.extra[RESUME_KEY] = resume_key(job.options, episode)  # what a rerun must match to reuse it
        save_experience(agent)
        pool = getattr(agent, "experience", None)
        after = None if job.experience is None or pool is None else snapshot_pool(pool)
        return LongActOutput(result=result, layout=report_layout(env, world), world=world, experience=after)
    finally:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


def _entries(raw: list[dict[str, Any]]) -> dict[str, Any]:
    from planner.critic import Experience

    out = {}
    for item in raw:
        exp = Experience(**item)
        out[exp.key] = exp
    return out


def snapshot_pool(pool: Any) -> PoolSnapshot:
    """The pool as plain data (a read-only copy for one wave): entries sorted by key, and the
    tries (a store that counts none, the ``episodic`` ablation's, gives none)."""
    return PoolSnapshot([asdict(e) for e in sorted(pool.entries.values(), key=lambda e: e.key)],
                        dict(sorted(getattr(pool, "attempts", {}).items())))


def merge_experience(pool: Any, snapshot: PoolSnapshot, after: PoolSnapshot | None) -> None:
    """Add what one episode learned (``after`` minus the wave's ``snapshot``) to ``pool``: new
    entries are added, and ``seen``/``validated`` and the tries grow by the episode's
    increments. Call it for the wave's episodes in episode order so the merged pool does not
    depend on finishing order."""
    if after is None:
        return
    from planner.critic import add_tries

    add_tries(pool.attempts, after.attempts, snapshot.attempts)
    base = _entries(snapshot.entries)
    for key, exp in _entries(after.entries).items():
        before = base.get(key)
        d_seen = exp.seen - (before.seen if before else 0)
        d_validated = exp.validated - (before.validated if before else 0)
        target = pool.entries.get(key)
        if target is None:
            exp.seen, exp.validated = max(0, d_seen), max(0, d_validated)
            pool.entries[key] = exp
        else:
            target.seen += max(0, d_seen)
            target.validated += max(0, d_validated)
