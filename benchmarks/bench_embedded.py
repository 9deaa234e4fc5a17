"""Speed of the embedded simulator, end to end through ``EmbeddedEnvironment.step``.

Run: ``python benchmarks/bench_embedded.py`` (or ``make bench``). On the first 6-room house of the
shipped dev split it prints:
- steps/s without rendering (EmbeddedConfig(render=False)): a fixed cycle of moves, rotations
  and looks, ~5,000 steps; what an oracle run or the episode generator pays per action;
- steps/s without rendering when every step is also scored as ``evaluation.runner`` does
  (``ground_truth()`` plus checklist evaluation), ~1,000 steps;
- frames/s with rendering (320x240 RGB + depth + instance ids, render_threads=1), ~200 steps.
Each figure comes with cpu/wall: about 1.0 means one core did the work. numpy/BLAS/OpenMP are
held to one thread (set before numpy is imported) so the figures are single-thread figures.
Options: ``--house-index I`` to pick another house, ``--steps N`` / ``--frames N`` to scale.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from household.checklist import ChecklistItem, evaluate_checklist  # noqa: E402
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment  # noqa: E402
from household.house_data import load_houses_file  # noqa: E402
from household.types import Action  # noqa: E402

HOUSES_FILE = "houses_dev.jsonl.gz"
ROOMS = 6
# A fixed, deterministic walk: mostly forward with turns, some strafing and camera pitch, so the
# agent crosses rooms and also bumps into walls (blocked moves are part of the real workload).
CYCLE = (["MoveAhead"] * 4 + ["RotateRight"] + ["MoveAhead"] * 3 + ["LookDown", "MoveLeft", "MoveRight", "LookUp"]
         + ["MoveAhead"] * 2 + ["RotateLeft", "MoveBack", "RotateRight", "RotateRight", "MoveAhead"])
# A checklist like a generated episode's (nine items), to cost the runner's per-step scoring.
CHECKLIST = [
    {"object": {"type": "Book"}, "predicate": "inRoom", "value": "LivingRoom"},
    {"object": {"type": "Cup"}, "predicate": "inRoom", "value": "Bedroom"},
    {"object": {"type": "FloorLamp"}, "predicate": "isToggled"},
    {"object": {"type": "Laptop"}, "predicate": "isOpen"},
    {"object": {"type": "Apple"}, "predicate": "isSliced"},
    {"object": {"type": "Mug"}, "predicate": "isFilledWithLiquid", "value": "coffee"},
    {"object": {"type": "Plate"}, "predicate": "isDirty", "value": False},
    {"object": {"type": "CellPhone"}, "predicate": "isHeld"},
    {"object": {"type": "Vase"}, "predicate": "inReceptacle", "target": {"type": "Dresser"}},
]


def find_house(index: int | None) -> tuple[int, dict]:
    houses = load_houses_file(HOUSES_FILE).houses
    if index is not None:
        return index, houses[index]
    for i, house in enumerate(houses):
        if len(house["rooms"]) == ROOMS:
            return i, house
    raise SystemExit(f"no {ROOMS}-room house in {HOUSES_FILE}")


def run_steps(env: EmbeddedEnvironment, house: dict, n: int, score: bool = False) -> tuple[float, float, int]:
    """(wall s, cpu s, successful actions) for n steps of the cycle from the house's start."""
    env.reset(house)
    items = [ChecklistItem.from_dict(d) for d in CHECKLIST]
    actions = [Action(name) for name in CYCLE]
    ok = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for i in range(n):
        ok += env.step(actions[i % len(actions)]).success
        if score:
            evaluate_checklist(items, env.ground_truth())
    return time.perf_counter() - wall0, time.process_time() - cpu0, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--house-index", type=int, default=None)
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--scored-steps", type=int, default=1000)
    ap.add_argument("--frames", type=int, default=200)
    args = ap.parse_args()

    index, house = find_house(args.house_index)
    rooms = ", ".join(sorted(r["roomType"] for r in house["rooms"]))
    print(f"house {HOUSES_FILE}#{index} (id {house.get('id')}): {len(house['rooms'])} rooms ({rooms})")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores visible, "
          f"Python {platform.python_version()}; numpy/BLAS/OpenMP threads: 1")

    t0 = time.perf_counter()
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    env.reset(house)
    print(f"reset (parse house, build objects, collision map, scene): {1e3 * (time.perf_counter() - t0):.0f} ms")
    print(f"objects in the house (children included): {len(env.table.objects)}")

    run_steps(env, house, 100)  # warm-up
    wall, cpu, ok = run_steps(env, house, args.steps)
    print(f"no rendering: {args.steps / wall:.0f} steps/s ({1e3 * wall / args.steps:.2f} ms/step over "
          f"{args.steps} steps, {100 * ok / args.steps:.0f}% of actions succeeded, cpu/wall {cpu / wall:.2f})")

    wall, cpu, ok = run_steps(env, house, args.scored_steps, score=True)
    print(f"no rendering, scored per step as the runner does (ground_truth + {len(CHECKLIST)}-item checklist): "
          f"{args.scored_steps / wall:.0f} steps/s ({1e3 * wall / args.scored_steps:.2f} ms/step over "
          f"{args.scored_steps} steps, cpu/wall {cpu / wall:.2f})")

    cfg = EmbeddedConfig(render=True, render_threads=1)
    env = EmbeddedEnvironment(cfg)
    run_steps(env, house, 10)  # warm-up
    wall, cpu, ok = run_steps(env, house, args.frames)
    obs = env.step(Action("RotateRight")).observation
    shapes = f"rgb {obs.rgb.shape} {obs.rgb.dtype}, depth {obs.depth.shape} {obs.depth.dtype}, " \
             f"ids {obs.instance_ids.shape} {obs.instance_ids.dtype}"
    print(f"rendering {cfg.width}x{cfg.height} RGB + depth + instance ids, render_threads=1: "
          f"{args.frames / wall:.1f} frames/s ({1e3 * wall / args.frames:.1f} ms/step over {args.frames} steps, "
          f"cpu/wall {cpu / wall:.2f}; {shapes})")


if __name__ == "__main__":
    main()
