"""Recording runs to ROS 2 bags and reading them back as Observations (rosbags; no ROS install).

A bag is what a real robot run leaves behind, so the recorder writes exactly the topic contract of
``sim_bridge.ros.topics``, with standard messages where they exist: per Observation an Image each
for color (rgb8), depth (32FC1 metres) and instance ids (32SC1), CameraInfo, the label table
(String JSON), Odometry (base pose), PoseStamped (camera pose) and the agent status (String JSON);
plus, per step and for evaluation only, the ground truth (String JSON on /worldmind/ground_truth),
and the agent's plans, critic directives and belief updates (String JSON). ``ros2 bag play`` can
play it to the live nodes; ``BagReader`` turns it (or a bag recorded on a robot with the same
topics) back into Observations for replay.

Storage: MCAP by default, sqlite3 on request. A path ending in ``.mcap`` or ``.db3`` is written as
that single self-describing file (rosbags writes a rosbag2 folder in a temporary sibling folder and
the storage file is moved into place; the folder's metadata.yaml is not needed to read it back);
any other path becomes a rosbag2 folder with metadata.yaml. Stamps are deterministic: frame ``i``
is stamped ``start_ns + i * 1e9 / rate_hz``, and every message of a frame carries that stamp in its
header and as its bag time; side-channel events after frame ``i`` are stamped a few microseconds
later, so a bag sorts into the order things happened.

Reading (``BagReader``): messages come in bag-time order; messages sharing a bag time are grouped
and offered to a ``FrameSynchronizer`` (approximate time by header stamp, so robot bags with jittery
stamps work too) in a fixed key order, which makes frame assembly independent of how the storage
orders ties. Problems never stop a read silently and never lose what was read before them:
- a topic of the contract missing from the bag is named in ``problems`` (frames are built without
  it where possible: no color means no RGB crops);
- a connection whose message type the type store does not know is named and skipped, as is a known
  topic carrying the wrong type;
- malformed JSON / wrong schema on a String topic: ``PayloadError`` text in ``problems``, message
  skipped, counted per topic;
- stamps going backwards on a topic: dropped and counted by the synchroniser (deterministic);
- a truncated or corrupt file: everything before the damage is yielded, then ``BagReadError``
  naming the file is raised from the iterator;
- a bag that is not the whole recording although nothing in it is damaged (a robot's ``ros2 bag
  record`` killed: no metadata.yaml; fewer messages on a topic than stated; a listed split file
  gone; a .db3 never closed; our own interrupted marker): read as far as it goes, the reasons in
  ``stats.partial`` (``bag_integrity``); a metadata.yaml that cannot be trusted (a key given twice,
  a field missing) is refused at construction with ``BagMetadataError`` naming the file and key.
  Storage is opened by ``bag_open`` (rosbags' index, else file by file with a salvage read).

Public API: ``BagWriter(path, storage=None, rate_hz=10.0, start_ns=START_NS, names=None,
exclude=())`` with ``write_observation(obs, world=None, action=None) -> stamp_ns``,
``write_event(kind, data, stamp_ns=None)`` (kind: "plan" | "critic" | "belief" | any payload
key of ``EVENT_TOPICS``), ``write_message(topic, msgtype, msg, stamp_ns, typestore=None)``,
``write_text(topic, text, stamp_ns)`` (raw String, for tests of bad input), ``close()``; a
context manager. ``BagReader(path, names=None)``: iterate for ``FrameItem`` / ``EventItem`` in
stamp order (``FrameItem.observation`` is an ``Observation``; ``EventItem.data`` a validated payload
dict); ``stats`` (``ReadStats``, ``to_dict()``) during and after iteration. Errors: ``FileNotFoundError``
for a missing path (at construction), ``BagReadError`` from the iterator for an unreadable or damaged
bag (after yielding everything before the damage).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from household.secrets import redact_bytes
from sim_bridge.replay.bag_integrity import BagLayout, Tally, compare, inspect_bag
from sim_bridge.replay.bag_integrity import BagMetadataError  # noqa: F401 - re-exported: what BagReader() raises
from sim_bridge.replay.bag_open import BagReadError, OpenedBag, open_storage
from sim_bridge.ros import convert as cv
from sim_bridge.ros import payloads
from sim_bridge.ros.sync import FrameSynchronizer, SyncConfig
from sim_bridge.ros.topics import LEGACY_NAMES, STRING, TOPICS, QosSpec, topic_names
from household.types import Action, Observation, WorldState

NS = 1_000_000_000
START_NS = 1_700_000_000 * NS  # a fixed epoch: recordings of the same run are byte-identical
EVENT_TOPICS = {"plan": "plan", "critic": "critic", "belief": "belief_updates", "ground_truth": "ground_truth",
                "skill_request": "skill_request", "skill_result": "skill_result", "memory_query": "memory_query",
                "memory_answer": "memory_answer"}
FRAME_KEYS = ("color", "depth", "camera_info", "instance_ids", "instance_labels", "odom", "camera_pose",
              "agent_status")
# Offered to the synchroniser in this order within one bag time: optional keys first, so they are
# queued when the last required one completes the frame.
_PUSH_ORDER = ("agent_status", "instance_labels", "camera_info", "odom", "camera_pose", "instance_ids", "depth",
               "color")


def _storage_of(path: Path, storage: str | None) -> str:
    if storage is not None:
        if storage not in ("mcap", "sqlite3"):
            raise ValueError(f"storage must be 'mcap' or 'sqlite3', got {storage!r}")
        return storage
    return "sqlite3" if path.suffix == ".db3" else "mcap"


def bag_qos(spec: QosSpec) -> Any:
    """A topic's QoS as rosbag2 records it (``offered_qos_profiles``), so ``ros2 bag play``
    offers the latched topics (label table, status, plan) transient-local again, and the sensor
    streams best-effort, as the live nodes expect them."""
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

    unset = QosTime(9223372036, 854775807)  # Jazzy rosbag2's "infinite" duration (RMW_DURATION_INFINITE)
    return Qos(history=QosHistory[spec.history.upper()], depth=spec.depth,
               reliability=QosReliability[spec.reliability.upper()], durability=QosDurability[spec.durability.upper()],
               deadline=unset, lifespan=unset, liveliness=QosLiveliness.AUTOMATIC, liveliness_lease_duration=unset,
               avoid_ros_namespace_conventions=False)


class BagWriter:
    def __init__(self, path: str | Path, *, storage: str | None = None, rate_hz: float = 10.0,
                 start_ns: int = START_NS, names: Mapping[str, str] | None = None, exclude: Iterable[str] = (),
                 typestore: Any = None) -> None:
        from rosbags.rosbag2 import StoragePlugin
        from rosbags.typesys import Stores, get_typestore

        from sim_bridge.replay.mcap_crc import CrcWriter  # chunk CRCs: damage is detected on replay

        self.path = Path(path)
        self.storage = _storage_of(self.path, storage)
        if self.path.exists():
            raise FileExistsError(f"{self.path} exists already; not overwriting a recording")
        if not rate_hz > 0:
            raise ValueError(f"rate_hz must be positive, got {rate_hz}")
        self.single_file = self.path.suffix in (".mcap", ".db3")
        if self.single_file and self.path.suffix != {"mcap": ".mcap", "sqlite3": ".db3"}[self.storage]:
            raise ValueError(f"{self.path}: suffix does not match storage {self.storage}")
        self.typestore = typestore or get_typestore(Stores.ROS2_JAZZY)
        self.classes = cv.MessageClasses.from_typestore(self.typestore)
        self.names = dict(names or topic_names())
        unknown_names = set(self.names) - set(TOPICS)
        if unknown_names:
            raise KeyError(f"names: unknown topic key(s) {sorted(unknown_names)}; known: {sorted(TOPICS)}")
        self._spec_by_name = {name: TOPICS[key] for key, name in self.names.items()}
        self.exclude = set(exclude)
        unknown = self.exclude - set(TOPICS)
        if unknown:
            raise KeyError(f"exclude: unknown topic key(s) {sorted(unknown)}")
        self.period_ns = round(NS / rate_hz)
        self.start_ns = int(start_ns)
        self.frames = 0
        self._event_seq = 0
        self._last_stamp = self.start_ns
        self._frame_time = self.start_ns
        # Written in a temporary sibling folder and moved into place by close() only when whole
        # (issue 32): an interrupted recording is kept as <stem>.partial<suffix> (frames > 0) with an
        # INTERRUPTED_TOPIC marker replay names, a 0-frame one is removed, and a killed one leaves
        # only the temporary folder, which the next BagWriter beside it removes (its pid is gone).
        self.path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(self.path)
        self._tmp = Path(tempfile.mkdtemp(prefix=f"{_tmp_prefix(self.path)}{os.getpid()}.", dir=self.path.parent))
        bag_dir = self._tmp / ("bag" if self.single_file else self.path.name)
        self.final_path: Path | None = None  # where close() left the bag (the path, a .partial name, or None)
        plugin = StoragePlugin.MCAP if self.storage == "mcap" else StoragePlugin.SQLITE3
        self._writer = CrcWriter(bag_dir, version=9, storage_plugin=plugin)
        self._bag_dir = bag_dir
        self._writer.open()
        self._connections: dict[tuple[str, str], Any] = {}
        self._closed = False

    def __enter__(self) -> "BagWriter":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.close(complete=exc_type is None)

    def _connection(self, topic: str, msgtype: str, typestore: Any) -> Any:
        key = (topic, msgtype)
        if key not in self._connections:
            spec = self._spec_by_name.get(topic)
            qos = [bag_qos(spec.qos_spec)] if spec is not None and spec.msg_type == msgtype else []
            self._connections[key] = self._writer.add_connection(topic, msgtype, typestore=typestore,
                                                                 offered_qos_profiles=qos)
        return self._connections[key]

    def write_message(self, topic: str, msgtype: str, msg: Any, stamp_ns: int, typestore: Any = None) -> None:
        ts = typestore or self.typestore
        data = redact_bytes(ts.serialize_cdr(msg, msgtype))  # same-length mask: CDR stays valid
        self._writer.write(self._connection(topic, msgtype, ts), int(stamp_ns), data)
        self._last_stamp = max(self._last_stamp, int(stamp_ns))

    def write_text(self, topic: str, text: str, stamp_ns: int) -> None:
        """A raw std_msgs/String (no validation): for tools and for tests of malformed input."""
        self.write_message(topic, STRING, self.classes.String(data=text), stamp_ns)

    def _put(self, key: str, msg: Any, stamp_ns: int) -> None:
        if key not in self.exclude:
            self.write_message(self.names[key], TOPICS[key].msg_type, msg, stamp_ns)

    def stamp_of_frame(self, index: int) -> int:
        return self.start_ns + index * self.period_ns

    def write_observation(self, obs: Observation, world: WorldState | None = None,
                          action: Action | None = None, stamp_ns: int | None = None,
                          log_time_ns: int | None = None) -> int:
        """Record one frame (+ ground truth when given); ``action`` is the action whose outcome
        this observation shows (its target object goes into the agent status feedback).
        ``stamp_ns`` overrides the header stamp, ``log_time_ns`` the bag time (default: the stamp;
        they differ in robot bags, where messages are logged when they arrive)."""
        stamp = self.stamp_of_frame(self.frames) if stamp_ns is None else int(stamp_ns)
        log_time = stamp if log_time_ns is None else int(log_time_ns)
        msgs = cv.observation_to_messages(obs, self.classes, stamp, world)
        if action is not None:
            status = payloads.agent_status_to_payload(obs.agent, obs.step, obs.feedback, obs.world_from_camera)
            status["feedback"]["object_id"] = action.object_id
            status["feedback"]["action"] = action.name
            msgs["agent_status"] = cv.payload_to_msg("agent_status", status, self.classes)
        for key in _PUSH_ORDER + ("ground_truth",):
            if key in msgs:
                self._put(key, msgs[key], log_time)
        self.frames += 1
        self._event_seq = 0
        self._frame_time = log_time
        return stamp

    def write_event(self, kind: str, data: Mapping[str, Any], stamp_ns: int | None = None) -> int:
        """A side-channel event as its payload kind on its topic; validated before writing."""
        try:
            key = EVENT_TOPICS[kind]
        except KeyError:
            raise KeyError(f"unknown event kind {kind!r} (known: {', '.join(EVENT_TOPICS)})") from None
        spec = TOPICS[key]
        if stamp_ns is None:
            self._event_seq += 1
            base = self._frame_time if self.frames else self.start_ns
            stamp_ns = base + 1000 * self._event_seq
        msg = cv.payload_to_msg(spec.payload_kind or "", data, self.classes, self.names[key])
        self._put(key, msg, stamp_ns)
        return int(stamp_ns)

    def close(self, complete: bool = True) -> None:
        """Finish the bag. ``complete``: move it to its final name. Otherwise (an interrupted or
        failed recording) keep what was written as ``partial_path_for(path)`` marked with
        ``INTERRUPTED_TOPIC`` when it holds a frame, or remove it when it holds none; never under
        the final name, where it would replay as a whole run."""
        if self._closed:
            return
        self._closed = True
        try:
            if not complete and self.frames:
                try:
                    self.write_text(INTERRUPTED_TOPIC, f"recording interrupted after {self.frames} frame(s)",
                                    self._last_stamp + 1)
                except Exception:  # noqa: BLE001 - an interrupted writer may not take more; the name says it
                    pass
            try:
                self._writer.close()
            except Exception:
                if complete:
                    raise
            if not complete and not self.frames:
                return
            if self.single_file:
                files = sorted(p for p in self._bag_dir.iterdir() if p.suffix in (".mcap", ".db3"))
                if len(files) != 1:
                    raise BagReadError(self._bag_dir, f"expected one storage file, found {[p.name for p in files]}")
                src = files[0]
            else:
                src = self._bag_dir
            target = self.path if complete else partial_path_for(self.path)
            try:
                _move_no_replace(src, target)
            except FileExistsError:  # another recording took the final name meanwhile: keep ours beside it
                target = partial_path_for(self.path)
                _move_no_replace(src, target)
                self.final_path = target
                raise FileExistsError(f"{self.path} appeared while recording; this recording is kept as "
                                      f"{target}") from None
            self.final_path = target
        finally:
            shutil.rmtree(self._tmp, ignore_errors=True)


INTERRUPTED_TOPIC = "/worldmind/recording_interrupted"  # outside the contract: readers list it in ignored_topics


def partial_path_for(path: str | Path) -> Path:
    """``run.mcap`` -> ``run.partial.mcap`` (``run.partial-2.mcap``, ... when taken); a folder
    ``run`` -> ``run.partial``."""
    path = Path(path)
    suffix = path.suffix if path.suffix in (".mcap", ".db3") else ""
    stem = path.name[: len(path.name) - len(suffix)]
    for k in range(1, 10_000):
        cand = path.with_name(f"{stem}.partial{'' if k == 1 else f'-{k}'}{suffix}")
        if not cand.exists():
            return cand
    raise FileExistsError(f"{path}: too many partial recordings beside it")


def is_partial_bag(path: str | Path, ignored_topics: Mapping[str, str] | None = None) -> bool:
    """A bag an interrupted ``BagWriter`` left: its marker topic (when the read stats are given)
    or its ``.partial`` name."""
    return INTERRUPTED_TOPIC in (ignored_topics or {}) or ".partial" in Path(path).name


def _tmp_prefix(path: Path) -> str:
    return f".{path.stem}.rec"


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove temporary folders that recordings of ``path`` killed before close() left beside it
    (``.<stem>.rec<pid>.XXXX`` whose process is gone); returns them."""
    path = Path(path)
    prefix = _tmp_prefix(path)
    removed: list[Path] = []
    try:
        siblings = list(path.parent.iterdir())
    except OSError:
        return removed
    for p in siblings:
        if not (p.name.startswith(prefix) and p.is_dir() and not p.is_symlink()):
            continue
        pid_text = p.name[len(prefix):].split(".", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _move_no_replace(src: Path, dst: Path) -> None:
    """Move ``src`` to ``dst``, refusing (FileExistsError) when something appeared there meanwhile."""
    if src.is_dir():
        if dst.exists():
            raise FileExistsError(f"{dst} exists already; not overwriting a recording (kept in {src.parent})")
        os.rename(src, dst)
        return
    try:
        os.link(src, dst)  # atomic, and fails if dst exists
    except FileExistsError:
        raise FileExistsError(f"{dst} exists already; not overwriting a recording") from None
    except OSError:  # a file system without hard links
        if dst.exists():
            raise FileExistsError(f"{dst} exists already; not overwriting a recording") from None
        os.replace(src, dst)
        return
    src.unlink()


# ---- reading -------------------------------------------------------------------------------------

@dataclass
class FrameItem:
    stamp_ns: int
    observation: Observation
    action_object_id: str | None = None  # target of the action this frame shows the outcome of


@dataclass
class EventItem:
    stamp_ns: int
    kind: str  # payload kind: goal_dag, critic_directive, belief_update, ground_truth, ...
    topic: str
    data: dict[str, Any]


@dataclass
class ReadStats:
    messages: int = 0
    frames: int = 0
    events: Counter = field(default_factory=Counter)  # by payload kind
    malformed: Counter = field(default_factory=Counter)  # by topic
    skipped_types: dict[str, str] = field(default_factory=dict)  # topic -> message type
    ignored_topics: dict[str, str] = field(default_factory=dict)  # topics outside the contract
    missing_topics: list[str] = field(default_factory=list)
    out_of_order: int = 0
    unmatched_frames: int = 0
    bad_frames: int = 0
    problems: list[str] = field(default_factory=list)
    error: str | None = None  # the damage that ended the read early, if any
    first_stamp_ns: int | None = None
    last_stamp_ns: int | None = None
    partial: list[str] = field(default_factory=list)  # why the bag is not a whole recording (empty: whole)
    stated: dict[str, Any] | None = None  # what the bag states it holds (bag_integrity.Stated), if anything
    topic_counts: dict[str, int] = field(default_factory=dict)  # messages read per topic, every topic

    def to_dict(self) -> dict[str, Any]:
        return {"messages": self.messages, "frames": self.frames, "events": dict(sorted(self.events.items())),
                "malformed": dict(sorted(self.malformed.items())), "skipped_types": dict(self.skipped_types),
                "ignored_topics": dict(self.ignored_topics), "missing_topics": list(self.missing_topics),
                "out_of_order": self.out_of_order, "unmatched_frames": self.unmatched_frames,
                "bad_frames": self.bad_frames, "problems": self.problems[:100], "error": self.error,
                "partial": self.partial[:100], "stated": self.stated,
                "topic_counts": dict(sorted(self.topic_counts.items())),
                "duration_s": ((self.last_stamp_ns - self.first_stamp_ns) / NS
                               if self.first_stamp_ns is not None and self.last_stamp_ns is not None else 0.0)}


class BagReader:
    """Iterate a bag as ``FrameItem``s and ``EventItem``s in stamp order (see the module docstring)."""

    def __init__(self, path: str | Path, names: Mapping[str, str] | None = None, typestore: Any = None,
                 slop_ns: int = 50_000_000) -> None:
        from rosbags.typesys import Stores, get_typestore

        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(f"bag {self.path} does not exist")
        self.typestore = typestore or get_typestore(Stores.ROS2_JAZZY)
        self.names = dict(names or topic_names())
        self._legacy = names is None  # default names: also accept bags recorded before worldmind/ names
        self.slop_ns = slop_ns
        self.stats = ReadStats()
        # what the bag states about itself, read and validated before any message (a metadata.yaml
        # that cannot be trusted is refused here: BagMetadataError names the file and the key)
        self.layout: BagLayout = inspect_bag(self.path)

    def _problem(self, text: str) -> None:
        if len(self.stats.problems) < 1000:
            self.stats.problems.append(text)

    def __iter__(self) -> Iterator[FrameItem | EventItem]:
        st = self.stats = ReadStats()
        key_of = {name: key for key, name in self.names.items()}
        opened = open_storage(self.path, self.layout)
        for text in self.layout.problems + opened.problems:
            self._problem(text)
        connections = opened.connections
        if self._legacy and not any(c.topic in key_of for c in connections if key_of.get(c.topic) in LEGACY_NAMES):
            key_of.update({name: key for key, name in LEGACY_NAMES.items()})
        tally = Tally()  # every message of every topic, read or skipped: checked against what the bag states
        try:
            usable: set[tuple[str, str]] = set()
            seen: set[tuple[str, str]] = set()
            present: set[str] = set()
            for conn in connections:
                if (conn.topic, conn.msgtype) in seen:  # the same topic in the next split file
                    continue
                seen.add((conn.topic, conn.msgtype))
                key = key_of.get(conn.topic)
                if conn.msgtype not in self.typestore.types:
                    st.skipped_types[conn.topic] = conn.msgtype
                    self._problem(f"topic {conn.topic}: unknown message type {conn.msgtype}; skipped")
                    continue
                if key is None:
                    st.ignored_topics[conn.topic] = conn.msgtype
                    continue
                if conn.msgtype != TOPICS[key].msg_type:
                    st.skipped_types[conn.topic] = conn.msgtype
                    self._problem(f"topic {conn.topic}: type {conn.msgtype}, expected {TOPICS[key].msg_type}; skipped")
                    continue
                usable.add((conn.topic, conn.msgtype))
                present.add(key)
            for key in FRAME_KEYS:
                if key not in present and key != "agent_status":
                    st.missing_topics.append(self.names[key])
                    self._problem(f"bag lacks topic {self.names[key]} ({TOPICS[key].description})")
            required = tuple(k for k in ("color", "depth", "camera_info", "instance_ids", "odom", "camera_pose")
                             if k in present)
            needed = [k for k in ("camera_info", "camera_pose") if k not in present]
            if "odom" not in present and "agent_status" not in present:
                needed.append("odom")
            sync = None
            if needed:
                self._problem(f"no observations can be built without {', '.join(self.names[k] for k in needed)}; "
                              "reading events only")
            elif required:
                optional = tuple(k for k in ("instance_labels", "agent_status") if k in present)
                sync = FrameSynchronizer(SyncConfig(required=required, optional=optional, slop_ns=self.slop_ns,
                                                    queue_size=1000), self.names)
            group: list[tuple[str, Any]] = []
            group_t: int | None = None
            try:
                for conn, t, raw in opened.messages:
                    tally.add(conn.topic, t)
                    if (conn.topic, conn.msgtype) not in usable:
                        continue
                    if group_t is not None and t != group_t:
                        yield from self._flush_group(group, sync, group_t)
                        group = []
                    group_t = t
                    st.messages += 1
                    st.first_stamp_ns = t if st.first_stamp_ns is None else min(st.first_stamp_ns, t)
                    st.last_stamp_ns = t if st.last_stamp_ns is None else max(st.last_stamp_ns, t)
                    try:
                        msg = self.typestore.deserialize_cdr(raw, conn.msgtype)
                    except Exception as exc:
                        st.malformed[conn.topic] += 1
                        self._problem(f"topic {conn.topic}: undecodable {conn.msgtype} at {t}: {exc}")
                        continue
                    group.append((key_of[conn.topic], msg))
            except Exception as exc:
                # damage: everything before it has been handed out; finish what is buffered, then say so
                yield from self._flush_group(group, sync, group_t or 0)
                group = []
                if sync is not None:
                    yield from self._frames(sync.flush())
                    self._sync_stats(sync)
                st.error = f"{type(exc).__name__}: {exc}"
                self._check_whole(opened, tally)
                raise BagReadError(self.path, f"bag is truncated or corrupt after {st.messages} message(s) "
                                              f"({st.error})") from None
            yield from self._flush_group(group, sync, group_t or 0)
            if sync is not None:
                yield from self._frames(sync.flush())
                self._sync_stats(sync)
            self._check_whole(opened, tally)
        finally:
            opened.close()

    def _check_whole(self, opened: OpenedBag, tally: Tally) -> None:
        """Why the bag read is not a whole recording, into ``stats.partial``: what is known up
        front (no metadata.yaml, listed files gone, an unclosed .db3), every disagreement between
        what the bag states and what was read, and our own recorder's interrupted marker."""
        st = self.stats
        st.topic_counts = dict(tally.topics)
        st.partial = list(self.layout.partial)
        stated = self.layout.stated or opened.stated
        if stated is not None:
            st.stated = stated.to_dict()
            st.partial += compare(stated, tally)
        if INTERRUPTED_TOPIC in st.ignored_topics:
            st.partial.append(f"{self.path}: recorded by an interrupted `worldmind record` "
                              f"(marker topic {INTERRUPTED_TOPIC})")

    def _sync_stats(self, sync: FrameSynchronizer) -> None:
        status = sync.status(0)
        self.stats.out_of_order = status.out_of_order
        self.stats.unmatched_frames = status.unmatched
        for name, ts in status.topics.items():
            if ts.out_of_order:
                self._problem(f"topic {name}: {ts.out_of_order} message(s) with stamps going backwards dropped")

    def _flush_group(self, group: list[tuple[str, Any]], sync: FrameSynchronizer | None,
                     bag_time: int) -> Iterator[FrameItem | EventItem]:
        order = {k: i for i, k in enumerate(_PUSH_ORDER)}
        frames = []
        for key, msg in sorted(group, key=lambda km: order.get(km[0], -1)):  # events first, then frame keys
            spec = TOPICS[key]
            if spec.payload_kind is not None:
                topic = self.names[key]
                try:
                    payload = payloads.decode(msg.data, topic, spec.payload_kind)
                except payloads.PayloadError as exc:
                    self.stats.malformed[topic] += 1
                    self._problem(str(exc) + "; skipped")
                    continue
                if key not in FRAME_KEYS:
                    self.stats.events[payload.kind] += 1
                    yield EventItem(self._stamp(msg, bag_time), payload.kind, topic, payload.data)
                    continue
                msg = _Decoded(msg, payload)
            if sync is not None and key in FRAME_KEYS:
                frames += sync.push(key, self._stamp(msg, bag_time), msg)
        yield from self._frames(frames)

    @staticmethod
    def _stamp(msg: Any, bag_time: int) -> int:
        """Header stamp; for String payloads their ``stamp_ns`` if any, else the bag time."""
        if isinstance(msg, _Decoded):
            return int(msg.payload.data.get("stamp_ns", bag_time))
        if hasattr(msg, "header"):
            return cv.stamp_ns_of(msg)
        return bag_time

    def _frames(self, frames: list[Any]) -> Iterator[FrameItem]:
        for f in frames:
            msgs = {k: (m.msg if isinstance(m, _Decoded) else m) for k, m in f.messages.items()}
            try:
                obs = cv.messages_to_observation(msgs, self.names, step=self.stats.frames)
            except (cv.ConversionError, payloads.PayloadError) as exc:
                self.stats.bad_frames += 1
                self._problem(f"frame at {f.stamp_ns}: {exc}; skipped")
                continue
            self.stats.frames += 1
            status = f.messages.get("agent_status")
            target = None
            if isinstance(status, _Decoded):
                target = (status.payload.data.get("feedback") or {}).get("object_id")
            yield FrameItem(f.stamp_ns, obs, target)


@dataclass
class _Decoded:
    """A String message already validated (so a frame never re-fails on it)."""

    msg: Any
    payload: payloads.Payload
