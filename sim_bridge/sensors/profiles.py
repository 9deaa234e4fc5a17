"""Named sensor profiles: what a real RGB-D camera, a robot's pose estimate and a learned
segmenter do to the perfect frames a simulator renders (issues 14 and 31).

A profile is data (frozen dataclasses), applied by ``sim_bridge.sensors.noise.SensorNoise``;
``ideal`` is the identity. Profiles: ``ideal``; ``realistic`` (a localised robot with a D435-class
camera and an open-vocabulary detector); ``odom-only`` (the same camera and detector on a robot
without a localiser: the ``map`` pose is odometry and drifts without bound; a stress test);
``harsh`` (a poor camera, a slipping base, no localiser, a weak detector). The numbers and where
they come from:

- depth (active stereo, RealSense D435-class): sigma(z) = k z^2. Intel's depth-RMS formula
  (Grunnet-Jepsen et al., "Tuning depth cameras for best performance", Intel RealSense white
  paper): RMS = z^2 * subpixel / (f * B), with subpixel 0.08 px (their typical figure), baseline
  B = 50 mm and f = 424 / tan(87 deg / 2) ~ 447 px at 848 px width, gives k ~ 3.6e-3 / m (1.4 cm
  at 2 m). The D435 datasheet bounds it at "<= 2% at 2 m" (k <= 0.01, 4 cm at 2 m). Before issue
  31 ``realistic`` used k = 0.005, read as "2% at 2 m = 2 cm", which is 1%: the formula's value
  replaces it. Returns are missing along depth discontinuities (the two views disagree there), on
  dark and specular surfaces (screens, mirrors, windows, glass) and out of range (about 0.2 m to
  6 m kept: nearer is below the D435's minimum distance, farther is too noisy to use). ``harsh``:
  k = 0.012, past the datasheet bound (dim, textureless rooms), range 0.3-4 m.
- pose, ``realistic`` (``LocaliserModel``; see pose.py): the ``map`` pose of a robot running a
  localiser (REP 105: no significant drift, discrete jumps). Odometry (2 cm per metre, 0.011 rad
  per radian turned, as below) accumulates between localiser updates, which come every 0.25 m
  travelled or 0.2 rad turned (Nav2 AMCL's ``update_min_d`` / ``update_min_a`` defaults) and pull
  the error back to the localiser's own: a bias varying over ~5 m of travel (sigma 2 cm per axis,
  at most 5 cm; sigma 0.75 deg, at most 1.5 deg) plus a fresh jitter per update (sigma 1 cm, at
  most 2.5 cm; 0.25 deg, at most 0.6 deg): errors of a few centimetres and 1-2 degrees, the figures
  issue 31 states for indoor localisers (AMCL, slam_toolbox, visual SLAM). For scale: Roewekaemper
  et al. ("On the position accuracy of mobile robot localization based on particle filters
  combined with scan matching", IROS 2012) reach millimetres at taught-in spots with MCL plus
  scan matching, so this is a localiser without such refinement. Relocalisation jumps: 3 per
  100 m travelled, 0.1-0.3 m, held for 2 m of travel, then back; the rate and size are the
  issue's figures (an assumption, not a measurement).
- pose, ``odom-only`` and ``harsh`` (no localiser): wheel odometry, translation drift of a few
  percent of the distance travelled and heading drift of about a degree per quarter turn,
  accumulated over the episode and never corrected (REP 105's ``odom``); ``harsh`` is a slipping
  base on rugs (5 cm per metre, 0.033 rad per radian).
- segmentation (a learned open-vocabulary detector + mask head, e.g. Grounding DINO + SAM, or
  Mask R-CNN): small instances are missed (under 40 pixels at 320x240), masks are eroded or bleed
  over edges by a pixel or two, labels are confused between look-alike types (a confusion table:
  mug/cup, pot/pan, fork/spoon, ...), spurious instances appear (0.1 per frame, each at a random
  place with a type of the frame and a name of its own, ``spurious|<step>.<k>``: false detections
  in two frames are unrelated; until 2026-11-29 the k-th of every frame was named alike, which an
  id-keyed tracker took for one object wandering the house), and instance ids
  are per frame (a new numbering every frame: nothing downstream may rely on them). These are the
  failure kinds such detectors show; the rates are chosen, not measured on a dataset.
- states (a state classifier on close instances, ``household.visible_states``: dirty, filled,
  on, open, cooked, broken): each reported state is wrong with probability 0.05 (``harsh``:
  0.15); chosen, not measured.

The segmenter keeps each segment's simulator object id in its label (``InstanceLabel.object_id``):
the embedded simulator addresses skills by that id, and a spurious segment gets an id no object
has. A real segmenter gives no such id; see the README for what still relies on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from sim_bridge.sensors.pose import LocaliserModel, PoseModel

# Look-alike asset types a segmenter confuses (each maps to what it is mistaken for).
CONFUSABLE: Mapping[str, str] = MappingProxyType({
    "Mug": "Cup", "Cup": "Mug", "Pot": "Pan", "Pan": "Pot", "Pen": "Pencil", "Pencil": "Pen",
    "Fork": "Spoon", "Spoon": "Fork", "Bowl": "Plate", "Plate": "Bowl", "ArmChair": "Sofa", "Sofa": "ArmChair",
    "SideTable": "Desk", "Desk": "SideTable", "Book": "Laptop", "Laptop": "Book", "Pillow": "Cloth",
    "Cloth": "Pillow", "SoapBottle": "SprayBottle", "SprayBottle": "SoapBottle", "Apple": "Tomato",
    "Tomato": "Apple", "CellPhone": "RemoteControl", "RemoteControl": "CellPhone",
})
# Surfaces a structured-light / stereo camera returns little depth from.
DARK_OR_SHINY: tuple[str, ...] = ("Television", "Mirror", "Window", "Laptop", "ShowerGlass", "ShowerDoor")


@dataclass(frozen=True)
class DepthModel:
    noise_k: float = 0.0  # sigma(z) = noise_k * z^2, metres
    edge_jump_m: float = 0.1  # a neighbour this much nearer or farther marks a depth edge
    edge_dropout: float = 0.0  # probability a depth-edge pixel returns nothing
    dark_dropout: float = 0.0  # probability a pixel of a DARK_OR_SHINY object returns nothing
    min_range_m: float = 0.0
    max_range_m: float = float("inf")


@dataclass(frozen=True)
class SegmentationModel:
    min_pixels: int = 0  # instances smaller than this are missed
    erode_p: float = 0.0  # probability an instance's mask loses its border pixels
    bleed_p: float = 0.0  # probability an instance's mask grows over its border
    border_px: int = 1  # how many pixels erode/bleed move an edge
    confusion_p: float = 0.0  # probability a confusable instance gets its look-alike's label
    confusion: Mapping[str, str] = field(default_factory=lambda: CONFUSABLE)
    spurious_per_frame: float = 0.0  # expected spurious instances per frame
    per_frame_ids: bool = False  # renumber instance ids every frame
    state_flip_p: float = 0.0  # probability a reported state (household.visible_states) is wrong

    # What a consumer must allow for (the agent's settings in planner/factory.py, the memory's in
    # evaluation/memory_eval.sensor_errors), read here so both ask the same question.
    @property
    def false_detections(self) -> bool:
        return self.spurious_per_frame > 0

    @property
    def imperfect_masks(self) -> bool:
        return self.erode_p > 0 or self.bleed_p > 0

    @property
    def label_confusion(self) -> bool:
        return self.confusion_p > 0


@dataclass(frozen=True)
class SensorProfile:
    name: str
    depth: DepthModel = DepthModel()
    pose: PoseModel = PoseModel()
    segmentation: SegmentationModel = SegmentationModel()

    @property
    def is_ideal(self) -> bool:
        return self == SensorProfile(self.name)


# The camera, the odometry and the detector of "realistic" (and "odom-only").
D435 = DepthModel(noise_k=0.0036, edge_dropout=0.5, dark_dropout=0.7, min_range_m=0.2, max_range_m=6.0)
ODOMETRY = PoseModel(drift_per_m=0.02, yaw_drift_per_rad=0.011)
DETECTOR = SegmentationModel(min_pixels=40, erode_p=0.3, bleed_p=0.2, confusion_p=0.05, spurious_per_frame=0.1,
                             per_frame_ids=True, state_flip_p=0.05)

PROFILES: Mapping[str, SensorProfile] = MappingProxyType({
    "ideal": SensorProfile("ideal"),
    "realistic": SensorProfile(
        "realistic",
        D435,
        PoseModel(drift_per_m=0.02, yaw_drift_per_rad=0.011, localiser=LocaliserModel()),
        DETECTOR),
    "odom-only": SensorProfile("odom-only", D435, ODOMETRY, DETECTOR),
    "harsh": SensorProfile(
        "harsh",
        DepthModel(noise_k=0.012, edge_dropout=0.9, dark_dropout=0.95, min_range_m=0.3, max_range_m=4.0),
        PoseModel(drift_per_m=0.05, yaw_drift_per_rad=0.033),
        SegmentationModel(min_pixels=120, erode_p=0.5, bleed_p=0.4, border_px=2, confusion_p=0.15,
                          spurious_per_frame=0.5, per_frame_ids=True, state_flip_p=0.15)),
})


def sensor_profile(name: str) -> SensorProfile:
    """The named profile; an unknown name is a ValueError naming the choices."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown sensor profile {name!r}; choose one of {', '.join(PROFILES)}") from None
