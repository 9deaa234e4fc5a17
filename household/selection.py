"""House and episode selections as people type them: "0-9,12,15-20"."""
from __future__ import annotations

import re

from household.errors import InputError

# No houses file holds anywhere near this many houses (ProcTHOR-10k has 10,000): a bound checked
# before a range is expanded, so "0-999999999" is an error at once, not gigabytes of indices.
MAX_INDEX = 99_999


def parse_indices(text: str, limit: int = MAX_INDEX + 1) -> list[int]:
    """"0-9,12,15-20" -> [0, ..., 9, 12, 15, ..., 20]; ranges are inclusive, order is kept and
    repeats are dropped. Every index must be below ``limit`` (checked before a range is
    expanded). Raises InputError naming the bad part."""
    out: list[int] = []
    seen: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not m:
            raise InputError(f"--indices: {part!r} is not an index or a range like 0-9 (in {text!r})")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise InputError(f"--indices: range {part!r} runs backwards")
        if hi >= limit:
            raise InputError(f"--indices: {hi} in {part!r} is beyond the last index accepted ({limit - 1:,})")
        for i in range(lo, hi + 1):
            if i not in seen:
                seen.add(i)
                out.append(i)
    return out
