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
    worldmind llm serve|check|weights   (a local model for --planner llm:local; worldmind/cli_llm.py)

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
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from evaluation.dev_set import DEMO_EPISODES_DIR, demo_episode_file
from evaluation.executor_options import add_executor_options
from evaluation.layout import report_layout
from household.errors import InputError as CliError  # bad input from any layer: one line each, exit 2
from household.selection import parse_indices
from planner.factory import (ABLATIONS, LLM_PREFIX, OBJECT_MEMORIES, PLANNER_HELP, check_planner,  # noqa: F401 (tests)
                             make_agent)
from worldmind.cli_common import (PROG, EXPERIENCE_FILE, SIMULATORS, INSTRUCTION_KINDS, EXIT_OK, EXIT_FAILED,
                                  EXIT_USAGE, EXIT_INTERRUPTED, safe_dir_name, check_choices, StepReporter,
                                  load_valid_episode, make_env, fmt_result, agent_for, save_experience, printable,
                                  SENSOR_PROFILES)

# --- worldmind run -------------------------------------------------------------------------------

def cmd_run(args: argparse.Namespace) -> int:
    check_choices(args)
    path = Path(args.episode) if args.episode else demo_episode_file()
    episode = load_valid_episode(path, args.data_dir)
    episode.instruction(args.instruction)
    out = Path(args.out) if args.out else Path("runs") / safe_dir_name(episode.id)

    from evaluation import runner
    from evaluation.report import write_episode_report
    from worldmind.run_folder import lock_run_folder, writable_out_dir

    writable_out_dir(out)  # a file, a device or a full disk as --out: refused now, not after the run

    with lock_run_folder(out, "run"):  # one run per --out: a second is refused, naming the first's PID
        return _run_locked(args, episode, path, out, runner, write_episode_report)


def _run_locked(args: argparse.Namespace, episode: Any, path: Path, out: Path, runner: Any,
                write_episode_report: Any) -> int:
    env = make_env(args)
    agent = agent_for(args, env, args.experience)
    print(printable(f"Episode {episode.id} ({path}): house {episode.house_label}, scenario {episode.scenario}, "
                    f"{len(episode.checklist)} checklist items, budget {episode.max_steps} steps"))
    print(printable(f"Planner {agent.name}, {args.instruction} instruction: {episode.instruction(args.instruction)}"))
    sys.stdout.flush()
    reporter = StepReporter()
    try:
        result, world = runner.run_episode(env, agent, episode, instruction_kind=args.instruction, progress=reporter,
                                           time_limit_s=args.time_limit)
        result.extra["sensors"] = args.sensors
    finally:
        reporter.close()
    save_experience(agent)
    paths = write_episode_report(out, result, report_layout(env, world), world)
    print(printable(f"Episode {episode.id} done:"))
    for line in fmt_result(result):
        print(line)
    print("Report: " + "\n        ".join(str(paths[k]) for k in ("json", "md", "png")))
    return EXIT_OK


def _executor_or_exit(args: argparse.Namespace) -> Any:
    """The executor --workers/--ray-address ask for (default: this process); CliError if it cannot start."""
    from evaluation.executor import ExecutorError
    from evaluation.executor_options import executor_from_args

    try:
        return executor_from_args(args)
    except ExecutorError as exc:
        raise CliError(str(exc)) from None


# --- worldmind generate --------------------------------------------------------------------------

def cmd_generate(args: argparse.Namespace) -> int:
    indices = parse_indices(args.indices)
    if not indices:
        raise CliError("--indices: no house indices given")
    if args.per_house < 1:
        raise CliError(f"--per-house must be at least 1, got {args.per_house}")
    from evaluation.generator import check_prefix, generate_set
    from household.house_data import resolve_data_file

    check_prefix(args.prefix)

    houses = resolve_data_file(args.houses, args.data_dir)
    out = Path(args.out) if args.out else Path("runs") / f"episodes_{args.prefix}"
    from worldmind.run_folder import writable_out_dir

    writable_out_dir(out)
    total = len(indices) * args.per_house
    print(f"Generating {total} episode(s) over {len(indices)} house(s) of {houses} into {out} (seed {args.seed})")
    sys.stdout.flush()
    count = [0]
    started = time.monotonic()

    def progress(message: str) -> None:
        count[0] += 1
        print(f"[{count[0]}/{total}] {message} ({time.monotonic() - started:.0f} s)", flush=True)

    executor = _executor_or_exit(args)
    kept: list[Path] = []
    try:
        written, failed = generate_set(str(houses), indices, out, per_house=args.per_house, seed=args.seed,
                                       prefix=args.prefix, progress=progress, executor=executor, kept=kept)
    finally:
        executor.close()
    print(f"Wrote {len(written) - len(kept)} new episode(s) to {out}"
          + (f" (kept {len(kept)} from an earlier run with the same options)" if kept else "")
          + f"; {len(failed)} (house, scenario) pair(s) had no feasible episode"
          + (": " + "; ".join(failed) if failed else ""))
    return EXIT_OK if written or not total else EXIT_FAILED


