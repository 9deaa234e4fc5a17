"""An agent start inside furniture is moved to free floor with a warning naming the house, the
episode and the distance (issue 32: a start inside a counter was moved 1.46 m without a word);
the committed dev starts move 5 cm at most and stay quiet."""

from __future__ import annotations

import json
import logging

from evaluation.dev_set import default_episode_file
from evaluation.episodes import Episode
from sim_bridge.embedded.env import START_MOVE_WARN_M, EmbeddedConfig, EmbeddedEnvironment


def _episode(**changes) -> Episode:
    data = json.loads(default_episode_file().read_text())
    data.update(changes)
    return Episode.from_dict(data)


def test_a_start_inside_a_counter_is_moved_with_a_warning(caplog) -> None:
    env = EmbeddedEnvironment(EmbeddedConfig(width=32, height=24))
    ep = _episode()
    env.reset(ep)
    blocked = [o for o in env.table.objects.values() if not env.collision.is_free(float(o.position[0]),
                                                                                  float(o.position[2]))]
    big = max(blocked, key=lambda o: min(float(o.size[0]), float(o.size[2])))  # the widest furniture
    x, _, z = (float(v) for v in big.position)
    inside = _episode(id="start-in-counter", agent_start={"position": {"x": x, "y": 0.9, "z": z},
                                                           "rotation": {"x": 0, "y": 0, "z": 0}, "horizon": 30})
    with caplog.at_level(logging.WARNING):
        env.reset(inside)
    assert env.start_moved_m >= START_MOVE_WARN_M
    text = caplog.text
    assert "episode start-in-counter" in text and f"moved {env.start_moved_m:.2f} m" in text
    assert f"house {env.layout.house_id}" in text


def test_a_free_start_is_not_moved_and_not_warned(caplog) -> None:
    env = EmbeddedEnvironment(EmbeddedConfig(width=32, height=24))
    with caplog.at_level(logging.WARNING):
        env.reset(_episode())
    assert env.start_moved_m < START_MOVE_WARN_M and "agent start" not in caplog.text
