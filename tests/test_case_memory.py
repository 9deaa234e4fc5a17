"""bench_bad_inputs.py measures every case's peak memory beside its outcome (issue 32: each case
within 10 s and 1 GB); benchmarks/case_memory.py says how."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests" / "fuzz")]

from bench_bad_inputs import Tally  # noqa: E402
from case_memory import MemoryProbe  # noqa: E402


def test_probe_sees_a_case_that_allocates_and_frees():
    with MemoryProbe() as probe:
        block = np.ones(80 * 1024 * 1024 // 8)  # 80 MB, touched
        del block
    mem = probe.result
    assert mem is not None and mem.growth_mb >= 60, mem
    with MemoryProbe() as probe:
        pass
    assert probe.result is not None and probe.result.growth_mb < 20  # the previous case's peak is not carried over


def test_every_case_reports_outcome_and_peak_memory(tmp_path, capsys):
    def big(p: Path) -> None:
        np.ones(40 * 1024 * 1024 // 8)
        raise ValueError(f"{p.name}: bad")

    tally = Tally()
    for name, read in (("fine", lambda p: None), ("refused", big)):
        path = tmp_path / f"{name}.json"
        path.write_text("{}")
        tally.one("fmt", name, path, read, (ValueError,))
    outcomes = {c["case"]: c for c in tally.cases}
    assert outcomes["fine"]["outcome"] == "valid" and outcomes["refused"]["outcome"] == "clean_error"
    assert outcomes["refused"]["growth_mb"] >= 30 and outcomes["refused"]["method"] in ("VmHWM", "tracemalloc")
    assert tally.rows["fmt"]["over_memory"] == 0 and tally.rows["fmt"]["peak_growth_mb"] >= 30
    lines = tally.case_lines()
    assert len(lines) == 2 and "fmt | refused | clean_error |" in lines[1] and " MB" in lines[1]
