"""The executor options shared by the evaluation commands (``--workers``, ``--ray-address``, ...)
and the executor they ask for. Light on purpose: cli.py imports it to build its parser, and Ray
is imported only when a Ray option is given."""

from __future__ import annotations

import argparse
import math
from typing import Any


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0 (``nan`` never ends a wait, ``inf`` never comes)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


def add_executor_options(p: argparse.ArgumentParser, unit: str = "episode", experience: bool = False) -> None:
    p.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                   help=f"run one Ray task per {unit} on a local Ray runtime with N worker CPUs "
                        "(needs the ray extra; default: in this process, one after another)")
    p.add_argument("--ray-address", default=None, metavar="HOST:PORT",
                   help="join an existing Ray cluster at its head's address instead (with --workers: "
                        "at most N tasks at once)")
    p.add_argument("--task-timeout", type=positive_float, default=None, metavar="S",
                   help=f"Ray only: a {unit} still running after S seconds is cancelled and recorded failed "
                        "(default: no limit)")
    if experience:
        p.add_argument("--experience-wave", type=_positive_int, default=None, metavar="K",
                       help="deterministic/llm: episodes run in waves of K that all start from the same "
                            "snapshot of the experience pool, merged in episode order after each wave, so "
                            "results do not depend on --workers (default: 1 in process, 8 on Ray)")


def executor_from_args(args: argparse.Namespace) -> Any:
    """The executor the options ask for; ExecutorError (naming the option) when it cannot start."""
    from evaluation.executor import make_executor

    return make_executor(getattr(args, "workers", None), getattr(args, "ray_address", None),
                         getattr(args, "task_timeout", None))
