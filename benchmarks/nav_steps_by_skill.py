"""Not a timing: where HoloMind's navigation steps go, by the skill that sent each move or turn.

    .venv/bin/python benchmarks/nav_steps_by_skill.py evaluation/data/episodes_dev_v2/dev-094-1.json [more.json ...]
        [--sensors realistic] [--chains 12]

Runs each episode in closed loop on the embedded simulator as `worldmind run --planner
deterministic` does (a fresh experience pool per episode, so an episode's figures can differ from
a whole-set run's, where earlier waves fill the pool), and tags every action with the chain of
skill generators that yielded it (the agent's goal loop down to the primitive: ``_run > _do_goal >
... > navigate_to > _approach > walk``). Moves and 30-degree turns are counted one step each
(blocked ones included), grouped as: walks up to an object to act on it, frontier walks (and the
turn to the unexplored part after one), walks up to receptacles in a search, recoveries (floor
looks, map clears), the opening look round, and the rest. Prints the shares per episode and over
all, and the most frequent raw chains (``--chains N``). Why: the navigation ratio to the oracle
(issue 29) is decided by where the agent walks, and this says which part of the planner does it.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

NAV_ACTIONS = frozenset({"MoveAhead", "MoveBack", "MoveLeft", "MoveRight", "RotateLeft", "RotateRight"})
GROUPS = ("walk to act", "frontier walk", "turn after frontier", "search: receptacle visits", "recovery",
          "look round at start", "other")


def skill_chain(agent: Any) -> tuple[str, ...]:
    """Function names of the suspended generators from the agent's script down to the one that
    yielded the last action (CPython's ``gi_yieldfrom``)."""
    chain = []
    gen = getattr(agent, "_script", None)
    while gen is not None:
        frame = getattr(gen, "gi_frame", None)
        if frame is not None:
            chain.append(frame.f_code.co_name)
        gen = getattr(gen, "gi_yieldfrom", None)
    return tuple(chain)


def group_of(chain: tuple[str, ...]) -> str:
    names = set(chain)
    if names & {"look_at_the_floor_around", "clear_and_look_again"}:
        return "recovery"
    if "explore_once" in names:
        return "turn after frontier" if chain[-1] == "turn_to" else "frontier walk"
    if "navigate_to" in names and names & {"interact", "put_down"}:
        return "walk to act"
    if "navigate_to" in names and names & {"search", "_look_closely"}:
        return "search: receptacle visits"
    if chain and chain[-1] == "look_around":
        return "look round at start"
    return "other"


class Tagged:
    """The agent, with every navigation action it sends counted by the chain that sent it."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.chains: Counter[tuple[str, ...]] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)

    def act(self, observation: Any) -> Any:
        action = self.agent.act(observation)
        if action.name in NAV_ACTIONS:
            self.chains[skill_chain(self.agent)] += 1
        return action


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("episodes", nargs="+", type=Path)
    ap.add_argument("--sensors", default="ideal", choices=("ideal", "realistic", "odom-only", "harsh"))
    ap.add_argument("--chains", type=int, default=10, help="raw chains to list over all episodes")
    args = ap.parse_args(argv)

    from evaluation.episodes import load_episode
    from evaluation.runner import run_episode
    from planner.factory import make_agent
    from sim_bridge.factory import make_environment

    total: Counter[str] = Counter()
    raw: Counter[tuple[str, ...]] = Counter()
    for path in args.episodes:
        episode = load_episode(path)
        env: Any = make_environment("embedded")
        if args.sensors != "ideal":
            from sim_bridge.sensors import SensorNoise, sensor_profile

            env = SensorNoise(env, sensor_profile(args.sensors))
        agent = Tagged(make_agent("deterministic", env))
        result, _ = run_episode(env, agent, episode)
        groups: Counter[str] = Counter()
        for chain, n in agent.chains.items():
            groups[group_of(chain)] += n
        total.update(groups)
        raw.update(agent.chains)
        steps = sum(groups.values())
        oracle = (episode.oracle or {}).get("steps_nav", "?")
        print(f"{episode.id}: GC {result.gc:.3f}, steps_nav {result.steps_nav:.0f} (oracle {oracle}); "
              + ", ".join(f"{g} {groups[g] / max(steps, 1):.0%}" for g in GROUPS if groups[g]), flush=True)
    steps = sum(total.values())
    print(f"all {len(args.episodes)} episode(s), {steps} navigation actions: "
          + ", ".join(f"{g} {total[g] / max(steps, 1):.1%}" for g in GROUPS if total[g]))
    for chain, n in raw.most_common(args.chains):
        print(f"  {n:6d}  {' > '.join(chain[1:])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