# --- worldmind eval longact ----------------------------------------------------------------------

def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive, finite number of seconds, got {text!r}")
    return value


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
    from evaluation.episodes import load_episodes
    from worldmind.run_folder import input_files, refuse_inputs_inside

    refuse_inputs_inside(args.out, "--episodes", args.episodes, input_files(args.episodes))
    episodes, errors = load_episodes(args.episodes)
    duplicates = [err for err in errors if ": id: duplicate episode id" in err]
    if duplicates:  # two episodes, one report folder: refuse the selection instead of skipping one
        raise CliError(duplicates)
    for err in errors:
        print(f"{PROG}: skipped: {printable(err)}", file=sys.stderr)
    if not episodes:
        raise CliError(f"no usable episodes in {args.episodes}"
                       + (f" ({len(errors)} skipped, see above)" if errors else ""))
    if args.every < 1:
        raise CliError(f"--every must be at least 1, got {args.every}")
    episodes = episodes[:: args.every]
    if args.limit is not None:
        episodes = episodes[: args.limit]
    if args.shard is not None:  # a selection only: shard I of N runs through the same executor
        k, n = args.shard
        episodes = episodes[k::n]
    from worldmind.cli_longact import run_longact_eval

    return run_longact_eval(args, episodes)


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
    p.add_argument("--sensors", default="ideal", choices=SENSOR_PROFILES,
                   help="sensor realism: ideal (perfect depth, pose, segmentation), realistic (a localised "
                        "robot: bounded pose error), odom-only (unbounded odometry drift in map) or harsh "
                        "(sim_bridge/sensors/profiles.py; default: ideal)")
    p.add_argument("--pose-correction", default="auto", choices=("auto", "on", "off"),
                   help="register each depth frame against the agent's own map and correct the odometry pose "
                        "(perception/pose_correction.py): auto (default) where the pose has no localiser "
                        "(--sensors odom-only, harsh), on, or off (the uncorrected pose, for comparison)")
    p.add_argument("--object-memory", default="tracker", choices=tuple(OBJECT_MEMORIES),
                   help="what the agent grounds objects through: tracker (default; a box per segmenter id, "
                        "planner/object_tracker.py) or spatial (the scene map's object table with its voxels and "
                        "text index, planner/spatial_object_memory.py)")
    p.add_argument("--thor-build", default=None, metavar="PATH",
                   help="--sim thor: an AI2-THOR 5.0 build executable (default: ai2thor's own build under "
                        "~/.ai2thor; see sim_bridge/thor/README.md)")
    p.add_argument("--thor-platform", default=None, choices=("CloudRendering", "Linux64"),
                   help="--sim thor: the build ai2thor uses (default: CloudRendering without a display, else Linux64)")
    p.add_argument("--time-limit", type=_positive_seconds, default=None, metavar="S",
                   help="stop each episode after S seconds of wall time (checked between actions) and score it "
                        "as it stands; its report says stop_reason 'time limit' (default: none)")
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
                     help=f"episode JSON file (default: the first file of {DEMO_EPISODES_DIR})")
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
    add_executor_options(gen, unit="(house, episode) pair")
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
    add_executor_options(la, experience=True)
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
                       ("parse", "show the checklist items an instruction becomes (options: worldmind parse --help)"),
                       ("refresh-oracle", "rerun the oracle on episode files and rewrite their stored oracle "
                                          "figures (options: worldmind refresh-oracle --help)"),
                       ("llm", "a model on this machine for --planner llm:local: worldmind llm serve|check|weights "
                               "(options: worldmind llm --help)")):
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
    ("llm",): ("worldmind.cli_llm", "main_llm"),
    ("refresh-oracle",): ("evaluation.oracle_refresh", "main_refresh_oracle"),
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
        print(f"{PROG}: error: {printable(line)}", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    # Run the importable module's main, not this __main__ copy: helpers such as cli_longact import
    # worldmind.cli, and its CliError must be the class main() catches.
    from worldmind.cli import main as _main

    sys.exit(_main())
