"""Memory evaluation on the embedded simulator: explore a house, score the spatial memory
against ground truth, move objects, explore again, score again.

The explorer is an *oracle* and privileged: it teleports the agent (``env.pose``) to free cells
of a coarse grid in every room and turns 360 degrees at each, at each camera horizon, taking
rendered observations through ``env.step(RotateRight)``. Perception gets ground-truth instance
segmentation (the simulator's instance ids with their types); the memory associates by geometry
and labels only, never by the simulator's object ids. The object moves are privileged too (the
object table's pickup/put). Ground truth (evaluation_only): ``env.table``.

    run_memory_eval("houses_dev.jsonl.gz", 0, "runs/memory_eval")      # from Python
    python -m evaluation.memory_eval --house houses_dev.jsonl.gz --index 0-2 --out DIR
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence, cast

import numpy as np

from evaluation.memory_agent_explorer import explore_by_agent, walk_timing
from evaluation.memory_frames import Exploration, feed_frame
from evaluation.memory_metrics import GTObject, make_queries, match, object_metrics, query_metrics
from evaluation.report import scrub
from household.atomic_io import atomic_write_bytes, atomic_write_text, writable_out_dir
from memory.pipeline import MemoryPipeline
from memory.spatial.memory import MemoryConfig, SpatialMemory
from memory.spatial import store as memory_store
from memory.spatial.query import Region
from memory.spatial.sensor_settings import SensorErrors, memory_config_for
from perception.encoders import Encoders, make_encoders
from sim_bridge.embedded.collision import CollisionMap
from sim_bridge.embedded.env import AgentPose, EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.embedded.house_geometry import HouseLayout
from household.house_data import HouseError, load_house
from sim_bridge.embedded.interactions import ObjectTable, find_placement, find_spot
from sim_bridge.sensors import SensorNoise, sensor_profile
from sim_bridge.sensors.profiles import PROFILES, PoseModel, SensorProfile
from household.frames import thor_to_ros_points
from household.receptacle_filters import FIXED_RECEPTACLE
from household.types import Action, point_in_polygon

Progress = Callable[[str], None]
EXPLORERS = ("oracle", "agent")

# Every function here takes an environment that run_memory_eval has reset, so its layout,
# collision map and object table are set (the casts below say so to the type checker).


@dataclass
class MemoryEvalConfig:
    grid_step: float = 1.0  # metres between viewpoints
    horizons: tuple[float, ...] = (30.0, 0.0)  # camera pitch (down positive) at each viewpoint
    rotations: int = 12  # views per 360-degree turn
    match_distance: float = 0.5
    duplicate_distance: float = 1.0
    move_objects: int = 5
    seed: int = 0
    max_viewpoints: int | None = None  # cap (tests); None = all
    width: int = 320
    height: int = 240
    sensors: str = "ideal"  # sensor profile of what the memory is fed (sim_bridge/sensors/profiles.py)
    # False: the profile's pose model is zeroed, to see the memory under the depth and segmentation
    # models alone (what a pose corrected against the map would give; that correction is not built)
    pose_drift: bool = True
    # True: the memory and perception get the settings the profile's sensors call for
    # (memory.spatial.sensor_settings); False: the exact-frame defaults whatever the profile
    sensor_settings: bool = True
    # "oracle": the privileged explorer (teleport to a grid of viewpoints, turn round at each);
    # "agent": the HoloMind agent's own frontier exploration (evaluation.memory_agent_explorer)
    explorer: str = "oracle"
    agent_step_cap: int = 3000  # "agent": steps per exploration (each phase) at most
    agent_survey: bool = True  # "agent": after the frontiers, look from close by at the open surfaces seen


def sensor_errors(profile: SensorProfile) -> SensorErrors:
    """What a sensor profile's frames get wrong, as the memory's settings need it: the depth
    model's k; the localiser's bias plus jitter bounds (position and heading) where the profile
    has one, else 5 cm and a full turn's heading drift (odometry alone: the smear between nearby
    views, not the drift over the episode, which no margin covers); the segmenter's failure kinds."""
    pose, seg = profile.pose, profile.segmentation
    if pose.is_exact:
        tol, yaw = 0.0, 0.0
    elif pose.localiser is not None:
        loc = pose.localiser
        tol = loc.bias_max_m + loc.jitter_max_m
        yaw = math.degrees(loc.bias_yaw_max_rad + loc.jitter_yaw_max_rad)
    else:
        tol, yaw = 0.05, math.degrees(pose.yaw_drift_per_rad * 2.0 * math.pi)
    return SensorErrors(depth_noise_k=profile.depth.noise_k, pose_tolerance_m=tol, yaw_tolerance_deg=yaw,
                        false_detections=seg.false_detections, imperfect_masks=seg.imperfect_masks,
                        label_confusion=seg.label_confusion)


