"""What the ``worldmind`` commands share: exit codes, names, the per-step progress line, the
simulator and agent built from command-line options, and how an earlier report is read back for
resuming. cli.py (the parser and the commands) and the command modules beside it (cli_longact,
longact_job, cli_bags) import from here, so none of them imports cli.py and there is no cycle."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, TextIO

from household.errors import InputError as CliError  # bad input from any layer: one line each, exit 2
from household.text import printable  # noqa: F401 - the CLI's name for it (one definition)
from planner.factory import ABLATIONS, LLM_PREFIX, check_planner, is_privileged, make_agent

PROG = "worldmind"
EXPERIENCE_FILE = "experience_pool.json"  # eval longact's default pool, inside --out
SIMULATORS = ("embedded", "thor", "habitat")
INSTRUCTION_KINDS = ("detailed", "concise")
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
POSE_CORRECTION = {"auto": None, "on": True, "off": False}  # --pose-correction -> make_agent's pose_correction
SENSOR_PROFILES = ("ideal", "realistic", "odom-only", "harsh")  # sim_bridge/sensors/profiles.py (not imported: --help stays light)


# --- small helpers -------------------------------------------------------------------------------

_SAFE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
# Names the run itself writes inside --out: an episode folder must never take one of them.
RESERVED_NAMES = frozenset({"summary.json", "summary.md", EXPERIENCE_FILE, ".lock", "run.json"})
MAX_DIR_NAME = 120  # well under the 255 bytes of a file name, leaving room for the hash suffix


def safe_dir_name(episode_id: str) -> str:
    """An episode id as one folder name, different for different ids (issue 32).

    Sanitising by substitution mapped "x/y" and "x_y" (and "..", "" or "episode") to one folder,
    so one report silently replaced the other. Now every character outside ``[A-Za-z0-9._-]`` is
    percent-encoded as UTF-8 bytes ("x/y" -> "x%2Fy"; "%" itself is "%25"), which is reversible;
    a leading "." (hidden, ".", "..") and names the run writes itself ("summary.json") get their
    first character encoded too. Ids that are already safe ("dev-003-0") keep their folder. An
    encoded name over ``MAX_DIR_NAME`` is cut and suffixed with "~" and a hash of the id ("~"
    appears nowhere else, being encoded as %7E)."""
    name = "".join(c if c in _SAFE_CHARS else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
                   for c in episode_id)
    if not name:
        return "%"  # the empty id (never valid); no encoded name is a lone "%"
    if name.startswith(".") or name in RESERVED_NAMES:
        name = f"%{ord(name[0]):02X}" + name[1:]
    if len(name) > MAX_DIR_NAME:
        import hashlib

        digest = hashlib.sha256(episode_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = name[:MAX_DIR_NAME - 17] + "~" + digest
    return name


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
        self.label = f"{printable(label)} " if label else ""
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


def load_valid_episode(path: Path, data_dir: str | None) -> Any:
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


def make_env(args: argparse.Namespace) -> Any:
    from sim_bridge.factory import make_environment

    options: dict[str, Any] = {"move_step": args.move_step}
    if args.sim == "embedded":
        options.update(render=not args.no_render, data_dir=args.data_dir)
    elif args.sim == "thor":
        options.update(data_dir=args.data_dir, local_executable_path=args.thor_build, platform=args.thor_platform)
    else:
        options.update(dataset=args.habitat_dataset)
    env = make_environment(args.sim, **{k: v for k, v in options.items() if v is not None})
    sensors = getattr(args, "sensors", None) or "ideal"
    if sensors != "ideal":  # degrade what the agent sees; ground truth and scoring stay exact
        from sim_bridge.sensors import SensorNoise, sensor_profile

        env = SensorNoise(env, sensor_profile(sensors))
    return env


def fmt_result(result: Any) -> list[str]:
    extra = result.extra or {}
    return [
        f"  GC {result.gc:.3f}   SR {result.sr:.0f}   Steps nav {result.steps_nav:.2f} / manip "
        f"{result.steps_manip:.0f} / total {result.steps_total:.2f}   IR {result.ir:+.3f} (GC %, t/T; "
        f"{result.ir_per_step:+.6f} per step)",
        f"  {result.num_actions} actions ({result.failed_actions} failed), stop reason: "
        f"{extra.get('stop_reason', '?')}, {result.wall_time_s:.1f} s",
        *_decision_lines(result),
    ]


def _decision_lines(result: Any) -> list[str]:
    """With a model: how many decisions it took, and the warning when under the threshold."""
    from planner.llm.attribution import server_trouble, share_warning
    attribution = result.attribution() if callable(getattr(result, "attribution", None)) else None
    if attribution is None:
        return []
    t = attribution.total
    roles = ", ".join(f"{k} {v.by_model}/{v.decisions}" for k, v in sorted(attribution.by_role.items()))
    llm = (result.extra or {}).get("llm") or {}
    notes = [share_warning(attribution), server_trouble(llm.get("api_base"), attribution)]
    return [f"  model decisions: {t.by_model}/{t.decisions} ({roles})"] + [f"  {n}" for n in notes if n]


def agent_for(args: argparse.Namespace, env: Any, experience_path: str | Path | None) -> Any:
    """make_agent with the planner options of ``run`` / ``eval longact``."""
    return make_agent(args.planner, env, instruction_kind=args.instruction, ablate=args.ablate or (),
                      experience_path=experience_path, llm_config=args.llm_config,
                      pose_correction=POSE_CORRECTION[getattr(args, "pose_correction", None) or "auto"],
                      object_memory=getattr(args, "object_memory", None) or "tracker")


def save_experience(agent: Any) -> None:
    """Persist the agent's experience pool now: the agent saves it when its goal loop ends, but an
    episode cut off by its step budget never reaches that point, and the next episode (or rerun)
    should still start from what this one learned. A pool without a file is a no-op."""
    pool = getattr(agent, "experience", None)
    if pool is not None and callable(getattr(pool, "save", None)):
        pool.save()


def planner_label(args: argparse.Namespace) -> str:
    """The label the agent writes into its reports (``agent.name``, e.g. "deterministic-no-critic"),
    known before any simulator starts so that resume checks can run first. Built the way
    make_agent builds it, with no environment (only the oracle needs one, and it is "oracle")."""
    if is_privileged(args.planner):
        return args.planner
    return str(agent_for(args, None, None).name)


def episode_bar(total: int) -> Any:
    """A tqdm bar over episodes on stderr when stderr is a terminal, else None: piped or logged
    output keeps only the plain per-episode lines on stdout."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="episodes", unit="ep", file=sys.stderr, dynamic_ncols=True,
                leave=True)


