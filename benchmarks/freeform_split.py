"""The fixed tuning / held-out split of the person-written free-form set.

Why a hash of the entry's id: the split must be reproducible by anyone, independent of file order,
and decided before anyone looks at parser failures. Key = "<episode_id>|<style>" (style is
"episode" for the 40 episode entries, "adversarial" for the 10 adversarial ones, so the same
episode's two entries split independently); sha256 of the key, first 8 hex digits as an integer,
mod 100; below ``HELD_OUT_PERCENT`` is held out. On freeform_dev.json this holds out 17 of 40
episode entries and 4 of 10 adversarial entries. Tune only on "tune"; report "heldout" separately.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

HELD_OUT_PERCENT = 40
# ../shared beside the checkout (the development workplace's layout; not shipped)
DEFAULT_FREEFORM = Path(__file__).resolve().parents[2] / "shared" / "data" / "instructions" / "freeform_dev.json"


def entry_style(entry: dict[str, Any]) -> str:
    """"adversarial" for adversarial entries, "episode" for episode entries."""
    return str(entry.get("style") or "episode")


def split_of(entry: dict[str, Any]) -> str:
    """"heldout" or "tune" for one free-form entry, by the hash rule above."""
    key = f"{entry['episode_id']}|{entry_style(entry)}"
    bucket = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % 100
    return "heldout" if bucket < HELD_OUT_PERCENT else "tune"


def load_freeform(path: str | Path = DEFAULT_FREEFORM) -> list[dict[str, Any]]:
    """The entries of a free-form set file (a JSON list), each given its "split" and "style"."""
    entries = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a JSON list of entries")
    for e in entries:
        e["split"] = split_of(e)
        e["style"] = entry_style(e)
    return entries
