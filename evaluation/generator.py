"""LongAct-style episode generator: compound tasks of about nine goals over one house, in the four
LongAct scenarios, spread over several rooms, each proven feasible by the oracle before it is
kept. Seeded and deterministic: the same houses, seed and options give the same episodes.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, cast

from household.checklist import ChecklistItem, evaluate_item
from evaluation.episodes import Episode, validate_episode
from evaluation.goal_templates import BUILDERS, POOLS, SCENARIO_TITLES, SCENARIOS, Goal, HouseIndex
from evaluation.instruction_text import compose_concise, compose_detailed
from household.atomic_io import atomic_write_text
from household.errors import InputError
from evaluation.runner import run_episode
from privileged.oracle import OraclePlanner
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.embedded.interactions import ObjectTable
from household.house_data import HouseError, load_asset_database, load_house

# At most this many goals of a kind in one episode (one thing held at the end, as a person asks).
KIND_CAPS = {"held": 1, "cook": 3, "clean": 2, "slice": 2, "fill": 3, "open": 2, "toggle": 3, "room": 3}


@dataclass
class GeneratorOptions:
    goals: int = 10  # at most this many per episode (LongAct averages about nine)
    spare: int = 3  # drawn beyond ``goals`` to replace goals the oracle cannot achieve
    min_goals: int = 7
    min_rooms: int = 3
    draws: int = 400  # goal draws per attempt
    attempts: int = 6  # attempts per (house, scenario) before giving up
    max_steps_factor: float = 3.0  # episode budget = factor x oracle actions (at least 300)


def _already_true(goal: Goal, index: HouseIndex) -> bool:
    """Is some item of the goal true at the start? Items about an object the goal itself sets up
    (a plate it makes dirty) are false by construction and not checked against the clean house."""
    staged = {s["id"] for s in goal.states}
    for raw in goal.items:
        sel = raw["object"]
        if staged & ({sel.get("id")} | set(sel.get("ids") or ())):
            continue
        if evaluate_item(ChecklistItem.from_dict(raw), index.world).satisfied:
            return True
    return False


def _draw_goals(index: HouseIndex, scenario: str, rng: random.Random, opts: GeneratorOptions) -> list[Goal]:
    pool = POOLS[scenario]
    kinds = [k for k, _ in pool.weights]
    weights = [w for _, w in pool.weights]
    goals: list[Goal] = []
    moved: set[str] = set()
    targets: dict[str, int] = {}
    per_kind: dict[str, int] = {}
    for _ in range(opts.draws):
        if len(goals) >= opts.goals + opts.spare:
            break
        kind = rng.choices(kinds, weights)[0]
        if per_kind.get(kind, 0) >= KIND_CAPS.get(kind, opts.goals):
            continue
        goal = BUILDERS[kind](index, pool, rng)
        # One goal per object type, and nothing is both moved and a target (a plate that one
        # goal fills and another carries away).
        if goal is None or goal.types & (moved | set(targets)) or goal.targets & moved:
            continue
        if any(targets.get(t, 0) >= 2 for t in goal.targets):
            continue  # at most two things onto one kind of receptacle
        if _already_true(goal, index):
            continue  # a goal already true at the start teaches nothing
        goals.append(goal)
        moved |= goal.types
        per_kind[kind] = per_kind.get(kind, 0) + 1
        for t in goal.targets:
            targets[t] = targets.get(t, 0) + 1
    return goals


def compose_episode(episode_id: str, house_ref: dict[str, Any], scenario: str, goals: list[Goal],
                    seed: int = 0) -> Episode:
    """The episode for these goals; its wording depends on the seed and the goals only, so a
    re-verified (smaller) goal list is worded afresh but reproducibly."""
    rng = random.Random(f"{seed}:{'|'.join(g.detailed for g in goals)}")
    checklist = [item for g in goals for item in g.items]
    phrases = [g.phrase for g in goals]
    title = rng.choice(SCENARIO_TITLES[scenario])
    states = [s for g in goals for s in g.states]
    data: dict[str, Any] = {
        "id": episode_id, "house": house_ref, "scenario": scenario,
        "instructions": {"detailed": compose_detailed(phrases, rng), "concise": compose_concise(title, phrases)},
        "checklist": checklist, "max_steps": 1000, "goals": [g.to_dict() for g in goals],
    }
    if states:
        data["object_states"] = states
    return Episode.from_dict(data)


ORACLE_MAX_STEPS = 6000  # the oracle's own budget when it verifies an episode (never the episode's max_steps)


def oracle_figures(result: Any) -> dict[str, Any]:
    """The ``oracle`` block an episode file stores: the privileged oracle's run of the episode, the
    reference the agents' steps are compared against. One definition, so the generator and
    ``evaluation.oracle_refresh`` (which rewrites stale blocks) store the same fields, rounded alike."""
    return {"gc": result.gc, "sr": result.sr, "steps_nav": round(result.steps_nav, 3),
            "steps_manip": round(result.steps_manip, 3), "steps_total": round(result.steps_total, 3),
            "actions": result.num_actions}


def infeasible_reason(message: str) -> str:
    """An oracle or generator message with object ids and numbers taken out, so reasons count."""
    text = re.sub(r"\S*\|\S*", "<id>", message).split(" (")[0]
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return re.sub(r"\s+", " ", text).strip(" :")


def generate_for_house(house: dict[str, Any], house_ref: dict[str, Any], scenario: str, seed: int, episode_id: str,
                       opts: GeneratorOptions | None = None, asset_db: dict | None = None,
                       notes: list[str] | None = None) -> Episode | None:
    """One oracle-verified episode, or None when the house cannot support the scenario.
    ``notes`` (if given) receives one line per goal the oracle could not achieve ("cook: no
    progress") and, on failure, why no episode was kept."""
    opts = opts or GeneratorOptions()
    asset_db = asset_db if asset_db is not None else load_asset_database()
    notes = notes if notes is not None else []
    rng = random.Random(seed)
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    last_failure = "no attempt"
    dropped: list[dict[str, str]] = []
    for attempt in range(opts.attempts):
        env.reset(house)
        index = HouseIndex(cast(ObjectTable, env.table), env.ground_truth())  # reset() set the table
        drawn = _draw_goals(index, scenario, rng, opts)
        goals, spare = _held_last(drawn[:opts.goals]), drawn[opts.goals:]
        if any(g.kind == "held" for g in spare):  # the held goal was drawn among the spares: keep it
            goals = _held_last([g for g in goals if g.kind != "held"][:opts.goals - 1] + spare)[:opts.goals]
            spare = [g for g in spare if g.kind != "held"]
        # Verify with the oracle; goals it cannot achieve are dropped, replaced from the spares,
        # and the rest re-verified from the start, so every kept episode is solved end to end in
        # one run.
        for _verify in range(3):
            shortfall = _shortfall(goals, index, opts)
            if shortfall:
                last_failure = (shortfall if _verify == 0 else
                                f"after dropping the goals the oracle could not achieve: {shortfall}")
                break
            episode = compose_episode(episode_id, house_ref, scenario, goals, seed)
            validate_episode(episode, _resolved(episode, house), asset_db)
            result, _ = run_episode(env, OraclePlanner(env), _with_house(episode, house),
                                        max_steps=ORACLE_MAX_STEPS)
            if result.sr == 1.0:
                episode.max_steps = max(300, int(opts.max_steps_factor * result.num_actions))
                episode.oracle = oracle_figures(result)
                # crouched_for: what the oracle saw only crouched (a low shelf, a drawer, a box on the floor)
                episode.extra["generation"] = {"attempt": attempt, "dropped": dropped,
                                               "crouched_for": list(result.extra.get("oracle_crouched_for") or [])}
                return episode
            failed = {r.index for r in result.checklist.items if not r.satisfied}
            given_up = {int(k): v for k, v in (result.extra.get("oracle_given_up") or {}).items()}
            for goal, items in _goal_spans(goals):
                bad = sorted(items & failed)
                if bad:
                    why = given_up.get(bad[0]) or f"not satisfied at the end ({result.extra.get('stop_reason')})"
                    reason = infeasible_reason(why)
                    dropped.append({"kind": goal.kind, "reason": reason})
                    notes.append(f"{goal.kind}: {reason}")
            goals = _drop_failed(goals, failed)
            if _verify == 0 and spare:
                need = max(opts.goals - len(goals), 0)
                goals, spare = _held_last(goals + spare[:need]), spare[need:]
    notes.append(f"episode: {last_failure}")
    return None


def _held_last(goals: list[Goal]) -> list[Goal]:
    return [g for g in goals if g.kind != "held"] + [g for g in goals if g.kind == "held"]


def _resolved(episode: Episode, house: dict[str, Any]) -> dict[str, Any]:
    """The house with the episode's start states applied, as every backend will load it."""
    return _with_house(episode, house).resolve_house()


def _goal_spans(goals: list[Goal]) -> list[tuple[Goal, set[int]]]:
    out, position = [], 0
    for goal in goals:
        out.append((goal, set(range(position, position + len(goal.items)))))
        position += len(goal.items)
    return out


def _shortfall(goals: list[Goal], index: HouseIndex, opts: GeneratorOptions) -> str | None:
    """Why ``goals`` are not enough for an episode (which rule, with the numbers), or None."""
    if len(goals) < opts.min_goals:
        return f"too few goals ({len(goals)} the house supports, at least {opts.min_goals} wanted)"
    rooms = set().union(*(g.rooms for g in goals))
    wanted = min(opts.min_rooms, len(index.world.rooms))
    if len(rooms) < wanted:
        return f"too few rooms (the goals span {len(rooms)}, at least {wanted} wanted)"
    return None


def _drop_failed(goals: list[Goal], failed_items: set[int]) -> list[Goal]:
    """The goals none of whose checklist items (by position in the composed checklist) failed."""
    return [goal for goal, span in _goal_spans(goals) if not span & failed_items]


def _with_house(episode: Episode, house: dict[str, Any]) -> Episode:
    """The same episode with its house already resolved (saves re-reading the houses file)."""
    clone = Episode.from_dict(episode.to_dict())
    clone.house = house
    return clone


# Tab-separated record of (house, j) pairs found infeasible, so a resumed run skips them. Not a
# .json file: episode folders are loaded by extension.
MANIFEST = "generation-manifest.tsv"


MAX_MANIFEST_BYTES = 64 * 1024 * 1024


def _manifest_lines(path: Path) -> list[str]:
    """The manifest's lines (none when absent); InputError naming it when it is not a regular file
    of UTF-8 text (issue 32: a non-UTF-8 manifest ended the rerun in a UnicodeDecodeError traceback)."""
    from household.input_files import check_input_file

    if not path.exists():
        return []
    check_input_file(path, "a generation manifest", MAX_MANIFEST_BYTES)
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}); not a generation manifest this tool wrote; "
                         "move it away or use another --out") from None