def viewpoints(env: EmbeddedEnvironment, step: float) -> list[tuple[float, float]]:
    """Free THOR (x, z) cells of a grid in every room (at least one per room if any is free)."""
    free = cast(CollisionMap, env.collision).free_grid()
    out: list[tuple[float, float]] = []
    for room in cast(HouseLayout, env.layout).rooms:
        poly = list(room.polygon)
        xs, zs = [p[0] for p in poly], [p[1] for p in poly]
        for s in (step, step / 4.0):
            cells = [(float(x), float(z)) for x in np.arange(min(xs) + s / 2, max(xs), s)
                     for z in np.arange(min(zs) + s / 2, max(zs), s)
                     if point_in_polygon(x, z, poly) and free.is_free(x, z)]
            if cells:
                out.extend(cells if s == step else cells[len(cells) // 2:len(cells) // 2 + 1])
                break
    return out


def rooms_as_regions(env: EmbeddedEnvironment) -> list[Region]:
    """The house's rooms as memory regions in REP 103 (x, y)."""
    regions = []
    for room in cast(HouseLayout, env.layout).rooms:
        pts = thor_to_ros_points(np.array([[x, 0.0, z] for x, z in room.polygon]))
        regions.append(Region(room.id, room.room_type, tuple((float(p[0]), float(p[1])) for p in pts)))
    return regions


def ground_truth(env: EmbeddedEnvironment) -> list[GTObject]:
    """Every object in the scene (not held, not sliced away), in REP 103."""
    table = cast(ObjectTable, env.table)
    collision = cast(CollisionMap, env.collision)
    types = {r.id: r.room_type for r in cast(HouseLayout, env.layout).rooms}
    out = []
    for o in table.objects.values():
        if not o.active or o.is_picked_up:
            continue
        centre, _ = o.render_box()
        corners = thor_to_ros_points(o.corners())
        low = corners[np.argsort(corners[:, 2])[:4]][:, :2]
        order = np.argsort(np.arctan2(low[:, 1] - low[:, 1].mean(), low[:, 0] - low[:, 0].mean()))
        room = collision.room_at(float(o.position[0]), float(o.position[2]))
        parent = table.objects.get(o.parent) if o.parent else None
        out.append(GTObject(o.id, o.type, thor_to_ros_points(centre), thor_to_ros_points(o.position), low[order],
                            room, types.get(room) if room else None, parent.type if parent else None,
                            o.affords("pickupable")))
    return out


def explore(env: EmbeddedEnvironment, pipeline: MemoryPipeline, points: Sequence[tuple[float, float]],
            cfg: MemoryEvalConfig, visible: set[str], progress: Progress | None = None,
            noise: SensorNoise | None = None) -> Exploration:
    """Privileged oracle exploration: teleport to each point, turn around at each horizon. With
    ``noise`` the memory gets degraded frames; what counts as seen is still decided on the perfect
    frame (what perception would have found with a perfect sensor), so recall is measured against
    the same objects under every profile."""
    log = Exploration()
    turn = Action("RotateRight", args={"degrees": 360.0 / cfg.rotations})
    last = time.monotonic()
    for n, (x, z) in enumerate(points):
        for horizon in cfg.horizons:
            env.pose = AgentPose(x, z, 0.0, horizon)
            for _ in range(cfg.rotations):
                t0 = time.perf_counter()
                clean = env.step(turn).observation
                obs = noise.degrade(clean) if noise is not None else clean
                log.render_s += time.perf_counter() - t0
                feed_frame(pipeline, obs, clean, noise is not None, visible, log)
        if progress and (time.monotonic() - last > 5.0 or n + 1 == len(points)):
            last = time.monotonic()
            progress(f"viewpoint {n + 1}/{len(points)}: {log.frames} frames, {len(pipeline.memory)} objects")
    return log


def move_objects(env: EmbeddedEnvironment, n: int, rng: np.random.Generator, visible: set[str]) -> list[dict[str, Any]]:
    """Privileged: move ``n`` visible pickupable objects onto visible receptacles, preferring
    another room. Returns what moved where."""
    table = cast(ObjectTable, env.table)
    collision = cast(CollisionMap, env.collision)
    room = {o.id: collision.room_at(float(o.position[0]), float(o.position[2])) for o in table.objects.values()}
    movable = [o for o in table.objects.values() if o.active and not o.is_picked_up and o.affords("pickupable")
               and o.id in visible and table.enclosed_by_closed(o) is None and not table.descendants(o.id)]
    targets = [o for o in table.objects.values() if o.active and o.id in visible and not (o.is_container and not o.is_open)
               and FIXED_RECEPTACLE.admits_receptacle(o.type, receptacle=o.affords("receptacle"),
                                                      pickupable=o.affords("pickupable"))]
    rng.shuffle(movable)
    moved: list[dict[str, Any]] = []
    for obj in movable:
        if len(moved) == n:
            break
        order = sorted(targets, key=lambda r: (room[r.id] == room[obj.id], float(rng.random())))
        for rec in order:
            if rec.id == obj.parent or not table.catalog.accepts(rec.type, obj.type):
                continue
            if find_placement(obj, rec, table.children(rec.id)) is None:
                continue
            before = thor_to_ros_points(obj.position)
            table.pickup(obj.id, obj.position)
            table.put(rec.id, find_spot)
            moved.append({"object_id": obj.id, "type": obj.type, "to": rec.id, "to_type": rec.type,
                          "from_ros": before.round(3).tolist(), "to_ros": thor_to_ros_points(obj.position).round(3).tolist(),
                          "distance_m": round(float(np.linalg.norm(thor_to_ros_points(obj.position) - before)), 3)})
            break
    return moved


def score(memory: SpatialMemory, env: EmbeddedEnvironment, visible: set[str],
          cfg: MemoryEvalConfig) -> tuple[dict[str, Any], Any, list[GTObject]]:
    gt = ground_truth(env)
    m = match(memory, gt, cfg.match_distance, cfg.duplicate_distance)
    metrics = object_metrics(m, gt, visible)
    metrics["queries"] = query_metrics(memory, make_queries(gt, visible), m)
    metrics["retired_objects"] = len(memory.objects("retired"))
    metrics["merged_objects"] = len(memory.objects("merged"))
    return metrics, m, gt


def _timing(log: Exploration) -> dict[str, Any]:
    f = max(log.frames, 1)
    return {"frames": log.frames, "skipped_frames": log.skipped, "render_ms_per_frame": 1e3 * log.render_s / f,
            "perception_ms_per_frame": 1e3 * log.perception_s / f, "memory_ms_per_frame": 1e3 * log.memory_s / f}


def run_memory_eval(house_file: str, index: int, out_dir: str | Path, *, config: MemoryEvalConfig | None = None,
                    memory_config: MemoryConfig | None = None, encoders: Encoders | None = None,
                    data_dir: str | None = None, progress: Progress | None = None,
                    save_memory: bool = False) -> dict[str, Any]:
    """Explore house ``index`` of ``house_file``, score, move objects, re-explore, score; writes
    memory_eval.json and memory_topdown.png (+ _moved) into ``out_dir`` and returns the JSON."""
    from evaluation.memory_plot import render_memory_png

    cfg = config or MemoryEvalConfig()
    out = Path(out_dir)
    house = load_house(house_file, index, data_dir)
    env = EmbeddedEnvironment(EmbeddedConfig(width=cfg.width, height=cfg.height, render=True))
    if cfg.explorer not in EXPLORERS:
        raise ValueError(f"explorer: expected one of {', '.join(EXPLORERS)}, got {cfg.explorer!r}")
    first_frame = env.reset(house)
    house_id = cast(HouseLayout, env.layout).house_id
    profile = sensor_profile(cfg.sensors)
    if not cfg.pose_drift:
        profile = replace(profile, pose=PoseModel())
    errors = sensor_errors(profile) if cfg.sensor_settings else SensorErrors()
    mcfg = memory_config_for(errors, memory_config or MemoryConfig())
    encoders = encoders or make_encoders("hash")
    pipeline = MemoryPipeline.build(encoders, mcfg, rooms_as_regions(env), mask_edge_check=errors.imperfect_masks)
    memory = pipeline.memory
    by_agent = cfg.explorer == "agent"
    points = [] if by_agent else viewpoints(env, cfg.grid_step)[:cfg.max_viewpoints]
    visible: set[str] = set()
    started = time.monotonic()
    noise = None if profile.is_ideal else SensorNoise(env, profile, seed=cfg.seed)

    def walk(phase: str, frame: Any) -> dict[str, Any]:
        """Explore once (the chosen explorer) and return its timing."""
        if by_agent:
            return walk_timing(explore_by_agent(env, pipeline, frame, cfg.agent_step_cap, visible, noise=noise,
                                                survey=cfg.agent_survey, episode_id=f"{house_id}-{phase}",
                                                progress=progress))
        return _timing(explore(env, pipeline, points, cfg, visible, progress, noise))

    timing = walk("explore", first_frame)
    first, m1, gt1 = score(memory, env, visible, cfg)
    first["timing"] = timing
    render_memory_png(out / "memory_topdown.png", memory, gt1, m1, visible, env, title=f"{house_id}: explored")
    result: dict[str, Any] = {
        "house_file": str(house_file), "index": index, "house_id": house_id,
        "privileged": ("the agent's own exploration (frontiers of its map, its planner, the profile's pose)"
                       if by_agent else "oracle explorer (teleport + 360 turns)") + ", oracle object moves"
                      + (", ground-truth instance segmentation" if cfg.sensors == "ideal" else
                         f"; sensors: {cfg.sensors} profile (noisy depth, "
                         f"{'noisy pose' if cfg.pose_drift else 'exact pose'}, imperfect per-frame segmentation)"),
        "config": asdict(cfg), "memory_config": asdict(mcfg), "sensor_errors": asdict(errors),
        "mask_edge_check": errors.imperfect_masks, "encoders": encoders.describe(),
        "viewpoints": len(points), "explored": first,
    }
    if cfg.move_objects > 0:
        moved = move_objects(env, cfg.move_objects, np.random.default_rng(cfg.seed), visible)
        # the agent starts its second walk where the first ended, with a new map: one turn's frame first
        timing2 = walk("re-explore", env.step(Action("RotateRight")).observation if by_agent else None)
        second, m2, gt2 = score(memory, env, visible, cfg)
        second["timing"] = timing2
        found = {gt2[g].object_id for g in m2.gt_of_mem if g >= 0}
        second["moved"] = moved
        second["moved_found_at_new_place"] = sum(mv["object_id"] in found for mv in moved)
        render_memory_png(out / "memory_topdown_moved.png", memory, gt2, m2, visible, env,
                          title=f"{house_id}: after moving {len(moved)} objects and re-exploring")
        result["after_move"] = second
    result["wall_time_s"] = round(time.monotonic() - started, 2)
    if save_memory:
        memory_store.save_memory(memory, out / "memory.npz")
    atomic_write_text(out / "memory_eval.json", json.dumps(scrub(result), indent=2) + "\n")
    return result


def _fmt(v: Any) -> str:
    return "n/a" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def summary_lines(result: dict[str, Any]) -> list[str]:
    timing = result.get("explored", {}).get("timing", {})
    how = (f"the agent's own exploration: {timing.get('agent_steps')} steps, {timing.get('path_m')} m walked, "
           f"{timing.get('surfaces_surveyed')} surfaces looked at, {timing.get('stop_reason')}"
           if "agent_steps" in timing else f"{result['viewpoints']} viewpoints")
    lines = [f"house {result['house_id']} (index {result['index']}), {how}"]
    for phase in ("explored", "after_move"):
        r = result.get(phase)
        if not r:
            continue
        q = r["queries"]
        lines.append(
            f"  {phase:10s} recall(visible) {_fmt(r['recall_visible'])} recall(all) {_fmt(r['recall_all'])} "
            f"precision {_fmt(r['precision'])} centroid err {_fmt(r['centroid_error_mean'])} m "
            f"duplicates {_fmt(r['duplicate_rate'])} | objects {r['memory_objects']} (gt {r['gt_objects']}, "
            f"visible {r['gt_visible']}) | frames {r['timing']['frames']}")
        lines.append("             queries top-1: " + ", ".join(
            f"{k} {_fmt(v['top1_accuracy'])} ({v['queries']})" for k, v in q.items() if k != "failures"))
        if phase == "after_move":
            lines.append(f"             moved {len(r['moved'])}, found at the new place {r['moved_found_at_new_place']}")
    return lines


# --- one house as an executor task (evaluation/executor.py) --------------------------------------
# The task runs run_memory_eval into a private temporary folder and hands back the result and the
# bytes of every file it wrote; the driver writes them into the house's output folder atomically,
# so a Ray worker on another node never writes into the driver's folder and a run killed mid-house
# leaves that house's earlier files whole.

_ENCODERS: dict[tuple[Any, ...], Any] = {}  # per process: encoders by spec (a CLIP model loads once)


@dataclass(frozen=True)
class MemoryEvalJob:
    house_file: str
    index: int
    config: Any  # MemoryEvalConfig
    voxel_size: float
    encoders: tuple[str, str | None, str | None]  # (text encoder, clip model, clip weights)
    data_dir: str | None = None
    save_memory: bool = False
    min_observations: int = 1  # MemoryConfig.min_observations


def encoders_for(spec: tuple[str, str | None, str | None]) -> Any:
    """make_encoders(*spec), built once per process (the driver seeds it with the ones it checked)."""
    from perception.encoders import make_encoders

    if spec not in _ENCODERS:
        _ENCODERS[spec] = make_encoders(*spec)
    return _ENCODERS[spec]


def run_memory_eval_job(job: MemoryEvalJob, progress: Any = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="worldmind-memeval-") as tmp:
        result = run_memory_eval(job.house_file, job.index, tmp, config=job.config,
                                 memory_config=MemoryConfig(voxel_size=job.voxel_size,
                                                            min_observations=job.min_observations),
                                 encoders=encoders_for(job.encoders), data_dir=job.data_dir,
                                 save_memory=job.save_memory, progress=progress)
        files = {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir()) if p.is_file()}
    return {"result": result, "files": files}


def write_outputs(out_dir: Path, files: dict[str, bytes]) -> None:
    """memory_eval.json last, so its presence means the house's files are complete."""
    for name in sorted(files, key=lambda n: n == "memory_eval.json"):
        atomic_write_bytes(out_dir / name, files[name])


def main_memory_eval(argv: Sequence[str] | None = None) -> int:
    """``worldmind memory-eval``: exit 0 on success, 2 on bad input."""
    from household.errors import InputError as CliError
    from household.selection import parse_indices
    from evaluation.executor import ExecutorError, Task
    from evaluation.executor_options import add_executor_options, executor_from_args

    ap = argparse.ArgumentParser(prog="worldmind memory-eval", description=__doc__.split("\n\n")[0])
    ap.add_argument("--house", default="houses_dev.jsonl.gz", help="houses file (.jsonl[.gz])")
    ap.add_argument("--index", default="0", help="house index or ranges, e.g. 0 or 0-2,5")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--grid-step", type=float, default=1.0)
    ap.add_argument("--horizons", default="30,0", help="camera pitches in degrees, down positive")
    ap.add_argument("--voxel-size", type=float, default=0.05)
    ap.add_argument("--move", type=int, default=5, help="objects to move before re-exploring (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--text-encoder", default="hash", help="hash | minilm (needs worldmind[text])")
    ap.add_argument("--clip-model", default=None, help="open_clip model name (needs worldmind[clip])")
    ap.add_argument("--clip-weights", default=None, help="checkpoint file, or 'random' (speed only)")
    ap.add_argument("--save-memory", action="store_true", help="also write memory.npz")
    ap.add_argument("--min-observations", type=int, default=1, metavar="N",
                    help="an object counts once N segments were associated with it (default 1: at once; at least "
                         "3 where the sensor profile's segmenter has false detections, unless "
                         "--exact-frame-settings); 2 or more drops a segmenter's one-frame false positives")
    ap.add_argument("--sensors", default="ideal", choices=tuple(PROFILES),
                    help="sensor profile of the frames the memory is fed (default: ideal)")
    ap.add_argument("--exact-frame-settings", action="store_true",
                    help="give the memory the settings for exact frames whatever --sensors says (default: the "
                         "profile's depth noise, pose error and segmenter failures set them; "
                         "memory/spatial/sensor_settings.py)")
    ap.add_argument("--explorer", default="oracle", choices=EXPLORERS,
                    help="oracle: teleport to a grid of viewpoints and turn round at each (privileged, default); "
                         "agent: the HoloMind agent's own frontier exploration with the profile's pose "
                         "(evaluation/memory_agent_explorer.py)")
    ap.add_argument("--agent-steps", type=int, default=MemoryEvalConfig.agent_step_cap, metavar="N",
                    help="--explorer agent: steps per exploration at most (default %(default)s)")
    ap.add_argument("--no-survey", action="store_true",
                    help="--explorer agent: stop when the map has no frontier left (default: then also look "
                         "from close by at every open surface seen)")
    ap.add_argument("--no-pose-drift", action="store_true",
                    help="zero the profile's pose error (drift and localiser): the memory under depth and "
                         "segmentation noise alone")
    add_executor_options(ap, unit="house")
    args = ap.parse_args(argv)
    failed = 0
    try:
        indices = parse_indices(args.index)
        horizons = tuple(float(h) for h in args.horizons.split(","))
        if not args.grid_step > 0 or not args.voxel_size > 0 or not all(math.isfinite(h) for h in horizons):
            raise CliError("--grid-step and --voxel-size must be positive, --horizons finite numbers")
        if args.agent_steps < 1:
            raise CliError(f"--agent-steps must be >= 1, got {args.agent_steps}")
        if args.min_observations < 1:
            raise CliError(f"--min-observations must be >= 1, got {args.min_observations}")
        spec = (args.text_encoder, args.clip_model, args.clip_weights)
        encoders_for(spec)  # bad encoder options fail here, before any house runs
        writable_out_dir(args.out)  # so does an --out that is a file, a device or a full disk
        cfg = MemoryEvalConfig(grid_step=args.grid_step, horizons=horizons, move_objects=args.move, seed=args.seed,
                               sensors=args.sensors, pose_drift=not args.no_pose_drift,
                               sensor_settings=not args.exact_frame_settings, explorer=args.explorer,
                               agent_step_cap=args.agent_steps, agent_survey=not args.no_survey)
        tasks = [Task(n, f"house {i}", MemoryEvalJob(args.house, i, cfg, args.voxel_size, spec, args.data_dir,
                                                      args.save_memory, args.min_observations))
                 for n, i in enumerate(indices)]
        executor = executor_from_args(args)
        try:
            for outcome in executor.run(run_memory_eval_job, tasks, progress=lambda t: (
                    lambda msg, i=t.payload.index: print(f"[house {i}] {msg}", file=sys.stderr))):  # noqa: B023 (i is bound as a default)
                i = outcome.task.payload.index
                if not outcome.ok:
                    failed += 1
                    print(f"worldmind memory-eval: error: house {i}: {outcome.error}", file=sys.stderr, flush=True)
                    continue
                write_outputs(Path(args.out) / f"house_{i:03d}" if len(indices) > 1 else Path(args.out),
                              outcome.value["files"])
                print("\n".join(summary_lines(outcome.value["result"])), flush=True)
        finally:
            executor.close()
    except (CliError, ExecutorError, HouseError, FileNotFoundError, IndexError, ValueError, RuntimeError) as exc:
        problems = exc.problems if isinstance(exc, CliError) else [str(exc)]
        for p in problems:
            print(f"worldmind memory-eval: error: {p}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nworldmind memory-eval: interrupted", file=sys.stderr)
        return 130
    return 2 if failed else 0

if __name__ == "__main__":
    sys.exit(main_memory_eval())
