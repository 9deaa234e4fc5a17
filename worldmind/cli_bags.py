"""``worldmind record`` and ``worldmind replay``: runs as ROS 2 bags, and bags back through the stack.

    worldmind record [--episode FILE | --episodes DIR --index N] [--planner oracle|deterministic|llm:MODEL]
                     --out BAG.mcap
                     [--max-steps N] [--width W --height H] [--rate HZ] [--storage mcap|sqlite3]
                     [--ground-truth changes|every|none] [--instruction detailed|concise] [--llm-config FILE]
                     [--data-dir DIR] [--move-step M]
    worldmind replay BAG --out DIR [--rate-report] [--horizon N]

``record`` runs one episode on the embedded simulator with rendering, like ``worldmind run``, and
writes every Observation (plus evaluation-only ground truth and the agent's plan/critic/belief
events, when the agent offers ``drain_events()``) to a bag (sim_bridge.replay.bag). ``replay``
plays a bag through perception, spatial memory and the belief tracker as fast as it can and
scores it (evaluation.replay), printing progress to stderr and a summary to stdout.

An interrupted ``record`` (Ctrl-C, SIGTERM, an error) never leaves a bag under the --out name: the
frames so far are kept as ``<name>.partial.mcap`` (marked inside too), and ``replay`` of such a bag
warns, naming it and its frame count, and exits 1. Bags recorded elsewhere (``ros2 bag record``)
carry no such marker: replay checks them against what rosbag2 states (``sim_bridge.replay.bag_integrity``:
a folder without metadata.yaml, fewer messages on a topic than stated, another duration, a listed
file gone, a .db3 never closed), replays what is there, marks replay.json ``partial`` with the
reasons, names them and exits 1. A metadata.yaml that cannot be trusted (a key given twice, a
field missing or of the wrong type) is refused, naming the file and the key, with exit 2.

Exit status: 0 done; 1 the bag was truncated, corrupt or partial (partial results written); 2 bad input
(a missing file, a malformed episode, an existing --out), each as one ``worldmind: error:`` line.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from evaluation.dev_set import demo_episode_file
from evaluation.executor_options import positive_float
from household.text import printable
from planner.factory import LLM_PREFIX, PLANNER_HELP, check_planner, make_agent
from worldmind.cli_common import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, PROG, CliError, StepReporter,
                                  load_valid_episode)

EVENT_KINDS = ("plan", "critic", "belief")


GROUND_TRUTH_MODES = ("changes", "every", "none")
MAX_SIDE, MAX_PIXELS = 4096, 4096 * 3072  # a render of --width x --height per frame; beyond this it runs out of memory
VIEW_FIELDS = frozenset({"visible", "isInteractable", "distance"})


class RecordingEnvironment:
    """Wraps an Environment: every observation it returns is written to the bag, with the action it
    is the outcome of and the ground truth of that moment. ``ground_truth``: "changes" (default)
    writes it on the first frame and whenever an object's state changed (a navigation step leaves
    the objects as they were, and the agent's pose is on /odom already: re-sending ~200 objects'
    metadata every frame would make the bag 10x larger for nothing; readers keep the latest),
    "every" on every frame, "none" never (a bag as a robot would record it)."""

    def __init__(self, env: Any, writer: Any, ground_truth: str = "changes") -> None:
        if ground_truth not in GROUND_TRUTH_MODES:
            raise ValueError(f"ground_truth must be one of {GROUND_TRUTH_MODES}, got {ground_truth!r}")
        self.env, self.writer, self.mode = env, writer, ground_truth
        self._last: Any = None

    def _world(self) -> Any:
        if self.mode == "none":
            return None
        world = self.env.ground_truth()
        # what the agent's viewpoint changes (visible, distance, ...) is not a change of the world
        key = ([{k: v for k, v in o.items() if k not in VIEW_FIELDS} for o in world.objects], world.held_object_id)
        if self.mode == "changes" and self._last is not None and key == self._last:
            return None
        self._last = key
        return world

    def reset(self, episode: Any) -> Any:
        obs = self.env.reset(episode)
        self._last = None
        self.writer.write_observation(obs, self._world())
        return obs

    def step(self, action: Any) -> Any:
        result = self.env.step(action)
        self.writer.write_observation(result.observation, self._world(), action=action)
        return result

    def ground_truth(self) -> Any:
        return self.env.ground_truth()

    def __getattr__(self, name: str) -> Any:  # layout, config, ... for reports and planners
        return getattr(self.env, name)


class EventRecordingAgent:
    """Wraps an agent: after each act(), its ``drain_events()`` (if any) goes into the bag as
    plan / critic / belief payloads."""

    def __init__(self, agent: Any, writer: Any) -> None:
        self.agent, self.writer = agent, writer
        self.name = getattr(agent, "name", "agent")
        self.events = 0
        self.bad_events: list[str] = []

    def reset(self, episode: Any, observation: Any) -> None:
        self.agent.reset(episode, observation)
        self._drain()

    def act(self, observation: Any) -> Any:
        action = self.agent.act(observation)
        self._drain()
        return action

    def _drain(self) -> None:
        from sim_bridge.ros.payloads import PayloadError

        drain = getattr(self.agent, "drain_events", None)
        if not callable(drain):
            return
        for kind, payload in drain():
            if kind not in EVENT_KINDS:
                self.bad_events.append(f"unknown event kind {kind!r}")
                continue
            try:
                self.writer.write_event(kind, payload)
                self.events += 1
            except PayloadError as exc:  # a planner's bad payload must not lose the recording
                self.bad_events.append(str(exc))

    def report_extra(self) -> dict[str, Any]:
        extra = getattr(self.agent, "report_extra", None)
        out = dict(extra()) if callable(extra) else {}
        out["recorded_events"] = self.events
        if self.bad_events:
            out["unrecorded_events"] = self.bad_events[:20]
        return out


def _record_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{PROG} record", description="Run one episode on the embedded simulator "
                                "with rendering and record it as a ROS 2 bag (MCAP by default).")
    p.add_argument("--episode", default=None, metavar="FILE", help="episode JSON file (default: first dev episode)")
    p.add_argument("--episodes", default=None, metavar="DIR", help="episode folder or file; with --index")
    p.add_argument("--index", type=int, default=0, metavar="N", help="which episode of --episodes (0-based)")
    p.add_argument("--planner", default="oracle", help=f"planner: {PLANNER_HELP} (default: oracle)")
    p.add_argument("--out", required=True, metavar="BAG", help="bag to write: x.mcap, x.db3, or a folder")
    p.add_argument("--storage", default=None, choices=("mcap", "sqlite3"), help="default: from the suffix, else mcap")
    p.add_argument("--max-steps", type=int, default=None, metavar="N", help="step budget (default: the episode's)")
    p.add_argument("--width", type=int, default=320)
    p.add_argument("--height", type=int, default=240)
    p.add_argument("--rate", type=positive_float, default=10.0, metavar="HZ", help="nominal frame rate of the stamps")
    p.add_argument("--ground-truth", default="changes", choices=GROUND_TRUTH_MODES,
                   help="when to record /worldmind/ground_truth (evaluation only): on frames where an object "
                        "changed (default), every frame, or never")
    p.add_argument("--instruction", default="detailed", choices=("detailed", "concise"))
    p.add_argument("--llm-config", default=None, metavar="FILE", help="LLM config file (llm:<model> planners only)")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--move-step", type=float, default=None, metavar="M")
    return p


def _episode(args: argparse.Namespace) -> tuple[Any, Path]:
    if args.episode and args.episodes:
        raise CliError("give --episode FILE or --episodes DIR --index N, not both")
    if args.episodes:
        from evaluation.episodes import load_episodes

        episodes, errors = load_episodes(args.episodes)
        for err in errors:
            print(f"{PROG}: skipped: {err}", file=sys.stderr)
        if not 0 <= args.index < len(episodes):
            raise CliError(f"--index {args.index}: {args.episodes} has {len(episodes)} usable episode(s)")
        ep = episodes[args.index]
        path = Path(getattr(ep, "source", "") or args.episodes)
        from evaluation.episodes import validate_episode
        from household.house_data import load_asset_database

        validate_episode(ep, ep.resolve_house(args.data_dir), load_asset_database())
        return ep, path
    path = Path(args.episode) if args.episode else demo_episode_file()
    return load_valid_episode(path, args.data_dir), path


def cmd_record(args: argparse.Namespace) -> int:
    from evaluation import runner
    from sim_bridge.factory import make_environment
    from sim_bridge.replay.bag import BagWriter

    check_planner(args.planner)
    if args.llm_config and not args.planner.startswith(LLM_PREFIX):
        raise CliError(f"--llm-config is for llm:<model> planners, not {args.planner}")
    if args.max_steps is not None and args.max_steps < 1:
        raise CliError(f"--max-steps must be at least 1, got {args.max_steps}")
    if args.width < 8 or args.height < 8:
        raise CliError("--width and --height must be at least 8 pixels")
    if args.width > MAX_SIDE or args.height > MAX_SIDE or args.width * args.height > MAX_PIXELS:
        raise CliError(f"--width {args.width} --height {args.height}: at most {MAX_SIDE} pixels a side and "
                       f"{MAX_PIXELS:,} pixels a frame (each frame is rendered and written as RGB, depth and ids)")
    if not args.rate > 0:
        raise CliError(f"--rate must be positive, got {args.rate}")
    out = Path(args.out)
    if out.exists():
        raise CliError(f"--out {out} exists already; not overwriting a recording")
    episode, path = _episode(args)
    options: dict[str, Any] = {"render": True, "width": args.width, "height": args.height, "data_dir": args.data_dir}
    if args.move_step is not None:
        options["move_step"] = args.move_step
    env = make_environment("embedded", **{k: v for k, v in options.items() if v is not None})
    agent = make_agent(args.planner, env, instruction_kind=args.instruction, llm_config=args.llm_config)
    print(f"Recording episode {episode.id} ({path}) with planner {args.planner} at {args.width}x{args.height}, "
          f"{args.rate:g} Hz stamps -> {out}")
    sys.stdout.flush()
    started = time.perf_counter()
    reporter = StepReporter(label="record")
    writer = BagWriter(out, storage=args.storage, rate_hz=args.rate)
    previous = signal.signal(signal.SIGTERM, _terminated)  # SIGTERM ends it like Ctrl-C: the bag is closed
    try:
        with writer:
            rec_env = RecordingEnvironment(env, writer, ground_truth=args.ground_truth)
            rec_agent = EventRecordingAgent(agent, writer)
            try:
                result, _ = runner.run_episode(rec_env, rec_agent, episode, instruction_kind=args.instruction,
                                               max_steps=args.max_steps, progress=reporter)
            finally:
                reporter.close()
            frames = writer.frames
    except BaseException:
        # never under the final name: the frames so far are kept as <name>.partial (replay says so)
        if writer.final_path is not None:
            print(f"{PROG}: recording stopped after {writer.frames} frame(s); the partial bag is "
                  f"{writer.final_path} (replay warns that it is partial); {out} was not written", file=sys.stderr)
        else:
            print(f"{PROG}: recording stopped after {writer.frames} frame(s); nothing kept, {out} was not written",
                  file=sys.stderr)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
    wall = time.perf_counter() - started
    size = out.stat().st_size if out.is_file() else sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"Recorded {frames} frame(s), {rec_agent.events} agent event(s), {size / 1e6:.1f} MB in {wall:.1f} s: {out}")
    if rec_agent.bad_events:  # the agent's payloads that failed validation are left out: say so
        print(f"{PROG}: warning: {len(rec_agent.bad_events)} agent event(s) not recorded; first: "
              f"{rec_agent.bad_events[0]}", file=sys.stderr)
    print(f"  GC {result.gc:.3f}  SR {result.sr:.0f}  stop reason: {(result.extra or {}).get('stop_reason', '?')}")
    return EXIT_OK


def _terminated(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _run(parser: argparse.ArgumentParser, argv: Sequence[str], func: Any) -> int:
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    from evaluation.episodes import EpisodeError
    from household.house_data import HouseError
    from sim_bridge.replay.bag import BagMetadataError, BagReadError

    try:
        return func(args)
    except (CliError, EpisodeError, BagMetadataError) as exc:
        problems = exc.problems
    except (HouseError, FileNotFoundError, FileExistsError, IsADirectoryError, PermissionError) as exc:
        problems = [str(exc)]
    except BagReadError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    for line in problems:
        print(f"{PROG}: error: {line}", file=sys.stderr)
    return EXIT_USAGE


def main_record(argv: Sequence[str]) -> int:
    return _run(_record_parser(), argv, cmd_record)


# --- replay --------------------------------------------------------------------------------------

def _replay_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{PROG} replay", description="Replay a bag through perception, spatial "
                                "memory and the belief tracker as fast as possible; score it; write "
                                "replay.json and replay.md.")
    p.add_argument("bag", metavar="BAG", help=".mcap / .db3 file or rosbag2 folder")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--rate-report", action="store_true", help="also print per-stage milliseconds per frame")
    p.add_argument("--horizon", type=int, default=None, metavar="N", help="trajectory-QA query horizon (steps)")
    return p


def cmd_replay(args: argparse.Namespace) -> int:
    from worldmind.run_folder import lock_run_folder, writable_out_dir

    from sim_bridge.replay.bag_integrity import inspect_bag

    bag = Path(args.bag)
    if not bag.exists():
        raise CliError(f"bag {bag} does not exist")
    inspect_bag(bag)  # a metadata.yaml that cannot be trusted is refused before --out is touched
    for name in ("replay.json", "replay.md"):
        if (Path(args.out) / name).resolve() == bag.resolve():
            raise CliError(f"--out {args.out}: the bag {bag} is the {name} the replay writes; use another --out")
    writable_out_dir(args.out)
    with lock_run_folder(args.out, "replay"):  # checked under the lock: a concurrent replay cannot slip in
        earlier = Path(args.out) / "replay.json"
        if earlier.exists():  # a damaged or empty bag must never replace good results with worse ones
            raise CliError(f"{earlier} exists already: replay into another --out (results are never replaced)")
        return _replay(args, bag)


def _replay(args: argparse.Namespace, bag: Path) -> int:
    from sim_bridge.replay.bag import BagReadError, is_partial_bag
    from evaluation.replay import ReplayConfig, replay_bag

    print(f"Replaying {bag} -> {args.out}")
    sys.stdout.flush()

    def progress(text: str) -> None:
        print(f"replay: {text}", file=sys.stderr, flush=True)

    try:
        result = replay_bag(bag, args.out, config=ReplayConfig(horizon=args.horizon), progress=progress)
    except BagReadError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        print(f"Partial results written to {Path(args.out) / 'replay.json'} and replay.md")
        return EXIT_FAILED
    _summary(result, args.rate_report)
    print(f"Results: {Path(args.out) / 'replay.json'}, {Path(args.out) / 'replay.md'}")
    reasons = result.get("partial_reasons") or []
    if reasons or is_partial_bag(bag, result.get("read", {}).get("ignored_topics")):
        print(f"{PROG}: warning: {bag} is a partial recording; it holds {result['frames']} frame(s), not a whole "
              "run (replay.json: partial, partial_reasons)", file=sys.stderr)
        for why in reasons[:10] or ["its name says .partial (the recording was interrupted)"]:
            print(f"{PROG}: warning: {printable(why)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _summary(r: dict[str, Any], rate_report: bool) -> None:
    xrt = r.get("x_real_time")
    print(f"Replayed {r['frames']} frame(s) of {r['bag_duration_s']:.2f} s in {r['wall_time_s']:.2f} s wall: "
          + (f"{xrt:.1f}x real time" if xrt else "x real time n/a"))
    read = r["read"]
    if read["problems"]:
        print(f"  {len(read['problems'])} problem(s) in the bag, e.g.: {read['problems'][0]}")
    mem = r.get("memory")
    if mem:
        print(f"  memory: {mem['memory_objects']} objects, precision {_f(mem['precision'])}, "
              f"recall (visible) {_f(mem['recall_visible'])}, centroid error {_f(mem['centroid_error_mean'])} m")
    else:
        print(f"  memory: {r['memory_objects']} objects (no ground truth in the bag: not scored)")
    b = r["belief_qa"]
    print(f"  belief QA: {b['questions']} question(s), accuracy {_f(b['accuracy'])}; {r['belief_events']} events")
    t = r["trajectory_qa"]
    print(f"  trajectory QA: {t['questions']} question(s)"
          + (f", accuracy {_f(t['accuracy']['overall'])}" if t.get("scored") else " (not scored: no answerer)"))
    if rate_report:
        ms = r["timing_ms_per_frame"]
        print("  ms per frame: " + ", ".join(f"{k[:-2]} {v:.2f}" for k, v in ms.items()))


def _f(v: Any) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def main_replay(argv: Sequence[str]) -> int:
    return _run(_replay_parser(), argv, cmd_replay)
