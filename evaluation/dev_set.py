"""The committed LongAct dev set (package data): where it is and which episode runs by default."""
from __future__ import annotations

from pathlib import Path

from household.errors import InputError

DEFAULT_EPISODES_DIR = Path(__file__).resolve().parent / "data" / "episodes_dev"  # package data (v1)
# The LongAct-like set in people's wording: what ``worldmind run`` and ``make demo`` show.
DEMO_EPISODES_DIR = Path(__file__).resolve().parent / "data" / "episodes_dev_v2"
EPISODE_SUFFIXES = (".json", ".jsonl", ".jsonl.gz")


def _first(folder: Path) -> Path:
    files = sorted(p for p in folder.glob("*") if p.is_file() and p.name.endswith(EPISODE_SUFFIXES)) \
        if folder.is_dir() else []
    if not files:
        raise InputError(f"no --episode given and no committed episodes in {folder}; pass --episode FILE")
    return files[0]


def default_episode_file() -> Path:
    """The first file (sorted) of the v1 dev set: the regression episode tests and benchmarks use."""
    return _first(DEFAULT_EPISODES_DIR)


def demo_episode_file() -> Path:
    """The first file (sorted) of the v2 dev set (LongAct-like, people's wording): what
    ``worldmind run`` and ``worldmind record`` run when no episode is given."""
    return _first(DEMO_EPISODES_DIR)
