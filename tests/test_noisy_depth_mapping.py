"""Behaviour tests for mapping with a noisy depth camera (sigma = k z^2, ``DepthModel.noise_k``).

The frames are exact ray casts (``test_holomind_components.synthetic_observation``) degraded by
the project's own sensor model (``SensorNoise`` with a depth-noise-only profile), so what is
tested is the occupancy map and the object tracker against the noise the agent really gets.
With a noise-free sensor both keep their one-return rules; those are tested in
test_holomind_components and must not change here (k = 0 is checked against them below).
"""

from __future__ import annotations

import numpy as np

from household.types import InstanceLabel, Observation
from planner.object_tracker import ObjectTracker
from planner.occupancy import OccupancyConfig, OccupancyMap
from sim_bridge.sensors import SensorNoise
from sim_bridge.sensors.profiles import DepthModel, SensorProfile
from tests.test_holomind_components import BOX_HI, BOX_LO, cell_centres, rect_distance, synthetic_observation

K = 0.005  # above the "realistic" profile's depth noise (0.0036), with its range (a return from 80 m of floor with
# sigma = k z^2 could land anywhere; a real camera gives none, as the profile's max range says)
NOISY = SensorProfile("depth-noise", DepthModel(noise_k=K, max_range_m=6.0))


def noisy_frames(obs: Observation, n: int, seed: int = 0) -> list[Observation]:
    noise = SensorNoise(None, NOISY, seed=seed)
    return [noise.degrade(obs) for _ in range(n)]


def test_noisy_far_floor_stays_floor_when_the_map_knows_the_noise() -> None:
    """An empty room seen with a level camera: floor out to 7 m. One-return-is-an-obstacle turns
    far floor into obstacles; with the noise figure, none appear and the floor is still mapped."""
    frame = synthetic_observation(0.0, 0.0, 0.0, 10.0, [])
    frames = noisy_frames(frame, 6)
    naive = OccupancyMap((0.0, 0.0), OccupancyConfig(size=20.0))
    aware = OccupancyMap((0.0, 0.0), OccupancyConfig(size=20.0, depth_noise_k=K))
    for f in frames:
        naive.integrate(f)
        aware.integrate(f)
    assert naive.obstacle.sum() > 20  # the failure this guards against is real at this noise
    assert aware.obstacle.sum() == 0
    assert aware.floor.sum() >= 0.9 * naive.floor.sum()
    far = cell_centres(aware, aware.floor)
    assert far[:, 1].max() > 5.0


def test_a_real_box_is_still_an_obstacle_under_noise() -> None:
    frame = synthetic_observation(0.0, 0.0, 0.0, 30.0, [(BOX_LO, BOX_HI, 1)])
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=16.0, depth_noise_k=K))
    for f in noisy_frames(frame, 4):
        occ.integrate(f)
    obstacles = cell_centres(occ, occ.obstacle)
    assert len(obstacles) > 20
    assert rect_distance(obstacles, (BOX_LO[0], BOX_LO[2]), (BOX_HI[0], BOX_HI[2])).max() <= 0.11
    # its near face is covered across its width
    near = obstacles[obstacles[:, 1] < BOX_LO[2] + 0.15]
    assert near[:, 0].min() <= -0.2 and near[:, 0].max() >= 0.2
    # and the robot's free grid keeps its radius from the faces the camera saw, as without noise
    grid = occ.free_grid()
    free = cell_centres(occ, grid.mask)
    near_front = free[(free[:, 1] < 2.3) & (np.abs(free[:, 0]) < 1.0) & (free[:, 1] > 1.0)]
    assert rect_distance(near_front, (BOX_LO[0], BOX_LO[2]), (BOX_HI[0], BOX_HI[2])).min() > occ.config.robot_radius
    assert grid.is_free(0.0, 1.0) and grid.is_free(1.0, 2.2)
    assert not grid.is_free(0.0, 1.85) and not grid.is_free(0.0, 2.25)


