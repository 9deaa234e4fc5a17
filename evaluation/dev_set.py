"""The committed LongAct dev set (package data): where it is and which episode runs by default."""
from __future__ import annotations

from pathlib import Path

from household.errors import InputError

DEFAULT_EPISODES_DIR = Path(__file__).resolve().parent / "data" / "episodes_dev"  # package data
EPISODE_SUFFIXES = (".json", ".jsonl", ".jsonl.gz")

def default_episode_file() -> Path:
    """The first file (sorted) of the committed dev set: what ``worldmind run`` runs by default."""
    files = sorted(p for p in DEFAULT_EPISODES_DIR.glob("*") if p.is_file() and p.name.endswith(EPISODE_SUFFIXES)) \
        if DEFAULT_EPISODES_DIR.is_dir() else []
    if not files:
        raise InputError(f"no --episode given and no committed episodes in {DEFAULT_EPISODES_DIR}; "
                       "pass --episode FILE")
    return files[0]
