"""Privileged tools: they read the simulator's ground truth, so they exist only in simulation.

- ``oracle``: the privileged planner (plans on the simulator's true state; the upper bound and the
  episode generator's check);
- ``twin_oracle``: the oracle driven through any backend by a twin embedded simulator;
- ``reach_region``: where an agent may stand to see and reach an object, from the collision map.

They sit in the simulator layer (docs/ARCHITECTURE.md): nothing robot-side (``planner``,
``perception``, ``memory``) imports them. The agent factory names the oracle as a plugin
(``planner.factory.PLUGINS``) and imports it only when asked for, so a robot deployment can
leave this package out.
"""
