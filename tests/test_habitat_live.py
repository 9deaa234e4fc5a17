"""The habitat backend on the real habitat_sim, with a real dataset.

Runs only where ``import habitat_sim`` works and a dataset is named:
``WORLDMIND_HABITAT_DATASET`` (a ``*.scene_dataset_config.json`` or its folder) and
``WORLDMIND_HABITAT_SCENE`` (a scene of it). Skipped, with the reason, otherwise.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

habitat_sim = pytest.importorskip("habitat_sim", reason="habitat-sim is not installed (no PyPI wheel for Linux; "
                                                        "see sim_bridge/habitat/README.md)")
DATASET = os.environ.get("WORLDMIND_HABITAT_DATASET")
SCENE = os.environ.get("WORLDMIND_HABITAT_SCENE")
pytestmark = pytest.mark.skipif(not (DATASET and SCENE), reason="set WORLDMIND_HABITAT_DATASET and "
                                                                 "WORLDMIND_HABITAT_SCENE to run on a real dataset")


def test_habitat_live_observes_moves_and_labels():
    from sim_bridge.habitat.backend import HabitatConfig, HabitatEnvironment
    from household.types import Action

    env = HabitatEnvironment(HabitatConfig(dataset=DATASET, width=160, height=120))
    try:
        obs = env.reset({"scene": SCENE})
        assert obs.rgb.shape == (120, 160, 3) and obs.depth.shape == (120, 160)
        assert np.isfinite(obs.depth).all() and obs.depth.max() > 0
        assert set(np.unique(obs.instance_ids)) <= {0} | set(obs.id_to_label)
        turned = env.step(Action("RotateLeft")).observation
        assert (turned.agent.yaw_deg - obs.agent.yaw_deg) % 360 == pytest.approx(30.0, abs=1e-3)
        moved = [env.step(Action("MoveAhead")) for _ in range(4)]
        assert all(r.observation.agent.position[2] == pytest.approx(obs.agent.position[2], abs=1e-3) for r in moved)
        assert env.ground_truth().rooms is not None
    finally:
        env.close()
