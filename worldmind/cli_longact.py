"""The driver of ``worldmind eval longact``: resume, run the selected episodes on the chosen
executor (evaluation/executor.py), write every report and the summary.

Only the driver writes files (atomically, evaluation/report.py), so an interrupted or killed run
leaves whole reports, a summary over what finished and the experience pool as of the last whole
wave; rerunning the same command resumes with the episodes that have no report. Reports and the
summary list episodes in selection order whatever order the workers finish in. An episode whose
task failed (its worker died twice, it raised, it timed out) gets ``failed.json`` naming the
reason in its folder and is retried by the next rerun.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from evaluation.executor import ExecutorError, Outcome, Task
from evaluation.executor_options import executor_from_args
from evaluation.report import atomic_write_text, write_episode_report, write_summary
from planner.factory import is_privileged
from worldmind.cli_common import (EXIT_FAILED, EXIT_OK, EXPERIENCE_FILE, PROG, CliError, DamagedReport, StepReporter,
                                  episode_bar, existing_result, planner_label, printable, safe_dir_name)
from worldmind.resume_key import resume_key
from worldmind.run_folder import lock_run_folder, writable_out_dir
from worldmind.longact_job import (DEFAULT_RAY_WAVE, LongActJob, PoolSnapshot, job_options, merge_experience,
                                   run_longact_job, snapshot_pool)

FAILED_FILE = "failed.json"


def _experience_path(args: argparse.Namespace, out: Path) -> Path | None:
    """The pool persists across this run's episodes and across reruns into the same --out (none
    for the oracle, and none under --ablate episodic: that agent neither loads nor saves one)."""
    if is_privileged(args.planner) or "episodic" in (args.ablate or ()):
        return None
    return Path(args.experience) if args.experience else out / EXPERIENCE_FILE


def _load_pool(path: Path | None) -> Any:
    if path is None:
        return None
    from planner.critic import ExperiencePool

    try:
        return ExperiencePool.load(path)
    except ValueError as exc:
        raise CliError(f"--experience: {exc}") from None


def refuse_folder_collisions(episodes: Sequence[Any]) -> None:
    """Each episode needs a report folder of its own. Ids are unique (load_episodes) and folder
    names are an injective encoding of them (safe_dir_name), but on a case-insensitive file
    system "A" and "a" still share a folder: refuse such a selection rather than let one report
    replace the other."""
    seen: dict[str, str] = {}
    problems = []
    for ep in episodes:
        folder = safe_dir_name(ep.id).casefold()
        if folder in seen and seen[folder] != ep.id:
            problems.append(f"episode ids {seen[folder]!r} and {ep.id!r} would share the report folder "
                            f"{safe_dir_name(ep.id)!r} on a case-insensitive file system; rename one")
        elif folder in seen:
            problems.append(f"episode id {ep.id!r} is selected twice; episode ids must be unique")
        seen.setdefault(folder, ep.id)
    if problems:
        raise CliError(problems)


def _waves(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i:i + size] for i in range(0, len(items), size)] if items else []


def longest_first(wave: list[int], episodes: Sequence[Any]) -> list[int]:
    """A wave's episodes, the longest expected first (ties in episode order).

    A wave ends when its last episode does, so with several workers the order decides how long
    one worker idles at the wave's end: handed out in file order, a long episode drawn last
    runs alone. Longest first (Graham's LPT rule) by the episode's step budget (``max_steps``,
    set from the oracle's plan; over the 184 v2 dev episodes it correlates 0.80 with an
    episode's wall time) shortens that tail: the whole v2 set on two workers went from 49.1 to
    47.7 min (``benchmarks/wave_schedule.py`` replays the committed run's per-episode times:
    48.5 min in file order, 46.7 longest first, 44.8 if no worker ever idled). Results do not
    change: each wave starts from one snapshot of the experience pool and is merged in episode
    order, whatever order it ran in. One slot runs in file order (the order changes nothing)."""
    return sorted(wave, key=lambda i: (-int(episodes[i].max_steps), i))


def _mean_line(results: list[Any]) -> str:
    mean_gc = sum(r.gc for r in results) / len(results)
    mean_sr = sum(r.sr for r in results) / len(results)
    return f"mean GC {mean_gc:.3f} SR {mean_sr:.3f} over {len(results)}"


def run_longact_eval(args: argparse.Namespace, episodes: Sequence[Any]) -> int:
    """Run under the output folder's lock (worldmind/run_folder.py): a second run into the same
    --out is refused with the first one's PID instead of silently replacing its results."""
    writable_out_dir(args.out)  # a file, a device or a full disk as --out: refused before any episode runs
    with lock_run_folder(args.out, "eval longact", getattr(args, "shard", None)):
        return _run_longact_eval(args, episodes)


def _run_longact_eval(args: argparse.Namespace, episodes: Sequence[Any]) -> int:
    out = Path(args.out)
    n = len(episodes)
    label = planner_label(args)
    experience_path = _experience_path(args, out)
    # Look at every earlier report before running anything, so a wrong --out fails at once.
    sensors = getattr(args, "sensors", None) or "ideal"
    options = job_options(args)
    refuse_folder_collisions(episodes)
    done = {ep.id: existing_result(out / safe_dir_name(ep.id) / "report.json", label, args.instruction, sensors,
                                   resume_key(options, ep), [item.describe() for item in ep.checklist])
            for ep in episodes}
    # Left out of the run and named in the summary with the reason: a damaged earlier report (never
    # overwritten), an invalid episode or house, a task that failed.
    skipped: dict[str, str] = {eid: r.reason for eid, r in done.items() if isinstance(r, DamagedReport)}
    for reason in skipped.values():
        print(f"{PROG}: skipped: {printable(reason)}", file=sys.stderr)
    resumed = sum(r is not None and not isinstance(r, DamagedReport) for r in done.values())
    pool = _load_pool(experience_path)
    wave_size = getattr(args, "experience_wave", None)
    try:
        executor = executor_from_args(args)
    except ExecutorError as exc:
        raise CliError(str(exc)) from None
    in_process = executor.name == "in-process"
    if wave_size is None:
        wave_size = 1 if in_process else DEFAULT_RAY_WAVE
    print(f"LongAct eval: {n} episode(s) from {args.episodes}, planner {label}, {args.instruction} "
          f"instruction -> {out}" + (f" ({resumed} already done, resuming)" if resumed else "")
          + (f"; experience pool {experience_path}" + (f" (waves of {wave_size})" if not in_process else "")
             if experience_path is not None else "")
          + ("" if in_process else f"; Ray executor, {executor.slots} task(s) at a time"))
    sys.stdout.flush()
    results: dict[int, Any] = {}
    failed: list[str] = []
    bar = episode_bar(n)
    counter = [0]

    def emit(line: str) -> None:
        if bar is not None:
            bar.write(printable(line), file=sys.stdout)  # clears the bar first, so the line is not written through it
            sys.stdout.flush()
            bar.update(1)
        else:
            print(printable(line), flush=True)

    def tag(index: int) -> str:
        counter[0] += 1
        return f"[{counter[0]}/{n}] {episodes[index].id}"

    def summary() -> dict[str, Path]:
        return write_summary(out, [results[i] for i in sorted(results)], skipped)

    def progress(task: Task) -> StepReporter:  # in-process only: the per-step line
        return StepReporter(label=f"[{counter[0] + 1}/{n}] {task.key}" if bar is None else task.key, bar=bar)

    def handle(outcome: Outcome) -> None:
        index, episode = outcome.task.index, episodes[outcome.task.index]
        folder = out / safe_dir_name(episode.id)
        if not outcome.ok:
            failed.append(episode.id)
            skipped[episode.id] = f"failed: {outcome.error}"
            atomic_write_text(folder / FAILED_FILE, json.dumps(
                {"episode": episode.id, "executor": executor.name, "reason": outcome.error}, indent=2) + "\n")
            print(printable(f"{PROG}: failed: {episode.id}: {outcome.error}"), file=sys.stderr, flush=True)
            emit(f"{tag(index)}: FAILED ({outcome.error})")
            return
        output = outcome.value
        if output.skipped is not None:
            for line in output.skipped.splitlines():
                print(f"{PROG}: skipped: {printable(line)}", file=sys.stderr)
            skipped[episode.id] = " ".join(output.skipped.splitlines())
            counter[0] += 1
            if bar is not None:
                bar.update(1)
            return
        result = output.result
        write_episode_report(folder, result, output.layout, output.world)
        (folder / FAILED_FILE).unlink(missing_ok=True)
        results[index] = result
        summary()  # after every episode: an interrupted run still leaves a summary
        emit(f"{tag(index)}: GC {result.gc:.3f} SR {result.sr:.0f} steps {result.steps_total:.1f} "
             f"({result.wall_time_s:.1f} s)   {_mean_line(list(results.values()))}")
        if bar is not None:
            vals = list(results.values())
            bar.set_postfix_str(f"GC {sum(r.gc for r in vals) / len(vals):.3f} "
                                f"SR {sum(r.sr for r in vals) / len(vals):.3f}", refresh=False)

    try:
        for i, episode in enumerate(episodes):
            if isinstance(done[episode.id], DamagedReport):
                counter[0] += 1
                if bar is not None:
                    bar.update(1)
            elif done[episode.id] is not None:
                results[i] = done[episode.id]
                emit(f"{tag(i)}: GC {results[i].gc:.3f} SR {results[i].sr:.0f} steps {results[i].steps_total:.1f} "
                     f"(done earlier)   {_mean_line(list(results.values()))}")
        if results or skipped:
            summary()
        todo = [i for i, ep in enumerate(episodes) if done[ep.id] is None]  # damaged ones are not rerun
        for wave in _waves(todo, wave_size if pool is not None else len(todo)):
            snapshot = snapshot_pool(pool) if pool is not None else None
            tasks = [Task(i, episodes[i].id, LongActJob(episodes[i], options, snapshot))
                     for i in (longest_first(wave, episodes) if executor.slots > 1 else wave)]
            learned: dict[int, Any] = {}
            for outcome in executor.run(run_longact_job, tasks, progress=progress if in_process else None):
                handle(outcome)
                if outcome.ok and outcome.value.experience is not None:
                    learned[outcome.task.index] = outcome.value.experience
            if pool is not None:  # merged in episode order: independent of which worker finished first
                for i in sorted(learned):
                    merge_experience(pool, snapshot or PoolSnapshot([]), learned[i])
                pool.save()
    finally:
        if bar is not None:
            bar.close()
        executor.close()
    paths = summary()
    ordered = [results[i] for i in sorted(results)]
    left_out = [eid for eid in skipped if eid not in failed]
    notes = [f"{len(left_out)} skipped: {', '.join(left_out)}"] if left_out else []
    notes += [f"{len(failed)} failed: {', '.join(failed)}"] if failed else []
    print(f"Summary of {len(ordered)} episode(s)" + (f" ({printable('; '.join(notes))})" if notes else "")
          + ": " + ", ".join(str(paths[k]) for k in ("json", "md")))
    if ordered:
        m = {k: sum(float(getattr(r, k)) for r in ordered) / len(ordered)
             for k in ("gc", "sr", "steps_nav", "steps_manip", "steps_total", "ir", "ir_per_step")}
        print(f"  mean GC {m['gc']:.3f}   SR {m['sr']:.3f}   Steps nav {m['steps_nav']:.2f} / manip "
              f"{m['steps_manip']:.2f} / total {m['steps_total']:.2f}   IR {m['ir']:+.3f} (GC %, t/T; "
              f"{m['ir_per_step']:+.6f} per step)")
        _print_decisions(ordered)
    return EXIT_FAILED if failed else EXIT_OK


def _print_decisions(results: list[Any]) -> None:
    """The model's share of the planner decisions over the run, and the warning beside the figures
    when it is under the threshold (the same line summary.md opens with)."""
    from planner.llm.attribution import Attribution, server_trouble, share_warning
    total = Attribution()
    found = False
    api_base = None
    for r in results:
        a = r.attribution()
        if a is not None:
            total.add(a)
            found = True
            api_base = ((r.extra or {}).get("llm") or {}).get("api_base")
    if not found:
        return
    t = total.total
    print(f"  model decisions {t.by_model}/{t.decisions}"
          + "".join(f"; {k} {v.by_model}/{v.decisions}" for k, v in sorted(total.by_role.items())))
    for note in (share_warning(total), server_trouble(api_base, total)):
        if note:
            print(f"  {note}")
