"""Speed of the embedded simulator's CPU renderer on a 6-room ProcTHOR dev house.

Run: ``python benchmarks/bench_render.py``. Prints render() frames/s at 320x240 with one thread
(the target is >= 20), set_objects() milliseconds and visible_objects() microseconds per call,
for the house's own objects (as boxes from the asset database) and with extra boxes up to 300.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import open3d as o3d

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from household.house_data import load_asset_database, load_house  # noqa: E402
from sim_bridge.embedded.house_geometry import HouseLayout, parse_layout  # noqa: E402
from sim_bridge.embedded.render import SceneRenderer  # noqa: E402
from household.types import point_in_polygon  # noqa: E402

HOUSES_FILE = "houses_dev.jsonl.gz"
HOUSE_INDEX = 22  # 6 rooms, 117 objects (children included)
CAMERA_HEIGHT = 1.5
WIDTH, HEIGHT = 320, 240


def _walk(objects: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for obj in objects:
        yield obj
        yield from _walk(obj.get("children", []) or [])


def house_boxes(house: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centres, sizes and yaws of the house's objects (and their children) that the asset
    database knows."""
    sizes_by_asset = {
        a["assetId"]: (a["boundingBox"]["x"], a["boundingBox"]["y"], a["boundingBox"]["z"])
        for assets in load_asset_database().values()
        for a in assets
    }
    centers, sizes, yaws = [], [], []
    for obj in _walk(house["objects"]):
        size = sizes_by_asset.get(obj.get("assetId", ""))
        if size is None:
            continue
        p = obj["position"]
        centers.append((p["x"], p["y"], p["z"]))
        sizes.append(size)
        yaws.append(obj.get("rotation", {}).get("y", 0.0))
    return np.array(centers), np.array(sizes), np.array(yaws)


def camera_poses(layout: HouseLayout) -> list[tuple[np.ndarray, float, float]]:
    """Per room: the polygon's vertex mean if it lies inside, looking four ways, level and down."""
    poses = []
    for room in layout.rooms:
        c = np.mean(np.array(room.polygon), axis=0)
        if not point_in_polygon(float(c[0]), float(c[1]), list(room.polygon)):
            continue
        for yaw in (0.0, 90.0, 180.0, 270.0):
            for horizon in (0.0, 30.0):
                poses.append((np.array([c[0], CAMERA_HEIGHT, c[1]]), yaw, horizon))
    return poses


def extra_boxes(layout: HouseLayout, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` small random boxes on the floor inside the house's rooms."""
    x0, z0, x1, z1 = layout.bounds
    centers: list[tuple[float, float, float]] = []
    while len(centers) < count:
        x, z = rng.uniform(x0, x1), rng.uniform(z0, z1)
        if any(point_in_polygon(x, z, list(r.polygon)) for r in layout.rooms):
            centers.append((x, 0.2, z))
    return np.array(centers), rng.uniform(0.1, 0.4, (count, 3)), rng.uniform(0, 360, count)


def bench(layout: HouseLayout, centers: np.ndarray, sizes: np.ndarray, yaws: np.ndarray) -> None:
    rng = np.random.default_rng(0)
    colors = rng.integers(40, 255, (len(centers), 3)).astype(np.uint8)
    renderer = SceneRenderer(layout, WIDTH, HEIGHT, 90.0, nthreads=1)
    poses = camera_poses(layout)

    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        renderer.set_objects(centers, sizes, yaws, colors)
        times.append(time.perf_counter() - t0)
    print(f"  set_objects ({len(centers)} boxes): {1e3 * np.median(times):.2f} ms (median of 5, BVH build included)")

    for pose in poses[:2]:
        renderer.render(*pose)  # warm-up
    n_frames = 2 * len(poses)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for i in range(n_frames):
        renderer.render(*poses[i % len(poses)])
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    hit = np.mean([np.mean(renderer.render(*pose).depth > 0) for pose in poses])
    print(
        f"  render {WIDTH}x{HEIGHT}, nthreads=1: {n_frames / wall:.1f} frames/s ({1e3 * wall / n_frames:.1f} ms/frame "
        f"over {n_frames} frames, cpu/wall {cpu / wall:.2f}, {100 * hit:.0f}% pixels hit)"
    )

    t_cast = 0.0
    for pose in poses:
        rays = o3d.core.Tensor.from_numpy(renderer.camera_rays(*pose))
        t0 = time.perf_counter()
        renderer._scene.cast_rays(rays, nthreads=1)  # noqa: SLF001 (diagnostic: Embree's share)
        t_cast += time.perf_counter() - t0
    print(f"  of which ray cast alone: {1e3 * t_cast / len(poses):.1f} ms/frame")

    # Candidates as the simulator would pass them: the 50 objects nearest the camera.
    candidates = [np.argsort(np.linalg.norm(centers - pose[0], axis=1))[:50] for pose in poses]
    n_calls, n_visible = 20 * len(poses), 0
    t0 = time.perf_counter()
    for i in range(n_calls):
        n_visible += int(renderer.visible_objects(*poses[i % len(poses)], indices=candidates[i % len(poses)]).sum())
    elapsed = time.perf_counter() - t0
    print(
        f"  visible_objects ({len(candidates[0])} nearest candidates, max_distance 1.5): "
        f"{1e6 * elapsed / n_calls:.0f} us/call (mean {n_visible / n_calls:.1f} visible)"
    )


def main() -> None:
    house = load_house(HOUSES_FILE, HOUSE_INDEX)
    layout = parse_layout(house)
    centers, sizes, yaws = house_boxes(house)
    print(f"house {layout.house_id}: {len(layout.rooms)} rooms, {len(layout.walls)} walls, {len(centers)} object boxes")
    print("house objects:")
    bench(layout, centers, sizes, yaws)
    extra = extra_boxes(layout, 300 - len(centers), np.random.default_rng(1))
    print("house objects + random boxes, 300 in all:")
    bench(layout, *(np.concatenate([a, b]) for a, b in zip((centers, sizes, yaws), extra)))


if __name__ == "__main__":
    main()