def _read_manifest(path: Path, seed: int) -> set[str]:
    out = set()
    for line in _manifest_lines(path):
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1] == "infeasible" and parts[2] == f"seed={seed}":
            out.add(parts[0])
    return out


PREFIX_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def check_prefix(prefix: str) -> None:
    """An id prefix is a plain name: it becomes part of file names inside the output folder, and
    "/abs/x" or "../x" made ``out / f"{prefix}-000-0.json"`` a path outside it (issue 32)."""
    if not PREFIX_RE.fullmatch(prefix) or len(prefix) > 64:
        raise InputError(f"--prefix {prefix!r}: expected a plain name of letters, digits, '-' and '_' "
                         "(at most 64), not a path; it names the episode files inside --out")


def _check_earlier_run(manifest: Path, out: Path, prefix: str, seed: int, houses: str) -> None:
    """Refuse to resume into a folder whose episodes of this prefix were made with another seed
    or houses file: kept episodes would be reported as this run's (issue 32). The parameters are
    the ``params`` lines of the manifest; for folders from before them, the kept episodes' own
    ``house.file`` is compared."""
    wanted = {"seed": str(seed), "houses": houses}
    lines = _manifest_lines(manifest)
    for line in lines:
        parts = line.split("\t")
        if len(parts) >= 2 and parts[0] == prefix and parts[1] == "params":
            stored = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
            differ = [f"--{k} {stored[k]} there, {v} now" for k, v in wanted.items() if k in stored and stored[k] != v]
            if differ:
                raise InputError(f"--out {out}: holds {prefix}-* episodes generated with other options "
                                 f"({'; '.join(differ)}); a rerun would keep them as this run's; use another --out "
                                 "or --prefix")
    ours = re.compile(re.escape(prefix) + r"-\d{3,}-\d+\.json")
    for path in sorted(p for p in out.glob(f"{prefix}-*.json") if ours.fullmatch(p.name)):
        try:
            ref = json.loads(path.read_text(encoding="utf-8")).get("house")
        except (OSError, ValueError, AttributeError):
            continue  # unreadable: eval's loader names it; not this check's business
        if isinstance(ref, dict) and isinstance(ref.get("file"), str) and ref["file"] != houses:
            raise InputError(f"{path}: house.file is {ref['file']!r}, not {houses!r}; a rerun would keep it as "
                             "this run's episode; use another --out or --prefix")


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


