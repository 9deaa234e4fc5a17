"""Named sensor profiles: what a real RGB-D camera, wheel odometry and a learned segmenter do to
the perfect frames a simulator renders (issue 14).

Every figure before this used perfect depth, perfect pose and ground-truth segmentation with ids
stable across frames; a robot has none of these. A profile is data (frozen dataclasses), applied
by ``sim_bridge.sensors.noise.SensorNoise``; ``ideal`` is the identity. The numbers and where
they come from:

- depth (structured light / active stereo, RealSense D435-class): the error of stereo depth grows
  with the square of the distance, sigma(z) = k z^2 (Intel quotes about 2% RMS at 2 m for the
  D435, i.e. k ~ 0.005 / m: 2 cm at 2 m); returns are missing along depth discontinuities (the two
  views disagree there), on dark and specular surfaces (screens, mirrors, windows, glass) and out
  of range (D435: about 0.2 m to 6 m usable indoors).
- pose (wheel odometry on a mobile base): translation drift of a few percent of the distance
  travelled and heading drift of about a degree per quarter turn, accumulated over the episode;
  ``harsh`` is a slipping base on rugs.
- segmentation (a learned instance segmenter such as Mask R-CNN or SAM + a classifier): small
  instances are missed, masks are eroded or bleed over edges by a pixel or two, labels are
  confused between look-alike types (a confusion table), spurious instances appear, and instance
  ids are per frame (a new numbering every frame: nothing downstream may rely on them).

The segmenter keeps each segment's simulator object id in its label (``InstanceLabel.object_id``):
the embedded simulator addresses skills by that id, and a spurious segment gets an id no object
has. A real segmenter gives no such id; see the README for what still relies on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

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
class PoseModel:
    drift_per_m: float = 0.0  # sigma of the translation error added per metre travelled, metres
    yaw_drift_per_rad: float = 0.0  # sigma of the heading error added per radian turned, radians


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


@dataclass(frozen=True)
class SensorProfile:
    name: str
    depth: DepthModel = DepthModel()
    pose: PoseModel = PoseModel()
    segmentation: SegmentationModel = SegmentationModel()

    @property
    def is_ideal(self) -> bool:
        return self == SensorProfile(self.name)


PROFILES: Mapping[str, SensorProfile] = MappingProxyType({
    "ideal": SensorProfile("ideal"),
    "realistic": SensorProfile(
        "realistic",
        DepthModel(noise_k=0.005, edge_dropout=0.5, dark_dropout=0.7, min_range_m=0.2, max_range_m=6.0),
        PoseModel(drift_per_m=0.02, yaw_drift_per_rad=0.011),
        SegmentationModel(min_pixels=40, erode_p=0.3, bleed_p=0.2, confusion_p=0.05, spurious_per_frame=0.1,
                          per_frame_ids=True)),
    "harsh": SensorProfile(
        "harsh",
        DepthModel(noise_k=0.012, edge_dropout=0.9, dark_dropout=0.95, min_range_m=0.3, max_range_m=4.0),
        PoseModel(drift_per_m=0.05, yaw_drift_per_rad=0.033),
        SegmentationModel(min_pixels=120, erode_p=0.5, bleed_p=0.4, border_px=2, confusion_p=0.15,
                          spurious_per_frame=0.5, per_frame_ids=True)),
})


def sensor_profile(name: str) -> SensorProfile:
    """The named profile; an unknown name is a ValueError naming the choices."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown sensor profile {name!r}; choose one of {', '.join(PROFILES)}") from None
