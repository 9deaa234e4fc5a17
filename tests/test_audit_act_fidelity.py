"""What the acting audit (``worldmind audit houses --act``) gained in the fourth 2026-11-28 session
(issue 30), each on the real dev-house object that showed it: chairs drawn as seat and back, the
drawers of a dresser one per level, a walk that ends with one shorter step, and a lattice plan
that replays along the moves it checked."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.audit_act import act_on_object
from household.house_data import load_house
from household.types import Action
from privileged.oracle import OraclePlanner
from sim_bridge.embedded import levels as lv
from sim_bridge.embedded.env import AgentPose, EmbeddedConfig, EmbeddedEnvironment


@pytest.fixture(scope="module")
def env() -> EmbeddedEnvironment:
    return EmbeddedEnvironment(EmbeddedConfig(render=False))


def test_a_chair_is_a_seat_and_a_back_panel_at_its_back() -> None:
    size = np.array([0.5, 1.0, 0.6])
    seat, back = lv.chair_parts(size, None)
    assert seat.center[1] + seat.size[1] / 2.0 == pytest.approx(-0.5 + lv.CHAIR_SEAT_SHARE * 1.0)
    assert seat.size[2] == pytest.approx(0.6)  # the whole footprint up to the seat
    assert back.size[2] == pytest.approx(lv.CHAIR_BACK_M)
    assert back.center[2] == pytest.approx(-0.3 + lv.CHAIR_BACK_M / 2.0)  # at local -z: the back
    assert back.center[1] + back.size[1] / 2.0 == pytest.approx(0.5)  # up to the top
    # a seat the house rests something on is used as it is
    seat, _ = lv.chair_parts(size, 0.42)
    assert seat.size[1] == pytest.approx(0.42)


def test_every_chair_of_a_house_is_drawn_as_its_seat_and_back_and_collides_as_its_box(env) -> None:
    env.reset(load_house("houses_dev.jsonl.gz", 43))
    assert env.table is not None
    chairs = [o for o in env.table.objects.values() if o.type == "Chair"]
    assert chairs
    for chair in chairs:
        assert chair.render_parts is not None and len(chair.render_parts) == 2
        assert chair.parts is None  # collision, reach and placement keep the box


def test_a_card_on_a_dining_table_behind_a_tucked_in_chair_is_picked_up(env) -> None:
    """Dev house 43: every floor cell within range of the credit card lies behind chairs pushed
    under the table; drawn as solid boxes up to their backrests' height they hid it from all."""
    done = act_on_object(env, load_house("houses_dev.jsonl.gz", 43), "small|6|43")
    assert done.picked and done.put_back, done.reason


def test_a_pencil_resting_under_a_phone_shares_its_drawer_and_is_picked_up(env) -> None:
    """Dev house 40: a pencil rests 4.5 cm below a phone in a dresser; it had a 5 cm drawer of
    its own that no pose could look into."""
    house = load_house("houses_dev.jsonl.gz", 40)
    env.reset(house)
    t = env.table
    assert t is not None
    assert t.objects["small|4|1"].parent == t.objects["small|4|3"].parent  # one drawer
    done = act_on_object(env, house, "small|4|1")
    assert done.picked and done.put_back, done.reason


def test_a_walk_to_a_sliver_of_floor_ends_with_one_shorter_step(env) -> None:
    """Dev house 80: the only floor within range of the remote is a few centimetres across,
    where no pose of the 0.25 m lattice lies; the oracle's walk ends with a MoveX of a
    moveMagnitude under a step (THOR takes one) and then sees and picks it up."""
    env.reset(load_house("houses_dev.jsonl.gz", 80))
    t = env.table
    assert t is not None
    remote = t.objects["small|10|60"]
    oracle = OraclePlanner(env)
    taken: list[Action] = []
    for action in oracle.fetch_script(remote):
        result = env.step(action)
        assert result.success, (action, result.error)
        taken.append(action)
    assert t.held == remote.id
    short = [a for a in taken if "moveMagnitude" in a.args]
    assert len(short) == 1 and 0.0 < short[0].args["moveMagnitude"] < env.config.move_step
    assert taken.index(short[0]) > max(i for i, a in enumerate(taken) if a.name.startswith("Move") and not a.args)


def test_every_lattice_walk_of_the_oracle_ends_where_its_search_tested_the_pose(env) -> None:
    """Each walk the oracle plans ends on a pose that sees the object within range, and no move
    of it is blocked: the plan replays along the moves its search checked. Over the first 12
    pickupable objects of dev house 11."""
    house = load_house("houses_dev.jsonl.gz", 11)
    env.reset(house)
    assert env.table is not None
    ids = sorted(o.id for o in env.table.objects.values() if o.active and o.affords("pickupable"))[:12]
    walked = 0
    for oid in ids:
        env.reset(house)
        obj = env.table.objects[oid]
        oracle = OraclePlanner(env)
        found = oracle._search_pose(obj, standing=True)
        if found is None:
            continue
        actions, _, horizon = found
        for action in actions:
            assert env.step(action).success, (oid, action)
        walked += 1
        assert env.is_visible(oid, AgentPose(env.pose.x, env.pose.z, env.pose.yaw, horizon)), oid
        assert env.range_distance(obj) <= env.config.reach, oid
    assert walked >= 8
