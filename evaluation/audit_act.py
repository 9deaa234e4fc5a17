"""``worldmind audit houses --act``: can the oracle actually pick each object up and put it back?

The plain audit (audit.py) counts an object reachable when free floor connected to the start
lies within reach of its box. That overstates what an agent can take: the object may be hidden
by the body it rests in, every pose in reach may fail to see it, or the put-back may find no
room. This audit acts instead (privileged, like the oracle): per pickupable object, the house is
reset to the start pose of its metadata, the oracle (privileged/oracle.py) walks to the object with
its lattice search, picks it up through the simulator's own checks (visible, within 1.5 m,
closed containers opened first) and puts it back on the receptacle it came from. Each object
gets ``picked``, ``put_back``, the steps spent and, when it failed, the reason (the oracle's or
the simulator's message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from household.house_data import HouseError
from household.types import Action
from privileged.oracle import OracleError, OraclePlanner
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

# Steps one fetch-and-return may take: the longest walk across a dev house and back is ~300.
MAX_STEPS = 600


@dataclass
class ObjectAct:
    """What acting on one pickupable object gave."""

    object_id: str
    type: str
    receptacle: str  # where it started ('' on the floor)
    picked: bool
    put_back: bool
    steps: int
    reason: str = ""  # why not picked or not put back ('' when both worked)


# Like the oracle in an episode, a failed action is followed by a fresh plan from where the agent
# stands (a lattice move can graze a corner the conservative grid let through): this many plans.
MAX_PLANS = 3


def _drive(env: EmbeddedEnvironment, make_script: Callable[[], Iterator[Action]], budget: int) -> tuple[int, str]:
    """Step the environment through a script of actions, re-planning after a failed action at
    most ``MAX_PLANS`` times: (steps, '' or the last failure)."""
    steps, why = 0, ""
    for _ in range(MAX_PLANS):
        try:
            for action in make_script():
                if steps >= budget:
                    return steps, f"more than {MAX_STEPS} steps"
                result = env.step(action)
                steps += 1
                if not result.success:
                    why = f"{action.name} failed: {result.error}"
                    break
            else:
                return steps, ""
        except OracleError as exc:  # no plan at all: planning again from here changes nothing
            return steps, str(exc)
    return steps, why


def act_on_object(env: EmbeddedEnvironment, house: dict[str, Any], object_id: str) -> ObjectAct:
    """Reset the house, fetch one object with the oracle, put it back where it was."""
    env.reset(house)
    table = env.table
    assert table is not None  # reset() built it
    obj = table.objects[object_id]
    origin = table.objects.get(obj.parent) if obj.parent else None
    oracle = OraclePlanner(env)
    steps, why = _drive(env, lambda: oracle.fetch_script(obj), MAX_STEPS)
    picked = not why and table.held == object_id
    if not picked:
        return ObjectAct(object_id, obj.type, origin.id if origin else "", False, False, steps,
                         why or "the oracle's script ended without holding it")
    if origin is None:
        return ObjectAct(object_id, obj.type, "", True, False, steps, "it lay on no receptacle: nothing to put it back on")
    more, why = _drive(env, lambda: oracle.place_script(obj, origin), MAX_STEPS - steps)
    put_back = not why and table.held is None and obj.parent == origin.id
    return ObjectAct(object_id, obj.type, origin.id, True, put_back, steps + more,
                     "" if put_back else (why or f"not back on {origin.id}"))


def act_house(house: dict[str, Any]) -> list[ObjectAct]:
    """Every active pickupable object of the house, acted on one at a time from the start."""
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    env.reset(house)
    table = env.table
    assert table is not None  # reset() built it
    ids = sorted(oid for oid, o in table.objects.items() if o.active and o.affords("pickupable"))
    out = []
    for oid in ids:
        try:
            out.append(act_on_object(env, house, oid))
        except (HouseError, ValueError, KeyError, IndexError, RuntimeError) as exc:  # named, never fatal
            obj = table.objects.get(oid)
            out.append(ObjectAct(oid, obj.type if obj else "", "", False, False, 0,
                                 f"acting raised {type(exc).__name__}: {exc}"))
    return out
