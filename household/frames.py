"""Frame conversions between AI2-THOR (y up, left-handed) and ROS REP 103 (x forward, y left, z up).

THOR's +z (the direction rotation.y = 0 faces) becomes ROS +x, THOR +x (rotation.y = 90) becomes
ROS -y, THOR +y stays up (ROS +z). The point map is therefore a reflection (det = -1), which is
exactly what turns a left-handed frame into a right-handed one; a THOR yaw (clockwise seen from
above) becomes a ROS yaw of the opposite sign. Rotations are built with transforms3d so the
conventions are those of a well-tested library, not ours.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import numpy.typing as npt
from transforms3d.euler import euler2mat, mat2euler

from household.types import AgentStatus

# Columns: where THOR's x, y, z axes land in ROS.
ROS_FROM_THOR = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
THOR_FROM_ROS = ROS_FROM_THOR.T

# Camera optical frame (x right, y down, z forward) expressed in the REP 103 body frame.
BODY_FROM_OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def thor_to_ros_points(points: np.ndarray) -> np.ndarray:
    """(..., 3) THOR points -> (..., 3) REP 103 points.

    Written as the axis permutation the matrix is (ROS x = THOR z, y = -THOR x, z = THOR y), not a
    BLAS matmul: the same numbers (``+ 0.0`` gives the matmul's signed zeros), without threads
    that fight each other when several evaluation workers share the cores."""
    p = np.asarray(points, dtype=float)
    return np.stack([p[..., 2] + 0.0, 0.0 - p[..., 0], p[..., 1] + 0.0], axis=-1)


def ros_to_thor_points(points: npt.ArrayLike) -> np.ndarray:
    """(..., 3) REP 103 points -> (..., 3) THOR points (THOR x = -ROS y, y = ROS z, z = ROS x)."""
    p = np.asarray(points, dtype=float)
    return np.stack([0.0 - p[..., 1], p[..., 2] + 0.0, p[..., 0] + 0.0], axis=-1)


def thor_yaw_to_ros(yaw_deg: float) -> float:
    """THOR rotation.y (deg, clockwise from +z) -> ROS yaw (deg, counter-clockwise from +x), in (-180, 180]."""
    return _wrap180(-yaw_deg)


def ros_yaw_to_thor(yaw_deg: float) -> float:
    """ROS yaw -> THOR rotation.y in [0, 360)."""
    return float((-yaw_deg) % 360.0)


def _wrap180(deg: float) -> float:
    out = (deg + 180.0) % 360.0 - 180.0
    return 180.0 if out == -180.0 else float(out)


def world_from_camera(position_ros: np.ndarray, yaw_deg_ros: float, pitch_down_deg: float) -> np.ndarray:
    """4x4 pose of the optical camera frame in the REP 103 world.

    ``pitch_down_deg`` is THOR's cameraHorizon (positive looks down), which in REP 103 is a
    positive rotation about the body's +y (left) axis."""
    rot = euler2mat(0.0, np.radians(pitch_down_deg), np.radians(yaw_deg_ros), "sxyz") @ BODY_FROM_OPTICAL
    out = np.eye(4)
    out[:3, :3] = rot
    out[:3, 3] = np.asarray(position_ros, dtype=float)
    return out


def camera_pose_from_world_from_camera(pose: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Inverse of ``world_from_camera``: (position, ROS yaw deg, pitch-down deg). Raises if the
    rotation has roll, which no THOR-style camera has."""
    body = np.asarray(pose[:3, :3]) @ BODY_FROM_OPTICAL.T
    roll, pitch, yaw = mat2euler(body, "sxyz")
    if abs(roll) > 1e-6:
        raise ValueError(f"camera pose has roll {np.degrees(roll):.3f} deg; expected none")
    return np.asarray(pose[:3, 3], dtype=float), float(np.degrees(yaw)), float(np.degrees(pitch))


def thor_camera_to_ros_pose(position_thor: np.ndarray, yaw_deg_thor: float, horizon_deg: float) -> np.ndarray:
    """THOR camera position + rotation.y + cameraHorizon -> 4x4 REP 103 world_from_camera."""
    return world_from_camera(thor_to_ros_points(position_thor), thor_yaw_to_ros(yaw_deg_thor), horizon_deg)


def is_rigid_transform(pose: np.ndarray, tol: float = 1e-4) -> bool:
    """True for a 4x4 homogeneous transform whose rotation is orthonormal with det +1."""
    pose = np.asarray(pose, dtype=float)
    if pose.shape != (4, 4) or not np.all(np.isfinite(pose)):
        return False
    rot = pose[:3, :3]
    # np.allclose's test (|a - b| <= atol + rtol |b|, rtol 1e-5) written out: this runs on every
    # frame of every map, and allclose's generality cost more than the check itself.
    if not np.all(np.abs(rot @ rot.T - _EYE3) <= tol + 1e-5 * _EYE3):
        return False
    if not np.all(np.abs(pose[3] - _LAST_ROW) <= tol + 1e-5 * _LAST_ROW):
        return False
    return bool(abs(np.linalg.det(rot) - 1.0) < tol)


_EYE3 = np.eye(3)
_LAST_ROW = np.array([0.0, 0.0, 0.0, 1.0])


# ---- planar poses: SE(2) in the REP 103 floor plane (x, y, yaw about +z) ---------------------------
# A wheeled base's pose error and its correction are SE(2) (3x3 homogeneous matrices): the sensor
# profiles draw it (sim_bridge.sensors), the scan-to-map correction undoes it (perception).


def se2(theta: float, tx: float, ty: float, pivot: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """3x3 SE(2): rotate by ``theta`` about ``pivot``, then shift by (tx, ty)."""
    c, s = math.cos(theta), math.sin(theta)
    px, py = pivot
    return np.array([[c, -s, px - c * px + s * py + tx], [s, c, py - s * px - c * py + ty], [0.0, 0.0, 1.0]])


def se2_yaw(t: np.ndarray) -> float:
    """The rotation of a 3x3 SE(2), radians."""
    return float(math.atan2(t[1, 0], t[0, 0]))


def apply_se2(t: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Apply a 3x3 SE(2) to (N, 3) points' x and y (z kept)."""
    out = np.array(points, dtype=float, copy=True)
    out[:, :2] = points[:, :2] @ t[:2, :2].T + t[:2, 2]
    return out


def lift_se2(t: np.ndarray) -> np.ndarray:
    """The 4x4 (REP 103, rotation about z) of a 3x3 SE(2)."""
    out = np.eye(4)
    out[:2, :2], out[:2, 3] = t[:2, :2], t[:2, 2]
    return out


def reposed_agent(agent: AgentStatus, t: np.ndarray) -> AgentStatus:
    """``agent`` with its floor-plane position and yaw moved by the 3x3 SE(2) ``t``."""
    x, y, z = (float(c) for c in agent.position)
    px, py = (t @ np.array([x, y, 1.0]))[:2]
    return dataclasses.replace(agent, position=(float(px), float(py), z),
                               yaw_deg=float(agent.yaw_deg + math.degrees(se2_yaw(t))))
