"""The oracle on backends it cannot read: it plans on an embedded twin of the same house.

The oracle needs the embedded simulator's object table. On AI2-THOR or Habitat it therefore runs
against an embedded twin loaded from the same episode, and every action it sends to the real
backend is replayed on the twin, so the twin tracks the world. The real backend's ground truth is
still what scores the run. Should the two disagree about an action (one succeeds, the other
fails), the worlds have diverged and the run stops with an error naming the step: continuing
would score actions planned for a different world.
"""

from __future__ import annotations

from typing import Any, cast

from privileged.oracle import OracleError, OraclePlanner
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
from household.types import Action, Observation


class TwinOracle:
    name = "oracle"
    privileged = True

    def __init__(self, config: EmbeddedConfig | None = None) -> None:
        self.twin = EmbeddedEnvironment(config or EmbeddedConfig(render=False))
        self.oracle = OraclePlanner(self.twin)
        self._twin_obs: Observation | None = None
        self._pending: Action | None = None

    def reset(self, episode: Any, observation: Observation) -> None:
        self._twin_obs = self.twin.reset(episode)
        self.oracle.reset(episode, self._twin_obs)
        self._pending = None

    def act(self, observation: Observation) -> Action:
        twin_obs = cast(Observation, self._twin_obs)  # set by reset(), which comes first
        if self._pending is not None and observation.feedback.success != twin_obs.feedback.success:
            raise OracleError(
                f"the backend and the embedded twin diverged at step {observation.step} on "
                f"{self._pending.name} {self._pending.object_id or ''}: backend "
                f"{'succeeded' if observation.feedback.success else 'failed: ' + observation.feedback.error}, twin "
                f"{'succeeded' if twin_obs.feedback.success else 'failed: ' + twin_obs.feedback.error}")
        action = self.oracle.act(self._twin_obs)
        if action.name != "Stop":
            self._twin_obs = self.twin.step(action).observation
        self._pending = action
        return action

    def report_extra(self) -> dict[str, Any]:
        return {"oracle_twin": "embedded", **self.oracle.report_extra()}


def make_oracle(env: Any) -> Any:
    """The oracle for ``env``: it plans on the embedded simulator itself, or, for other backends,
    on an embedded twin of the same house."""
    if isinstance(env, EmbeddedEnvironment):
        return OraclePlanner(env)
    config = getattr(env, "config", None)
    return TwinOracle(EmbeddedConfig(render=False, move_step=getattr(config, "move_step", 0.25),
                                     data_dir=getattr(config, "data_dir", None)))
