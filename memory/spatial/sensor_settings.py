"""The spatial memory's settings for the sensors that feed it (issue 31).

Exact frames (ground-truth masks, exact depth and pose) want the memory's defaults. A robot's
frames do not: its depth is noisy, its localised pose is off by a few centimetres and a degree or
two (differently at every place), and a learned detector reports things that are not there,
bleeds masks over silhouettes and now and then names a look-alike (a mug a cup). Each of those
needs one setting, and they belong together, so a robot launch or an evaluation states what its
sensors do (``SensorErrors``) and gets them all from ``memory_config_for``:

- false detections: an object counts once ``DETECTOR_MIN_OBSERVATIONS`` segments were associated
  with it (a false detection lands somewhere new every frame);
- imperfect masks: boxes from the voxels seen at least twice (``MemoryConfig.box_min_hits``), and
  perception drops mask pixels the depth puts apart from their object
  (``PerceptionConfig.mask_edge_check``, set by the caller that builds perception);
- label confusion: association may outvote a label flip (``label_mode="soft"``), so one mug
  called a cup in one frame in twenty does not become a second object;
- depth noise and pose error: the free-space test widens its depth margin by three sigma and
  looks for the object within the pose error around where it was stored before it calls it gone
  (``FreeSpaceConfig``), and association accepts a view that puts an object up to twice the pose
  error away from where another view put it (``AssociationConfig.pose_margin_m``).

Measured with ``worldmind memory-eval --sensors realistic`` (privileged explorer; README): dev
house 0, on which the values were chosen, recall of seen objects 0.61 -> 0.93, precision 0.32 ->
0.93, centroid error 0.19 -> 0.12 m.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from memory.spatial.memory import MemoryConfig

DETECTOR_MIN_OBSERVATIONS = 3  # views before a detector's object counts (2 left precision 0.82 on house 0)


@dataclass(frozen=True)
class SensorErrors:
    """What the frames fed to the memory get wrong. Zeros and False: exact frames."""

    depth_noise_k: float = 0.0  # sigma(z) = k z^2, metres (a datasheet figure; 3.6e-3 for a D435)
    pose_tolerance_m: float = 0.0  # how far the map pose may be off, metres (a localiser's accuracy)
    yaw_tolerance_deg: float = 0.0  # how far its heading may be off, degrees
    false_detections: bool = False  # the segmenter reports things that are not there
    imperfect_masks: bool = False  # its masks miss or bleed over an object's edge
    label_confusion: bool = False  # it names look-alikes for each other now and then

    def __post_init__(self) -> None:
        for name in ("depth_noise_k", "pose_tolerance_m", "yaw_tolerance_deg"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0.0 <= value < 1e3):
                raise ValueError(f"SensorErrors.{name}: expected a non-negative number, got {value!r}")

    @property
    def exact(self) -> bool:
        return self == SensorErrors()

    @property
    def learned_segmenter(self) -> bool:
        return self.false_detections or self.imperfect_masks or self.label_confusion


def memory_config_for(errors: SensorErrors, base: MemoryConfig | None = None) -> MemoryConfig:
    """``base`` (default: ``MemoryConfig()``) with the settings ``errors`` call for; exact
    frames return it unchanged. An explicit ``min_observations`` above the detector's is kept."""
    cfg = base or MemoryConfig()
    if errors.exact:
        return cfg
    assoc, free = cfg.association, cfg.free_space
    if errors.label_confusion:
        assoc = replace(assoc, label_mode="soft")
    if errors.pose_tolerance_m > 0:
        assoc = replace(assoc, pose_margin_m=2.0 * errors.pose_tolerance_m)
    free = replace(free, depth_noise_k=errors.depth_noise_k, pose_tolerance_m=errors.pose_tolerance_m,
                   yaw_tolerance_deg=errors.yaw_tolerance_deg)
    return replace(cfg, association=assoc, free_space=free,
                   min_observations=max(cfg.min_observations, DETECTOR_MIN_OBSERVATIONS)
                   if errors.false_detections else cfg.min_observations,
                   box_min_hits=max(cfg.box_min_hits, 2) if errors.learned_segmenter else cfg.box_min_hits)
