"""The agent for a planner name: what the CLI, the ROS planner node, record/replay and the
benchmarks all build agents with (it used to live in the CLI, which libraries then imported).

``oracle`` is the privileged planner (it reads the simulator: privileged/oracle.py and
privileged/twin_oracle.py): a plugin named in ``PLUGINS`` and imported by that name only when it is
asked for, so nothing robot-side imports the privileged package and a robot deployment can leave
it out (as Nav2 loads its planners by plugin name); ``deterministic`` is the HoloMind
agent with rule-based roles; ``llm:<model>`` the same agent asking a litellm model in every role.
The HoloMind agent's ablations are built here as components (``planner.ablations.parts_for``:
a no-op critic, experience store or goal order in place of the full one) and injected.
Heavy modules are imported only when an agent is built, so checking a name is instant.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, cast

from household.errors import InputError
from planner.agent_config import ABLATIONS, OBJECT_MEMORIES, load_entry  # noqa: F401 (re-exported: the CLI's --ablate, --object-memory)

PLANNERS = ("oracle", "deterministic")  # plus "llm:<model>" (LLM_PREFIX + any litellm model string)
LLM_PREFIX = "llm:"
PLANNER_HELP = ("oracle, deterministic, llm:<model> (e.g. llm:openai/gpt-4o-mini), llm:local (a server on "
                "this machine: worldmind llm serve), llm:replay:<calls.jsonl> (a recorded run's answers)")
PRIVILEGED_PLANNERS = ("oracle",)  # read the simulator; everything else sees rendered observations only


def check_planner(name: str) -> None:
    """Raise InputError unless ``name`` is a planner make_agent can build: one of PLANNERS, or
    ``llm:`` followed by a non-empty model string (not checked further here: litellm knows its
    providers, and an unknown one fails on the first call and falls back per role)."""
    if name in PLANNERS:
        return
    if isinstance(name, str) and name.startswith(LLM_PREFIX):
        if not name[len(LLM_PREFIX):].strip():
            raise InputError(f"--planner {name!r}: llm: needs a litellm model string after the colon, "
                             "e.g. llm:openai/gpt-4o-mini")
        return
    raise InputError(f"unknown planner {name!r} (available planners: {PLANNER_HELP})")


def is_privileged(name: str) -> bool:
    """True for planners that read the simulator instead of observations (they need no rendering)."""
    return name in PRIVILEGED_PLANNERS


def _env_move_step(env: Any) -> float | None:
    """The backend's move step, so the agent's navigator plans in the steps the simulator takes."""
    step = getattr(getattr(env, "config", None), "move_step", None)
    return float(step) if isinstance(step, (int, float)) and step > 0 else None


def _profile_part(env: Any, part: str) -> Any:
    """The ``depth``, ``pose`` or ``segmentation`` model of the environment's sensor profile
    (``sim_bridge.sensors.SensorNoise.profile``); None where it states none (a plain backend)."""
    return getattr(getattr(env, "profile", None), part, None)


def _whole_number(name: str, value: Any, lo: int, hi: int, unit: str) -> None:
    """InputError naming ``name`` unless ``value`` is an int (not a bool) in [lo, hi]."""
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise InputError(f"{name}: expected a whole number of {unit} in [{lo}, {hi}], got {value!r}")


def _env_depth_noise(env: Any) -> float:
    """The depth camera's noise figure (k in sigma = k z^2) where the environment states one: a
    sensor profile in simulation (``sim_bridge.sensors.SensorNoise``); 0 (noise-free) otherwise."""
    k = getattr(_profile_part(env, "depth"), "noise_k", 0.0)
    return float(k) if isinstance(k, (int, float)) and k > 0 else 0.0


def _env_pose_tolerance(env: Any) -> float:
    """How far the pose the environment reports may be off (``AgentConfig.pose_tolerance``): the
    localiser's bias bound of a sensor profile that has one, 5 cm for odometry alone (the
    smear between nearby frames, which is what closes a narrow way on the map, not the drift
    over the episode), 0 for an exact pose."""
    pose = _profile_part(env, "pose")
    if pose is None or getattr(pose, "is_exact", True):
        return 0.0
    localiser = getattr(pose, "localiser", None)
    return float(getattr(localiser, "bias_max_m", 0.05)) if localiser is not None else 0.05


def _env_pose_correction(env: Any) -> bool:
    """``AgentConfig.pose_correction``: True where the environment's pose drifts and no localiser
    bounds it (a sensor profile whose pose model has drift and no ``localiser``: ``odom-only``,
    ``harsh``), else False."""
    pose = _profile_part(env, "pose")
    return pose is not None and not getattr(pose, "is_exact", True) and getattr(pose, "localiser", None) is None


def _env_confirm_views(env: Any) -> int:
    """``AgentConfig.confirm_views``: 2 where the environment's segmenter reports false detections
    (a sensor profile whose ``SegmentationModel.false_detections``), else 1."""
    seg = _profile_part(env, "segmentation")
    return 2 if getattr(seg, "false_detections", False) is True else 1


def _env_mask_edge_check(env: Any) -> bool:
    """``AgentConfig.mask_edge_check``: True where the environment's segmenter erodes or bleeds
    masks (a sensor profile whose ``SegmentationModel.imperfect_masks``), else False."""
    seg = _profile_part(env, "segmentation")
    return getattr(seg, "imperfect_masks", False) is True


def _env_detector_min_pixels(env: Any) -> int:
    """``AgentConfig.detector_min_pixels``: the smallest instance, in pixels, the environment's
    segmenter reports (a sensor profile's ``SegmentationModel.min_pixels``), else 0."""
    seg = _profile_part(env, "segmentation")
    n = getattr(seg, "min_pixels", 0)
    return int(n) if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0


def _deterministic_fallbacks() -> dict[str, Any]:
    """The rule-based roles each LLM role falls back to (keys: planner.llm.ROLE_NAMES), so a model
    that keeps answering invalid JSON makes an llm run degrade to the deterministic planner."""
    from planner.critic import RuleCritic
    from planner.deterministic import NearestGrounder, RecipeTranslator, RuleRefiner
    from planner.instruction_parser import InstructionParser
    from household.assets import default_catalog

    catalog = default_catalog()
    return {"decomposer": InstructionParser(catalog), "refiner": RuleRefiner(), "grounder": NearestGrounder(catalog),
            "translator": RecipeTranslator(), "critic": RuleCritic()}


# Agents that live outside the robot-side stack, by planner name: "module:function(env) -> agent".
PLUGINS: dict[str, str] = {"oracle": "privileged.twin_oracle:make_oracle"}


def _plugin(name: str) -> Any:
    """The builder a plugin name stands for, imported now; InputError where it is not installed."""
    try:
        return load_entry(PLUGINS[name])
    except ModuleNotFoundError as exc:
        package = PLUGINS[name].partition(":")[0].split(".")[0]
        raise InputError(f"--planner {name}: needs the {package!r} package, which reads the "
                         f"simulator and is not installed here ({exc})") from None


def make_agent(name: str, env: Any, *, instruction_kind: str = "detailed", ablate: Iterable[str] = (),
               experience_path: str | Path | None = None, llm_config: str | Path | None = None,
               depth_noise_k: float | None = None, pose_tolerance: float | None = None,
               confirm_views: int | None = None, mask_edge_check: bool | None = None,
               pose_correction: bool | None = None, object_memory: str = "tracker",
               detector_min_pixels: int | None = None) -> Any:
    """The agent for a ``--planner`` name. ``env`` is used by the oracle (it plans on the
    simulator) and, for the others, only for its move step and its sensor profile's depth
    noise. ``experience_path`` is the persisted experience pool (None: in memory for this agent
    only); ``llm_config`` is the LLM config file for ``llm:<model>`` (see
    planner.llm.factory.load_llm_config); ``depth_noise_k`` is the depth camera's noise figure
    (sigma = k z^2) where no environment states it (a robot's datasheet; None: the environment's);
    likewise ``pose_tolerance`` (metres the pose may be off frame to frame: the localiser's stated
    accuracy), ``confirm_views`` (views an object needs before it is believed: 2 for a
    detector with false detections), ``mask_edge_check`` (True behind a segmenter whose masks
    bleed over silhouettes) and ``pose_correction`` (True on a robot without a localiser: the agent
    registers depth against its own map; None: where the environment's pose model has no localiser);
    ``object_memory`` what the agent grounds objects through (``AgentConfig.object_memory``);
    ``detector_min_pixels`` the smallest instance the robot's detector reports (its stated
    figure; None: the environment's sensor profile's, 0 without one)."""
    check_planner(name)
    ablate = frozenset(ablate)
    if name == "oracle":
        if ablate:
            raise InputError(f"--ablate {', '.join(sorted(ablate))}: ablations apply to deterministic and llm: "
                             "planners, not to the oracle")
        return _plugin("oracle")(env)
    unknown = sorted(ablate - set(ABLATIONS))
    if unknown:
        raise InputError(f"--ablate: unknown ablation {', '.join(map(repr, unknown))} "
                         f"(available: {', '.join(ABLATIONS)})")
    from planner.ablations import parts_for
    from planner.critic import ExperiencePool
    from planner.agent_config import AgentConfig
    from planner.holomind import HoloMindAgent

    options: dict[str, Any] = {"ablate": ablate, "instruction_kind": instruction_kind}
    move_step = _env_move_step(env)
    if move_step is not None:
        options["move_step"] = move_step
    if depth_noise_k is not None and (not isinstance(depth_noise_k, (int, float)) or not 0 <= depth_noise_k < 1):
        raise InputError(f"depth_noise_k: expected a number in [0, 1) (sigma = k z^2, metres), got {depth_noise_k!r}")
    options["depth_noise_k"] = _env_depth_noise(env) if depth_noise_k is None else float(depth_noise_k)
    if pose_tolerance is not None and (not isinstance(pose_tolerance, (int, float)) or not 0 <= pose_tolerance < 0.2):
        raise InputError(f"pose_tolerance: expected metres in [0, 0.2) (how far the pose may be off frame to frame), "
                         f"got {pose_tolerance!r}")
    if confirm_views is not None:
        _whole_number("confirm_views", confirm_views, 1, 10, "views")
    if detector_min_pixels is not None:
        _whole_number("detector_min_pixels", detector_min_pixels, 0, 10_000, "pixels")
    options["detector_min_pixels"] = (_env_detector_min_pixels(env) if detector_min_pixels is None
                                      else detector_min_pixels)
    options["pose_tolerance"] = _env_pose_tolerance(env) if pose_tolerance is None else float(pose_tolerance)
    options["confirm_views"] = _env_confirm_views(env) if confirm_views is None else confirm_views
    options["mask_edge_check"] = _env_mask_edge_check(env) if mask_edge_check is None else bool(mask_edge_check)
    options["pose_correction"] = _env_pose_correction(env) if pose_correction is None else bool(pose_correction)
    options["object_memory"] = object_memory
    try:
        config = AgentConfig(**options)
    except ValueError as exc:  # a setting AgentConfig refuses (an unknown object memory): bad input
        raise InputError(str(exc)) from None
    try:
        experience = ExperiencePool.load(experience_path)
    except ValueError as exc:  # a corrupt or foreign pool file: bad input, not a crash
        raise InputError(f"--experience: {exc}") from None
    parts = parts_for(config.ablate, experience)  # under "episodic" the pool is left unused
    if name == "deterministic":
        return HoloMindAgent(config, parts=parts)
    from planner.llm import make_llm_roles, model_spec_from_planner

    try:
        spec = model_spec_from_planner(name)
        # check_planner let only "llm:<model>" through to here, so spec is a model string
        roles = make_llm_roles(cast(str, spec), _deterministic_fallbacks(), config_path=llm_config)
    except (ValueError, TypeError) as exc:  # bad config file contents or fields
        raise InputError(f"--planner {name}: {exc}") from None
    return HoloMindAgent(config, roles=roles, parts=parts, name=f"llm:{spec}")
