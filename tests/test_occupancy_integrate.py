"""``OccupancyMap.integrate`` against a reference written as the map was first defined: every
sampled pixel back-projected, converted to THOR, and each layer binned in a pass of its own
(floor, wall band, obstacles or their counts, then the far-floor fill between vertically adjacent
floor pixels). The integrate that replaced those passes (one cell index per valid pixel, layers
read through masks, the fill on flat pixel indices) must give the same maps bit for bit: the
planner's walks, and so every committed result, depend on them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from household.frames import ros_to_thor_points
from household.house_data import load_house
from household.types import Action, Observation
from perception.backproject import backproject_pixels
from planner.occupancy import OccupancyConfig, OccupancyMap
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

W, H = 160, 120


def _cells(occ: OccupancyMap, thor: np.ndarray) -> np.ndarray:
    c = occ.config
    i = np.rint((thor[:, 0] - occ.x0) / c.resolution).astype(np.int64)
    j = np.rint((thor[:, 2] - occ.z0) / c.resolution).astype(np.int64)
    inb = (i >= 0) & (j >= 0) & (i < occ.n) & (j < occ.n)
    return i[inb] * occ.n + j[inb]


def _mark(occ: OccupancyMap, layer: np.ndarray, thor: np.ndarray) -> None:
    layer[np.divmod(_cells(occ, thor), occ.n)] = True


def reference_integrate(occ: OccupancyMap, obs: Observation) -> None:
    """The definition, one pass per layer (the code before the single-index integrate)."""
    occ.mark_stood(obs)
    assert obs.depth is not None
    c = occ.config
    h, w = obs.depth.shape
    v, u = np.mgrid[0:h:c.stride, 0:w:c.stride]
    u, v = u.ravel(), v.ravel()
    d = obs.depth[v, u].astype(np.float64)
    ok = (d > 0.05) & (d < c.max_range) & np.isfinite(d)
    if not ok.any():
        return
    with np.errstate(invalid="ignore"):  # NaN and inf pixels (masked by ok below)
        ros = backproject_pixels(u, v, d, obs.intrinsics, obs.world_from_camera)
    height = ros[:, 2]
    thor = ros_to_thor_points(ros)
    slack: np.ndarray | float = 0.0
    if c.depth_noise_k > 0:
        slack = c.noise_sigmas * c.depth_noise_k * np.where(ok, d, 0.0) * np.abs(
            height - float(obs.world_from_camera[2, 3]))
    floor = ok & (height < c.floor_max + slack)
    obst = ok & (height >= c.obstacle_min + slack) & (height <= c.obstacle_max)
    wall = ok & (height >= c.wall_min) & (height <= c.wall_max)
    floor_cells = _cells(occ, thor[floor])
    occ.floor[np.divmod(floor_cells, occ.n)] = True
    _mark(occ, occ.wall, thor[wall])
    if c.depth_noise_k > 0:
        occ._count(floor_cells, _cells(occ, thor[obst]))
    else:
        _mark(occ, occ.obstacle, thor[obst])
    if c.stride == 1:
        fl = floor.reshape(h, w)
        pts = thor.reshape(h, w, 3)
        pair = fl[:-1] & fl[1:]
        a, b = pts[:-1][pair], pts[1:][pair]
        gap = np.hypot(a[:, 0] - b[:, 0], a[:, 2] - b[:, 2])
        far = gap > c.resolution
        if far.any():
            t = np.linspace(0.0, 1.0, 9)[1:-1, None, None]
            fill = a[far][None] + t * (b[far] - a[far])[None]
            _mark(occ, occ.floor, fill.reshape(-1, 3))
    occ.version += 1


@pytest.fixture(scope="module")
def frames() -> list[Observation]:
    """A walk through dev house 0: turns, moves and looks down, every frame rendered; a few
    frames get holes, NaN, inf and far depth as a real camera's would have."""
    env = EmbeddedEnvironment(EmbeddedConfig(width=W, height=H))
    obs = env.reset(load_house("houses_dev.jsonl.gz", 0))
    out = [obs]
    for name in ["RotateRight"] * 3 + ["MoveAhead"] * 4 + ["LookDown", "RotateLeft", "MoveAhead", "LookUp"] \
            + ["RotateRight"] * 6 + ["MoveAhead"] * 3:
        obs = env.step(Action(name)).observation
        out.append(obs)
    rng = np.random.default_rng(3)
    for k in (2, 7, 12):
        depth = np.array(out[k].depth, dtype=np.float32)
        holes = rng.random(depth.shape)
        depth[holes < 0.05] = 0.0
        depth[(holes >= 0.05) & (holes < 0.07)] = np.nan
        depth[(holes >= 0.07) & (holes < 0.08)] = np.inf
        depth[(holes >= 0.08) & (holes < 0.09)] = 9.0  # beyond max_range
        out[k] = dataclasses.replace(out[k], depth=depth)
    return out


@pytest.mark.parametrize("config", [
    OccupancyConfig(),
    OccupancyConfig(depth_noise_k=0.0036),
    OccupancyConfig(stride=2),
    OccupancyConfig(size=4.0),  # a small map: many points fall off it
    OccupancyConfig(size=4.0, depth_noise_k=0.0036, stride=3),
], ids=["exact", "noisy", "stride2", "small", "small-noisy-stride3"])
def test_integrate_gives_the_maps_of_the_per_layer_definition(frames: list[Observation],
                                                               config: OccupancyConfig) -> None:
    p = ros_to_thor_points(np.array(frames[0].agent.position))
    origin = (float(p[0]), float(p[2]))
    got, want = OccupancyMap(origin, config), OccupancyMap(origin, config)
    layers = ["floor", "obstacle", "wall", "stood", "centers"] + (
        ["floor_hits", "obstacle_hits"] if config.depth_noise_k > 0 else [])
    for obs in frames:
        got.integrate(obs)
        reference_integrate(want, obs)
        for name in layers:
            assert np.array_equal(getattr(got, name), getattr(want, name)), f"{name} differs at step {obs.step}"
    assert got.floor.sum() > 100 and got.obstacle.sum() > 10 and got.wall.sum() > 10  # a real comparison


def test_bad_depth_pixels_raise_no_warning(frames: list[Observation]) -> None:
    p = ros_to_thor_points(np.array(frames[0].agent.position))
    occ = OccupancyMap((float(p[0]), float(p[2])))
    with np.errstate(all="raise"):  # a NaN or inf pixel reaching the arithmetic would raise here
        occ.integrate(frames[2])
    assert occ.floor.any()


def test_a_frame_without_valid_depth_changes_only_where_the_agent_stands(frames: list[Observation]) -> None:
    p = ros_to_thor_points(np.array(frames[0].agent.position))
    occ = OccupancyMap((float(p[0]), float(p[2])))
    blank = dataclasses.replace(frames[0], depth=np.zeros((H, W), dtype=np.float32))
    occ.integrate(blank)
    assert not occ.floor.any() and not occ.obstacle.any() and not occ.wall.any() and occ.stood.any()
