"""Two fidelity rules of the embedded simulator that decide what an agent can pick up (issue 30).

THOR's range: THOR's default visibility scheme (Collider) takes the objects whose colliders lie
within visibilityDistance of the agent's capsule, stretched up by that distance, so an object on
a bed or a low table counts its horizontal distance from the agent's axis, not its distance from
the camera 0.7 m above it (sim_bridge/embedded/env.py ``range_span``). Dev house 98's book
small|5|25 on a bed is out of 1.5 m from the camera at every free pose, within it from the capsule.

Television screens: a TV on a foot has a box as deep as the foot, but its body is a thin screen
lifted over the stand (sim_bridge/embedded/shapes.py ``panel_parts``). Dev house 97's plate
small|4|35 lies on the TV stand inside TV 4|0|1's box, under the screen: sealed in while the TV
was its box, picked up and put back now.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.audit_act import act_on_object
from household.house_data import load_house
from household.outcomes import Failure
from household.types import Action
from sim_bridge.embedded.env import AgentPose, EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.embedded.objects import SimObject
from sim_bridge.embedded.shapes import (PANEL_CLEARANCE_SHARE, PANEL_DEPTH_M, PANEL_MAX_CLEARANCE_SHARE,
                                        panel_parts)

DEV = "houses_dev.jsonl.gz"
BED_BOOK, PLATE_UNDER_TV, TV = "small|5|25", "small|4|35", "4|0|1"


@pytest.fixture(scope="module")
def house97() -> dict:
    return load_house(DEV, 97)


def _env(house: dict) -> EmbeddedEnvironment:
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    env.reset(house)
    return env


def _xz(pose: AgentPose) -> tuple[float, float]:
    return pose.x, pose.z


def _pose_at(obj: SimObject, horizontal: float, standing: bool = True) -> AgentPose:
    """A pose ``horizontal`` metres from obj's box along its local +x axis, facing it."""
    local = np.array([obj.size[0] / 2.0 + horizontal, 0.0, 0.0])
    p = obj.position + obj.rotation() @ local
    yaw = math.degrees(math.atan2(obj.position[0] - p[0], obj.position[2] - p[2])) % 360.0
    return AgentPose(float(p[0]), float(p[2]), yaw, 30.0, standing)


# ---- THOR's range --------------------------------------------------------------------------------
def test_range_is_horizontal_from_the_capsule_where_the_camera_distance_is_longer() -> None:
    env = _env(load_house(DEV, 98))
    book = env.table.objects[BED_BOOK]
    pose = _pose_at(book, 1.4)
    camera_distance = book.distance_to_point(env.camera_position(pose))
    assert camera_distance > env.config.reach  # out of reach as the camera measures it
    assert env.range_distance(book, pose) == pytest.approx(1.4, abs=1e-6)
    assert env.in_reach(BED_BOOK, pose)
    assert env.in_reach(BED_BOOK, _pose_at(book, 1.4, standing=False))  # a crouch moves the camera only
    assert not env.in_reach(BED_BOOK, _pose_at(book, 1.6))


def test_range_counts_height_beyond_the_capsule() -> None:
    """Below the bottom sphere's centre and above the stretched top, height counts again."""
    env = _env(load_house(DEV, 98))
    lo, hi = env.range_span()
    assert lo == pytest.approx(env.config.agent_radius)
    assert hi == pytest.approx(2.0 * env.config.body_height - env.config.agent_radius + env.config.reach)
    book = env.table.objects[BED_BOOK]
    top = float(book.position[1] + book.size[1] / 2.0)
    x, z = _xz(_pose_at(book, 1.2))
    # A segment whose foot is 0.9 m above the book's top, 1.2 m across: 3-4-5, 1.5 m.
    assert book.distance_to_upright(x, z, top + 0.9, top + 2.0) == pytest.approx(1.5, abs=1e-6)
    assert book.distance_to_upright(x, z, top - 0.5, top + 2.0) == pytest.approx(1.2, abs=1e-6)


def test_the_oracle_picks_up_a_book_on_a_bed_only_the_capsule_reaches() -> None:
    house = load_house(DEV, 98)
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    done = act_on_object(env, house, BED_BOOK)
    assert done.picked and done.put_back, done.reason


def test_out_of_range_is_refused_with_the_distance() -> None:
    env = _env(load_house(DEV, 98))
    book = env.table.objects[BED_BOOK]
    env.pose = _pose_at(book, 1.7)
    result = env.step(Action("PickupObject", BED_BOOK))
    assert not result.success and "out of reach (1.70 m > 1.50 m)" in result.error
    assert result.observation.feedback.failure == Failure.OUT_OF_REACH.value