@dataclass(frozen=True)
class DamagedReport:
    """An earlier report.json that cannot be read back: the episode is skipped, not rerun over it."""

    reason: str


def existing_result(report: Path, planner: str, instruction: str, sensors: str = "ideal",
                    key: dict[str, Any] | None = None, checklist: Sequence[str] | None = None) -> Any | None:
    """The stored result of an earlier (interrupted) run, or None when there is none. A report
    from another planner or instruction kind, or whose resume key (worldmind/resume_key.py:
    episode content, simulator options, LLM config) differs from ``key``, is refused naming the
    fields, never reused and never overwritten. A report written before resume keys existed has
    no key: it is reused only when the checklist it scored (its item descriptions) is the
    episode's ``checklist``, the one part of the episode such a report records."""
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
    stored = (result.extra or {}).get("sensors", "ideal")
    if stored != sensors:
        raise CliError(f"{report}: holds a run with --sensors {stored}, not {sensors}; use another --out")
    if key is not None:
        from worldmind.resume_key import RESUME_KEY, key_mismatch

        stored_key = (result.extra or {}).get(RESUME_KEY)
        differ = key_mismatch(stored_key, key)
        if stored_key is None and checklist is not None:
            scored = [i.description for i in result.checklist.items]
            if scored != list(checklist):
                differ = [f"written before resume keys, and the checklist it scored ({len(scored)} items) is not "
                          f"this episode's ({len(checklist)} items)"]
        if differ:
            raise CliError(f"{report}: made for other inputs ({'; '.join(differ)}); not reusing it: use another "
                           "--out, or move the report away to rerun the episode")
    return result
