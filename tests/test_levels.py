"""Furniture with levels (sim_bridge/embedded/levels.py): open shelves, drawers and seats derived
from where a house rests things, and what an agent can do with them (issue 30)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from household.assets import default_catalog
from household.house_data import load_house
from sim_bridge.embedded import levels as lv
from sim_bridge.embedded.env import AgentPose, EmbeddedConfig, EmbeddedEnvironment
from sim_bridge.embedded.interactions import InteractionError, find_placement, find_spot
from sim_bridge.embedded.objects import SimObject

CATALOG = default_catalog()


# ---- the derivation, on numbers -------------------------------------------------------------

def test_cluster_levels_merges_heights_within_ten_centimetres():
    assert lv.cluster_levels([0.40, 0.09, 0.12, 0.45, 0.9]) == [0.09, 0.40, 0.9]
    assert lv.cluster_levels([]) == []


def test_split_levels_dresser_holds_everything_in_drawers():
    shelves, drawers = lv.split_levels(1.0, "drawers", [(0.1, 0.2, "a"), (0.5, 0.6, "b")])
    assert shelves == [] and {oid for _, _, oid in drawers} == {"a", "b"}


def test_split_levels_low_slot_under_the_top_is_a_drawer_roomy_level_a_shelf():
    # a 0.63 m side table: things at 0.53 have 8 cm under the top board (a drawer), at 0.1 a shelf
    shelves, drawers = lv.split_levels(0.63, "shelves", [(0.10, 0.2, "low"), (0.53, 0.55, "slot")])
    assert shelves == [0.10]
    assert [oid for _, _, oid in drawers] == ["slot"]


def test_drawer_bands_enclose_contents_and_fill_up_to_the_next_drawer():
    bands = lv.drawer_bands(1.0, [(0.10, 0.30), (0.12, 0.20), (0.50, 0.55)])
    assert len(bands) == 2
    (lo0, hi0), (lo1, hi1) = bands
    assert lo0 <= 0.10 and hi0 >= 0.30  # holds the tallest thing of the first drawer
    assert hi0 == pytest.approx(lo1 - lv.BOARD_M)  # reaches up to a board under the next
    assert hi1 == pytest.approx(1.0 - lv.BOARD_M)  # the last ends under the top board


def test_things_resting_a_few_centimetres_apart_share_one_drawer():
    # Dev house 40's dresser: a pencil rests at 0.195 m, a phone at 0.24 m (assets' boxes do not
    # start at their visible bottoms). One drawer holds both; before, the pencil got a 5 cm
    # drawer of its own that no camera could look into.
    bands = lv.drawer_bands(1.11, [(0.195, 0.205), (0.24, 0.26), (0.50, 0.55)])
    assert len(bands) == 2
    (lo0, hi0), (lo1, _) = bands
    assert lo0 <= 0.195 and hi0 >= 0.26
    assert lo1 <= 0.50 < 0.50 + lv.LEVEL_MERGE_M
    # a chain further apart than the merge distance still starts a drawer of its own
    assert len(lv.drawer_bands(1.11, [(0.10, 0.12), (0.25, 0.27)])) == 2


def test_drawer_band_stops_under_an_open_shelf_above_it():
    (lo, hi), = lv.drawer_bands(1.0, [(0.05, 0.1)], shelves=(0.5,))
    assert hi <= 0.5 - lv.BOARD_M


def test_shelf_parts_leave_each_level_open_between_boards():
    size = np.array([1.0, 0.8, 0.5])
    parts = lv.shelf_parts(size, (0.3,))
    tops = sorted(float(p.center[1] + p.size[1] / 2.0) for p in parts if p.size[2] == pytest.approx(0.5))
    # boards: one under the 0.3 level (its top at 0.3 above the bottom) and the top board
    assert tops == pytest.approx([-0.4 + 0.3, 0.4])
    back = [p for p in parts if p.size[2] < 0.5]
    assert len(back) == 1 and back[0].center[2] < 0  # the back panel at local -z (an asset's back)


# ---- the catalog knows what the simulator makes ----------------------------------------------

def test_catalog_knows_drawers_and_shelving_units_as_receptacles():
    drawer = CATALOG.type_info("Drawer")
    assert drawer is not None and drawer.openable and drawer.receptacle and not drawer.pickupable
    unit = CATALOG.type_info("ShelvingUnit")
    assert unit is not None and unit.receptacle


# ---- real dev houses --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def house0():
    return load_house("houses_dev.jsonl.gz", 0)


@pytest.fixture()
def env0(house0):
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    env.reset(house0)
    return env


def test_dev_house_0_levels(env0):
    t = env0.table
    assert t is not None
    # the phone in the 8 cm slot under side table 4|4's top lies in a drawer of it
    phone = t.objects["small|4|8"]
    drawer = t.objects[phone.parent]
    assert drawer.type == "Drawer" and drawer.part_of == "4|4" and not drawer.is_open
    # the vase on the shelving unit's lower shelf rests on the unit, no longer sealed inside it
    assert t.objects["small|6|37"].parent == "6|2"
    assert "small|6|37" not in {p.object_id for p in env0.placement_problems}
    assert t.objects["6|2"].levels and t.objects["7|0|0"].levels  # shelving unit, TV stand
    # a drawer is no obstacle of its own: its dresser's box is
    assert all(oid != drawer.id for oid in env0.collision._obj_ids)


def test_closed_drawer_hides_and_refuses_open_drawer_slides_out_with_contents(env0):
    t = env0.table
    phone = t.objects["small|4|8"]
    drawer = t.objects[phone.parent]
    with pytest.raises(InteractionError, match="closed"):
        t.pickup(phone.id, np.zeros(3))
    before_d, before_p = drawer.position.copy(), phone.position.copy()
    t.open(drawer.id, True)
    out = drawer.rotation() @ np.array([0.0, 0.0, lv.DRAWER_SLIDE_SHARE * drawer.size[2]])
    np.testing.assert_allclose(drawer.position - before_d, out, atol=1e-9)
    np.testing.assert_allclose(phone.position - before_p, out, atol=1e-9)
    assert drawer.open_faces() == (True, True)  # drawn without front and top
    t.open(drawer.id, False)
    np.testing.assert_allclose(drawer.position, before_d, atol=1e-9)
    np.testing.assert_allclose(phone.position, before_p, atol=1e-9)
    assert drawer.open_faces() == (False, False)


def test_the_oracle_takes_a_phone_out_of_a_drawer_and_puts_it_back(house0):
    from evaluation.audit_act import act_on_object

    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    result = act_on_object(env, house0, "small|4|8")
    assert result.picked and result.put_back, result.reason
    assert env.table is not None and env.table.objects["small|4|8"].parent.startswith("4|4|Drawer|")


def test_an_open_drawer_shows_its_contents_from_in_front(env0):
    t = env0.table
    phone = t.objects["small|4|8"]
    drawer = t.objects[phone.parent]
    owner = t.objects[drawer.part_of]
    front = owner.rotation() @ np.array([0.0, 0.0, 1.0])
    stand = owner.position + front * (owner.size[2] / 2.0 + 0.45)
    yaw = float(np.degrees(np.arctan2(-front[0], -front[2]))) % 360.0
    poses = [AgentPose(float(stand[0]), float(stand[2]), yaw, h) for h in (30.0, 60.0)]
    assert not any(env0.is_visible(phone.id, p) for p in poses)
    t.open(drawer.id, True)
    assert any(env0.is_visible(phone.id, p) for p in poses)


def test_put_on_a_tv_stand_lands_on_top_and_lower_shelf_things_do_not_crowd_it(env0):
    t = env0.table
    stand = t.objects["7|0|0"]
    low = [c for c in t.children(stand.id) if c.position[1] - c.size[1] / 2.0 < stand.surface_y() - 0.05]
    assert low, "the TV stand holds something on its lower shelf"
    obj = t.objects["small|4|8"]
    spot = find_placement(obj, stand, t.children(stand.id))
    assert spot is not None
    assert spot[1] - obj.size[1] / 2.0 == pytest.approx(stand.surface_y())


def test_put_on_a_tall_shelving_unit_lands_on_a_shelf_near_the_hand():
    asset = CATALOG.type_info("ShelvingUnit")
    book = CATALOG.type_info("Book")
    assert asset is not None and book is not None
    unit = SimObject("unit", "ShelvingUnit", asset, np.array([0.0, 1.0, 0.0]), 0.0, np.array([1.0, 2.0, 0.4]),
                     levels=(0.3, 1.15))
    thing = SimObject("book", "Book", book, np.array([5.0, 0.5, 5.0]), 0.0, np.array([0.2, 0.05, 0.15]))
    spot = find_placement(thing, unit, [])
    assert spot is not None
    assert spot[1] - 0.025 == pytest.approx(1.15)  # the shelf at 1.15 m, not the 2 m top


def test_a_bed_with_pillows_against_its_headboard_is_drawn_to_its_mattress():
    house = load_house("houses_dev.jsonl.gz", 11)
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    env.reset(house)
    assert env.table is not None
    bed = env.table.objects["4|1|0"]
    assert bed.type == "Bed" and bed.surface is not None and bed.surface < 0.9 * bed.size[1]
    assert any(c.position[1] - c.size[1] / 2.0 >= bed.surface_y() + 0.1 for c in env.table.children(bed.id))


def test_drawer_put_refused_closed_then_lands_inside_when_open(env0):
    t = env0.table
    phone = t.objects["small|4|8"]
    drawer = t.objects[phone.parent]
    pen = next(o for o in t.objects.values() if o.type in ("Pencil", "Pen") and o.parent and "Drawer" not in o.parent)
    t.objects[pen.id].parent = None
    t.held = pen.id
    pen.is_picked_up = True
    with pytest.raises(InteractionError, match="closed"):
        t.put(drawer.id, find_spot)
    t.open(drawer.id, True)
    t.put(drawer.id, find_spot)
    assert pen.parent == drawer.id
    lo, hi = drawer.aabb()
    assert lo[1] - 1e-6 <= pen.position[1] <= hi[1] + 1e-6


def test_the_acting_audit_picks_up_what_drawers_and_shelves_held():
    """Dev houses 0 and 1 (of the labelled sample in benchmarks/results/audit-act-dev-sample.tsv):
    before levels the oracle picked up 37 of 44 and 55 of 64 objects; drawers, open shelves and
    shelving units make all but one reachable (a watch on a side table's low shelf)."""
    from evaluation.audit_act import act_house

    logging.disable(logging.WARNING)
    try:
        results = [r for h in (0, 1) for r in act_house(load_house("houses_dev.jsonl.gz", h))]
    finally:
        logging.disable(logging.NOTSET)
    assert len(results) == 108
    assert sum(r.picked for r in results) >= 107


def test_opening_a_plain_container_moves_nothing(env0):
    t = env0.table
    box = next(o for o in t.objects.values() if o.must_be_open and o.type != "Drawer")
    before = box.position.copy()
    t.open(box.id, not box.is_open)
    np.testing.assert_allclose(box.position, before)
