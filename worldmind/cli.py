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
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

import evaluation
from worldmind.cli_executor import add_executor_options

PROG = "worldmind"
PLANNERS = ("oracle", "deterministic")  # plus "llm:<model>" (LLM_PREFIX + any litellm model string)
LLM_PREFIX = "llm:"
PLANNER_HELP = "oracle, deterministic, llm:<model> (e.g. llm:openai/gpt-4o-mini)"
PRIVILEGED_PLANNERS = ("oracle",)  # read the simulator; everything else sees rendered observations only
# Mirrors planner.holomind.ABLATIONS; kept here so argument checking does not import the planner.
ABLATIONS = ("critic", "episodic", "high-level")
EXPERIENCE_FILE = "experience_pool.json"  # eval longact's default pool, inside --out
SIMULATORS = ("embedded", "thor", "habitat")
INSTRUCTION_KINDS = ("detailed", "concise")
DEFAULT_EPISODES_DIR = Path(evaluation.__file__).resolve().parent / "data" / "episodes_dev"  # package data
EPISODE_SUFFIXES = (".json", ".jsonl", ".jsonl.gz")
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class CliError(Exception):
    """Bad input; printed as one ``worldmind: error: ...`` line per problem, exit status 2."""

    def __init__(self, problems: str | Sequence[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


# --- small helpers -------------------------------------------------------------------------------

def parse_indices(text: str) -> list[int]:
    """"0-9,12,15-20" -> [0, ..., 9, 12, 15, ..., 20]; ranges are inclusive, order is kept and
    repeats are dropped. Raises CliError naming the bad part."""
    out: list[int] = []
    seen: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not m:
            raise CliError(f"--indices: {part!r} is not an index or a range like 0-9 (in {text!r})")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise CliError(f"--indices: range {part!r} runs backwards")
        for i in range(lo, hi + 1):
            if i not in seen:
                seen.add(i)
                out.append(i)
    return out


def safe_dir_name(episode_id: str) -> str:
    """An episode id as a single folder name (ids are normally already safe: "dev-003-0")."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", episode_id).strip(".")
    return name or "episode"


def default_episode_file() -> Path:
    """The first file (sorted) of the committed dev set: what ``worldmind run`` runs by default."""
    files = sorted(p for p in DEFAULT_EPISODES_DIR.glob("*") if p.is_file() and p.name.endswith(EPISODE_SUFFIXES)) \
        if DEFAULT_EPISODES_DIR.is_dir() else []
    if not files:
        raise CliError(f"no --episode given and no committed episodes in {DEFAULT_EPISODES_DIR}; "
                       "pass --episode FILE")
    return files[0]


def check_planner(name: str) -> None:
    """Raise CliError unless ``name`` is a planner make_agent can build: one of PLANNERS, or
    ``llm:`` followed by a non-empty model string (not checked further here: litellm knows its
    providers, and an unknown one fails on the first call and falls back per role)."""
    if name in PLANNERS:
        return
    if isinstance(name, str) and name.startswith(LLM_PREFIX):
        if not name[len(LLM_PREFIX):].strip():
            raise CliError(f"--planner {name!r}: llm: needs a litellm model string after the colon, "
                           "e.g. llm:openai/gpt-4o-mini")
        return
    raise CliError(f"unknown planner {name!r} (available planners: {PLANNER_HELP})")


def is_privileged(name: str) -> bool:
    """True for planners that read the simulator instead of observations (they need no rendering)."""
    return name in PRIVILEGED_PLANNERS


def _env_move_step(env: Any) -> float | None:
    """The backend's move step, so the agent's navigator plans in the steps the simulator takes."""
    step = getattr(getattr(env, "config", None), "move_step", None)
    return float(step) if isinstance(step, (int, float)) and step > 0 else None


def _deterministic_fallbacks() -> dict[str, Any]:
    """The rule-based roles each LLM role falls back to (keys: planner.llm.ROLE_NAMES), so a model
    that keeps answering invalid JSON makes an llm run degrade to the deterministic planner."""
    from planner.critic import RuleCritic
    from planner.deterministic import NearestGrounder, RecipeTranslator, RuleRefiner
    from planner.instruction_parser import InstructionParser
    from sim_bridge.embedded.assets import default_catalog

    catalog = default_catalog()
    return {"decomposer": InstructionParser(catalog), "refiner": RuleRefiner(), "grounder": NearestGrounder(catalog),
            "translator": RecipeTranslator(), "critic": RuleCritic()}


def make_agent(name: str, env: Any, *, instruction_kind: str = "detailed", ablate: Iterable[str] = (),
               experience_path: str | Path | None = None, llm_config: str | Path | None = None) -> Any:
    """The agent for a ``--planner`` name. ``env`` is used by the oracle (it plans on the
    simulator) and, for the others, only for its move step. ``experience_path`` is the
    persisted experience pool (None: in memory for this agent only); ``llm_config`` is the
    LLM config file for ``llm:<model>`` (see planner.llm.factory.load_llm_config)."""
    check_planner(name)
    ablate = frozenset(ablate)
    if name == "oracle":
        if ablate:
            raise CliError(f"--ablate {', '.join(sorted(ablate))}: ablations apply to deterministic and llm: "
                           "planners, not to the oracle")
        from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

        if isinstance(env, EmbeddedEnvironment):
            from planner.oracle import OraclePlanner

            return OraclePlanner(env)
        # Other backends: the oracle plans on an embedded twin of the same house.
        from planner.twin_oracle import TwinOracle

        config = getattr(env, "config", None)
        return TwinOracle(EmbeddedConfig(render=False, move_step=getattr(config, "move_step", 0.25),
                                         data_dir=getattr(config, "data_dir", None)))
    unknown = sorted(ablate - set(ABLATIONS))
    if unknown:
        raise CliError(f"--ablate: unknown ablation {', '.join(map(repr, unknown))} (available: {', '.join(ABLATIONS)})")
    from planner.critic import ExperiencePool
    from planner.holomind import AgentConfig, HoloMindAgent

    options: dict[str, Any] = {"ablate": ablate, "instruction_kind": instruction_kind}
    move_step = _env_move_step(env)
    if move_step is not None:
        options["move_step"] = move_step
    config = AgentConfig(**options)
    try:
        experience = ExperiencePool.load(experience_path)
    except ValueError as exc:  # a corrupt or foreign pool file: bad input, not a crash
        raise CliError(f"--experience: {exc}") from None
    if name == "deterministic":
        return HoloMindAgent(config, experience=experience)
    from planner.llm import make_llm_roles, model_spec_from_planner

    try:
        spec = model_spec_from_planner(name)
        roles = make_llm_roles(spec, _deterministic_fallbacks(), config_path=llm_config)
    except (ValueError, TypeError) as exc:  # bad config file contents or fields
        raise CliError(f"--planner {name}: {exc}") from None
    return HoloMindAgent(config, roles=roles, experience=experience, name=f"llm:{spec}")


def report_layout(env: Any, world: Any) -> Any:
    """The house drawn under the agent's path: the embedded simulator's parsed layout, or for
    other backends the rooms of the final ground truth (walls are then not drawn)."""
    layout = getattr(env, "layout", None)
    if layout is not None:
        return layout
    from sim_bridge.embedded.house_geometry import HouseLayout, Room

    return HouseLayout(world.house_id, [Room(r.id, r.room_type, tuple(map(tuple, r.polygon))) for r in world.rooms], [])


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
    from sim_bridge.embedded.house_data import load_asset_database

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
        f"{result.steps_manip:.0f} / total {result.steps_total:.2f}   IR {result.ir:+.5f}",
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


def _executor_or_exit(args: argparse.Namespace) -> Any:
    """The executor --workers/--ray-address ask for (default: this process); CliError if it cannot start."""
    from evaluation.executor import ExecutorError
    from worldmind.cli_executor import executor_from_args

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
    from evaluation.generator import generate_set
    from sim_bridge.embedded.house_data import resolve_data_file

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

    executor = _executor_or_exit(args)
    try:
        written, failed = generate_set(str(houses), indices, out, per_house=args.per_house, seed=args.seed,
                                       prefix=args.prefix, progress=progress, executor=executor)
    finally:
        executor.close()
    print(f"Wrote {len(written)} episode(s) to {out}; {len(failed)} (house, scenario) pair(s) had no feasible episode"
          + (": " + "; ".join(failed) if failed else ""))
    return EXIT_OK if written or not total else EXIT_FAILED


# --- worldmind eval longact ----------------------------------------------------------------------

def _existing_result(report: Path, planner: str, instruction: str) -> Any | None:
    """The stored result of an earlier (interrupted) run, or None when there is none. A report
    from another planner or instruction kind is refused, never overwritten."""
    from evaluation.report import EpisodeResult

    if not report.is_file():
        return None
    try:
        result = EpisodeResult.from_dict(json.loads(report.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as exc:
        raise CliError(f"{report}: unreadable earlier report ({exc}); move it away to rerun this episode") from None
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
    from evaluation.episodes import load_episodes

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
                               "(options: worldmind ros --help)")):
        sub.add_parser(name, add_help=False, help=text).set_defaults(func=None)  # delegated in main()
    return parser


# Subcommands whose options belong to their own module: main() passes the rest of argv through.
DELEGATED = {
    ("eval", "worldlines"): ("evaluation.worldlines.harness", "main_worldlines"),
    ("memory-eval",): ("evaluation.memory_eval", "main_memory_eval"),
    ("record",): ("worldmind.cli_bags", "main_record"),
    ("replay",): ("worldmind.cli_bags", "main_replay"),
    ("ros",): ("worldmind.cli_ros", "main_ros"),
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
    from sim_bridge.embedded.house_data import HouseError
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
    # Run the importable module's main, not this __main__ copy: helpers such as cli_longact import
    # worldmind.cli, and its CliError must be the class main() catches.
    from worldmind.cli import main as _main

    sys.exit(_main())
