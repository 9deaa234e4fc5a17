"""Approximate-time synchronisation of a live robot's sensor topics into whole frames.

A robot's drivers publish color, depth, camera info, instance ids (+ their label table), odometry
and the camera pose as separate streams, each with its own header stamp, at slightly different
times, and over best-effort QoS some are lost. Perception needs one consistent frame. This module
is the pure-Python core of the ``ros`` backend's subscriber side: the rclpy node calls
``push(topic, stamp_ns, msg)`` from its callbacks and publishes/perceives every ``SyncedFrame``
that comes back; tests (and replay) drive it the same way, so the matching rules are tested without
DDS. It never imports rclpy and never looks at a wall clock itself: the caller passes ``now_ns``.

Matching (deterministic, like message_filters' ApproximateTime but simpler):
- One *anchor* key (default ``color``; ``depth`` when color is not required) defines frames. For the
  oldest queued anchor message at stamp ``t``, each other required key contributes its message
  closest to ``t`` within ``slop_ns``. The decision waits until no closer message can still come:
  every required key holds a message stamped at or after ``t`` (stamps per topic only grow) or
  one exactly at ``t``. If then some key has nothing within the slop, the anchor is dropped
  (``unmatched``) and the next one is tried.
- ``optional`` keys (default agent_status) join a frame when within the slop at decision time;
  they never hold a frame back. ``latched`` keys (default none; e.g. a camera_info or label table
  published once) contribute their latest message stamped at or before ``t + slop`` and are not
  consumed.
- Messages older than a frame's are discarded when it is emitted, so frames come out in stamp order.
- Per topic, a stamp not newer than that topic's last accepted stamp is dropped and counted
  (``out_of_order``): over best-effort QoS a late duplicate or a reordered sample must not reorder
  frames. Queues are bounded (``queue_size``); overflow drops the oldest, counted.
- Staleness: a required topic silent (by arrival time ``now_ns``) for more than ``stale_after_s``
  is reported by ``status(now_ns).stale`` and ``check_stale(now_ns)`` raises ``StaleSensorError``
  naming it, so the node can publish a diagnostic and the planner can stop instead of acting on
  old images.

Public API
----------
``SyncConfig`` (dataclass), ``SyncedFrame`` (stamp_ns, messages by key, stamps by key),
``FrameSynchronizer(config=None, names=None)`` with ``push(topic, stamp_ns, msg, now_ns=None) ->
list[SyncedFrame]``, ``flush() -> list[SyncedFrame]`` (end of input), ``status(now_ns) -> SyncStatus``,
``check_stale(now_ns)``, ``reset()``;
``StaleSensorError(RuntimeError)`` with ``.topics``. ``topic`` in ``push`` may be a key of
``topics.TOPICS`` or a (remapped) topic name from ``names``. ``SyncedFrame.messages`` feeds
``convert.messages_to_observation`` directly.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Mapping

from sim_bridge.ros.topics import TOPICS, topic_names

NS = 1_000_000_000


class StaleSensorError(RuntimeError):
    """One or more required sensor topics have been silent too long; ``topics`` names them."""

    def __init__(self, topics: list[str], silent_s: dict[str, float]) -> None:
        self.topics = topics
        self.silent_s = silent_s
        parts = [f"{t} ({'never received' if silent_s[t] == float('inf') else f'silent {silent_s[t]:.1f} s'})"
                 for t in topics]
        super().__init__("stale sensor topic(s): " + ", ".join(parts))


@dataclass
class SyncConfig:
    required: tuple[str, ...] = ("color", "depth", "camera_info", "instance_ids", "instance_labels", "odom",
                                 "camera_pose")
    optional: tuple[str, ...] = ("agent_status",)
    latched: tuple[str, ...] = ()
    anchor: str | None = None  # default: "color" if required, else the first required key
    slop_ns: int = 50_000_000  # 50 ms: half a frame at 10 Hz
    queue_size: int = 30
    stale_after_s: float = 2.0

    def anchor_key(self) -> str:
        if self.anchor is not None:
            return self.anchor
        return "color" if "color" in self.required else self.required[0]


@dataclass
class SyncedFrame:
    stamp_ns: int  # the anchor's stamp
    messages: dict[str, Any]  # key -> message
    stamps: dict[str, int]  # key -> that message's stamp

    @property
    def skew_ns(self) -> int:
        """Largest stamp difference to the anchor within the frame."""
        return max((abs(s - self.stamp_ns) for s in self.stamps.values()), default=0)


@dataclass
class TopicStats:
    received: int = 0
    out_of_order: int = 0
    overflow: int = 0
    last_stamp_ns: int | None = None
    last_arrival_ns: int | None = None


@dataclass
class SyncStatus:
    frames: int
    unmatched: int  # anchor messages dropped for lack of partners within the slop
    topics: dict[str, TopicStats] = field(default_factory=dict)  # by topic NAME
    stale: list[str] = field(default_factory=list)  # topic names
    silent_s: dict[str, float] = field(default_factory=dict)

    @property
    def out_of_order(self) -> int:
        return sum(t.out_of_order for t in self.topics.values())


class FrameSynchronizer:
    def __init__(self, config: SyncConfig | None = None, names: Mapping[str, str] | None = None,
                 start_ns: int | None = None) -> None:
        self.config = config or SyncConfig()
        cfg = self.config
        keys = list(cfg.required) + list(cfg.optional) + list(cfg.latched)
        unknown = sorted(set(keys) - set(TOPICS))
        if unknown:
            raise KeyError(f"unknown topic key(s) {unknown} (valid: {', '.join(TOPICS)})")
        if len(set(keys)) != len(keys):
            raise ValueError("a key may be required, optional or latched, not several of these")
        if cfg.anchor_key() not in cfg.required:
            raise ValueError(f"anchor {cfg.anchor_key()!r} must be a required key")
        if cfg.slop_ns < 0 or cfg.queue_size < 1 or cfg.stale_after_s <= 0:
            raise ValueError("slop_ns >= 0, queue_size >= 1 and stale_after_s > 0 are required")
        self.names = dict(names or topic_names())
        self._key_of = {self.names[k]: k for k in keys}
        self._keys = keys
        self._start_ns = start_ns
        self.reset()

    def reset(self) -> None:
        self._queues: dict[str, deque[tuple[int, Any]]] = {k: deque() for k in self._keys}
        self._latest: dict[str, tuple[int, Any]] = {}
        self._stats = {k: TopicStats() for k in self._keys}
        self.frames = 0
        self.unmatched = 0

    def key_of(self, topic: str) -> str:
        if topic in self._queues:
            return topic
        try:
            return self._key_of[topic]
        except KeyError:
            raise KeyError(f"topic {topic!r} is not synchronised here (topics: {', '.join(self._key_of)})") from None

    # ---- input ------------------------------------------------------------------------------------
    def push(self, topic: str, stamp_ns: int, msg: Any, now_ns: int | None = None) -> list[SyncedFrame]:
        """Offer one message; returns the frames it completed (usually zero or one)."""
        key = self.key_of(topic)
        stamp_ns = int(stamp_ns)
        now_ns = stamp_ns if now_ns is None else int(now_ns)
        if self._start_ns is None:
            self._start_ns = now_ns
        st = self._stats[key]
        st.last_arrival_ns = now_ns if st.last_arrival_ns is None else max(st.last_arrival_ns, now_ns)
        if st.last_stamp_ns is not None and stamp_ns <= st.last_stamp_ns:
            st.out_of_order += 1
            return []
        st.received += 1
        st.last_stamp_ns = stamp_ns
        if key in self.config.latched:
            self._latest[key] = (stamp_ns, msg)
            self._queues[key].append((stamp_ns, msg))  # kept for "at or before t" lookups
            while len(self._queues[key]) > self.config.queue_size:
                self._queues[key].popleft()
            return self._drain()
        q = self._queues[key]
        q.append((stamp_ns, msg))
        if len(q) > self.config.queue_size:
            q.popleft()
            st.overflow += 1
        return self._drain()

    def _drain(self) -> list[SyncedFrame]:
        out = []
        while True:
            frame, progressed = self._try_anchor()
            if frame is not None:
                out.append(frame)
            if not progressed:
                return out

    def _closest(self, key: str, t: int) -> tuple[int, int] | None:
        """(index, |dt|) of the queued message of ``key`` closest to t, or None if the queue is empty."""
        best = None
        for i, (s, _) in enumerate(self._queues[key]):
            d = abs(s - t)
            if best is None or d < best[1]:
                best = (i, d)
        return best

    def _try_anchor(self) -> tuple[SyncedFrame | None, bool]:
        """Decide the oldest anchor message if possible: (frame or None, whether anything changed)."""
        cfg = self.config
        anchor = cfg.anchor_key()
        aq = self._queues[anchor]
        if not aq:
            return None, False
        t, amsg = aq[0]
        picks: dict[str, int] = {}
        for key in cfg.required:
            if key == anchor:
                continue
            q = self._queues[key]
            if not q or q[-1][0] < t:
                return None, False  # a message at or after t, closer than any queued, may still come
            best = self._closest(key, t)
            assert best is not None
            if best[1] > cfg.slop_ns:
                aq.popleft()
                self.unmatched += 1
                return None, True
            picks[key] = best[0]
        messages = {anchor: amsg}
        stamps = {anchor: t}
        for key, idx in picks.items():
            q = self._queues[key]
            s, m = q[idx]
            messages[key], stamps[key] = m, s
            for _ in range(idx + 1):  # consume it and everything older
                q.popleft()
        aq.popleft()
        for key in cfg.optional:
            best = self._closest(key, t)
            if best is not None and best[1] <= cfg.slop_ns:
                q = self._queues[key]
                s, m = q[best[0]]
                messages[key], stamps[key] = m, s
                for _ in range(best[0] + 1):
                    q.popleft()
            else:  # drop optional messages that can no longer match a later frame
                q = self._queues[key]
                while q and q[0][0] < t - cfg.slop_ns:
                    q.popleft()
        for key in cfg.latched:
            cands = [(s, m) for s, m in self._queues[key] if s <= t + cfg.slop_ns]
            if cands:
                messages[key], stamps[key] = cands[-1][1], cands[-1][0]
        self.frames += 1
        return SyncedFrame(t, messages, stamps), True

    def flush(self) -> list[SyncedFrame]:
        """Decide every queued anchor with what is queued now (end of a bag, shutdown): each takes the
        closest message within the slop per required key, or is dropped as unmatched."""
        out: list[SyncedFrame] = []
        cfg = self.config
        anchor = cfg.anchor_key()
        big = 1 << 62
        while self._queues[anchor]:
            t = self._queues[anchor][0][0]
            # a sentinel newer than anything lets _try_anchor decide now
            for key in cfg.required:
                if key != anchor:
                    self._queues[key].append((big, None))
            frame, _ = self._try_anchor()
            for key in cfg.required:
                if key != anchor and self._queues[key] and self._queues[key][-1][0] == big:
                    self._queues[key].pop()
            if frame is not None:
                out.append(frame)
            elif self._queues[anchor] and self._queues[anchor][0][0] == t:  # pragma: no cover - safety
                self._queues[anchor].popleft()
                self.unmatched += 1
        return out

    # ---- health -----------------------------------------------------------------------------------
    def status(self, now_ns: int) -> SyncStatus:
        cfg = self.config
        out = SyncStatus(self.frames, self.unmatched,
                         {self.names[k]: TopicStats(**vars(v)) for k, v in self._stats.items()})
        limit = cfg.stale_after_s
        for key in cfg.required:  # latched topics may legitimately publish once
            st = self._stats[key]
            name = self.names[key]
            if st.last_arrival_ns is None:
                since = self._start_ns if self._start_ns is not None else now_ns
                silent = (now_ns - since) / NS
                if silent > limit:
                    out.stale.append(name)
                    out.silent_s[name] = float("inf")
            else:
                silent = (now_ns - st.last_arrival_ns) / NS
                if silent > limit:
                    out.stale.append(name)
                    out.silent_s[name] = silent
        return out

    def check_stale(self, now_ns: int) -> None:
        """Raise ``StaleSensorError`` naming every required topic silent for over ``stale_after_s``."""
        st = self.status(now_ns)
        if st.stale:
            raise StaleSensorError(st.stale, st.silent_s)
