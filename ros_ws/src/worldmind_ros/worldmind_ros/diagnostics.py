"""Topic health as ``diagnostic_msgs/DiagnosticArray`` on ``/diagnostics`` (what
``rqt_robot_monitor``, Foxglove's diagnostics panel and the diagnostic aggregator read).

Why: a robot input that never publishes (a wrong remap, a driver that did not start) or stopped
publishing must be visible to an operator, not only as one log line. The rows are built by a pure
function from ``sync.SyncStatus`` (tested without DDS); ``to_msg`` makes the message.

One ``DiagnosticStatus`` per watched topic: ``name`` "<node>: <topic>", ``hardware_id`` the node,
level OK while it publishes, STALE when it never published within ``stale_after_s`` of the node's
start ("never received") or has been silent longer ("silent 3.2 s"), with key/values
``received``, ``out_of_order`` and ``silent_s``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from sim_bridge.ros.sync import SyncStatus

OK, WARN, ERROR, STALE = 0, 1, 2, 3  # diagnostic_msgs/DiagnosticStatus levels (bytes on the wire)
DIAGNOSTICS_TOPIC = "/diagnostics"  # absolute: the ROS convention, one aggregator per robot


@dataclass(frozen=True)
class HealthRow:
    name: str
    level: int
    message: str
    values: tuple[tuple[str, str], ...]


def topic_health(node: str, status: SyncStatus, topics: Sequence[str]) -> list[HealthRow]:
    """One row per topic name in ``topics`` (as ``status`` names them)."""
    rows = []
    for topic in topics:
        st = status.topics.get(topic)
        received = st.received if st else 0
        if topic in status.stale:
            silent = status.silent_s[topic]
            level, msg = STALE, ("never received" if silent == float("inf") else f"silent {silent:.1f} s")
        else:
            level, msg = OK, f"receiving ({received} messages)" if received else "waiting for the first message"
        silent_txt = "inf" if status.silent_s.get(topic) == float("inf") else f"{status.silent_s.get(topic, 0.0):.2f}"
        rows.append(HealthRow(f"{node}: {topic}", level, msg,
                              (("received", str(received)), ("out_of_order", str(st.out_of_order if st else 0)),
                               ("silent_s", silent_txt))))
    return rows


def to_msg(rows: Sequence[HealthRow], node: str, stamp: Any) -> Any:
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

    arr = DiagnosticArray()
    arr.header.stamp = stamp
    for r in rows:
        arr.status.append(DiagnosticStatus(level=bytes([r.level]), name=r.name, message=r.message,
                                           hardware_id=node, values=[KeyValue(key=k, value=v) for k, v in r.values]))
    return arr
