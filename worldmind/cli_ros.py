"""``worldmind ros ...``: start the WorldMind ROS 2 node graph as plain OS processes.

    worldmind ros up sim|robot|replay [--episode FILE] [--agent NAME] [--instruction detailed|concise]
                     [--bag FILE] [--out DIR] [--example-robot] [--remap FROM:=TO ...]
                     [--param NODE.NAME:=VALUE ...] [--params-file FILE] [--without NODE,...]
                     [--log-dir DIR] [--max-runtime S] [--shutdown-timeout S]
    worldmind ros graph sim|robot|replay [...same options]   # print the processes as JSON, start nothing

Why processes and not ``ros2 launch``: launch/launch_ros and the ros2 CLI do not install from
PyPI, so on a machine with only the rclpy wheels this is how the graph runs. Both read the same
description (``worldmind_ros.graph``), so ``launch/*.launch.py`` on a ROS install and this command
start the same nodes with the same parameters and remappings.

Each node runs as ``python -m worldmind_ros.<node> --ros-args -r __node:=NAME --params-file
config/worldmind.yaml -p ... -r FROM:=TO``. Their output is streamed line by line with a
``[name]`` prefix (and copied to ``--log-dir/NAME.log``). The graph ends when a node marked
``ends_graph`` exits (the sim episode is over, the bag is played, the robot planner said Stop),
on Ctrl-C / SIGTERM, when any node fails (non-zero status), or after ``--max-runtime``; another
node exiting with status 0 has finished its work (the planner after Stop) and the rest go on.
Nodes are tethered to the launcher (``worldmind.tether``): a launcher killed with SIGKILL takes them
with it. At the end every node still running gets SIGTERM (their clean shutdown; a node still importing just
ends) and SIGKILL after ``--shutdown-timeout``.

Exit status: 0 when the graph ended normally and every node exited 0; 1 when any node failed
(non-zero status, killed, or died early); 130 after Ctrl-C with no failure; 2 for bad usage.

This module never imports rclpy: it builds command lines (the nodes import rclpy).
``ROS_AUTOMATIC_DISCOVERY_RANGE`` defaults to LOCALHOST (DDS stays on this machine) unless set, and
``FASTRTPS_DEFAULT_PROFILES_FILE`` to ``config/fastdds_large_frames.xml`` (a shared-memory segment
big enough for whole camera frames; without it best-effort color/depth images are mostly lost).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Sequence

from household.secrets import redact
from evaluation.executor_options import positive_float
from worldmind.tether import tethered

PROG = "worldmind ros"
REPO = Path(__file__).resolve().parents[1]
ROS_PACKAGE_SRC = REPO / "ros_ws" / "src" / "worldmind_ros"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    pass


def import_graph() -> Any:
    """``worldmind_ros.graph``: installed (pyproject package-dir), else from the source tree."""
    try:
        from worldmind_ros import graph
    except ImportError:
        if str(ROS_PACKAGE_SRC) not in sys.path:
            sys.path.insert(0, str(ROS_PACKAGE_SRC))
        from worldmind_ros import graph
    return graph


# --- the processes ----------------------------------------------------------------------------------

@dataclass
class NodeProcess:
    name: str
    argv: list[str]
    ends_graph: bool
    proc: subprocess.Popen | None = None
    reader: threading.Thread | None = None
    returncode: int | None = None
    signalled: bool = False  # we asked it to stop (its exit is then not an early death)


@dataclass
class Plan:
    mode: str
    nodes: list[NodeProcess]
    env: dict[str, str]
    params_file: str

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "params_file": self.params_file,
                "nodes": [{"name": n.name, "argv": n.argv, "ends_graph": n.ends_graph} for n in self.nodes],
                "env": {k: v for k, v in self.env.items() if k in ("PYTHONPATH", "ROS_AUTOMATIC_DISCOVERY_RANGE",
                                                                   "ROS_DOMAIN_ID", "FASTRTPS_DEFAULT_PROFILES_FILE")}}


def _parse_remap(text: str, graph: Any) -> tuple[str, str]:
    src, sep, dst = text.partition(":=")
    if not sep or not src or not dst:
        raise UsageError(f"--remap {text!r}: expected FROM:=TO (e.g. color_topic:=/camera/color/image_raw)")
    robot = graph.ROBOT_TOPIC_BY_ARG.get(src)
    return (robot.default if robot is not None else src), dst


def _parse_param(text: str) -> tuple[str, str, Any]:
    lhs, sep, value = text.partition(":=")
    node, dot, name = lhs.partition(".")
    if not sep or not dot or not node or not name:
        raise UsageError(f"--param {text!r}: expected NODE.NAME:=VALUE (e.g. memory.voxel_size:=0.1)")
    return node, name, _literal(value)


def _literal(value: str) -> Any:
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def build_plan(args: argparse.Namespace) -> Plan:
    graph = import_graph()
    extra: dict[str, dict[str, Any]] = {}
    for text in args.param or []:
        node, name, value = _parse_param(text)
        extra.setdefault(node, {})[name] = value
    if args.mode == "replay" and not args.bag:
        raise UsageError("replay needs --bag FILE (an MCAP or sqlite3 bag)")
    if args.bag and not Path(args.bag).exists():
        raise UsageError(f"--bag {args.bag}: no such file or folder")
    if args.episode and not Path(args.episode).is_file():
        raise UsageError(f"--episode {args.episode}: no such file")
    try:
        g = graph.graph(args.mode, episode=str(Path(args.episode).resolve()) if args.episode else "",
                        agent=args.agent or "", bag=str(Path(args.bag).resolve()) if args.bag else "",
                        out=str(Path(args.out).resolve()) if args.out else "", instruction=args.instruction or "",
                        example_robot=args.example_robot, object_memory=args.object_memory or "", extra=extra)
    except (KeyError, ValueError) as exc:
        raise UsageError(str(exc.args[0]) if exc.args else str(exc)) from None
    without = {w.strip() for w in (args.without or "").split(",") if w.strip()}
    unknown = without - {n.name for n in g.nodes}
    if unknown:
        raise UsageError(f"--without: no node(s) {', '.join(sorted(unknown))} in the {args.mode} graph "
                         f"(nodes: {', '.join(n.name for n in g.nodes)})")
    remaps = [_parse_remap(r, graph) for r in args.remap or []]
    namespace = (args.namespace or "").strip()
    if namespace:
        if not all(part.replace("_", "a").isalnum() for part in namespace.strip("/").split("/")):
            raise UsageError(f"--namespace {namespace!r}: letters, digits, '_' and '/' separators only")
        remaps.append(("__ns", "/" + namespace.strip("/")))
    params_file = args.params_file or str(graph.CONFIG_FILE)
    if not Path(params_file).is_file():
        raise UsageError(f"--params-file {params_file}: no such file")
    nodes = [NodeProcess(n.name, [sys.executable, "-u", "-m", n.python_module]
                         + graph.ros_args(n, params_file, remaps), n.ends_graph)
             for n in g.nodes if n.name not in without]
    env = dict(os.environ)
    paths = [str(graph.PACKAGE_DIR.parent), str(REPO)]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    # Big camera frames over best-effort shared memory need a larger segment (see the XML's comment).
    env.setdefault("FASTRTPS_DEFAULT_PROFILES_FILE", str(graph.FASTDDS_PROFILE))
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("RCUTILS_COLORIZED_OUTPUT", "0")
    env.setdefault("RCUTILS_CONSOLE_OUTPUT_FORMAT", "[{severity}] [{time}] [{name}]: {message}")
    return Plan(args.mode, nodes, env, params_file)


class Launcher:
    """Start, watch and stop a Plan's processes. Usable from tests as well as from the CLI."""

    def __init__(self, plan: Plan, *, out: IO[str] | None = None, log_dir: str | Path | None = None,
                 shutdown_timeout: float = 10.0, max_runtime: float | None = None) -> None:
        self.plan = plan
        self.out = out or sys.stdout
        self.log_dir = Path(log_dir) if log_dir else None
        self.shutdown_timeout = shutdown_timeout
        self.max_runtime = max_runtime
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.interrupted = False
        self.failures: list[str] = []
        self.end_reason = ""

    def say(self, text: str) -> None:
        with self._lock:
            self.out.write(f"[{PROG}] {text}\n")
            self.out.flush()

    def request_stop(self, reason: str = "interrupted") -> None:
        """Called from a signal handler: the main loop does the shutting down."""
        self.interrupted = True
        self.end_reason = self.end_reason or reason
        self._stop.set()

    def _pump(self, node: NodeProcess, log: IO[str] | None) -> None:
        assert node.proc is not None and node.proc.stdout is not None
        width = max(len(n.name) for n in self.plan.nodes)
        for line in node.proc.stdout:
            line = redact(line.rstrip("\n"))  # node logs may echo the configured API key
            with self._lock:
                self.out.write(f"[{node.name:<{width}}] {line}\n")
                self.out.flush()
            if log is not None:
                log.write(line + "\n")
                log.flush()
        if log is not None:
            log.close()

    def start(self) -> None:
        if self.log_dir:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        for node in self.plan.nodes:
            # tethered: a launcher killed with SIGKILL takes its nodes with it (SIGTERM)
            node.proc = subprocess.Popen(tethered(node.argv), env=self.plan.env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                                         errors="replace",
                                         start_new_session=True)  # Ctrl-C reaches us; we forward it in order
            log = open(self.log_dir / f"{node.name}.log", "w", encoding="utf-8") if self.log_dir else None
            node.reader = threading.Thread(target=self._pump, args=(node, log), daemon=True)
            node.reader.start()
            self.say(f"started {node.name} (pid {node.proc.pid})")

    def _poll(self) -> None:
        for node in self.plan.nodes:
            if node.returncode is None and node.proc is not None:
                node.returncode = node.proc.poll()
                if node.returncode is not None and not node.signalled:
                    if node.returncode == 0:  # finished its work (e.g. the planner after Stop)
                        self.say(f"{node.name} finished")
                        if node.ends_graph:
                            self.end_reason = self.end_reason or f"{node.name} finished"
                            self._stop.set()
                    else:
                        self.failures.append(f"{node.name} exited with status {node.returncode}")
                        self.end_reason = self.end_reason or f"{node.name} exited with status {node.returncode}"
                        self._stop.set()

    def wait(self) -> int:
        started = time.monotonic()
        while not self._stop.is_set():
            self._poll()
            if self.max_runtime is not None and time.monotonic() - started > self.max_runtime:
                self.failures.append(f"--max-runtime {self.max_runtime:g} s reached")
                self.end_reason = self.end_reason or "max runtime reached"
                break
            self._stop.wait(0.1)
        self.say(f"shutting down ({self.end_reason})")
        self.shutdown()
        return self.exit_code()

    def shutdown(self) -> None:
        live = [n for n in self.plan.nodes if n.proc is not None and n.proc.poll() is None]
        # SIGTERM first: a running node handles it like Ctrl-C (runtime.py: a flag, then a clean exit),
        # and a node still importing (seconds of rclpy/open3d) just ends, where SIGINT printed a
        # KeyboardInterrupt traceback or "Fatal Python error" from inside its imports.
        for sig, grace in ((signal.SIGTERM, self.shutdown_timeout), (signal.SIGKILL, 3.0)):
            for n in live:
                n.signalled = True
                try:
                    n.proc.send_signal(sig)  # type: ignore[union-attr]
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + grace
            for n in live:
                try:
                    n.proc.wait(max(deadline - time.monotonic(), 0.0))  # type: ignore[union-attr]
                except subprocess.TimeoutExpired:
                    pass
            still = [n for n in live if n.proc.poll() is None]  # type: ignore[union-attr]
            if sig != signal.SIGKILL and still:
                self.say(f"{', '.join(n.name for n in still)} still running after "
                         f"{signal.Signals(sig).name}; sending the next signal")
            for n in live:
                if n.proc.poll() is not None and n.returncode is None:  # type: ignore[union-attr]
                    n.returncode = n.proc.returncode  # type: ignore[union-attr]
                    if sig == signal.SIGTERM and n.returncode == -signal.SIGTERM:
                        self.say(f"{n.name} was still starting; stopped")
                    elif n.returncode != 0:
                        self.failures.append(f"{n.name} exited with status {n.returncode} after "
                                             f"{signal.Signals(sig).name}")
            live = still
            if not live:
                break
        for n in self.plan.nodes:
            if n.returncode is None and n.proc is not None:
                n.returncode = n.proc.wait()
            if n.reader is not None:
                n.reader.join(timeout=2.0)

    def exit_code(self) -> int:
        for f in self.failures:
            self.say(f"FAILED: {f}")
        if self.failures:
            return EXIT_FAILED
        return EXIT_INTERRUPTED if self.interrupted else EXIT_OK


