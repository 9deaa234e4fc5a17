"""Planar scan-to-map registration: the SE(2) correction that best lays a depth frame's points on
the agent's own map (issue 31, pose correction for a robot without a localiser).

A household robot's base moves in the floor plane, so the drift of its odometry is an SE(2)
error (x, y, yaw; REP 105's ``odom``). ``register_se2`` estimates that error with point-to-plane
ICP (Chen and Medioni 1992; the error metric KISS-ICP, slam_toolbox's scan matcher and open3d's
``TransformationEstimationPointToPlane`` minimise) restricted to the three planar degrees of
freedom, solved by Gauss-Newton with a Geman-McClure robust weight (Black and Rangarajan 1996)
so that moved objects and depth outliers do not pull the estimate.

Degeneracy (a robot facing one wall, a corridor): the information matrix of the planar problem,
as the correspondences measure it (depth-noise weights, before the robust ones), is
eigen-decomposed, and each Gauss-Newton step is projected onto the eigen-directions whose
information per unit weight exceeds ``RegistrationConfig.min_information``; along the others the
odometry prediction stands (after "solution remapping", Zhang, Kaess and Singh, "On degeneracy of
optimization-based state estimation problems", ICRA 2016). The result says how many directions
were constrained; its ``rmse_m`` is robust-weighted.

The target map's normals are estimated with open3d (``estimate_normals`` over a hybrid radius /
k-nearest search); correspondences are found with scipy's cKDTree, vectorised over the frame.
Everything is in the REP 103 ``map`` frame (x forward, y left, z up, metres).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial import cKDTree

from household.frames import apply_se2, se2


@dataclass(frozen=True)
class RegistrationConfig:
    iterations: int = 12
    # Correspondence distances, coarse to fine, one per stage, beyond the error the caller
    # expects (``search_m``): the first stage reaches that far plus its own, the last its own.
    max_correspondence_m: tuple[float, ...] = (0.15, 0.10, 0.06)
    robust_scale_m: float = 0.03  # Geman-McClure scale: residuals well past it weigh little
    min_information: float = 0.04  # eigenvalue of H per inlier below which a direction is left alone
    converged_m: float = 1e-4  # stop when an update moves no point more than this (at 1 m lever)
    normal_radius_m: float = 0.15
    normal_max_nn: int = 20
    max_normal_z: float = 0.8  # target points whose normal is this vertical (floor, table tops) carry no SE(2) information


@dataclass
class RegistrationTarget:
    """Map points with normals that carry planar information, and a search tree over them."""

    points: np.ndarray  # (M, 3)
    normals: np.ndarray  # (M, 3), unit
    tree: cKDTree = field(repr=False)

    @classmethod
    def build(cls, points: np.ndarray, config: RegistrationConfig = RegistrationConfig()) -> "RegistrationTarget":
        pts = np.asarray(points, dtype=float).reshape(-1, 3)
        normals = estimate_normals(pts, config.normal_radius_m, config.normal_max_nn)
        keep = np.isfinite(normals).all(axis=1) & (np.abs(normals[:, 2]) < config.max_normal_z)
        pts, normals = pts[keep], normals[keep]
        return cls(pts, normals, cKDTree(pts) if len(pts) else cKDTree(np.zeros((1, 3))))

    def __len__(self) -> int:
        return len(self.points)


def estimate_normals(points: np.ndarray, radius: float, max_nn: int) -> np.ndarray:
    """Unit normals of ``points`` from their neighbourhoods (open3d's ``estimate_normals``); all
    NaN for fewer than 3 points, or when open3d returns none."""
    if len(points) < 3:
        return np.full((len(points), 3), np.nan)
    import open3d as o3d  # a named dependency; imported here so perception loads without it

    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    cloud.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=radius, max_nn=max_nn))
    normals = np.asarray(cloud.normals, dtype=float)
    if normals.shape != points.shape:
        return np.full((len(points), 3), np.nan)
    return normals


@dataclass(frozen=True)
class Registration:
    """What one registration found: ``delta`` (3x3 SE(2), map frame) takes the frame's predicted
    points onto the map; ``constrained`` is how many of the 3 planar directions the scene pinned
    down (3: fully, 0: nothing moved); ``inliers`` the correspondences within the last stage's
    distance, ``rmse_m`` their point-to-plane residual."""

    delta: np.ndarray
    inliers: int
    inlier_fraction: float
    rmse_m: float
    constrained: int
    min_information: float
    iterations: int

    @property
    def translation_m(self) -> float:
        return float(math.hypot(self.delta[0, 2], self.delta[1, 2]))

    @property
    def yaw_rad(self) -> float:
        return float(math.atan2(self.delta[1, 0], self.delta[0, 0]))


def register_se2(source: np.ndarray, weights: np.ndarray, target: RegistrationTarget, pivot: tuple[float, float],
                 config: RegistrationConfig = RegistrationConfig(), search_m: float = 0.0) -> Registration | None:
    """The planar correction of ``source`` (N, 3, map frame as predicted) onto ``target``; rotations
    are about ``pivot`` (the sensor's x, y: it keeps the rotation and translation apart);
    ``search_m`` is how far off the prediction may be (it widens the first stages' search). None
    when fewer than 3 source points have a correspondence."""
    src = np.asarray(source, dtype=float).reshape(-1, 3)
    w0 = np.asarray(weights, dtype=float).reshape(-1)
    if len(src) == 0 or len(target) == 0:
        return None
    total = np.eye(3)
    stages = config.max_correspondence_m
    per_stage = max(1, config.iterations // len(stages))
    used = 0
    result = None
    for stage, own in enumerate(stages):
        radius = own + search_m * (1.0 - stage / max(len(stages) - 1, 1))
        for _ in range(per_stage):
            used += 1
            moved = apply_se2(total, src)
            dist, idx = target.tree.query(moved, k=1, distance_upper_bound=radius)
            ok = np.isfinite(dist)
            if ok.sum() < 3:
                return None
            p, q, n = moved[ok], target.points[idx[ok]], target.normals[idx[ok]]
            r = np.einsum("ij,ij->i", p - q, n)
            # Geman-McClure IRLS weight (a scale that grew with the stage's reach was tried: worse
            # on the tuning trajectories, 0.028 -> 0.046 m ATE under odom-only)
            s2 = config.robust_scale_m ** 2
            w = w0[ok] * (s2 / (s2 + r * r)) ** 2
            # Jacobian of r w.r.t. (theta about the pivot, tx, ty) at the current estimate
            lever = p[:, :2] - np.asarray(pivot)
            jac = np.stack([-lever[:, 1] * n[:, 0] + lever[:, 0] * n[:, 1], n[:, 0], n[:, 1]], axis=1)
            # which directions the scene's geometry pins down: the information of the
            # correspondences as measured (not as the robust weights see them), per unit weight
            wsum = float(w0[ok].sum())
            evals, evecs = np.linalg.eigh((jac * w0[ok][:, None]).T @ jac)
            per_inlier = evals / max(wsum, 1e-9)
            good = per_inlier > config.min_information
            h = (jac * w[:, None]).T @ jac
            g = (jac * w[:, None]).T @ r
            step = -np.linalg.solve(h + 1e-9 * np.trace(h) * np.eye(3) + 1e-12 * np.eye(3), g)
            keep = evecs[:, good]
            step = keep @ (keep.T @ step)  # nothing along the directions the scene leaves free
            total = se2(float(step[0]), float(step[1]), float(step[2]), pivot) @ total
            rmse = float(math.sqrt(float(np.sum(w * r * r)) / max(float(w.sum()), 1e-12)))
            result = (int(ok.sum()), rmse, int(good.sum()), float(per_inlier.min()))
            if float(np.abs(step).max()) < config.converged_m:
                break
    assert result is not None
    inliers, rmse, constrained, min_info = result
    return Registration(total, inliers, inliers / len(src), rmse, constrained, min_info, used)
