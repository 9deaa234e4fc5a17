"""Belief tracker figures: durable ingestion rate (JSONL group commit vs sqlite WAL) and answer latency.

    .venv/bin/python benchmarks/bench_belief.py [--events 1000000] [--batch 1000] [--queries 2000]

Events are household-like (navigation, pick/place and device acts with effects, utterances with
claims and requests, room observations), spread over ~200 entities, 3 actors and many days.
"Ingestion" is ``BeliefTracker.ingest`` end to end: parse, observer gate, validation, durable
append (one fsync per batch: an event is acknowledged when its batch's ``ingest`` returns), and
the State/Belief/Commitment/causal/episode updates. Retrieval is ``answer()`` (plan, structured
lookups, evidence selection, event reads from the log) with all events in the log, measured
with Python's default garbage collector and again after ``gc.freeze()`` (what a long-lived
service does after loading: the cyclic collector then stops rescanning millions of stored
records, which otherwise shows up as multi-millisecond pauses in the tail). Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.belief import BeliefTracker  # noqa: E402

ACTORS = ("alice", "bob", "carol")
ROOMS = [f"room_{i}" for i in range(6)]
RECS = [f"table_{i}" for i in range(30)]
OBJS = [f"mug_{i}" for i in range(150)]
DEVS = [f"lamp_{i}" for i in range(20)]


def make_events(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    out = []
    t = 0.0
    for i in range(n):
        t += rng.uniform(1, 30)
        r = rng.random()
        actor = "robot" if r < 0.3 else rng.choice(ACTORS)
        base = {"id": f"e{i}", "t": round(t, 1), "actor": actor, "observers": ["robot"] if actor != "robot" else [],
                "session": f"d{int(t // 86400)}-{int(t % 86400 // 28800)}", "room": rng.choice(ROOMS)}
        if r < 0.15:
            objs = rng.sample(OBJS, 4)
            base.update(kind="observation", action="inspect", effects=[[o, "location", rng.choice(RECS)] for o in objs],
                        text="robot looked around: " + "; ".join(objs))
        elif r < 0.75:
            o, rec = rng.choice(OBJS), rng.choice(RECS)
            base.update(kind="action", action="place", target=rec, args={"object": o}, effects=[[o, "location", rec]],
                        text=f"{actor} put {o} on {rec}")
        elif r < 0.9:
            d = rng.choice(DEVS)
            v = rng.choice(("on", "off"))
            base.update(kind="action", action="set_device_state", target=d, args={"value": v},
                        effects=[[d, "power", v]], text=f"{actor} turned {v} {d}")
        else:
            o, rec = rng.choice(OBJS), rng.choice(RECS)
            base.update(kind="utterance", action="say", claims=[[o, "location", rec]], speech_act="request",
                        commitment={"kind": "request", "owner": "robot", "text": f"bring {o}", "target": o},
                        text=f'{actor} said: "please bring {o}"')
            if actor == "robot":
                base["actor"] = "alice"
        out.append(base)
    return out


def questions(rng: random.Random, n: int, now_day: int) -> list[str]:
    qs = []
    for _ in range(n):
        k = rng.random()
        o = rng.choice(OBJS)
        if k < 0.35:
            qs.append(f"Where is {o} now?")
        elif k < 0.5:
            qs.append(f"Where was {o} before it was moved to {rng.choice(RECS)}?")
        elif k < 0.65:
            qs.append(f"Where was {o} on day {rng.randrange(now_day)} at {rng.randrange(24):02d}:00?")
        elif k < 0.75:
            qs.append(f"When was {rng.choice(DEVS)} last turned on?")
        elif k < 0.85:
            qs.append(f"Who last moved {o}?")
        elif k < 0.95:
            qs.append(f"Where is the item that alice asked the robot to bring on day {rng.randrange(now_day)} now?")
        else:
            qs.append(f"Who told the robot that {o} was on {rng.choice(RECS)}?")
    return qs


def bench_sqlite(events: list[dict], batch: int, path: Path) -> float:
    """The alternative store: sqlite in WAL mode, synchronous=FULL, one transaction per batch."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE ev (id TEXT PRIMARY KEY, t REAL, body TEXT)")
    t0 = time.perf_counter()
    for i in range(0, len(events), batch):
        chunk = events[i:i + batch]
        db.executemany("INSERT INTO ev VALUES (?, ?, ?)", [(e["id"], e["t"], json.dumps(e)) for e in chunk])
        db.commit()
    dt = time.perf_counter() - t0
    db.close()
    return len(events) / dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=1000, help="events per acknowledged (fsynced) batch")
    ap.add_argument("--queries", type=int, default=2000)
    args = ap.parse_args()
    print(f"generating {args.events} events ...", flush=True)
    events = make_events(args.events)
    with tempfile.TemporaryDirectory() as tmp:
        small = events[: min(len(events), 200_000)]
        print(f"sqlite WAL (synchronous=FULL), {len(small)} events, batch {args.batch}: "
              f"{bench_sqlite(small, args.batch, Path(tmp) / 'ev.db'):,.0f} events/s (store only, no tracks)")
        tr = BeliefTracker(Path(tmp) / "log.jsonl")
        t0 = time.perf_counter()
        for i in range(0, len(events), args.batch):
            tr.ingest(events[i:i + args.batch])
        dt = time.perf_counter() - t0
        print(f"BeliefTracker.ingest, JSONL log + fsync per batch of {args.batch}: {len(events):,} events in "
              f"{dt:.1f} s = {len(events) / dt:,.0f} events/s (all tracks updated)")
        one = BeliefTracker(Path(tmp) / "one.jsonl")
        t0 = time.perf_counter()
        for e in events[:2000]:
            one.ingest([e])
        print(f"  with one fsync per event (no batching): {2000 / (time.perf_counter() - t0):,.0f} events/s")
        now = tr.last_t
        qs = questions(random.Random(1), args.queries, int(now // 86400))
        for label in ("default GC", "after gc.collect() + gc.freeze() (long-lived service setting)"):
            if label != "default GC":
                gc.collect()
                gc.freeze()
            lat = []
            for q in qs:
                t0 = time.perf_counter()
                tr.answer(q, now)
                lat.append((time.perf_counter() - t0) * 1000)
            lat.sort()
            print(f"answer() with {len(tr):,} events in the log, {len(lat)} mixed questions, {label}: p50 "
                  f"{statistics.median(lat):.3f} ms, p95 {lat[int(0.95 * len(lat)) - 1]:.3f} ms, max {lat[-1]:.3f} ms")
        gc.unfreeze()
        t0 = time.perf_counter()
        tr.close()
        again = BeliefTracker.open(Path(tmp) / "log.jsonl")
        print(f"reopen (replay the log, rebuild all tracks): {time.perf_counter() - t0:.1f} s for {len(again):,} events")


if __name__ == "__main__":
    main()
