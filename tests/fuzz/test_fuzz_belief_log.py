"""Fuzz: damaged belief logs and hostile events. Every case ends in a correct open (bad lines
skipped and reported, a torn tail cut) or the format's own error, never another exception or a
hang; every intact acknowledged record survives, and the log accepts new events afterwards."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from fuzz_mutations import HOSTILE_VALUES, bit_flips, deep, json_mutations, splices, truncations

from memory.belief import BeliefTracker
from memory.belief.log import DurableLog, LogFormatError

pytestmark = pytest.mark.timeout(60)
SEED = 16


def _events() -> list[dict]:
    out = []
    for i in range(12):
        out.append({"id": f"e{i}", "t": float(i), "actor": "robot", "kind": "observation", "action": "inspect",
                    "observers": [], "effects": [[f"obj_{i % 3}", "location", f"rec_{i}"]],
                    "text": "long " * 20_000 if i == 5 else f"event {i}"})
    return out


@pytest.fixture(scope="module")
def good_log(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("good") / "log.jsonl"
    tr = BeliefTracker(path)
    assert len(tr.ingest(_events()).acknowledged) == 12
    tr.close()
    return path.read_bytes()


def _line_spans(data: bytes) -> list[tuple[int, int, str]]:
    spans, start = [], 0
    for line in data.splitlines(keepends=True):
        spans.append((start, start + len(line), json.loads(line)["id"]))
        start += len(line)
    return spans


def _common_prefix(a: bytes, b: bytes) -> int:
    lo, hi = 0, min(len(a), len(b))  # bisect on prefix equality: C-speed compares
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _open_and_check(path: Path, data: bytes, good: bytes, name: str) -> int:
    """Open a mutated log; intact records must all be there; the log must take a new event."""
    path.write_bytes(data)
    try:
        tr = BeliefTracker.open(path)
    except LogFormatError:
        return 0  # the format's own error (e.g. a directory in its place): acceptable, nothing written
    ids = set(tr._ids)
    changed_from = _common_prefix(good, data)
    for _start, end, eid in _line_spans(good):
        # Lines entirely before the first changed byte, and complete (ending in a newline) in the
        # mutated file, were acknowledged and untouched: they must be there.
        if end <= changed_from and end <= len(data):
            assert eid in ids, f"{name}: intact acknowledged record {eid} lost"
    n = len(tr)
    rep = tr.ingest([{"id": "fresh", "t": 1e6, "actor": "robot", "kind": "action", "action": "inspect",
                      "observers": []}])
    assert rep.acknowledged == ["fresh"] or "fresh" in ids, f"{name}: log refused a new event: {rep.rejected}"
    tr.close()
    again = BeliefTracker.open(path)
    assert len(again) == n + len(rep.acknowledged), f"{name}: reopen changed the event count"
    assert again.event_by_id("fresh") is not None
    again.close()
    return 1


def test_truncation_at_every_n_bytes(good_log: bytes, tmp_path: Path) -> None:
    tried = sum(_open_and_check(tmp_path / "log.jsonl", data, good_log, name)
                for name, data in truncations(good_log, 1499))
    assert tried > 60


def test_bit_flips_and_splices(good_log: bytes, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    cases = list(bit_flips(good_log, rng, 60)) + list(splices(good_log, rng, 60))
    for name, data in cases:
        _open_and_check(tmp_path / "log.jsonl", data, good_log, name)


def test_hostile_lines_are_skipped_with_their_byte_offset(good_log: bytes, tmp_path: Path) -> None:
    first = good_log.splitlines(keepends=True)[0]
    hostile = [deep(100_000).encode(), b'{"id": NaN}', b"\xff\xfe\x00", b"[]", b"null", b'"str"', b"1e999",
               json.dumps({"id": "e0", "t": "x"}).encode(), b"{" * 10]
    for i, line in enumerate(hostile):
        data = first + line + b"\n" + good_log[len(first):]
        path = tmp_path / "log.jsonl"
        path.write_bytes(data)
        tr = BeliefTracker.open(path)
        assert len(tr) == 12, f"hostile line {i}: {len(tr)} of 12 records"
        assert any(f"byte {len(first)}" in p for p in tr.log.problems), (i, tr.log.problems)
        tr.close()


def test_hostile_events_are_rejected_by_field_never_raise(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    tr = BeliefTracker(tmp_path / "log.jsonl")
    base = {"id": "b", "t": 1.0, "actor": "robot", "kind": "utterance", "action": "say", "observers": ["robot"],
            "args": {"to": "kitchen"}, "effects": [["mug", "location", "sink"]], "claims": [],
            "commitment": {"kind": "request", "owner": "robot", "text": "x", "due": 5.0}}
    acked = 0
    for i, (name, ev) in enumerate(json_mutations(base, rng, 400)):
        if isinstance(ev, dict):
            ev = {**ev, "id": f"m{i}"} if isinstance(ev.get("id"), str) and ev.get("id") else ev
        rep = tr.ingest([ev])
        acked += len(rep.acknowledged)
        assert len(rep.acknowledged) + len(rep.rejected) + rep.not_perceived + rep.duplicates == 1, name
    for value in HOSTILE_VALUES:
        assert not tr.ingest([value]).acknowledged
    n = len(tr)
    tr.close()
    assert n == acked and len(BeliefTracker.open(tmp_path / "log.jsonl")) == n  # what was acknowledged reopens


def test_a_directory_or_a_huge_line_is_the_formats_error(tmp_path: Path) -> None:
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(LogFormatError, match="dir.jsonl: byte 0: not a regular file"):
        DurableLog(tmp_path / "dir.jsonl")
    log = DurableLog(tmp_path / "big.jsonl")
    with pytest.raises(LogFormatError, match="over the .*-byte limit"):
        log.append({"id": "big", "text": "x" * (17 << 20)})
    log.close()