# --- command line -----------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Start the WorldMind ROS 2 node graph "
                                     "(the same graph launch/*.launch.py describes) as separate processes.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, text in (("up", "start the graph and stream its logs until it ends or Ctrl-C"),
                       ("graph", "print the processes `up` would start (JSON) and exit")):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("mode", help="sim | robot | replay")
        p.add_argument("--episode", default=None, metavar="FILE", help="LongAct episode (sim, example robot, planner)")
        p.add_argument("--agent", default=None, help="planner agent: a worldmind planner name (make_agent) or "
                                                     "scripted:ACTIONS.json (default: the config's)")
        p.add_argument("--instruction", default=None, choices=("detailed", "concise"), help="instruction kind")
        p.add_argument("--bag", default=None, metavar="FILE", help="replay: the bag to play")
        p.add_argument("--object-memory", default=None, metavar="KIND",
                       help="what the planner grounds objects through: tracker (the default; the memory node "
                            "holds the scene map) or spatial (the planner's in-process spatial memory is the "
                            "graph's one memory, served by the planner node; no memory node starts)")
        p.add_argument("--out", default=None, metavar="DIR", help="sim: write the episode report here")
        p.add_argument("--example-robot", action="store_true",
                       help="robot: also start the example robot adapter (the embedded simulator as the robot)")
        p.add_argument("--remap", action="append", metavar="FROM:=TO",
                       help="topic remapping for every node; FROM may be a robot launch argument name such "
                            "as color_topic (repeatable)")
        p.add_argument("--namespace", default=None, metavar="NS",
                       help="ROS namespace of every node (their worldmind/... topics move under it)")
        p.add_argument("--param", action="append", metavar="NODE.NAME:=VALUE", help="parameter override (repeatable)")
        p.add_argument("--params-file", default=None, metavar="FILE",
                       help="parameter YAML (default: ros_ws/src/worldmind_ros/config/worldmind.yaml)")
        p.add_argument("--without", default=None, metavar="NODE,...", help="nodes of the graph not to start")
        p.add_argument("--log-dir", default=None, metavar="DIR", help="also write each node's log to DIR/NAME.log")
        p.add_argument("--max-runtime", type=positive_float, default=None, metavar="S",
                       help="stop the graph (as a failure) after S seconds")
        p.add_argument("--shutdown-timeout", type=positive_float, default=10.0, metavar="S",
                       help="seconds a node gets to exit after SIGTERM before SIGKILL (default: 10)")
    return parser


def main_ros(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    try:
        plan = build_plan(args)
    except UsageError as exc:
        print(f"worldmind: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "graph":
        print(json.dumps(plan.to_dict(), indent=2))
        return EXIT_OK
    from household.atomic_io import writable_out_dir
    from household.errors import InputError

    try:  # a --log-dir on /dev/full or a file: refused before any node starts, not a traceback mid-launch
        for option, folder in (("--log-dir", args.log_dir), ("--out", getattr(args, "out", None))):
            if folder:
                writable_out_dir(folder, option)
    except InputError as exc:
        print(f"worldmind: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    launcher = Launcher(plan, log_dir=args.log_dir, shutdown_timeout=args.shutdown_timeout,
                        max_runtime=args.max_runtime)
    handler = lambda signum, _frame: launcher.request_stop(signal.Signals(signum).name)  # noqa: E731
    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        launcher.say(f"{args.mode} graph: {', '.join(n.name for n in plan.nodes)} "
                     f"(ROS_AUTOMATIC_DISCOVERY_RANGE={plan.env.get('ROS_AUTOMATIC_DISCOVERY_RANGE')})")
        launcher.start()
        return launcher.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
