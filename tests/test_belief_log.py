"""The durable event log: reopen restores all tracks; kill -9 during ingestion loses no acknowledged event."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memory.belief import BeliefTracker
from memory.belief.log import DurableLog

ROOT = Path(__file__).resolve().parents[1]

_WRITER = r"""
import sys
from memory.belief import BeliefTracker
tr = BeliefTracker(sys.argv[1])
i = 0
while True:
    batch = [{"id": f"e{i + k}", "t": float(i + k), "actor": "robot", "kind": "observation", "action": "inspect",
              "observers": [], "effects": [[f"obj_{(i + k) % 50}", "location", f"rec_{(i + k) % 7}"]],
              "session": f"s{(i + k) // 100}", "text": "x" * 200} for k in range(50)]
    rep = tr.ingest(batch)
    print(rep.acknowledged[-1], flush=True)  # acknowledged: durable before this line is printed
    i += 50
"""


def test_kill_9_during_ingestion_loses_no_acknowledged_event(tmp_path):
    log = tmp_path / "log.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(log)], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    acked = None
    deadline = time.monotonic() + 30
    for line in proc.stdout:  # read acknowledgements until well into the run
        acked = line.strip()
        if int(acked[1:]) >= 3000 or time.monotonic() > deadline:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert acked is not None
    last = int(acked[1:])
    tr = BeliefTracker.open(log)
    for i in range(last + 1):  # every acknowledged event is there, in order, and the tracks are rebuilt
        assert tr.event_by_id(f"e{i}") is not None
    assert tr.state.current(f"obj_{last % 50}", "location").value == f"rec_{last % 7}"
    n = len(tr)
    tr.ingest([{"id": "after", "t": 1e9, "actor": "robot", "kind": "action", "action": "inspect", "observers": []}])
    tr.close()
    assert len(BeliefTracker.open(log)) == n + 1  # the log stays appendable after the crash


def test_torn_and_malformed_lines_are_cut_or_skipped_not_fatal(tmp_path):
    path = tmp_path / "log.jsonl"
    tr = BeliefTracker(path)
    tr.ingest([{"id": f"e{i}", "t": i, "actor": "robot", "kind": "observation", "action": "inspect", "observers": [],
                "effects": [["mug_1", "location", f"t_{i}"]]} for i in range(3)])
    tr.close()
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + "{garbage\n" + "".join(lines[1:]) + '{"id": "e9", "t": 9')  # edit + torn tail
    log = DurableLog(path)
    recs = [r["id"] for _, r in log.scan()]
    assert recs == ["e0", "e1", "e2"]
    assert any("torn" in p for p in log.problems) and any(":2: skipped malformed" in p for p in log.problems)
    log.close()
    again = BeliefTracker.open(path)
    assert again.state.current("mug_1", "location").value == "t_2"
    assert json.loads(path.read_text().splitlines()[-1])["id"] == "e2"
