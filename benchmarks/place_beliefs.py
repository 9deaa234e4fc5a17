"""Not a timing: do the places the agent records for what it sees agree with the simulator?

    .venv/bin/python benchmarks/place_beliefs.py evaluation/data/episodes_dev_v2/dev-038-0.json [more.json ...]
        [--sensors realistic] [--object-memory spatial]

Runs each episode in closed loop on the embedded simulator as `worldmind run --planner
deterministic` does (a fresh experience pool per episode) and checks every observed ``location``
event the agent's place watcher records (``planner.support.PlaceWatcher``: where a thing is seen
standing, from the agent's own boxes) against the simulator at that step: the object's
``parentReceptacles`` where the simulator gives them; where it gives none (the embedded
simulator leaves some objects a house places on a table without a parent), the same rule
(``planner.support.support_of``) on the true boxes, counted apart as "no sim parent". Events for
an id the simulator does not know (a detector's own id) are counted as such. Why: issue 31 asks
that what the agent perceives changing enter the belief tracker as observed evidence; evidence
that is wrong is worse than none, and this says how often it is.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _record(meta: dict[str, Any]) -> Any:
    from planner.object_memory import TrackedObject

    box = meta["axisAlignedBoundingBox"]
    centre = np.array([box["center"][a] for a in "xyz"], dtype=float)
    half = np.array([box["size"][a] for a in "xyz"], dtype=float) / 2.0
    return TrackedObject(meta["objectId"], meta["objectType"], centre, centre - half, centre + half, 0, 0)


def true_places(base: Any, object_id: str) -> tuple[set[str], bool] | None:
    """The receptacles the simulator says the object is in or on now, and whether they came from
    its parents (False: from ``support_of`` on the true boxes); None for an id it does not know."""
    from household.assets import default_catalog
    from planner.support import support_of

    objects = {o["objectId"]: o for o in base.metadata()["objects"]}
    meta = objects.get(object_id)
    if meta is None:
        return None
    parents = set(meta.get("parentReceptacles") or ())
    if parents:
        return parents, True
    catalog = default_catalog()
    where = support_of(_record(meta), [_record(o) for o in objects.values()],
                       lambda t: bool((info := catalog.type_affordances(t)) is not None and info.receptacle))
    return ({where} if where else set()), False


def check_episode(path: Path, sensors: str, object_memory: str) -> tuple[Any, Counter[str], list[str]]:
    """Run one episode with every recorded place checked; returns the result, the tally and the
    places that disagree."""
    from evaluation.episodes import load_episode
    from evaluation.runner import run_episode
    from planner.episodic_beliefs import EpisodicBeliefs
    from planner.factory import make_agent
    from sim_bridge.factory import make_environment

    episode = load_episode(path)
    base: Any = make_environment("embedded")
    env = base
    if sensors != "ideal":
        from sim_bridge.sensors import SensorNoise, sensor_profile

        env = SensorNoise(base, sensor_profile(sensors))
    tally: Counter[str] = Counter()
    wrong: list[str] = []
    record = EpisodicBeliefs.observe_location

    def checked(self: EpisodicBeliefs, step: int, object_id: str, receptacle_id: str) -> bool:
        recorded = record(self, step, object_id, receptacle_id)
        if recorded:
            truth = true_places(base, object_id)
            if truth is None:
                tally["not a simulator id"] += 1
                return recorded
            places, from_parents = truth
            kind = "agrees" if receptacle_id in places else "disagrees"
            tally[kind if from_parents else f"{kind} (no sim parent)"] += 1
            if kind == "disagrees":
                wrong.append(f"step {step}: {object_id} on/in {receptacle_id}, the simulator: "
                             f"{', '.join(sorted(places)) or 'none'}")
        return recorded

    EpisodicBeliefs.observe_location = checked  # type: ignore[method-assign]
    try:
        agent = make_agent("deterministic", env, object_memory=object_memory)
        result, _ = run_episode(env, agent, episode)
    finally:
        EpisodicBeliefs.observe_location = record  # type: ignore[method-assign]
    return result, tally, wrong


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("episodes", nargs="+", type=Path)
    ap.add_argument("--sensors", default="ideal", choices=("ideal", "realistic", "odom-only", "harsh"))
    ap.add_argument("--object-memory", default="tracker", choices=("tracker", "spatial"))
    args = ap.parse_args(argv)

    total: Counter[str] = Counter()
    for path in args.episodes:
        result, tally, wrong = check_episode(path, args.sensors, args.object_memory)
        total.update(tally)
        print(f"{result.episode_id} ({args.sensors}): GC {result.gc:.3f}; places recorded {sum(tally.values())}: "
              + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())), flush=True)
        for line in wrong:
            print(f"  {line}")
    agree = total["agrees"] + total["agrees (no sim parent)"]
    checked_n = agree + total["disagrees"] + total["disagrees (no sim parent)"]
    print(f"all {len(args.episodes)} episode(s): {agree} of {checked_n} places agree "
          f"({agree / max(checked_n, 1):.1%}); " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