# ---- television screens --------------------------------------------------------------------------
def test_a_screen_is_a_thin_slab_and_a_wall_set_stays_a_box() -> None:
    size = np.array([1.04, 0.82, 0.56])
    (screen,) = panel_parts(size, clearance=0.0) or ()
    assert screen.size[2] == pytest.approx(PANEL_DEPTH_M) and screen.size[0] == pytest.approx(1.04)
    lift = 0.82 / 2.0 - screen.size[1]  # the screen reaches the top; its foot is `lift` up
    assert screen.center[1] + screen.size[1] / 2.0 == pytest.approx(0.41)
    assert 0.82 - screen.size[1] == pytest.approx(PANEL_CLEARANCE_SHARE * 0.82) and lift < 0.41
    (raised,) = panel_parts(size, clearance=0.9) or ()
    assert 0.82 - raised.size[1] == pytest.approx(PANEL_MAX_CLEARANCE_SHARE * 0.82)  # a screen is kept
    assert panel_parts(np.array([1.08, 0.74, 0.067]), clearance=0.0) is None


def test_the_screen_clears_what_the_house_puts_under_it(house97) -> None:
    env = _env(house97)
    tv, plate = env.table.objects[TV], env.table.objects[PLATE_UNDER_TV]
    assert tv.parts is not None and len(tv.parts) == 1
    local = (plate.corners() - tv.position) @ tv.rotation()
    assert np.all(np.abs(local[:, [0, 2]]) <= tv.size[[0, 2]] / 2.0 + 1e-6)  # inside the TV's box
    screen = tv.parts[0]
    below = local[:, 1].max() <= screen.center[1] - screen.size[1] / 2.0
    beside = (local[:, 2].min() >= screen.size[2] / 2.0) or (local[:, 2].max() <= -screen.size[2] / 2.0)
    assert below or beside  # but clear of its screen (behind it, here)
    # Anything whose box crosses the screen's slab lies under the screen.
    for obj in env.table.objects.values():
        if not obj.affords("pickupable"):
            continue
        c = (obj.corners() - tv.position) @ tv.rotation()
        if (np.abs(c[:, [0, 2]]) < tv.size[[0, 2]] / 2.0).all() and c[:, 2].min() < PANEL_DEPTH_M / 2.0 < c[:, 2].max():
            assert c[:, 1].max() <= screen.center[1] - screen.size[1] / 2.0, obj.id
    assert PLATE_UNDER_TV not in {p.object_id for p in env.placement_problems}


def test_a_plate_under_a_tv_is_picked_up_and_put_back(house97) -> None:
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    done = act_on_object(env, house97, PLATE_UNDER_TV)
    assert done.picked and done.put_back, done.reason


def test_no_dev_house_seals_anything_in_a_television() -> None:
    """20 objects of the dev houses lay wholly inside a TV's box (placement_checks); none is
    inside a screen."""
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    for index in (3, 23, 33, 48, 79, 97):  # houses with objects inside a TV's box
        env.reset(load_house(DEV, index))
        sealed = [p for p in env.placement_problems if "Television" in p.message]
        assert not sealed, (index, sealed)


# ---- the agent's reach: from the camera, or as the simulator measures it ---------------------------------------
def test_the_agent_measures_reach_from_the_camera_unless_told_otherwise() -> None:
    """The HoloMind agent keeps reach from the camera on every backend (AgentConfig.reach_span
    says why); told the span, it measures as the simulator does."""
    from planner.agent_config import AgentConfig
    from planner.factory import make_agent

    env = _env(load_house(DEV, 98))
    assert make_agent("deterministic", env).config.reach_span is None
    assert AgentConfig(reach_span=env.range_span()).reach_span == pytest.approx((0.2, 3.1))


def test_the_navigator_measures_reach_from_the_span_when_given_one() -> None:
    from planner.navigation import Navigator
    from planner.object_memory import TrackedObject
    from planner.occupancy import OccupancyConfig, OccupancyMap

    book = TrackedObject("b", "Book", np.array([0.0, 0.6, 0.0]), np.array([-0.1, 0.58, -0.1]),
                         np.array([0.1, 0.62, 0.1]), 0, 0)
    occupancy = OccupancyMap((0.0, 0.0), OccupancyConfig())
    from_camera = Navigator(occupancy, camera_height=1.5)
    from_capsule = Navigator(occupancy, camera_height=1.5, reach_span=(0.2, 3.1))
    # 1.4 m across, 0.88 m below the camera: 1.65 m from it; 1.4 m from the capsule
    assert from_camera.reach_distance(book, 1.5, 0.0) == pytest.approx(math.hypot(1.4, 1.5 - 0.62))
    assert from_capsule.reach_distance(book, 1.5, 0.0) == pytest.approx(1.4)
    assert book.distance_to_upright(1.5, 0.0, 0.2, 3.1) == pytest.approx(1.4)
