"""The ``replay`` Environment backend: a recorded bag played back as Observations.

docs/ARCHITECTURE.md lists ``replay`` among the sim_bridge backends. It implements the Environment protocol
so code written against ``reset``/``ground_truth`` (perception, memory, the ROS sim_bridge node in
replay mode) can consume a bag like a simulator. It cannot act: a bag holds what happened, so
``step(action)`` raises ``ReplayStepError`` instead of pretending; use ``next_observation()`` (or
iterate ``observations()``) to advance. ``ground_truth()`` returns the latest ground truth
recorded at or before the current frame (evaluation only), or raises if the bag has none.

    env = ReplayEnvironment(ReplayEnvConfig(bag="run.mcap"))
    obs = env.reset()            # the first frame
    while (obs := env.next_observation()) is not None: ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from sim_bridge.replay.bag import BagReader, EventItem, FrameItem
from sim_bridge.ros import payloads
from household.types import Action, Observation, StepResult, WorldState


class ReplayStepError(RuntimeError):
    """step() on a replay: a recording cannot act."""


class GroundTruthUnavailable(RuntimeError):
    """The bag recorded no ground truth (a robot bag), or none before the current frame."""


@dataclass
class ReplayEnvConfig:
    bag: str = ""


class ReplayEnvironment:
    def __init__(self, config: ReplayEnvConfig) -> None:
        if not config.bag:
            raise ValueError("replay backend: option 'bag' (path to an .mcap/.db3 file or rosbag2 folder) is required")
        self.config = config
        self._items: Iterator[FrameItem | EventItem] | None = None
        self._world: WorldState | None = None
        self.events: list[EventItem] = []  # side-channel events seen so far
        self.current: Observation | None = None
        self.reader: BagReader | None = None

    def reset(self, episode: Any = None) -> Observation:
        """Rewind to the first frame (``episode`` is ignored: the bag is the episode)."""
        self.reader = BagReader(self.config.bag)
        self._items = iter(self.reader)
        self._world = None
        self.events = []
        obs = self.next_observation()
        if obs is None:
            raise ReplayStepError(f"{self.config.bag}: bag holds no complete frame")
        return obs

    def next_observation(self) -> Observation | None:
        """The next recorded frame, or None at the end of the bag."""
        if self._items is None:
            raise ReplayStepError("replay backend: call reset() first")
        for item in self._items:
            if isinstance(item, FrameItem):
                self.current = item.observation
                return item.observation
            self.events.append(item)
            if item.kind == "ground_truth":
                self._world = payloads.world_state_from_payload(item.data)
        return None

    def observations(self) -> Iterator[Observation]:
        obs: Observation | None = self.reset()
        while obs is not None:
            yield obs
            obs = self.next_observation()

    def step(self, action: Action) -> StepResult:
        raise ReplayStepError(f"replay backend cannot perform {action.name}: a bag plays back recorded "
                              "observations; use next_observation() (or run the episode live and record it "
                              "with `worldmind record`)")

    def ground_truth(self) -> WorldState:
        if self._world is None:
            raise GroundTruthUnavailable(f"{self.config.bag}: no ground truth recorded up to this frame "
                                         "(robot bags have none)")
        return self._world
