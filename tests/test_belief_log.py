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


def _event(i: int, text: str = "") -> dict:
    return {"id": f"e{i}", "t": float(i), "actor": "robot", "kind": "observation", "action": "inspect",
            "observers": [], "effects": [["mug_1", "location", f"t_{i}"]], "text": text}


def test_records_longer_than_a_read_block_survive_any_number_of_reopens(tmp_path):
    """Recovery used to read a fixed 64 KB tail: a longer last record was cut, and every event
    acknowledged after it was glued to the fragment and lost at the next reopen."""
    path = tmp_path / "log.jsonl"
    tr = BeliefTracker(path)
    tr.ingest([_event(0), _event(1, "x" * 200_000)])  # the last acknowledged record is 200 KB
    tr.close()
    sizes = [path.stat().st_size]
    for cycle in range(2, 6):  # four reopen cycles, one more acknowledged event each
        tr = BeliefTracker.open(path)
        assert tr.log.problems == []
        assert tr.ingest([_event(cycle)]).acknowledged == [f"e{cycle}"]
        tr.close()
        sizes.append(path.stat().st_size)
    assert sizes == sorted(sizes) and sizes[0] > 200_000
    again = BeliefTracker.open(path)
    assert [again.event_by_id(f"e{i}") is not None for i in range(6)] == [True] * 6
    assert again.event_by_id("e1").text == "x" * 200_000
    assert again.state.current("mug_1", "location").value == "t_5"


def test_a_torn_tail_after_a_long_record_is_cut_at_its_own_start(tmp_path):
    path = tmp_path / "log.jsonl"
    tr = BeliefTracker(path)
    tr.ingest([_event(0, "y" * 150_000)])
    tr.close()
    good = path.stat().st_size
    with open(path, "ab") as fh:  # a crash in the middle of writing a second long record
        fh.write(json.dumps(_event(1, "z" * 100_000)).encode()[:90_000])
    log = DurableLog(path)
    assert path.stat().st_size == good
    assert [r["id"] for _, r in log.scan()] == ["e0"]
    assert any(f"at byte {good}" in p for p in log.problems)
    log.close()


def test_duplicate_event_ids_in_a_stored_log_are_skipped_and_named(tmp_path):
    path = tmp_path / "log.jsonl"
    tr = BeliefTracker(path)
    tr.ingest([_event(0), _event(1)])
    tr.close()
    first = path.read_text().splitlines(keepends=True)[0]
    forged = json.loads(first)
    forged["effects"] = [["mug_1", "location", "forged"]]
    with open(path, "a") as fh:  # a concatenated or edited log repeats an id with other content
        fh.write(json.dumps(forged) + "\n")
    again = BeliefTracker.open(path)
    assert len(again) == 2
    assert again.state.current("mug_1", "location").value == "t_1"
    assert any("'e0'" in p and "duplicate id" in p for p in again.log.problems)
