"""bench_bad_inputs.py measures every case's peak memory beside its outcome (issue 32: each case
within 10 s and 1 GB); benchmarks/case_memory.py says how."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests" / "fuzz")]

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


# The cases run in a Python process of their own, as `bench_bad_inputs.py` runs them: the peak
# resident set is the process's, and inside a pytest-xdist worker it also moves with what earlier
# tests left running or freed (a 40 MB case read as 2.3-2.4 MB of growth there, in about one
# `make test` in four, never alone; a gc.collect() before the baseline did not change that).
_CASES = """
import json, sys
from pathlib import Path
import numpy as np
sys.path[:0] = [sys.argv[1] + "/benchmarks", sys.argv[1] + "/tests/fuzz"]
from bench_bad_inputs import Tally

def big(p):
    np.ones(40 * 1024 * 1024 // 8)
    raise ValueError(f"{p.name}: bad")

tally = Tally()
for name, read in (("fine", lambda p: None), ("refused", big)):
    path = Path(sys.argv[2]) / f"{name}.json"
    path.write_text("{}")
    tally.one("fmt", name, path, read, (ValueError,))
print(json.dumps({"cases": tally.cases, "rows": tally.rows, "lines": tally.case_lines()}))
"""


def test_every_case_reports_outcome_and_peak_memory(tmp_path):
    done = subprocess.run([sys.executable, "-c", _CASES, str(ROOT), str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    tally = json.loads(done.stdout.strip().splitlines()[-1])
    outcomes = {c["case"]: c for c in tally["cases"]}
    assert outcomes["fine"]["outcome"] == "valid" and outcomes["refused"]["outcome"] == "clean_error"
    assert outcomes["refused"]["growth_mb"] >= 30 and outcomes["refused"]["method"] in ("VmHWM", "tracemalloc")
    assert tally["rows"]["fmt"]["over_memory"] == 0 and tally["rows"]["fmt"]["peak_growth_mb"] >= 30
    lines = tally["lines"]
    assert len(lines) == 2 and "fmt | refused | clean_error |" in lines[1] and " MB" in lines[1]
