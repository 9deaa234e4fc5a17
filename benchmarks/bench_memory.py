"""Speed and size of perception + spatial memory (figures only; no test asserts on timing).

Run: ``python benchmarks/bench_memory.py`` (about two minutes). numpy/BLAS/OpenMP are held to one
thread (set before numpy is imported) and the process is pinned to one core, so every figure is a
single-core figure. It prints:

1. integration frames/s: perception geometry (back-projection, voxelisation, per-instance boxes,
   crops, masks) + association + index update + free-space check, 320x240, on one core; encoders
   excluded (perception runs without encoders; the memory's label encoder is the cached hash).
   a) a crowded synthetic scene rendered by the embedded simulator's renderer: 30 boxes in one
      room of a dev house, a slowly panning camera, all 30 kept by perception in every frame;
   b) a real oracle exploration of a dev house (the memory-eval workload, ~10 instances/frame).
   Frames are rendered before timing starts.
2. text query top-10 over 100,000 objects: p50/p95 latency of the memory's index with a
   ViT-B-32-sized CLIP half (512) and a MiniLM-sized text half (384) of synthetic clustered
   embeddings (150 labels), query encoding excluded (a real encoder adds its own time: MiniLM
   ~14 ms/sentence here); recall@10 of the label-probed search against the exact scan; and the
   end-to-end ``query_text`` (hash text encoder, parsing included) on the same table.
3. memory per object: table + index bytes per row, and voxels + views per object after a dev
   house exploration.
Memory quality figures (recall, precision, centroid error, duplicates, retrieval) come from
``python -m evaluation.memory_eval --index 0-2 --out DIR``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.memory_eval import MemoryEvalConfig, explore, rooms_as_regions, viewpoints  # noqa: E402
from memory.pipeline import MemoryPipeline  # noqa: E402
from memory.spatial.memory import MemoryConfig, SpatialMemory  # noqa: E402
from perception.encoders import Encoders, HashTextEncoder  # noqa: E402
from perception.perceive import Perception  # noqa: E402
from sim_bridge.embedded.env import AgentPose, EmbeddedConfig, EmbeddedEnvironment, type_color  # noqa: E402
from household.house_data import load_house  # noqa: E402
from household.frames import thor_camera_to_ros_pose  # noqa: E402
from household.types import Action, ActionFeedback, AgentStatus, InstanceLabel, Observation, point_in_polygon  # noqa: E402

LABELS = ["Mug", "Apple", "Book", "Bowl", "Vase", "Box", "Laptop", "Pot", "Kettle", "Plate", "Statue", "Candle"]


def pin_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def _layout_boxes(env: EmbeddedEnvironment) -> tuple[np.ndarray, float, list[tuple[float, float, float]], list[float]]:
    """The free camera spot and heading (THOR) with the most grid cells ahead inside its room."""
    free = env.collision.free_grid()
    best: tuple[int, np.ndarray, float, list, list] | None = None
    for room in env.layout.rooms:
        poly = list(room.polygon)
        cx, cz = np.mean([p[0] for p in poly]), np.mean([p[1] for p in poly])
        for yaw in (0.0, 90.0, 180.0, 270.0):
            fwd = np.array([np.sin(np.radians(yaw)), np.cos(np.radians(yaw))])
            side = np.array([fwd[1], -fwd[0]])
            cam = np.array([cx, cz]) - 2.2 * fwd
            if not free.is_free(float(cam[0]), float(cam[1])):
                continue
            cells, sizes = [], []
            for i, ahead in enumerate(np.linspace(1.2, 3.4, 6)):
                for lateral in np.linspace(-0.45, 0.45, 6) * ahead:
                    x, z = cam + ahead * fwd + lateral * side
                    s = 0.14 + 0.06 * i
                    if point_in_polygon(float(x), float(z), poly):
                        cells.append((float(x), s / 2, float(z)))
                        sizes.append(s)
            if best is None or len(cells) > best[0]:
                best = (len(cells), cam, yaw, cells, sizes)
    assert best is not None, "no free camera spot"
    return best[1], best[2], best[3][:30], best[4][:30]


def crowded_frames(n_frames: int) -> list[Observation]:
    """30 boxes on the floor of a dev-house room, a camera panning slowly over them."""
    env = EmbeddedEnvironment(EmbeddedConfig(width=320, height=240))
    env.reset(load_house("houses_dev.jsonl.gz", 0))
    cam_xz, yaw0, centers, sizes = _layout_boxes(env)
    labels = [LABELS[i % len(LABELS)] for i in range(len(centers))]
    colors = np.array([type_color(lab) for lab in labels]) // 2 + np.arange(len(labels))[:, None] * 3 % 120
    env.renderer.set_objects(np.array(centers), np.array([(s, s, s) for s in sizes]), np.zeros(len(centers)),
                             colors.astype(np.uint8))
    frames = []
    for k in range(n_frames):
        yaw = yaw0 + 6.0 * np.sin(2 * np.pi * k / 60)
        cam = np.array([cam_xz[0], 1.5, cam_xz[1]])
        r = env.renderer.render(cam, yaw, 40.0)
        ids = np.unique(r.instance)
        obs = Observation(k, env.intrinsics, thor_camera_to_ros_pose(cam, yaw, 40.0), AgentStatus((0, 0, 0), 0, 40.0),
                          ActionFeedback(None, True), rgb=r.rgb, depth=r.depth, instance_ids=r.instance,
                          id_to_label={int(i): InstanceLabel(f"box{i}", labels[i - 1]) for i in ids if i > 0})
        frames.append(obs)
    return frames


def time_integration(frames: list[Observation]) -> dict[str, float]:
    perception = Perception()
    warm = MemoryPipeline(SpatialMemory(Encoders(HashTextEncoder())), perception)
    for obs in frames[:5]:  # warm caches (pixel grid, label embeddings)
        warm.process(obs)
    pipeline = MemoryPipeline(SpatialMemory(Encoders(HashTextEncoder())), perception)
    memory = pipeline.memory
    t_p = t_m = 0.0
    kept = 0
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    for obs in frames:
        result = pipeline.process(obs)
        t_p += result.perception_s
        t_m += result.memory_s
        kept += len(result.seen)
    wall = time.perf_counter() - wall0
    n = len(frames)
    return {"frames": n, "instances_per_frame": kept / n, "fps": n / wall, "perception_ms": 1e3 * t_p / n,
            "memory_ms": 1e3 * t_m / n, "cpu_per_wall": (time.process_time() - cpu0) / wall, "objects": len(memory)}


def exploration_frames(max_frames: int) -> list[Observation]:
    env = EmbeddedEnvironment(EmbeddedConfig(width=320, height=240))
    env.reset(load_house("houses_dev.jsonl.gz", 1))
    frames: list[Observation] = []
    turn = Action("RotateRight", args={"degrees": 30.0})
    for x, z in viewpoints(env, 1.0):
        for horizon in (30.0, 0.0):
            env.pose = AgentPose(x, z, 0.0, horizon)
            for _ in range(12):
                frames.append(env.step(turn).observation)
                if len(frames) >= max_frames:
                    return frames
    return frames


def query_benchmark(n_objects: int, n_queries: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    n_labels, dt, dc = 150, 384, 512
    names = [f"label{i}" for i in range(n_labels)]
    proto_t = rng.standard_normal((n_labels, dt)).astype(np.float32)
    proto_c = rng.standard_normal((n_labels, dc)).astype(np.float32)
    proto_t /= np.linalg.norm(proto_t, axis=1, keepdims=True)
    proto_c /= np.linalg.norm(proto_c, axis=1, keepdims=True)

    class ClipStub:  # only its size matters here: vectors are filled in directly
        name, dim, is_random = "synthetic-clip-512", dc, True

    memory = SpatialMemory(Encoders(HashTextEncoder(dt), ClipStub()), MemoryConfig())  # type: ignore[arg-type]
    t, idx = memory.table, memory.index
    for i, name in enumerate(names):
        t.intern_label(name)
        idx.set_label(i, proto_t[i], proto_c[i])
    label = rng.integers(0, n_labels, n_objects)
    for row in range(n_objects):
        t.add(names[label[row]], 0)
    idx.ensure(n_objects)
    text = proto_t[label] + 0.35 * rng.standard_normal((n_objects, dt)).astype(np.float32) / np.sqrt(dt)
    clip = proto_c[label] + 0.8 * rng.standard_normal((n_objects, dc)).astype(np.float32) / np.sqrt(dc)
    idx.text[:n_objects] = text / np.linalg.norm(text, axis=1, keepdims=True)
    idx.clip[:n_objects] = clip / np.linalg.norm(clip, axis=1, keepdims=True)
    idx.has_clip[:n_objects] = True
    centres = rng.uniform(0, 20, (n_objects, 3))
    t.set("aabb_min", np.arange(n_objects), centres - 0.1)
    t.set("aabb_max", np.arange(n_objects), centres + 0.1)
    cfg = memory.config
    lat, recall = [], []
    for _ in range(n_queries):
        lab = int(rng.integers(n_labels))
        qt = proto_t[lab] + 0.3 * rng.standard_normal(dt).astype(np.float32) / np.sqrt(dt)
        qc = proto_c[lab] + 0.6 * rng.standard_normal(dc).astype(np.float32) / np.sqrt(dc)
        qt, qc = qt / np.linalg.norm(qt), qc / np.linalg.norm(qc)
        a = time.perf_counter()
        rows = t.active_rows()
        got, _ = idx.query(rows, t.label_id[rows], qt, qc, 10, exact_limit=cfg.exact_query_limit,
                           n_probe=cfg.n_probe, probe_margin=cfg.probe_margin)
        lat.append(time.perf_counter() - a)
        exact, _ = idx.query(rows, t.label_id[rows], qt, qc, 10, exact=True)
        recall.append(len(set(got.tolist()) & set(exact.tolist())) / 10)
    exact_lat = []
    for _ in range(20):
        a = time.perf_counter()
        rows = t.active_rows()
        idx.query(rows, t.label_id[rows], qt, qc, 10, exact=True)
        exact_lat.append(time.perf_counter() - a)
    per_object = t.nbytes_per_row() + idx.nbytes_per_row()
    memory.encoders = Encoders(HashTextEncoder(dt))  # end to end: parse + encode + text-half query
    e2e = []
    for q in range(n_queries):
        a = time.perf_counter()
        memory.query_text(names[q % n_labels], k=10)
        e2e.append(time.perf_counter() - a)
    ms = lambda xs, p: 1e3 * float(np.percentile(xs, p))  # noqa: E731
    return {"objects": n_objects, "p50_ms": ms(lat, 50), "p95_ms": ms(lat, 95), "recall_at_10": float(np.mean(recall)),
            "exact_p95_ms": ms(exact_lat, 95), "e2e_p50_ms": ms(e2e, 50), "e2e_p95_ms": ms(e2e, 95),
            "table_index_bytes_per_object": per_object}


def house_bytes_per_object() -> dict[str, float]:
    env = EmbeddedEnvironment(EmbeddedConfig(width=320, height=240))
    env.reset(load_house("houses_dev.jsonl.gz", 0))
    memory = SpatialMemory(Encoders(HashTextEncoder()), regions=rooms_as_regions(env))
    explore(env, MemoryPipeline(memory, Perception(encoders=memory.encoders)), viewpoints(env, 1.0),
            MemoryEvalConfig(horizons=(30.0,)), set())
    n = max(memory.table.n, 1)
    return {"objects": memory.table.n, "voxel_pairs_per_object": len(memory.voxels) / n,
            "voxel_bytes_per_object": memory.voxels.nbytes() / n, "view_bytes_per_object": memory.views.nbytes() / n,
            "table_index_bytes_per_object": memory.table.nbytes_per_row() + memory.index.nbytes_per_row()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--objects", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args(argv)
    pin_one_core()
    print("rendering frames (not timed) ...", flush=True)
    crowded = crowded_frames(args.frames)
    real = exploration_frames(args.frames * 3)
    for name, frames in (("crowded synthetic scene", crowded), ("dev house 1 exploration", real)):
        r = time_integration(frames)
        print(f"integration, {name}: {r['fps']:.0f} frames/s over {r['frames']} frames "
              f"({r['instances_per_frame']:.1f} instances/frame kept; perception {r['perception_ms']:.2f} ms + "
              f"memory {r['memory_ms']:.2f} ms per frame; cpu/wall {r['cpu_per_wall']:.2f}; {r['objects']} objects)")
    q = query_benchmark(args.objects, args.queries)
    print(f"text query top-10 over {q['objects']:,} objects (CLIP 512 + text 384, synthetic, encoding excluded): "
          f"p50 {q['p50_ms']:.2f} ms, p95 {q['p95_ms']:.2f} ms, recall@10 vs exact {q['recall_at_10']:.3f} "
          f"(exact scan p95 {q['exact_p95_ms']:.1f} ms)")
    print(f"query_text end to end (parse + hash encoder + text half): p50 {q['e2e_p50_ms']:.2f} ms, "
          f"p95 {q['e2e_p95_ms']:.2f} ms")
    h = house_bytes_per_object()
    print(f"memory per object: table + index {q['table_index_bytes_per_object']} B with CLIP 512 + text 384 "
          f"({h['table_index_bytes_per_object']} B with the default hash-256 text half); after exploring dev house 0 "
          f"({h['objects']} objects): voxels {h['voxel_bytes_per_object']:.0f} B "
          f"({h['voxel_pairs_per_object']:.0f} voxels), views {h['view_bytes_per_object']:.0f} B")
    return 0


if __name__ == "__main__":
    sys.exit(main())
