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
    # The writer may have made the next batch durable between the last acknowledgement read and
    # the kill: the track holds the newest event of that object that the log has, ack or not.
    newest = last
    while tr.event_by_id(f"e{newest + 1}") is not None:
        newest += 1
    k = last + 50 * ((newest - last) // 50)  # the same object (ids cycle over 50) in the newest batch
    assert tr.state.current(f"obj_{last % 50}", "location").value == f"rec_{k % 7}"
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
    assert any(f"byte {good}: cut a torn" in p for p in log.problems)
    log.close()


def test_duplicate_event_ids_in_a_stored_log_are_skipped_and_named(tmp_path):
    path = tmp_path / "log.jsonl"
    tr = BeliefTracker(path)
    tr.ingest([_event(0), _event(1)])
    tr.close()
    first = path.read_text().splitlines(keepends=True)[0]
    forged = json.loads(first)
    forged["effects"] = [["mug_1", "location", "forged"]]
    forged.pop("_crc", None)  # a line without a CRC (older writer) is read: the id check must catch it
    with open(path, "a") as fh:  # a concatenated or edited log repeats an id with other content
        fh.write(json.dumps(forged) + "\n")
    again = BeliefTracker.open(path)
    assert len(again) == 2
    assert again.state.current("mug_1", "location").value == "t_1"
    assert any("duplicate event id 'e0'" in p for p in again.log.problems)


def _ev(i: int, text: str = "", **kw) -> dict:
    return {"id": f"e{i}", "t": float(i), "actor": "robot", "kind": "observation", "action": "inspect",
            "observers": [], "effects": [["mug_1", "location", f"t_{i}"]], "text": text, **kw}


def test_records_longer_than_any_tail_window_survive_many_reopen_cycles(tmp_path):
    """Regression (issue 16): recovery read only the last 64 KB and cut a long final record."""
    path = tmp_path / "log.jsonl"
    n = 0
    for cycle in range(5):
        tr = BeliefTracker.open(path)
        assert len(tr) == n, f"cycle {cycle}: {len(tr)} events after reopen, {n} acknowledged"
        rep = tr.ingest([_ev(n, "y" * 200_000), _ev(n + 1, "z" * 10)])
        assert rep.acknowledged == [f"e{n}", f"e{n + 1}"]
        n += 2
        tr.close()
        if cycle % 2:  # a crash mid-write leaves a torn, unacknowledged tail of 150 KB
            with open(path, "ab") as fh:
                fh.write(b'{"id":"torn","t":1e9,"text":"' + b"w" * 150_000)
    tr = BeliefTracker.open(path)
    assert len(tr) == n and tr.event_by_id(f"e{n - 2}").text == "y" * 200_000
    assert tr.state.current("mug_1", "location").value == f"t_{n - 1}"
    assert tr.event_by_id("torn") is None


def test_duplicate_event_ids_are_rejected_naming_the_id(tmp_path):
    path = tmp_path / "log.jsonl"
    tr = BeliefTracker(path)
    rep = tr.ingest([_ev(1), {**_ev(2), "id": "e1", "t": 2.0}])
    assert rep.acknowledged == ["e1"] and len(rep.rejected) == 1 and "e1" in rep.rejected[0]
    rep = tr.ingest([_ev(1)])  # the same event re-sent: idempotent, not stored twice
    assert rep.duplicates == 1 and not rep.acknowledged
    tr.close()
    # A log edited (or two logs concatenated) so that an id appears twice: the first copy wins.
    rec = json.loads(path.read_text().splitlines()[0])
    rec.pop("_crc")
    rec["effects"][0][2] = "elsewhere"
    with open(path, "a") as fh:  # a hand-written line (no checksum) repeating the id
        fh.write(json.dumps(rec) + "\n")
    tr = BeliefTracker.open(path)
    assert len(tr) == 1 and tr.state.current("mug_1", "location").value == "t_1"
    assert any("duplicate event id 'e1'" in p and "byte" in p for p in tr.log.problems)


def test_read_back_errors_name_the_file_and_byte_offset(tmp_path):
    from memory.belief.log import LogFormatError
    import pytest

    path = tmp_path / "log.jsonl"
    log = DurableLog(path)
    off = log.append({"id": "a"})
    off2 = log.append({"id": "b"})
    log.commit()
    log.close()
    raw = path.read_bytes()
    path.write_bytes(raw[:off2] + b"[" * 5 + raw[off2 + 5:])
    log = DurableLog(path)
    assert log.read_at(off) == {"id": "a"}
    with pytest.raises(LogFormatError) as err:
        log.read_at(off2)
    assert str(path) in str(err.value) and f"byte {off2}" in str(err.value)
    with pytest.raises(LogFormatError, match="strict JSON"):
        log.append({"x": float("nan")})
    log.close()


_RANDOM_WRITER = r"""
import random, sys
from memory.belief import BeliefTracker
tr = BeliefTracker(sys.argv[1])
rng = random.Random(int(sys.argv[2]))
i = int(sys.argv[3])
while True:
    k = rng.randint(1, 40)
    batch = [{"id": f"e{j}", "t": float(j), "actor": "robot", "kind": "observation", "action": "inspect",
              "observers": [], "effects": [[f"obj_{j % 50}", "location", f"rec_{j % 7}"]],
              "text": "x" * rng.choice([10, 500, 70_000, 150_000])} for j in range(i, i + k)]
    rep = tr.ingest(batch)
    print(rep.acknowledged[-1], flush=True)  # durable before this line is printed
    i += k
"""


def test_kill_9_at_seeded_random_times_keeps_every_acknowledged_event_once(tmp_path):
    """Kill -9 at random points of ingestion (records up to 150 KB), reopen, ingest, repeat on the same log."""
    import random
    import threading

    rng = random.Random(16)
    log = tmp_path / "log.jsonl"
    survived = []
    first = 0  # the next writer's first event id
    for run in range(4):
        proc = subprocess.Popen([sys.executable, "-c", _RANDOM_WRITER, str(log), str(run), str(first)],
                                stdout=subprocess.PIPE,
                                text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        acks: list[str] = []
        reader = threading.Thread(target=lambda: [acks.append(x.strip()) for x in proc.stdout], daemon=True)  # noqa: B023
        reader.start()
        start = time.monotonic()
        while not acks and time.monotonic() - start < 30:  # wait for the writer to start acknowledging
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        reader.join(5)
        assert acks, f"run {run}: the writer acknowledged nothing"
        last = int(acks[-1][1:])
        tr = BeliefTracker.open(log)
        ids = [tr.event(s).id for s in range(len(tr))]
        assert len(ids) == len(set(ids)), f"run {run}: an event stored twice"
        for j in range(last + 1):
            assert f"e{j}" in tr._ids, f"run {run}: acknowledged event e{j} lost (last ack e{last})"
        stored = max(int(i[1:]) for i in ids if i.startswith("e"))  # acknowledged or written before the kill
        n = len(tr)
        rep = tr.ingest([{"id": f"after{run}", "t": stored + 0.5, "actor": "robot", "kind": "action",
                          "action": "inspect", "observers": []}])
        assert rep.acknowledged == [f"after{run}"], rep.rejected  # the log accepts new events
        tr.close()
        survived.append((run, last + 1, n))
        first = stored + 1
    assert len(BeliefTracker.open(log)) == survived[-1][2] + 1


def test_a_flipped_bit_inside_a_value_is_detected_not_read_back_as_another_event(tmp_path):
    path = tmp_path / "log.jsonl"
    tr = BeliefTracker(path)
    tr.ingest([_ev(1), _ev(2)])
    tr.close()
    raw = path.read_bytes()
    at = raw.index(b"t_1")
    path.write_bytes(raw[:at] + b"t_7" + raw[at + 3:])  # still valid JSON, different content
    tr = BeliefTracker.open(path)
    assert tr.event_by_id("e1") is None and tr.event_by_id("e2") is not None
    assert any("byte 0" in p and "checksum mismatch" in p for p in tr.log.problems)
    assert "_crc" not in tr.event_by_id("e2").to_dict()
