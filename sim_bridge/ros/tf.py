"""A transform buffer with tf2's lookup semantics, without tf2 (no rclpy, no ROS packages).

Why: the nodes take the camera pose from TF at each image's stamp (a robot's drivers publish
``map -> odom -> base_link -> camera`` on ``/tf`` and ``/tf_static``; nobody publishes a custom
"camera pose" topic). ``tf2_ros`` is not installable from PyPI here, so this module restates the
parts of ``tf2::BufferCore`` the nodes need; on a ROS install the same calls map 1:1 onto
``tf2_ros.Buffer`` (``lookup_transform(target, source, time, timeout)``). Tests pin the semantics.

Semantics (as tf2):
- Each frame has one parent; a transform ``parent -> child`` says where ``child`` is in
  ``parent`` (``parent_from_child``). Static transforms hold at every time.
- Dynamic transforms are kept for ``cache_s`` (default 10 s, tf2's default) behind the newest one.
- ``lookup(target, source, stamp_ns)`` returns the 4x4 ``target_from_source`` at that time:
  every link of the chain is interpolated between the two samples around the time (linear in
  translation, slerp in rotation); a time outside a link's samples raises ``ExtrapolationError``
  (into the past / the future, saying by how much); ``stamp_ns == 0`` means the latest time all
  links share (tf2's ``Time()``).
- An unknown frame raises ``LookupError_`` ("frame 'x' does not exist"); frames in different trees
  raise ``ConnectivityError``. All three derive from ``TransformError`` (a LookupError), whose
  message names the frames and the time, so a node can log one line and drop the frame.
- Waiting (tf2_ros's ``timeout``) belongs to the caller: ``can_transform`` says whether a lookup
  would succeed now; a node holds a frame until it does or its timeout passes.

Public API: ``Transform`` (frozen dataclass: translation, quaternion xyzw), ``TransformBuffer``
(``set_transform(parent, child, stamp_ns, transform, static=False)``, ``lookup``,
``can_transform -> (bool, reason)``, ``frames()``), ``matrix_of(t)``, ``transform_of(matrix)``,
and the errors.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np
from transforms3d.quaternions import mat2quat, quat2mat

NS = 1_000_000_000


class TransformError(LookupError):
    """A lookup that cannot be answered; the message says which frames, at what time, and why."""


class LookupError_(TransformError):  # noqa: N801 - tf2's LookupException
    pass


class ConnectivityError(TransformError):
    pass


class ExtrapolationError(TransformError):
    pass


@dataclass(frozen=True)
class Transform:
    translation: tuple[float, float, float]
    rotation_xyzw: tuple[float, float, float, float]


def matrix_of(t: Transform) -> np.ndarray:
    x, y, z, w = t.rotation_xyzw
    q = np.array([w, x, y, z], dtype=np.float64)
    n = float(np.linalg.norm(q))
    if not np.isfinite(n) or abs(n - 1.0) > 1e-3:
        raise ValueError(f"rotation is not a unit quaternion (norm {n:.6g})")
    out = np.eye(4)
    out[:3, :3] = quat2mat(q / n)
    out[:3, 3] = t.translation
    return out


def transform_of(matrix: np.ndarray) -> Transform:
    m = np.asarray(matrix, dtype=np.float64)
    w, x, y, z = mat2quat(m[:3, :3])
    if w < 0:
        w, x, y, z = -w, -x, -y, -z
    return Transform((float(m[0, 3]), float(m[1, 3]), float(m[2, 3])), (float(x), float(y), float(z), float(w)))


def _slerp(q0: np.ndarray, q1: np.ndarray, r: float) -> np.ndarray:
    dot = float(np.dot(q0, q1))
    if dot < 0.0:
        q1, dot = -q1, -dot
    if dot > 0.9995:
        q = q0 + r * (q1 - q0)
        return q / np.linalg.norm(q)
    theta = np.arccos(dot)
    return (np.sin((1 - r) * theta) * q0 + np.sin(r * theta) * q1) / np.sin(theta)


@dataclass
class _Link:
    parent: str
    static: bool = False
    stamps: list[int] = field(default_factory=list)
    values: list[Transform] = field(default_factory=list)

    def at(self, stamp_ns: int, child: str) -> np.ndarray:
        if self.static:
            return matrix_of(self.values[-1])
        if not self.stamps:
            raise LookupError_(f"no transform {self.parent} -> {child} received yet")
        if stamp_ns == 0:
            return matrix_of(self.values[-1])
        i = bisect.bisect_left(self.stamps, stamp_ns)
        if i < len(self.stamps) and self.stamps[i] == stamp_ns:
            return matrix_of(self.values[i])
        if i == 0:
            raise ExtrapolationError(
                f"lookup would require extrapolation into the past: requested {stamp_ns / NS:.6f}, earliest "
                f"{self.parent} -> {child} is {self.stamps[0] / NS:.6f} ({(self.stamps[0] - stamp_ns) / 1e6:.1f} ms)")
        if i == len(self.stamps):
            raise ExtrapolationError(
                f"lookup would require extrapolation into the future: requested {stamp_ns / NS:.6f}, latest "
                f"{self.parent} -> {child} is {self.stamps[-1] / NS:.6f} ({(stamp_ns - self.stamps[-1]) / 1e6:.1f} ms)")
        t0, t1 = self.stamps[i - 1], self.stamps[i]
        r = (stamp_ns - t0) / (t1 - t0)
        a, b = self.values[i - 1], self.values[i]
        p = (1 - r) * np.asarray(a.translation) + r * np.asarray(b.translation)
        qa = np.array([a.rotation_xyzw[3], *a.rotation_xyzw[:3]])
        qb = np.array([b.rotation_xyzw[3], *b.rotation_xyzw[:3]])
        out = np.eye(4)
        out[:3, :3] = quat2mat(_slerp(qa, qb, r))
        out[:3, 3] = p
        return out

    def newest(self) -> int | None:
        return None if self.static or not self.stamps else self.stamps[-1]


class TransformBuffer:
    def __init__(self, cache_s: float = 10.0) -> None:
        self.cache_ns = int(cache_s * NS)
        self._links: dict[str, _Link] = {}  # by child frame

    def frames(self) -> list[str]:
        return sorted(set(self._links) | {link.parent for link in self._links.values()})

    def set_transform(self, parent: str, child: str, stamp_ns: int, transform: Transform, static: bool = False) -> None:
        if not parent or not child:
            raise ValueError(f"transform {parent!r} -> {child!r}: frame ids must not be empty")
        if parent.strip("/") == child.strip("/"):
            raise ValueError(f"transform {parent} -> {child}: a frame cannot be its own parent")
        matrix_of(transform)  # validates the quaternion
        parent, child = parent.lstrip("/"), child.lstrip("/")
        link = self._links.get(child)
        if link is None or link.parent != parent or link.static != static:
            link = self._links[child] = _Link(parent, static)
        if static:
            link.stamps, link.values = [stamp_ns], [transform]
            return
        i = bisect.bisect_left(link.stamps, stamp_ns)
        if i < len(link.stamps) and link.stamps[i] == stamp_ns:
            link.values[i] = transform
        else:
            link.stamps.insert(i, stamp_ns)
            link.values.insert(i, transform)
        cut = bisect.bisect_left(link.stamps, link.stamps[-1] - self.cache_ns)
        if cut:
            del link.stamps[:cut], link.values[:cut]

    def _chain(self, frame: str) -> list[str]:
        out = [frame]
        while out[-1] in self._links:
            out.append(self._links[out[-1]].parent)
            if len(out) > 64:
                raise ConnectivityError(f"frame '{frame}': the tree has a loop")
        return out

    def _known(self, frame: str) -> bool:
        return frame in self._links or any(link.parent == frame for link in self._links.values())

    def lookup(self, target: str, source: str, stamp_ns: int = 0) -> np.ndarray:
        """4x4 ``target_from_source`` at ``stamp_ns`` (0: latest common time). Raises TransformError."""
        target, source = target.lstrip("/"), source.lstrip("/")
        for f in (target, source):
            if not f:
                raise LookupError_("frame id is empty")
            if not self._known(f):
                raise LookupError_(f"frame '{f}' does not exist (known: {', '.join(self.frames()) or 'none'})")
        if target == source:
            return np.eye(4)
        up_s, up_t = self._chain(source), self._chain(target)
        common = next((f for f in up_s if f in up_t), None)
        if common is None:
            raise ConnectivityError(f"frames '{target}' and '{source}' are not connected (trees rooted at "
                                    f"'{up_t[-1]}' and '{up_s[-1]}')")
        links_s, links_t = up_s[:up_s.index(common)], up_t[:up_t.index(common)]
        if stamp_ns == 0:
            newest = [n for f in links_s + links_t if (n := self._links[f].newest()) is not None]
            stamp_ns = min(newest) if newest else 0
        try:
            common_from_source = np.eye(4)
            for f in reversed(links_s):
                common_from_source = common_from_source @ self._links[f].at(stamp_ns, f)
            common_from_target = np.eye(4)
            for f in reversed(links_t):
                common_from_target = common_from_target @ self._links[f].at(stamp_ns, f)
        except TransformError as exc:
            raise type(exc)(f"lookup {target} <- {source} at {stamp_ns / NS:.6f}: {exc}") from None
        return np.linalg.inv(common_from_target) @ common_from_source

    def can_transform(self, target: str, source: str, stamp_ns: int = 0) -> tuple[bool, str]:
        try:
            self.lookup(target, source, stamp_ns)
        except TransformError as exc:
            return False, str(exc)
        return True, ""


# ---- the simulator's (and any THOR-style robot's) frame tree --------------------------------------

@dataclass(frozen=True)
class StampedTransform:
    parent: str
    child: str
    stamp_ns: int
    transform: Transform
    static: bool = False


@dataclass(frozen=True)
class FrameNames:
    """Frame ids (REP 105 / REP 103); nodes take them as parameters."""

    map: str = "map"
    odom: str = "odom"
    base: str = "base_link"
    camera_link: str = "camera_link"  # body-aligned (x forward, z up), tilts with the camera
    camera: str = "camera_color_optical_frame"  # optical: x right, y down, z forward


def base_matrix(position: tuple[float, float, float] | np.ndarray, yaw_deg: float) -> np.ndarray:
    """``map_from_base`` of a base at ``position`` turned ``yaw_deg`` counter-clockwise about +z."""
    c, s = np.cos(np.radians(yaw_deg)), np.sin(np.radians(yaw_deg))
    out = np.eye(4)
    out[:3, :3] = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
    out[:3, 3] = np.asarray(position, dtype=np.float64)
    return out


def robot_transforms(map_from_base: np.ndarray, map_from_camera: np.ndarray, stamp_ns: int,
                     frames: FrameNames = FrameNames(), map_from_odom: np.ndarray | None = None,
                     ) -> list[StampedTransform]:
    """The tree ``map -> odom -> base_link -> camera_link -> camera (optical)`` of one pose.

    ``map_from_odom`` defaults to identity (a simulator knows its pose exactly: no drift to
    correct); ``camera_link -> camera`` is the fixed optical rotation (static); the camera link's
    pose on the base (height and tilt) is dynamic because the camera tilts (LookUp/LookDown)."""
    from household.frames import BODY_FROM_OPTICAL

    link_from_optical = np.eye(4)
    link_from_optical[:3, :3] = BODY_FROM_OPTICAL
    map_from_odom = np.eye(4) if map_from_odom is None else map_from_odom
    odom_from_base = np.linalg.inv(map_from_odom) @ map_from_base
    base_from_link = np.linalg.inv(map_from_base) @ map_from_camera @ np.linalg.inv(link_from_optical)
    return [
        StampedTransform(frames.map, frames.odom, stamp_ns, transform_of(map_from_odom)),
        StampedTransform(frames.odom, frames.base, stamp_ns, transform_of(odom_from_base)),
        StampedTransform(frames.base, frames.camera_link, stamp_ns, transform_of(base_from_link)),
        StampedTransform(frames.camera_link, frames.camera, 0, transform_of(link_from_optical), static=True),
    ]


def yaw_of(matrix: np.ndarray) -> float:
    """Heading (degrees, counter-clockwise about +z, in (-180, 180]) of a base pose."""
    yaw = float(np.degrees(np.arctan2(matrix[1, 0], matrix[0, 0])))
    return 180.0 if yaw == -180.0 else yaw
