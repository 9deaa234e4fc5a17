"""A non-privileged scripted agent: replays a recorded list of atomic actions, then says Stop.

Why it exists: the ROS end-to-end test needs a planner that (a) never touches the simulator or
ground truth, so it can run in the planner node's own process, and (b) is deterministic, so the
episode over ROS must reach exactly the GC of the same agent in-process. A recorded action list
(e.g. what the oracle did once, written by ``record_actions``) is the smallest such planner. It
ignores observations except to stay in step with them.

File format: ``{"actions": [Action.to_dict(), ...]}`` (or a bare list), e.g.
``{"action": "PickupObject", "objectId": "Mug|1|2"}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from household.types import Action, Observation


def action_from_dict(d: dict[str, Any], where: str) -> Action:
    if not isinstance(d, dict) or not isinstance(d.get("action"), str):
        raise ValueError(f"{where}: each action must be an object with a string 'action', got {d!r}")
    args = {k: v for k, v in d.items() if k not in ("action", "objectId")}
    return Action(d["action"], d.get("objectId"), args)


def load_actions(path: str | Path) -> list[Action]:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{p}: cannot read a scripted action list: {exc}") from None
    items = data.get("actions") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError(f"{p}: expected {{\"actions\": [...]}} or a list")
    return [action_from_dict(d, f"{p}: actions[{i}]") for i, d in enumerate(items)]


def record_actions(path: str | Path, actions: Iterable[Action]) -> Path:
    p = Path(path)
    p.write_text(json.dumps({"actions": [a.to_dict() for a in actions]}, indent=1), encoding="utf-8")
    return p


class ScriptedAgent:
    name = "scripted"

    def __init__(self, actions: list[Action]) -> None:
        self.actions = list(actions)
        self.index = 0

    @classmethod
    def from_file(cls, path: str | Path) -> "ScriptedAgent":
        return cls(load_actions(path))

    def reset(self, episode: Any, observation: Observation) -> None:
        self.index = 0

    def act(self, observation: Observation) -> Action:
        if self.index >= len(self.actions):
            return Action("Stop")
        action = self.actions[self.index]
        self.index += 1
        return action


class RecordingAgent:
    """Wraps an agent and keeps the actions it chose (to make a scripted list from any planner)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "recorded")
        self.actions: list[Action] = []

    def reset(self, episode: Any, observation: Observation) -> None:
        self.inner.reset(episode, observation)

    def act(self, observation: Observation) -> Action:
        action = self.inner.act(observation)
        if action.name != "Stop":
            self.actions.append(action)
        return action
