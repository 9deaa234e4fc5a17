"""Applying a sensor profile to observations: ``SensorNoise`` wraps an environment (or is called
on frames read from a bag) and degrades each observation; ground truth and scoring never see it.

Seeded per episode (``reset``), so the same episode with the same profile degrades the same way
on every run. The pose error (``sim_bridge.sensors.pose.PoseError``: odometry drift, bounded by a
localiser's corrections where the profile has one) follows the true motion between frames and
draws from its own random stream, so it does not depend on the image size or on what the depth
and segmentation models draw; it is applied to what the agent is told (its pose and the camera
pose), never to the simulator's state.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import Any

import numpy as np

from household import morphology
from household.frames import lift_se2, reposed_agent
from household.types import AgentStatus, InstanceLabel, Observation, StepResult
from household.visible_states import flip_states
from sim_bridge.sensors.pose import PoseError
from sim_bridge.sensors.profiles import DARK_OR_SHINY, DepthModel, SegmentationModel, SensorProfile

SPURIOUS_PREFIX = "spurious|"


class SensorNoise:
    """Degrade observations according to ``profile``. As a wrapper: ``SensorNoise(env, profile)``
    behaves like ``env`` with degraded observations; as a filter: ``noise.degrade(obs)``."""

    def __init__(self, env: Any, profile: SensorProfile, seed: int = 0) -> None:
        self.env = env
        self.profile = profile
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)
        self.pose_error = PoseError(profile.pose, np.random.default_rng([self.seed, 1]))
        self.frames = 0

    # --- environment wrapper ----------------------------------------------------------------
    def reset(self, episode: Any, *args: Any, **kwargs: Any) -> Observation:
        self.begin(episode)
        return self.degrade(self.env.reset(episode, *args, **kwargs))

    def begin(self, episode: Any) -> None:
        """Seed for ``episode`` and start its pose error afresh (what ``reset`` does before the first
        frame); a filter over recorded frames calls it, then ``degrade`` on each frame in order."""
        key = str(getattr(episode, "id", "")) or str(id(episode))
        digest = int(hashlib.sha256(f"{self.seed}|{key}".encode()).hexdigest()[:8], 16)
        self.rng = np.random.default_rng(digest)
        self.pose_error = PoseError(self.profile.pose, np.random.default_rng([digest, 1]))
        self.frames = 0

    def step(self, action: Any) -> StepResult:
        result = self.env.step(action)
        return dataclasses.replace(result, observation=self.degrade(result.observation))

    def __getattr__(self, name: str) -> Any:  # everything else (ground truth, metadata) as is
        return getattr(self.env, name)

    # --- the filter ---------------------------------------------------------------------------
    def degrade(self, obs: Observation) -> Observation:
        if self.profile.is_ideal:
            return obs
        self.frames += 1
        depth = _degrade_depth(obs, self.profile.depth, self.rng)
        ids, labels = _degrade_segmentation(obs, self.profile.segmentation, self.rng)
        agent, world_from_camera = self._drift(obs)
        return dataclasses.replace(obs, depth=depth, instance_ids=ids, id_to_label=labels, agent=agent,
                                   world_from_camera=world_from_camera)

    def _drift(self, obs: Observation) -> tuple[AgentStatus, np.ndarray]:
        x, y = float(obs.agent.position[0]), float(obs.agent.position[1])
        err = self.pose_error.update(x, y, math.radians(obs.agent.yaw_deg))
        return reposed_agent(obs.agent, err), lift_se2(err) @ np.asarray(obs.world_from_camera, dtype=float)


def _degrade_depth(obs: Observation, model: DepthModel, rng: np.random.Generator) -> np.ndarray | None:
    if obs.depth is None:
        return None
    z = np.array(obs.depth, dtype=np.float32, copy=True)
    hit = z > 0
    if model.noise_k > 0:
        z[hit] += rng.normal(0.0, 1.0, size=int(hit.sum())).astype(np.float32) * (model.noise_k * z[hit] ** 2)
    drop = np.zeros_like(hit)
    if model.edge_dropout > 0:
        zz = obs.depth.astype(np.float32)
        jump = np.zeros_like(hit)
        jump[:, 1:] |= np.abs(np.diff(zz, axis=1)) > model.edge_jump_m
        jump[:, :-1] |= np.abs(np.diff(zz, axis=1)) > model.edge_jump_m
        jump[1:, :] |= np.abs(np.diff(zz, axis=0)) > model.edge_jump_m
        jump[:-1, :] |= np.abs(np.diff(zz, axis=0)) > model.edge_jump_m
        drop |= jump & (rng.random(z.shape) < model.edge_dropout)
    if model.dark_dropout > 0 and obs.instance_ids is not None:
        dark = [i for i, lab in obs.id_to_label.items() if lab.object_type in DARK_OR_SHINY]
        if dark:
            drop |= np.isin(obs.instance_ids, dark) & (rng.random(z.shape) < model.dark_dropout)
    drop |= hit & ((obs.depth < model.min_range_m) | (obs.depth > model.max_range_m))
    z[drop] = 0.0  # 0: no return, as the renderer marks nothing hit
    z[z < 0] = 0.0
    return z


def _degrade_segmentation(obs: Observation, model: SegmentationModel,
                          rng: np.random.Generator) -> tuple[np.ndarray | None, dict[int, InstanceLabel]]:
    if obs.instance_ids is None:
        return None, dict(obs.id_to_label)
    ids = np.array(obs.instance_ids, copy=True)
    labels = dict(obs.id_to_label)
    present, counts = np.unique(ids[ids > 0], return_counts=True)
    for iid, n in zip(present.tolist(), counts.tolist()):
        mask = ids == iid
        if n < model.min_pixels:
            ids[mask] = 0
            labels.pop(iid, None)
            continue
        if model.erode_p > 0 and rng.random() < model.erode_p:
            inner = morphology.erode(mask, iterations=model.border_px)
            if inner.any():
                ids[mask & ~inner] = 0
        elif model.bleed_p > 0 and rng.random() < model.bleed_p:
            grown = morphology.dilate(mask, iterations=model.border_px)
            ids[grown & ~mask & (ids != iid)] = iid
        lab = labels.get(iid)
        if lab is not None and model.confusion_p > 0 and lab.object_type in model.confusion \
                and rng.random() < model.confusion_p:
            labels[iid] = InstanceLabel(lab.object_id, model.confusion[lab.object_type], lab.states)
    if model.spurious_per_frame > 0 and labels:
        h, w = ids.shape
        for k in range(int(rng.poisson(model.spurious_per_frame))):
            bh, bw = int(rng.integers(4, max(5, h // 6))), int(rng.integers(4, max(5, w // 6)))
            v, u = int(rng.integers(0, h - bh)), int(rng.integers(0, w - bw))
            new = int(ids.max()) + 1
            ids[v:v + bh, u:u + bw] = new
            kind = rng.choice(sorted(lab.object_type for lab in labels.values()))
            # Its own name (frame and index): false detections at random places in two frames are
            # unrelated, so no tracker that associates by id may take them for one object.
            labels[new] = InstanceLabel(f"{SPURIOUS_PREFIX}{obs.step}.{k}", str(kind))
    labels = {i: lab for i, lab in labels.items() if (ids == i).any()}
    if model.state_flip_p > 0:  # drawn by a hash of (object, flag, step): the streams above do not move
        labels = {i: dataclasses.replace(lab, states=flip_states(lab.states, model.state_flip_p, lab.object_id, obs.step))
                  if lab.states else lab for i, lab in labels.items()}
    if model.per_frame_ids and labels:
        old = sorted(labels)
        new_ids = rng.permutation(np.arange(1, len(old) + 1) + int(rng.integers(0, 1000)))
        remap = np.zeros(int(ids.max()) + 1, dtype=ids.dtype)
        for o, n in zip(old, new_ids.tolist()):
            remap[o] = n
        ids = remap[ids]
        labels = {int(n): labels[o] for o, n in zip(old, new_ids.tolist())}
    return ids, labels
