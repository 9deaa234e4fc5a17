"""The ``worldmind`` command line: run one LongAct episode, generate episodes, evaluate a set.

    worldmind run [--episode FILE] [--planner oracle|deterministic|llm:<model>] [--instruction detailed|concise]
                  [--ablate critic|episodic|high-level ...] [--experience FILE] [--llm-config FILE]
                  [--sim embedded] [--out DIR] [--data-dir DIR] [--move-step M] [--no-render]
    worldmind generate --houses FILE --indices 0-29 [--per-house N] [--seed S] [--out DIR] [--prefix dev]
    worldmind eval longact --episodes DIR_OR_FILE --out DIR [--planner oracle|deterministic|llm:<model>]
                  [--instruction detailed|concise] [--limit N] [--ablate ...] [--experience FILE]
                  [--llm-config FILE]
    worldmind eval worldlines [--houses 0-9] [--days 30] [--seed 0] [--memory belief,bm25,...] [--out DIR]
    worldmind memory-eval [--index 0-2] [--out DIR] [--move 5] ...

Planners: ``oracle`` reads the simulator (privileged; an upper bound), ``deterministic`` is the
HoloMind agent with its rule-based roles (observations only, offline), ``llm:<model>`` is the
same agent with its five roles asking a litellm model (any litellm model string), each falling
back to the deterministic role when the model's answers stay invalid.

Bad input (a missing file, a malformed or infeasible episode, a broken house) is reported as one
line per problem on stderr, naming the file, episode and field, with exit status 2 and no
traceback. Progress goes to stderr (one updating line on a terminal, periodic plain lines
otherwise); summaries go to stdout. Heavy modules (open3d, the simulator) are imported only by
the command that needs them, so ``worldmind --help`` is instant.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, TextIO

from evaluation.dev_set import DEFAULT_EPISODES_DIR, default_episode_file
from evaluation.layout import report_layout
from household.errors import InputError as CliError  # bad input from any layer: one line each, exit 2
from household.selection import parse_indices
from planner.factory import ABLATIONS, LLM_PREFIX, PLANNER_HELP, check_planner, is_privileged, make_agent

PROG = "worldmind"
EXPERIENCE_FILE = "experience_pool.json"  # eval longact's default pool, inside --out
SIMULATORS = ("embedded", "thor", "habitat")
INSTRUCTION_KINDS = ("detailed", "concise")
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


# --- small helpers -------------------------------------------------------------------------------

def safe_dir_name(episode_id: str) -> str:
    """An episode id as a single folder name (ids are normally already safe: "dev-003-0")."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", episode_id).strip(".")
    return name or "episode"


def check_choices(args: argparse.Namespace) -> None:
    """Checked by hand (not argparse ``choices``) so the message says what exists and main()
    returns 2 instead of raising SystemExit."""
    planner = getattr(args, "planner", None)
    check_planner(planner)
    ablate = getattr(args, "ablate", None) or []
    unknown = sorted(set(ablate) - set(ABLATIONS))
    if unknown:
        raise CliError(f"--ablate: unknown ablation {', '.join(map(repr, unknown))} (available: {', '.join(ABLATIONS)})")
    if ablate and is_privileged(planner):
        raise CliError(f"--ablate applies to the deterministic and llm: planners, not to {planner}")
    if getattr(args, "no_render", False) and not is_privileged(planner):
        raise CliError(f"--no-render: planner {planner} sees only rendered observations; drop --no-render "
                       "(only the privileged oracle runs without rendering)")
    if getattr(args, "llm_config", None) and not planner.startswith(LLM_PREFIX):
        raise CliError(f"--llm-config is for llm:<model> planners, not {planner}")
    if getattr(args, "experience", None) and is_privileged(planner):
        raise CliError(f"--experience: planner {planner} keeps no experience pool; it is for deterministic and llm:")
    if getattr(args, "sim", "embedded") not in SIMULATORS:
        raise CliError(f"unknown simulator {args.sim!r} (available: {', '.join(SIMULATORS)})")
    move_step = getattr(args, "move_step", None)
    if move_step is not None and not move_step > 0:
        raise CliError(f"--move-step must be a positive number of metres, got {move_step}")


