"""What a close look shows of an object's state (household.visible_states): reported by the
embedded simulator and THOR's conversion beside each label for instances that fill enough of the
frame, flipped by the sensor profiles at their rate, kept by the object tracker."""

from __future__ import annotations

import numpy as np

from evaluation.dev_set import default_episode_file
from evaluation.episodes import load_episode
from household.types import InstanceLabel
from household.visible_states import (MAX_STATE_RANGE_M, MIN_STATE_PIXELS, flip_states, states_from_metadata,
                                      visible_states, with_states)
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.sensors import SensorNoise, sensor_profile
from sim_bridge.sensors.profiles import SegmentationModel, SensorProfile
from sim_bridge.thor.conversion import InstanceIds, observation_from_event
from household.types import ActionFeedback


def test_flags_from_thor_metadata_only_where_the_object_can_have_them() -> None:
    mug = {"dirtyable": True, "isDirty": True, "canFillWithLiquid": True, "isFilledWithLiquid": True,
           "fillLiquid": "coffee", "openable": False, "isOpen": False}
    assert states_from_metadata(mug) == {"isDirty": True, "isFilledWithLiquid": "coffee"}
    empty = dict(mug, isFilledWithLiquid=False, fillLiquid=None)
    assert states_from_metadata(empty)["isFilledWithLiquid"] is False
    assert states_from_metadata({"objectType": "Wall"}) == {}


def test_only_a_close_enough_look_reports_states() -> None:
    flags = {"isDirty": True}
    assert visible_states(flags, MIN_STATE_PIXELS, MAX_STATE_RANGE_M) == (("isDirty", True),)
    assert visible_states(flags, MIN_STATE_PIXELS - 1, 1.0) == ()  # too few pixels to tell
    assert visible_states(flags, 5000, MAX_STATE_RANGE_M + 0.1) == ()  # too far
    ids = np.zeros((50, 50), np.int32)
    ids[:25, :25] = 1  # near and large
    ids[30:40, 30:40] = 2  # large but far
    ids[49, 49] = 3  # near but one pixel
    depth = np.full((50, 50), 1.0, np.float32)
    depth[30:40, 30:40] = 3.0
    labels = {1: InstanceLabel("Mug|1", "Mug"), 2: InstanceLabel("Cup|1", "Cup"), 3: InstanceLabel("Cup|2", "Cup")}
    out = with_states(ids, depth, labels, lambda oid: {"isDirty": oid == "Mug|1"})
    assert out[1].states == (("isDirty", True),) and out[2].states == () and out[3].states == ()
    assert with_states(ids, None, labels, lambda oid: {"isDirty": True}) == labels  # no depth: nothing close
    unlabelled = ids.copy()
    unlabelled[:5, :] = -1  # a backend's "no instance" pixels count for no object
    unlabelled[40:, :] = -1
    assert with_states(unlabelled, depth, labels, lambda oid: {"isDirty": oid == "Mug|1"}) == out


def test_flips_at_the_profile_rate_and_deterministically() -> None:
    states = (("isDirty", True), ("isFilledWithLiquid", "water"))
    flipped = [flip_states(states, 0.05, f"Mug|{i}", step) for i in range(40) for step in range(50)]
    wrong_dirty = sum(s[0][1] is False for s in flipped) / len(flipped)
    wrong_fill = sum(s[1][1] is False for s in flipped) / len(flipped)
    assert 0.03 < wrong_dirty < 0.07 and 0.03 < wrong_fill < 0.07
    assert flip_states(states, 0.05, "Mug|3", 7) == flip_states(states, 0.05, "Mug|3", 7)
    assert flip_states(states, 0.0, "Mug|3", 7) is states
    assert flip_states((("isFilledWithLiquid", False),), 1.0, "Cup|1", 1) == (("isFilledWithLiquid", "water"),)


def test_embedded_simulator_reports_states_of_close_instances() -> None:
    env = EmbeddedEnvironment(EmbeddedConfig(width=160, height=120))
    obs = env.reset(load_episode(default_episode_file()))
    table = env.table.objects
    reported = [lab for lab in obs.id_to_label.values() if lab.states]
    assert reported, "some instance in the first frame is close enough to tell its state"
    for lab in reported:
        obj = table[lab.object_id]
        flags = dict(lab.states)
        if "isOpen" in flags:
            assert flags["isOpen"] == obj.is_open
        if "isToggled" in flags:
            assert flags["isToggled"] == obj.is_toggled
        if "isDirty" in flags:
            assert flags["isDirty"] == obj.is_dirty
    # a sensor profile with every state wrong flips what it reports, and leaves the rest alone
    noisy = SensorNoise(None, SensorProfile("flip", segmentation=SegmentationModel(state_flip_p=1.0)), 0).degrade(obs)
    by_id = {lab.object_id: lab for lab in noisy.id_to_label.values()}
    for lab in reported:
        for (flag, value), (flag2, value2) in zip(lab.states, by_id[lab.object_id].states):
            assert flag == flag2 and (value2 != value)
    assert SensorNoise(None, sensor_profile("ideal")).degrade(obs) is obs


class _Event:
    """The fields of an ai2thor Event that observation_from_event reads."""

    def __init__(self, objects: list[dict]) -> None:
        self.metadata = {"agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0},
                                   "cameraHorizon": 0.0},
                         "cameraPosition": {"x": 0.0, "y": 1.5, "z": 0.0}, "screenWidth": 20, "screenHeight": 10,
                         "fov": 90.0, "objects": objects, "inventoryObjects": []}
        self.frame = None
        self.depth_frame = np.ones((10, 20), np.float32)
        seg = np.zeros((10, 20, 3), np.uint8)
        seg[:, :10] = (1, 2, 3)
        self.instance_segmentation_frame = seg
        self.color_to_object_id = {(1, 2, 3): "Mug|1"}


def test_thor_conversion_reports_states_from_the_metadata() -> None:
    mug = {"objectId": "Mug|1", "objectType": "Mug", "dirtyable": True, "isDirty": True,
           "canFillWithLiquid": True, "isFilledWithLiquid": False}
    obs = observation_from_event(_Event([mug]), 3, ActionFeedback(None, True), InstanceIds())
    (label,) = obs.id_to_label.values()
    assert label.object_id == "Mug|1" and dict(label.states) == {"isDirty": True, "isFilledWithLiquid": False}


def test_tracker_keeps_the_latest_close_look() -> None:
    from planner.object_tracker import ObjectTracker
    obs = observation_from_event(_Event([{"objectId": "Mug|1", "objectType": "Mug", "dirtyable": True,
                                          "isDirty": True}]), 4, ActionFeedback(None, True), InstanceIds())
    t = ObjectTracker(stride=1, min_pixels=1)
    t.integrate(obs)
    assert t.seen_state("Mug|1", "isDirty", since=4) == (True, True)
    assert t.seen_state("Mug|1", "isDirty", since=5) == (False, None)
