"""Peak memory of one bad-input case, for ``bench_bad_inputs.py`` (issue 32: every case answered
within 10 s and 1 GB).

Why the kernel's high-water mark and not tracemalloc: a bad input's cost is often outside
Python's heap (SQLite's page cache, zstd, open3d, a decompression bomb in C), and tracemalloc
slows every allocation, which would skew the 10 s runaway count measured on the same run.
Linux keeps the process's peak resident set (``VmHWM`` in /proc/self/status) and resets it to the
current one when "5" is written to /proc/self/clear_refs (Linux >= 4.0), so the peak of each case
is read in process, one case after another. Cases that start a child process (a CLI run in
another process) also report the children's peak when one of theirs set a new maximum
(``RUSAGE_CHILDREN``'s ``ru_maxrss`` only grows, so a child smaller than an earlier one is not
seen: reported as None; and Linux counts a child's resident set before its exec, so a child
started by fork+exec reports at least this process's size at the fork: an upper bound). Where
/proc cannot be written, tracemalloc's peak is used instead, and
``method`` says so.
"""

from __future__ import annotations

import re
import resource
import tracemalloc
from dataclasses import dataclass
from typing import Any

MB = 1024 * 1024
LIMIT_MB = 1024.0  # issue 32: a case over this ran away in memory


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as fh:
        m = re.search(rf"^{field}:\s+(\d+) kB", fh.read(), re.M)
    if m is None:
        raise OSError(f"/proc/self/status has no {field}")
    return int(m.group(1))


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        _status_kb("VmHWM")
        return True
    except OSError:
        return False


def _children_max_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0  # kB on Linux


@dataclass
class CaseMemory:
    """What one case cost in memory: this process's peak resident set during it, how far that was
    above the resident set at its start, and a child process's peak when one set a new maximum."""

    peak_mb: float
    growth_mb: float
    children_peak_mb: float | None
    method: str  # "VmHWM" or "tracemalloc"

    @property
    def worst_mb(self) -> float:
        return max(self.growth_mb, self.children_peak_mb or 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"peak_mb": round(self.peak_mb, 1), "growth_mb": round(self.growth_mb, 1),
                "children_peak_mb": None if self.children_peak_mb is None else round(self.children_peak_mb, 1),
                "method": self.method}


class MemoryProbe:
    """``with MemoryProbe() as probe: ...`` then ``probe.result`` (a CaseMemory)."""

    def __init__(self) -> None:
        self.result: CaseMemory | None = None
        self._hwm = False
        self._rss0 = 0.0
        self._children0 = 0.0

    def __enter__(self) -> "MemoryProbe":
        self._children0 = _children_max_mb()
        self._hwm = _reset_peak()
        if self._hwm:
            self._rss0 = _status_kb("VmRSS") / 1024.0
        else:
            tracemalloc.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        children = _children_max_mb()
        grown = children if children > self._children0 else None
        if self._hwm:
            peak = _status_kb("VmHWM") / 1024.0
            self.result = CaseMemory(peak, max(0.0, peak - self._rss0), grown, "VmHWM")
        else:
            _size, peak_b = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            self.result = CaseMemory(peak_b / MB, peak_b / MB, grown, "tracemalloc")