def test_a_blocked_move_stays_blocked_when_the_floor_is_seen_again() -> None:
    """Bumps are not depth evidence: floor returns counted later do not clear them."""
    frame = synthetic_observation(0.0, 0.0, 0.0, 30.0, [])
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=16.0, depth_noise_k=K))
    occ.mark_blocked(0.0, 0.0, 0.0, 0.0, 1.0)  # a 1 m move failed: the body (radius 0.2) hit at 1.2 m
    i, j = occ.cell(0.0, 1.2)
    assert occ.obstacle[i, j]
    for f in noisy_frames(frame, 3):
        occ.integrate(f)
    assert occ.floor[i, j] and occ.obstacle[i, j]


def test_without_noise_the_map_is_the_one_return_map() -> None:
    """k = 0 takes the noise-free path: the same layers as a map built without the option."""
    frame = synthetic_observation(0.0, 0.0, 0.0, 30.0, [(BOX_LO, BOX_HI, 1)])
    plain = OccupancyMap((0.0, 0.0), OccupancyConfig(size=16.0))
    zero = OccupancyMap((0.0, 0.0), OccupancyConfig(size=16.0, depth_noise_k=0.0))
    plain.integrate(frame)
    zero.integrate(frame)
    for layer in ("floor", "obstacle", "wall"):
        assert np.array_equal(getattr(plain, layer), getattr(zero, layer)), layer


# ---- the tracker ----------------------------------------------------------------------------

MUG = InstanceLabel("Mug|1", "Mug")
MUG_LO, MUG_HI = (-0.06, 0.75, 0.0), (0.06, 0.85, 0.12)  # a mug-sized box on a table height


def mug_seen_from(distance: float) -> Observation:
    """The mug straight ahead at ``distance`` metres (camera at z = -distance)."""
    return synthetic_observation(0.0, -distance, 0.0, 20.0, [(MUG_LO, MUG_HI, 7)], labels={7: MUG},
                                 width=320, height=240)


def box_error(tracker: ObjectTracker) -> float:
    rec = tracker.get(MUG.object_id)
    assert rec is not None
    return float(max(np.abs(rec.box_min - np.array(MUG_LO)).max(), np.abs(rec.box_max - np.array(MUG_HI)).max()))


def test_a_close_look_replaces_the_box_seen_from_afar() -> None:
    far = noisy_frames(mug_seen_from(4.5), 3, seed=1)
    near = noisy_frames(mug_seen_from(1.0), 1, seed=2)[0]
    aware = ObjectTracker(stride=1, depth_noise_k=K)
    naive = ObjectTracker(stride=1)
    for f in far + [near]:
        aware.integrate(f)
        naive.integrate(f)
    # the far views' noise (sigma ~ 0.1 m along the ray) stays in the one-return box for good
    assert box_error(naive) > 0.15
    assert box_error(aware) < 0.06
    # and a later far view does not blow the close box up again
    aware.integrate(noisy_frames(mug_seen_from(4.5), 1, seed=3)[0])
    assert box_error(aware) < 0.06


def test_an_object_seen_elsewhere_from_afar_moves_its_box() -> None:
    """A noisier view is ignored only while it agrees with the box: someone moved the mug 1 m and
    the next look is from 4 m away; the box follows it."""
    tracker = ObjectTracker(stride=1, depth_noise_k=K)
    tracker.integrate(noisy_frames(mug_seen_from(1.0), 1, seed=4)[0])
    assert box_error(tracker) < 0.06
    moved = synthetic_observation(1.0, -4.0, 0.0, 20.0, [((0.94, 0.75, 0.0), (1.06, 0.85, 0.12), 7)],
                                  labels={7: MUG}, width=320, height=240)
    tracker.integrate(noisy_frames(moved, 1, seed=5)[0])
    rec = tracker.get(MUG.object_id)
    assert rec is not None and abs(float(rec.centroid[0]) - 1.0) < 0.1


def test_tracker_without_noise_is_the_one_return_tracker() -> None:
    frames = [mug_seen_from(2.0), mug_seen_from(1.0)]
    plain, zero = ObjectTracker(stride=1), ObjectTracker(stride=1, depth_noise_k=0.0)
    for f in frames:
        plain.integrate(f)
        zero.integrate(f)
    a, b = plain.get(MUG.object_id), zero.get(MUG.object_id)
    assert a is not None and b is not None
    assert np.array_equal(a.box_min, b.box_min) and np.array_equal(a.box_max, b.box_max)
