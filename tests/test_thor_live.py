"""The thor backend on a real AI2-THOR 5.0 Unity build.

Runs only where a build is available, named by ``WORLDMIND_THOR_BUILD``:
- a path to the build's executable (e.g. ``~/.ai2thor/releases/thor-CloudRendering-<commit>/
  thor-CloudRendering-<commit>``), started through ``local_executable_path``; or
- ``CloudRendering`` / ``Linux64``: the build ai2thor keeps (or downloads) under ~/.ai2thor.
CloudRendering needs Vulkan and a GPU, Linux64 an X server (``DISPLAY``). Skipped, with the
reason, otherwise.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("ai2thor", reason="ai2thor is not installed (pip install 'worldmind[thor]')")
BUILD = os.environ.get("WORLDMIND_THOR_BUILD", "")
pytestmark = [pytest.mark.skipif(not BUILD, reason="no AI2-THOR build: set WORLDMIND_THOR_BUILD to a build "
                                                   "executable, or to CloudRendering / Linux64"),
              pytest.mark.timeout(600)]


def test_thor_live_house_episode_runs_and_scores():
    from household.checklist import ChecklistItem, evaluate_checklist
    from household.house_data import load_house
    from sim_bridge.thor.backend import ThorConfig, ThorEnvironment
    from household.types import Action

    where = {"platform": BUILD} if BUILD in ("CloudRendering", "Linux64") else {"local_executable_path": BUILD}
    house = load_house("houses_dev.jsonl.gz", 0)
    with ThorEnvironment(ThorConfig(width=160, height=120, **where)) as env:
        obs = env.reset(house)
        assert obs.rgb.shape == (120, 160, 3) and obs.depth.dtype == np.float32
        assert obs.id_to_label and set(np.unique(obs.instance_ids)) <= {0} | set(obs.id_to_label)
        world = env.ground_truth()
        house_ids = {o["id"] for o in house["objects"]}
        assert house_ids & {o["objectId"] for o in world.objects}  # ProcTHOR ids are the house's ids
        turned = env.step(Action("RotateRight")).observation
        assert (turned.agent.yaw_deg - obs.agent.yaw_deg) % 360 == pytest.approx(330.0, abs=1e-3)
        assert not env.step(Action("PickupObject", "no|such|object")).success
        item = ChecklistItem.from_dict({"object": {"type": world.objects[0]["objectType"]}, "predicate": "isHeld"})
        assert evaluate_checklist([item], env.ground_truth()).gc == 0.0