class StepReporter:
    """Progress of one episode. On a terminal: one line rewritten in place (at most 10 times a
    second) showing step/max, GC and the last action. Otherwise: a plain line every
    ``every_steps`` steps or ``every_s`` seconds, whichever comes first. With ``bar`` (eval
    longact's tqdm bar over episodes, which owns the terminal's last line) the step text becomes
    the bar's postfix instead, so two writers never fight over one line."""

    def __init__(self, stream: TextIO | None = None, label: str = "", every_steps: int = 100,
                 every_s: float = 10.0, bar: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.bar = bar
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.label = f"{label} " if label else ""
        self.every_steps = every_steps
        self.every_s = every_s
        self._last = 0.0 if self.tty else time.monotonic()
        self._shown = False

    def __call__(self, p: Any) -> None:
        now = time.monotonic()
        ok = "" if p.success else " (failed)"
        text = f"{self.label}step {p.step}/{p.max_steps}  GC {p.gc:.3f}  {p.action}{ok}"
        if self.bar is not None:
            if now - self._last >= 0.1 or p.step == p.max_steps:
                self.bar.set_postfix_str(text)
                self._last = now
        elif self.tty:
            if now - self._last >= 0.1 or p.step == p.max_steps:
                self.stream.write("\r" + text + "\x1b[K")
                self.stream.flush()
                self._last = now
                self._shown = True
        elif p.step % self.every_steps == 0 or p.step == p.max_steps or now - self._last >= self.every_s:
            self.stream.write(text + "\n")
            self.stream.flush()
            self._last = now

    def close(self) -> None:
        if self.tty and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


def _load_valid_episode(path: Path, data_dir: str | None) -> Any:
    from evaluation.episodes import EpisodeError, load_episode, validate_episode
    from household.house_data import load_asset_database

    if not path.exists():
        raise CliError(f"episode file {path} does not exist")
    if not path.is_file():
        raise CliError(f"episode file {path} is not a file")
    episode = load_episode(path)  # its errors already start with the path
    try:
        validate_episode(episode, episode.resolve_house(data_dir), load_asset_database())
    except EpisodeError as exc:
        raise EpisodeError([f"{path}: {m}" for m in exc.problems]) from None
    return episode


def _make_env(args: argparse.Namespace) -> Any:
    from sim_bridge.factory import make_environment

    options: dict[str, Any] = {"move_step": args.move_step}
    if args.sim == "embedded":
        options.update(render=not args.no_render, data_dir=args.data_dir)
    elif args.sim == "thor":
        options.update(data_dir=args.data_dir, local_executable_path=args.thor_build, platform=args.thor_platform)
    else:
        options.update(dataset=args.habitat_dataset)
    return make_environment(args.sim, **{k: v for k, v in options.items() if v is not None})


def _fmt_result(result: Any) -> list[str]:
    extra = result.extra or {}
    return [
        f"  GC {result.gc:.3f}   SR {result.sr:.0f}   Steps nav {result.steps_nav:.2f} / manip "
        f"{result.steps_manip:.0f} / total {result.steps_total:.2f}   IR {result.ir:+.3f} (GC %, t/T; "
        f"{result.ir_per_step:+.6f} per step)",
        f"  {result.num_actions} actions ({result.failed_actions} failed), stop reason: "
        f"{extra.get('stop_reason', '?')}, {result.wall_time_s:.1f} s",
    ]


def _agent_for(args: argparse.Namespace, env: Any, experience_path: str | Path | None) -> Any:
    """make_agent with the planner options of ``run`` / ``eval longact``."""
    return make_agent(args.planner, env, instruction_kind=args.instruction, ablate=args.ablate or (),
                      experience_path=experience_path, llm_config=args.llm_config)


def _save_experience(agent: Any) -> None:
    """Persist the agent's experience pool now: the agent saves it when its goal loop ends, but an
    episode cut off by its step budget never reaches that point, and the next episode (or rerun)
    should still start from what this one learned. A pool without a file is a no-op."""
    pool = getattr(agent, "experience", None)
    if pool is not None and callable(getattr(pool, "save", None)):
        pool.save()


def _planner_label(args: argparse.Namespace) -> str:
    """The label the agent writes into its reports (``agent.name``, e.g. "deterministic-no-critic"),
    known before any simulator starts so that resume checks can run first. Built the way
    make_agent builds it, with no environment (only the oracle needs one, and it is "oracle")."""
    if is_privileged(args.planner):
        return args.planner
    return str(_agent_for(args, None, None).name)


def _episode_bar(total: int) -> Any:
    """A tqdm bar over episodes on stderr when stderr is a terminal, else None: piped or logged
    output keeps only the plain per-episode lines on stdout."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="episodes", unit="ep", file=sys.stderr, dynamic_ncols=True,
                leave=True)


# --- worldmind run -------------------------------------------------------------------------------

def cmd_run(args: argparse.Namespace) -> int:
    check_choices(args)
    path = Path(args.episode) if args.episode else default_episode_file()
    episode = _load_valid_episode(path, args.data_dir)
    episode.instruction(args.instruction)
    out = Path(args.out) if args.out else Path("runs") / safe_dir_name(episode.id)

    from evaluation import runner
    from evaluation.report import write_episode_report

    env = _make_env(args)
    agent = _agent_for(args, env, args.experience)
    print(f"Episode {episode.id} ({path}): house {episode.house_label}, scenario {episode.scenario}, "
          f"{len(episode.checklist)} checklist items, budget {episode.max_steps} steps")
    print(f"Planner {agent.name}, {args.instruction} instruction: {episode.instruction(args.instruction)}")
    sys.stdout.flush()
    reporter = StepReporter()
    try:
        result, world = runner.run_episode(env, agent, episode, instruction_kind=args.instruction, progress=reporter)
    finally:
        reporter.close()
    _save_experience(agent)
    paths = write_episode_report(out, result, report_layout(env, world), world)
    print(f"Episode {episode.id} done:")
    for line in _fmt_result(result):
        print(line)
    print("Report: " + "\n        ".join(str(paths[k]) for k in ("json", "md", "png")))
    return EXIT_OK


# --- worldmind generate --------------------------------------------------------------------------

def cmd_generate(args: argparse.Namespace) -> int:
    indices = parse_indices(args.indices)
    if not indices:
        raise CliError("--indices: no house indices given")
    if args.per_house < 1:
        raise CliError(f"--per-house must be at least 1, got {args.per_house}")
    from evaluation.generator import generate_set
    from household.house_data import resolve_data_file

    houses = resolve_data_file(args.houses, args.data_dir)
    out = Path(args.out) if args.out else Path("runs") / f"episodes_{args.prefix}"
    total = len(indices) * args.per_house
    print(f"Generating {total} episode(s) over {len(indices)} house(s) of {houses} into {out} (seed {args.seed})")
    sys.stdout.flush()
    count = [0]
    started = time.monotonic()

    def progress(message: str) -> None:
        count[0] += 1
        print(f"[{count[0]}/{total}] {message} ({time.monotonic() - started:.0f} s)", flush=True)

    written, failed = generate_set(str(houses), indices, out, per_house=args.per_house, seed=args.seed,
                                   prefix=args.prefix, progress=progress)
    print(f"Wrote {len(written)} episode(s) to {out}; {len(failed)} (house, scenario) pair(s) had no feasible episode"
          + (": " + "; ".join(failed) if failed else ""))
    return EXIT_OK if written or not total else EXIT_FAILED


# --- worldmind eval longact ----------------------------------------------------------------------

@dataclass(frozen=True)
class DamagedReport:
    """An earlier report.json that cannot be read back: the episode is skipped, not rerun over it."""

    reason: str


def _existing_result(report: Path, planner: str, instruction: str) -> Any | None:
    """The stored result of an earlier (interrupted) run, or None when there is none. A report
    from another planner or instruction kind is refused, never overwritten."""
    from evaluation.report import EpisodeResult

    if not report.is_file():
        return None
    try:
        result = EpisodeResult.from_dict(json.loads(report.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        # Damaged: neither read as a result nor overwritten by a rerun; named in the summary.
        return DamagedReport(f"{report}: unreadable earlier report ({type(exc).__name__}: {exc}); "
                             "move it away to rerun this episode")
    if result.planner != planner or result.instruction_kind != instruction:
        raise CliError(f"{report}: holds a {result.planner}/{result.instruction_kind} run, not "
                       f"{planner}/{instruction}; use another --out")
    return result


def _parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N (e.g. 0/2), got {text!r}") from None
    if n < 1 or not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"shard {text!r}: need 0 <= I < N")
    return k, n


def cmd_eval_longact(args: argparse.Namespace) -> int:
    check_choices(args)
    if args.limit is not None and args.limit < 1:
        raise CliError(f"--limit must be at least 1, got {args.limit}")
    from evaluation import runner
    from evaluation.episodes import EpisodeError, load_episodes, validate_episode
    from evaluation.report import write_episode_report, write_summary
    from household.house_data import HouseError, load_asset_database

    episodes, errors = load_episodes(args.episodes)
    for err in errors:
        print(f"{PROG}: skipped: {err}", file=sys.stderr)
    if not episodes:
        raise CliError(f"no usable episodes in {args.episodes}"
                       + (f" ({len(errors)} skipped, see above)" if errors else ""))
    if args.every < 1:
        raise CliError(f"--every must be at least 1, got {args.every}")
    episodes = episodes[:: args.every]
    if args.limit is not None:
        episodes = episodes[: args.limit]
    if args.shard is not None:
        k, n = args.shard
        episodes = episodes[k::n]
    out = Path(args.out)
    n = len(episodes)
    label = _planner_label(args)
    # The pool persists across this run's episodes and across reruns into the same --out (none for
    # the oracle, and none under --ablate episodic: that agent neither loads nor saves one).
    experience_path = None if is_privileged(args.planner) or "episodic" in (args.ablate or ()) else (
        Path(args.experience) if args.experience else out / EXPERIENCE_FILE)
    # Look at every earlier report before running anything, so a wrong --out fails at once.
    done = {ep.id: _existing_result(out / safe_dir_name(ep.id) / "report.json", label, args.instruction)
            for ep in episodes}
    skipped = {eid: r.reason for eid, r in done.items() if isinstance(r, DamagedReport)}
    for reason in skipped.values():
        print(f"{PROG}: skipped: {reason}", file=sys.stderr)
    resumed = sum(r is not None and not isinstance(r, DamagedReport) for r in done.values())
    print(f"LongAct eval: {n} episode(s) from {args.episodes}, planner {label}, {args.instruction} "
          f"instruction -> {out}" + (f" ({resumed} already done, resuming)" if resumed else "")
          + (f"; experience pool {experience_path}" if experience_path is not None else ""))
    sys.stdout.flush()
    asset_db = load_asset_database()
    env = None
    results = []
    failed: list[str] = []
    bar = _episode_bar(n)
    try:
        for i, episode in enumerate(episodes, start=1):
            tag = f"[{i}/{n}] {episode.id}"
            result = done[episode.id]
            if isinstance(result, DamagedReport):
                failed.append(episode.id)
                if bar is not None:
                    bar.update(1)
                continue
            if result is None:
                try:
                    episode.instruction(args.instruction)
                    validate_episode(episode, episode.resolve_house(args.data_dir), asset_db)
                    env = env or _make_env(args)
                    # A fresh agent per episode; what it learned reaches the next one through the pool file.
                    agent = _agent_for(args, env, experience_path)
                    reporter = StepReporter(label=tag if bar is None else episode.id, bar=bar)
                    try:
                        result, world = runner.run_episode(env, agent, episode, instruction_kind=args.instruction,
                                                           progress=reporter)
                    finally:
                        reporter.close()
                    _save_experience(agent)
                except (EpisodeError, HouseError, FileNotFoundError) as exc:
                    for line in str(exc).splitlines():
                        print(f"{PROG}: skipped: {line}", file=sys.stderr)
                    failed.append(episode.id)
                    skipped[episode.id] = " ".join(str(exc).splitlines())
                    if bar is not None:
                        bar.update(1)
                    continue
                write_episode_report(out / safe_dir_name(episode.id), result, report_layout(env, world), world)
                how = f"{result.wall_time_s:.1f} s"
            else:
                how = "done earlier"
            results.append(result)
            write_summary(out, results, skipped)  # after every episode: an interrupted run still leaves a summary
            mean_gc = sum(r.gc for r in results) / len(results)
            mean_sr = sum(r.sr for r in results) / len(results)
            line = (f"{tag}: GC {result.gc:.3f} SR {result.sr:.0f} steps {result.steps_total:.1f} ({how})   "
                    f"mean GC {mean_gc:.3f} SR {mean_sr:.3f} over {len(results)}")
            if bar is not None:
                bar.write(line, file=sys.stdout)  # clears the bar first, so the line is not written through it
                sys.stdout.flush()
                bar.set_postfix_str(f"GC {mean_gc:.3f} SR {mean_sr:.3f}", refresh=False)
                bar.update(1)
            else:
                print(line, flush=True)
    finally:
        if bar is not None:
            bar.close()
    paths = write_summary(out, results, skipped)
    print(f"Summary of {len(results)} episode(s)" + (f" ({len(failed)} skipped: {', '.join(failed)})" if failed else "")
          + ": " + ", ".join(str(paths[k]) for k in ("json", "md")))
    if results:
        m = {k: sum(float(getattr(r, k)) for r in results) / len(results)
             for k in ("gc", "sr", "steps_nav", "steps_manip", "steps_total", "ir", "ir_per_step")}
        print(f"  mean GC {m['gc']:.3f}   SR {m['sr']:.3f}   Steps nav {m['steps_nav']:.2f} / manip "
              f"{m['steps_manip']:.2f} / total {m['steps_total']:.2f}   IR {m['ir']:+.3f} (GC %, t/T; "
              f"{m['ir_per_step']:+.6f} per step)")
    return EXIT_OK


# --- parser and entry point ----------------------------------------------------------------------

def _add_sim_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--planner", default="oracle",
                   help=f"planner to run: {PLANNER_HELP} (default: oracle, the privileged upper bound; "
                        "deterministic is the offline HoloMind agent)")
    p.add_argument("--instruction", default="detailed", choices=INSTRUCTION_KINDS,
                   help="which instruction the planner gets (default: detailed)")
    p.add_argument("--ablate", action="append", default=[], metavar="{" + ",".join(ABLATIONS) + "}",
                   help="deterministic/llm: switch off one HoloMind component (repeatable; "
                        "the planner label gets -no-<component>)")
    p.add_argument("--llm-config", default=None, metavar="FILE",
                   help="llm:<model>: LLM config file (YAML or JSON; also $WORLDMIND_LLM_CONFIG); "
                        "name the API key's environment variable there, never the key")
    p.add_argument("--sim", default="embedded", help=f"simulator backend (available: {', '.join(SIMULATORS)})")
    p.add_argument("--data-dir", default=None,
                   help="folder holding houses files that are not shipped (also: $WORLDMIND_DATA_DIR)")
    p.add_argument("--move-step", type=float, default=None, metavar="M",
                   help="metres per MoveAhead/Back/Left/Right (default: 0.25)")
    p.add_argument("--no-render", action="store_true",
                   help="skip RGB-D rendering (faster; oracle only: the other planners need images)")
    p.add_argument("--thor-build", default=None, metavar="PATH",
                   help="--sim thor: an AI2-THOR 5.0 build executable (default: ai2thor's own build under "
                        "~/.ai2thor; see sim_bridge/thor/README.md)")
    p.add_argument("--thor-platform", default=None, choices=("CloudRendering", "Linux64"),
                   help="--sim thor: the build ai2thor uses (default: CloudRendering without a display, else Linux64)")
    p.add_argument("--habitat-dataset", default=None, metavar="PATH",
                   help="--sim habitat: a *.scene_dataset_config.json or its folder (see sim_bridge/habitat/README.md)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="WorldMind: long-horizon household robot planning stack.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser("run", help="run one LongAct episode and write its report",
                         description="Run one LongAct episode in the embedded simulator and write report.json, "
                                     "report.md and report.png.")
    run.add_argument("--episode", default=None, metavar="FILE",
                     help=f"episode JSON file (default: the first file of {DEFAULT_EPISODES_DIR})")
    run.add_argument("--out", default=None, metavar="DIR", help="report folder (default: runs/<episode id>)")
    run.add_argument("--experience", default=None, metavar="FILE",
                     help="deterministic/llm: experience pool file, read and updated (default: none, in memory)")
    _add_sim_options(run)
    run.set_defaults(func=cmd_run)

    gen = sub.add_parser("generate", help="generate oracle-verified LongAct episodes over houses",
                         description="Generate LongAct-style episodes (about nine goals each, proven feasible "
                                     "by the oracle) and write one JSON file per episode.")
    gen.add_argument("--houses", required=True, metavar="FILE",
                     help="houses file (.jsonl or .jsonl.gz), by path or by name in the data folders")
    gen.add_argument("--indices", required=True, help="house indices (0-based lines), e.g. 0-9,12,15-20")
    gen.add_argument("--per-house", type=int, default=1, metavar="N", help="episodes per house (default: 1)")
    gen.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default: 0)")
    gen.add_argument("--out", default=None, metavar="DIR", help="output folder (default: runs/episodes_<prefix>)")
    gen.add_argument("--prefix", default="dev", help="episode id prefix (default: dev)")
    gen.add_argument("--data-dir", default=None, help="folder holding the houses file (also: $WORLDMIND_DATA_DIR)")
    gen.set_defaults(func=cmd_generate)

    me = sub.add_parser("memory-eval", add_help=False,
                        help="explore a house and score the spatial memory against ground truth "
                             "(options: worldmind memory-eval --help)")
    me.set_defaults(func=None)  # delegated in main()

    ev = sub.add_parser("eval", help="evaluate a planner on a benchmark")
    ev_sub = ev.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    ev_sub.required = True
    la = ev_sub.add_parser("longact", help="run a set of LongAct episodes and summarise GC, SR, Steps, IR",
                           description="Run every episode of a folder or file, write a report per episode "
                                       "and summary.json/summary.md; rerunning resumes an interrupted run.")
    la.add_argument("--episodes", required=True, metavar="DIR_OR_FILE", help="episode folder or file")
    la.add_argument("--out", required=True, metavar="DIR", help="output folder (one subfolder per episode)")
    la.add_argument("--limit", type=int, default=None, metavar="N", help="run only the first N episodes")
    la.add_argument("--every", type=int, default=1, metavar="K",
                    help="run every K-th episode (a fixed subset, applied before --limit; default: 1)")
    la.add_argument("--shard", type=_parse_shard, default=None, metavar="I/N",
                    help="run only shard I of N of the selection (parallel runs into the same --out; rerun "
                         "without --shard afterwards to resume nothing and write the full summary)")
    la.add_argument("--experience", default=None, metavar="FILE",
                    help=f"deterministic/llm: experience pool file shared by the episodes and reruns "
                         f"(default: <out>/{EXPERIENCE_FILE})")
    _add_sim_options(la)
    la.set_defaults(func=cmd_eval_longact)

    wl = ev_sub.add_parser("worldlines", add_help=False,
                           help="WorldLines memory QA and planning probe: belief tracker vs flat baselines "
                                "(options: worldmind eval worldlines --help)")
    wl.set_defaults(func=None)  # main() hands these argv to the harness, which owns its options

    for name, text in (("record", "run an episode and record it as an MCAP bag (options: worldmind record --help)"),
                       ("replay", "replay a bag through perception, memory and belief and score it "
                                  "(options: worldmind replay --help)"),
                       ("ros", "start the ROS 2 node graph: worldmind ros up sim|robot|replay "
                               "(options: worldmind ros --help)"),
                       ("audit", "audit houses: rooms and pickupable objects reachable from the start "
                                 "(options: worldmind audit houses --help)"),
                       ("parse", "show the checklist items an instruction becomes (options: worldmind parse --help)")):
        sub.add_parser(name, add_help=False, help=text).set_defaults(func=None)  # delegated in main()
    return parser


# Subcommands whose options belong to their own module: main() passes the rest of argv through.
DELEGATED = {
    ("eval", "worldlines"): ("evaluation.worldlines.harness", "main_worldlines"),
    ("memory-eval",): ("evaluation.memory_eval", "main_memory_eval"),
    ("record",): ("worldmind.cli_bags", "main_record"),
    ("replay",): ("worldmind.cli_bags", "main_replay"),
    ("ros",): ("worldmind.cli_ros", "main_ros"),
    ("audit",): ("evaluation.audit", "main_audit"),
    ("parse",): ("worldmind.cli_parse", "main_parse"),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for prefix, (module, func) in DELEGATED.items():
        if tuple(argv[: len(prefix)]) == prefix:
            import importlib

            return getattr(importlib.import_module(module), func)(argv[len(prefix):])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2): return the code, don't raise
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    from evaluation.episodes import EpisodeError
    from household.house_data import HouseError
    from sim_bridge.habitat.episode import HabitatError
    from sim_bridge.thor.errors import ThorError

    try:
        return args.func(args)
    except (CliError, EpisodeError) as exc:
        problems = exc.problems
    except (HouseError, ThorError, HabitatError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        problems = [str(exc)]
    except (ImportError, OSError) as exc:  # open3d without its system libraries (a setup problem, not bad input)
        if not any(lib in str(exc) for lib in ("libusb", "libgomp")):
            raise
        print(f"{PROG}: error: {exc}: install the system packages libusb-1.0-0 and libgomp1 "
              "(as root: apt-get install -y libusb-1.0-0 libgomp1; see README.md)", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted" + ("; rerun the same command to resume" if args.command == "eval" else ""),
              file=sys.stderr)
        return EXIT_INTERRUPTED
    for line in problems:
        print(f"{PROG}: error: {line}", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