def run_generate_job(job: GenerateJob) -> tuple[Episode | HouseError | None, list[str]]:
    """Generate one episode (None: infeasible; a HouseError: the house line is unusable), with
    the generator's notes (why an episode is infeasible, the goals the oracle dropped)."""
    key = (job.houses_file, job.index)
    if key not in _HOUSE_CACHE:
        _HOUSE_CACHE.clear()
        try:
            _HOUSE_CACHE[key] = load_house(job.houses_file, job.index)
        except HouseError as exc:  # a malformed line costs its own house only
            _HOUSE_CACHE[key] = exc
    house = _HOUSE_CACHE[key]
    if isinstance(house, HouseError):
        return house, []
    if not _ASSETS:
        _ASSETS.append(load_asset_database())
    ref = {"file": Path(job.houses_file).name, "index": job.index}
    notes: list[str] = []
    episode = generate_for_house(house, ref, job.scenario, job.seed, job.episode_id, job.opts, _ASSETS[0], notes=notes)
    return episode, notes


def generate_set(houses_file: str, indices: list[int], out_dir: str | Path, *, per_house: int = 1, seed: int = 0,
                 prefix: str = "dev", opts: GeneratorOptions | None = None, resume: bool = True,
                 progress: Callable[[str], None] | None = None, executor: Any = None,
                 kept: list[Path] | None = None) -> tuple[list[Path], list[str]]:
    """Generate episodes over houses, cycling through the scenarios by house index; writes one
    JSON per episode (atomically) and returns the paths written and the (house, scenario) pairs
    that failed. Everything about an episode (scenario, seed, id) depends only on (house index,
    j), so a split or resumed run equals one whole run: with ``resume``, episode files already
    there are kept and (house, j) pairs the manifest records as infeasible for this seed are not
    tried again. ``executor`` (evaluation/executor.py; default: in this process) runs one task
    per (house, j) pair; only this function writes files, in whatever order the tasks finish.
    Episodes kept from an earlier run are also appended to ``kept``; resuming a folder made with
    another seed or houses file is an InputError (``_check_earlier_run``)."""
    from evaluation.executor import InProcessExecutor, Task

    check_prefix(prefix)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / MANIFEST
    name = Path(houses_file).name
    _manifest_lines(manifest)  # refused before anything is appended to it
    if resume:
        _check_earlier_run(manifest, out, prefix, seed, name)
    with open(manifest, "a", encoding="utf-8") as fh:  # what a rerun into this folder must match
        fh.write("\t".join([prefix, "params", f"seed={seed}", f"houses={name}"]) + "\n")
    infeasible = _read_manifest(manifest, seed) if resume else set()
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
                if kept is not None:
                    kept.append(path)
                continue
            if eid in infeasible:
                failed.append(f"{name}#{index} {scenario} (manifest)")
                continue
            job = GenerateJob(houses_file, index, j, scenario, eid, seed * 100_003 + index * 101 + j, opts)
            tasks.append(Task(len(tasks), eid, job))
    bad_houses: set[int] = set()
    for outcome in (executor or InProcessExecutor()).run(run_generate_job, tasks):
        job = outcome.task.payload
        episode, notes = outcome.value if outcome.ok else (None, [])
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
            why = next((n[len("episode: "):] for n in notes if n.startswith("episode: ")), "no feasible episode")
            failed.append(f"{name}#{job.index} {job.scenario}: {why}")
            with open(manifest, "a", encoding="utf-8") as fh:
                # Columns: id, status, seed, scenario, why, then the goals the oracle dropped.
                fh.write("\t".join([job.episode_id, "infeasible", f"seed={seed}", job.scenario, why,
                                    *(n for n in notes if not n.startswith("episode: "))]) + "\n")
            if progress:
                progress(f"{job.episode_id}: {job.scenario}: no feasible episode ({why})")
            continue
        path = atomic_write_text(out / f"{job.episode_id}.json", json.dumps(episode.to_dict(), indent=1) + "\n")
        written.append(path)
        if progress:
            progress(f"{job.episode_id}: {job.scenario}: {len(episode.checklist)} items, "
                     f"oracle {episode.oracle['steps_total']:.0f} steps")
    return sorted(written), failed
