"""A tiny exact renderer for perception and memory tests: axis-aligned boxes on a floor, seen by
a pinhole camera, producing real ``Observation``s (RGB, z-depth, instance ids, pose) in REP 103.

Independent of the embedded simulator on purpose: tests can place, move and remove boxes
exactly and know the true geometry. Ray-box hits use the slab method over all pixels x boxes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from household.frames import world_from_camera
from household.types import ActionFeedback, AgentStatus, CameraIntrinsics, InstanceLabel, Observation


@dataclass
class Box:
    object_id: str
    label: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]

    @property
    def lo(self) -> np.ndarray:
        return np.asarray(self.center) - np.asarray(self.size) / 2

    @property
    def hi(self) -> np.ndarray:
        return np.asarray(self.center) + np.asarray(self.size) / 2


def render(boxes: list[Box], position: tuple[float, float, float], yaw_deg: float, pitch_deg: float = 0.0, *,
           width: int = 160, height: int = 120, fov_deg: float = 90.0, step: int = 0, floor: bool = True) -> Observation:
    """Observation of ``boxes`` from a camera at ``position`` (REP 103) facing ``yaw_deg``
    (counter-clockwise from +x) and pitched down by ``pitch_deg``."""
    intr = CameraIntrinsics.from_fov(width, height, fov_deg)
    pose = world_from_camera(np.asarray(position, float), yaw_deg, pitch_deg)
    u, v = np.meshgrid(np.arange(width), np.arange(height))
    d_cam = np.stack([(u - intr.cx) / intr.fx, (v - intr.cy) / intr.fy, np.ones_like(u, dtype=float)], axis=-1)
    d = d_cam @ pose[:3, :3].T  # world directions with unit forward component: t is z-depth
    o = pose[:3, 3]
    depth = np.full((height, width), np.inf)
    inst = np.zeros((height, width), dtype=np.int32)
    if floor:
        with np.errstate(divide="ignore", invalid="ignore"):
            t_floor = np.where(d[..., 2] < 0, -o[2] / d[..., 2], np.inf)
        depth = np.minimum(depth, t_floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        for k, box in enumerate(boxes, start=1):
            t1 = (box.lo - o) / d
            t2 = (box.hi - o) / d
            tmin = np.nanmax(np.minimum(t1, t2), axis=-1)
            tmax = np.nanmin(np.maximum(t1, t2), axis=-1)
            hit = (tmax >= np.maximum(tmin, 0)) & (tmin > 0)
            closer = hit & (tmin < depth)
            depth[closer] = tmin[closer]
            inst[closer] = k
    depth = np.where(np.isfinite(depth), depth, 0.0).astype(np.float32)
    colours = (np.arange(len(boxes) + 1)[:, None] * np.array([53, 97, 151]) % 200 + 40).astype(np.uint8)
    rgb = colours[inst]
    labels = {k: InstanceLabel(b.object_id, b.label) for k, b in enumerate(boxes, start=1) if (inst == k).any()}
    agent = AgentStatus((float(o[0]), float(o[1]), 0.0), yaw_deg, pitch_deg)
    return Observation(step, intr, pose, agent, ActionFeedback(None, True), rgb=rgb, depth=depth,
                       instance_ids=inst, id_to_label=labels)


def turn(boxes: list[Box], position: tuple[float, float, float], start_step: int = 0, n: int = 8,
         pitch_deg: float = 20.0, **kw: object) -> list[Observation]:
    """A full turn in ``n`` views."""
    return [render(boxes, position, 360.0 * i / n, pitch_deg, step=start_step + i, **kw) for i in range(n)]
