"""THOR object semantics on the ObjectTable alone (no agent, no renderer).

Objects are hand-made from the packaged asset database (``catalog.type_info``) and laid out as a
small kitchen in THOR's frame; a few tests use the real objects of dev house 0. The agent-side
preconditions (visibility, reach) belong to the environment and are tested there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from household.assets import BASIN_DEPTH, AssetCatalog, default_catalog
from household.house_data import load_house
from sim_bridge.embedded.interactions import InteractionError, ObjectTable, find_placement, find_spot
from sim_bridge.embedded.objects import SimObject, build_objects

HAND = np.array([0.0, 1.2, -1.0])


@pytest.fixture(scope="module")
def catalog() -> AssetCatalog:
    return default_catalog()


def _make(catalog: AssetCatalog, object_id: str, object_type: str, position: tuple[float, float, float],
          parent: str | None = None, yaw: float = 0.0, **state: Any) -> SimObject:
    asset = catalog.type_info(object_type)
    assert asset is not None, object_type
    obj = SimObject(object_id, object_type, asset, np.array(position, float), yaw, np.array(asset.size, float),
                    parent=parent)
    for key, value in state.items():
        setattr(obj, key, value)
    return obj


def _kitchen(catalog: AssetCatalog) -> ObjectTable:
    """A counter with small things on it, appliances standing on it, a fridge with a tomato inside,
    and a sink with its faucet a little further away."""
    m = lambda *args, **kw: _make(catalog, *args, **kw)  # noqa: E731
    objects = [
        m("counter", "CounterTop", (0.0, 0.47, 0.0)),
        m("mug", "Mug", (0.2, 1.0, 0.2), parent="counter"),
        m("pen", "Pen", (0.2, 1.0, 0.2), parent="mug"),
        m("pencil", "Pencil", (0.21, 1.0, 0.2), parent="mug"),
        m("cup", "Cup", (0.4, 1.01, 0.4), parent="counter", is_dirty=True),
        m("apple", "Apple", (-0.4, 1.0, 0.4), parent="counter"),
        m("potato", "Potato", (-0.6, 0.98, 0.4), parent="counter"),
        m("bread", "Bread", (-0.2, 1.02, -0.4), parent="counter"),
        m("egg", "Egg", (0.0, 0.98, -0.6), parent="counter"),
        m("knife", "Knife", (0.6, 0.96, -0.4), parent="counter"),
        m("butterknife", "ButterKnife", (0.7, 0.95, -0.4), parent="counter"),
        m("box", "Box", (-1.0, 1.1, -1.0), parent="counter"),
        m("coffee", "CoffeeMachine", (1.0, 1.16, 1.0)),
        m("microwave", "Microwave", (-1.0, 1.12, 1.0)),
        m("toaster", "Toaster", (1.0, 1.04, -1.0)),
        m("fridge", "Fridge", (3.0, 0.98, 0.0)),
        m("tomato", "Tomato", (3.0, 1.2, 0.0), parent="fridge"),
        m("sink", "Sink", (0.0, 0.52, 3.0)),
        m("faucet", "Faucet", (0.0, 1.1, 3.35)),
    ]
    table = ObjectTable({o.id: o for o in objects}, catalog)
    table.apply_effects()
    return table


@pytest.fixture()
def table(catalog: AssetCatalog) -> ObjectTable:
    return _kitchen(catalog)


def _carry(table: ObjectTable, object_id: str, receptacle_id: str) -> None:
    """Pick an object up and put it in/on a receptacle."""
    table.pickup(object_id, HAND)
    table.put(receptacle_id, find_spot)


def _inside_footprint(obj: SimObject, receptacle: SimObject) -> bool:
    return receptacle.contains_xz(float(obj.position[0]), float(obj.position[2]), margin=1e-6)


def _never_fits(obj: SimObject, receptacle: SimObject, siblings: list[SimObject]) -> tuple[np.ndarray, float] | None:
    return None


# ---- lookups ---------------------------------------------------------------------------------

def test_unknown_object_id_is_named(table: ObjectTable) -> None:
    with pytest.raises(InteractionError, match="no-such-thing"):
        table.get("no-such-thing")
    with pytest.raises(InteractionError, match="no-such-thing"):
        table.pickup("no-such-thing", HAND)
    with pytest.raises(InteractionError, match="no-such-thing"):
        table.open("no-such-thing", True)


def test_containment_queries(table: ObjectTable) -> None:
    assert {o.id for o in table.children("mug")} == {"pen", "pencil"}
    assert {o.id for o in table.descendants("counter")} >= {"mug", "pen", "pencil", "cup"}
    assert [a.id for a in table.ancestors(table.objects["pen"])] == ["mug", "counter"]
    assert table.enclosed_by_closed(table.objects["tomato"]).id == "fridge"
    assert table.enclosed_by_closed(table.objects["apple"]) is None


# ---- pickup ----------------------------------------------------------------------------------

def test_pickup_holds_the_object_at_the_hand(table: ObjectTable) -> None:
    version = table.version
    table.pickup("apple", HAND)
    apple = table.objects["apple"]
    assert table.held == "apple"
    assert apple.is_picked_up and apple.parent is None
    np.testing.assert_allclose(apple.position, HAND)
    assert table.version > version


def test_only_one_object_is_held(table: ObjectTable) -> None:
    table.pickup("apple", HAND)
    with pytest.raises(InteractionError) as info:
        table.pickup("potato", HAND)
    assert "apple" in str(info.value) and "potato" in str(info.value)
    assert table.held == "apple"
    assert not table.objects["potato"].is_picked_up and table.objects["potato"].parent == "counter"


@pytest.mark.parametrize("object_id", ["counter", "fridge", "sink", "faucet"])
def test_non_pickupable_fails(table: ObjectTable, object_id: str) -> None:
    with pytest.raises(InteractionError, match=f"{object_id} .*not pickupable"):
        table.pickup(object_id, HAND)
    assert table.held is None


def test_pickup_inside_closed_fridge_fails_until_opened(table: ObjectTable) -> None:
    with pytest.raises(InteractionError) as info:
        table.pickup("tomato", HAND)
    assert "tomato" in str(info.value) and "fridge" in str(info.value)
    assert table.held is None
    table.open("fridge", True)
    table.pickup("tomato", HAND)
    assert table.held == "tomato"


def test_pickup_inside_container_inside_closed_fridge_fails(table: ObjectTable) -> None:
    """Containment is transitive: a pen in a mug in a closed fridge is out of reach too."""
    table.open("fridge", True)
    _carry(table, "mug", "fridge")
    table.open("fridge", False)
    with pytest.raises(InteractionError, match="pen"):
        table.pickup("pen", HAND)
    with pytest.raises(InteractionError, match="mug"):
        table.pickup("mug", HAND)


def test_carrying_a_mug_carries_the_pens_in_it(table: ObjectTable) -> None:
    mug, pen, pencil = (table.objects[k] for k in ("mug", "pen", "pencil"))
    offset = pen.position - mug.position
    table.pickup("mug", HAND)
    for thing in (pen, pencil):
        assert thing.parent == "mug" and thing.is_picked_up
    np.testing.assert_allclose(pen.position - mug.position, offset)
    table.move_held(HAND + np.array([1.0, 0.0, 2.0]))  # the agent walks
    np.testing.assert_allclose(pen.position - mug.position, offset)
    np.testing.assert_allclose(mug.position, HAND + np.array([1.0, 0.0, 2.0]))
    table.put("counter", find_spot)
    assert not pen.is_picked_up and pen.parent == "mug"
    np.testing.assert_allclose(pen.position - mug.position, offset)
    assert _inside_footprint(pen, table.objects["counter"])


# ---- put -------------------------------------------------------------------------------------

def test_put_without_holding_fails(table: ObjectTable) -> None:
    with pytest.raises(InteractionError, match="not holding"):
        table.put("counter", find_spot)


def test_put_on_counter(table: ObjectTable) -> None:
    _carry(table, "apple", "counter")
    apple, counter = table.objects["apple"], table.objects["counter"]
    assert table.held is None and apple.parent == "counter" and not apple.is_picked_up
    assert _inside_footprint(apple, counter)
    # it rests on the top face, not inside the counter
    assert apple.position[1] - apple.size[1] / 2.0 == pytest.approx(counter.aabb()[1][1], abs=0.02)


@pytest.mark.parametrize("asset_id", ["Sink_4", "Sink_19", "Sink_10"])
def test_put_in_a_sink_rests_in_its_basin(catalog: AssetCatalog, asset_id: str) -> None:
    """A pedestal sink's box reaches the floor (Sink_4, Sink_19: 1 m tall); what is put in it
    rests in the basin under the rim, as ProcTHOR places sink contents. A countertop sink
    (Sink_10, 0.16 m tall) is all basin: its floor stays 10% up the box."""
    asset = catalog.get(asset_id)
    assert asset is not None and asset.object_type == "Sink"
    sink = SimObject("sink", "Sink", asset, np.array([0.0, 0.5, 0.0]), 0.0, np.array(asset.size, float))
    mug = _make(catalog, "mug", "Mug", (2.0, 1.0, 0.0))
    spot = find_placement(mug, sink, [])
    assert spot is not None
    rim = sink.position[1] + sink.size[1] / 2.0
    floor = spot[1] - mug.size[1] / 2.0
    expected = max(rim - sink.size[1] + 0.1 * sink.size[1], rim - BASIN_DEPTH["Sink"])
    assert floor == pytest.approx(expected) and rim - floor <= BASIN_DEPTH["Sink"] + 1e-9


def test_put_in_a_pot_rests_on_its_floor(catalog: AssetCatalog) -> None:
    pot = _make(catalog, "pot", "Pot", (0.0, 1.0, 0.0))
    egg = _make(catalog, "egg", "Egg", (2.0, 1.0, 0.0))
    spot = find_placement(egg, pot, [])
    assert spot is not None
    assert spot[1] - egg.size[1] / 2.0 == pytest.approx(pot.position[1] - 0.4 * pot.size[1])


def test_put_into_closed_fridge_fails_then_succeeds_when_open(table: ObjectTable) -> None:
    table.pickup("apple", HAND)
    with pytest.raises(InteractionError) as info:
        table.put("fridge", find_spot)
    assert "fridge" in str(info.value) and "closed" in str(info.value)
    assert table.held == "apple"  # still in hand after the failure
    table.open("fridge", True)
    table.put("fridge", find_spot)
    apple, fridge = table.objects["apple"], table.objects["fridge"]
    assert apple.parent == "fridge"
    lo, hi = fridge.aabb()
    assert np.all(apple.position >= lo) and np.all(apple.position <= hi)  # inside the box


def test_put_on_non_receptacle_fails(table: ObjectTable) -> None:
    table.pickup("apple", HAND)
    with pytest.raises(InteractionError, match="potato .*not a receptacle"):
        table.put("potato", find_spot)


def test_put_into_itself_or_its_contents_fails(table: ObjectTable) -> None:
    table.pickup("mug", HAND)
    with pytest.raises(InteractionError):
        table.put("mug", find_spot)
    with pytest.raises(InteractionError):
        table.put("pen", find_spot)
    assert table.held == "mug"


def test_coffee_machine_takes_only_mugs_and_cups(table: ObjectTable) -> None:
    table.pickup("apple", HAND)
    with pytest.raises(InteractionError) as info:
        table.put("coffee", find_spot)
    message = str(info.value)
    assert "coffee" in message and "Mug" in message and "Apple" in message
    table.put("counter", find_spot)
    _carry(table, "mug", "coffee")
    assert table.objects["mug"].parent == "coffee"
    _carry(table, "mug", "counter")
    _carry(table, "cup", "coffee")
    assert table.objects["cup"].parent == "coffee"


def test_toaster_takes_only_bread_slices(table: ObjectTable) -> None:
    table.pickup("bread", HAND)
    with pytest.raises(InteractionError, match="toaster"):
        table.put("toaster", find_spot)


def test_no_room_is_an_error_naming_both(table: ObjectTable) -> None:
    table.pickup("apple", HAND)
    with pytest.raises(InteractionError) as info:
        table.put("counter", _never_fits)
    assert "apple" in str(info.value) and "counter" in str(info.value)
    assert table.held == "apple"


def test_big_object_does_not_fit_in_a_small_container(table: ObjectTable) -> None:
    table.pickup("bread", HAND)
    with pytest.raises(InteractionError, match="No valid positions"):
        table.put("cup", find_spot)
    assert table.held == "bread"


def test_placement_avoids_siblings(table: ObjectTable) -> None:
    counter = table.objects["counter"]
    spots = []
    for object_id in ("apple", "potato", "egg"):
        _carry(table, object_id, "counter")
        spots.append(table.objects[object_id].position)
    for i in range(len(spots)):
        for j in range(i):
            assert np.linalg.norm(spots[i][[0, 2]] - spots[j][[0, 2]]) > 0.05
    assert all(_inside_footprint(table.objects[k], counter) for k in ("apple", "potato", "egg"))


def test_a_surface_takes_what_fits_beside_its_things_as_rectangles(catalog: AssetCatalog) -> None:
    # dev-078-0's coffee table (1.06 x 0.64 m) carrying a 0.44 x 0.46 m box and a bowl: the
    # disc test refused a newspaper there; THOR puts it beside them, and so do we
    table = _make(catalog, "table", "CoffeeTable", (0.0, 0.17, 0.0))
    table.size = np.array([1.06, 0.35, 0.64])
    box = _make(catalog, "box", "Box", (0.03, 0.52, 0.13), parent="table")
    box.size = np.array([0.44, 0.32, 0.46])
    bowl = _make(catalog, "bowl", "Bowl", (-0.33, 0.40, 0.12), parent="table")
    paper = _make(catalog, "paper", "Newspaper", (5.0, 0.5, 5.0))
    paper.size = np.array([0.36, 0.04, 0.13])
    found = find_spot(paper, table, [box, bowl])
    assert found is not None
    spot, yaw = found
    assert yaw % 90.0 == 0.0  # square to the table, as THOR places
    placed = _make(catalog, "placed", "Newspaper", tuple(spot), yaw=yaw)
    placed.size = paper.size
    for other in (box, bowl):  # footprints apart, not merely centres
        a, b = placed.corners(), other.corners()
        assert (a[:, 0].max() <= b[:, 0].min() + 1e-9 or b[:, 0].max() <= a[:, 0].min() + 1e-9
                or a[:, 2].max() <= b[:, 2].min() + 1e-9 or b[:, 2].max() <= a[:, 2].min() + 1e-9)
    c = placed.corners()
    assert np.all(np.abs(c[:, 0]) <= 0.53 + 1e-9) and np.all(np.abs(c[:, 2]) <= 0.32 + 1e-9)  # on the top
    full = [_make(catalog, f"b{k}", "Box", (x, 0.52, z), parent="table")
            for k, (x, z) in enumerate([(-0.27, -0.16), (0.27, -0.16), (-0.27, 0.16), (0.27, 0.16)])]
    for b in full:
        b.size = np.array([0.52, 0.3, 0.31])
    assert find_placement(paper, table, full) is None  # a top covered edge to edge refuses


def test_a_thing_put_down_turns_square_to_the_receptacle_and_takes_its_contents_along(catalog: AssetCatalog) -> None:
    # dev-020-0: a remote held at 72 degrees does not fit between a tissue box and a book on a
    # 0.57 m coffee table as it is; turned square to the table, as THOR turns what it places, it does
    table = _make(catalog, "table", "CoffeeTable", (0.0, 0.07, 0.0), yaw=180.0)
    table.size = np.array([0.57, 0.14, 0.57])
    things = []
    for oid, kind, (x, z), size in (("tissues", "TissueBox", (0.005, -0.195), (0.2, 0.15, 0.1)),
                                    ("book", "Book", (0.005, 0.135), (0.16, 0.02, 0.22))):
        o = _make(catalog, oid, kind, (x, 0.2, z), parent="table")
        o.size = np.array(size)
        things.append(o)
    remote = _make(catalog, "remote", "RemoteControl", (3.0, 0.5, 3.0), yaw=72.4)
    remote.size = np.array([0.068, 0.022, 0.219])
    found = find_spot(remote, table, things)
    assert found is not None and found[1] % 90.0 == 0.0
    assert find_placement(remote, table, things) is not None
    # the table's put applies the turn, and a mug's pens turn and move with it
    objects = [table, _make(catalog, "mug", "Mug", (2.0, 0.9, 2.0), yaw=30.0),
               _make(catalog, "pen", "Pen", (2.03, 0.95, 2.0), parent="mug", yaw=30.0)]
    t = ObjectTable({o.id: o for o in objects}, catalog)
    t.pickup("mug", np.array([2.0, 1.2, 1.5]))
    before = np.linalg.norm(t.objects["pen"].position - t.objects["mug"].position)
    t.put("table", find_spot)
    mug, pen = t.objects["mug"], t.objects["pen"]
    assert mug.parent == "table" and mug.yaw_deg % 90.0 == 0.0 and pen.yaw_deg % 90.0 == 0.0
    assert np.linalg.norm(pen.position - mug.position) == pytest.approx(before)


def test_a_put_lands_at_the_free_spot_nearest_the_hand(catalog: AssetCatalog) -> None:
    # THOR's PutObject takes the spawn point nearest the agent: a knife put on a deep TV stand
    # from its front lands at the front edge, not in the middle behind a candle (dev-063-0)
    stand = _make(catalog, "stand", "TVStand", (0.0, 0.36, 0.0))
    stand.size = np.array([1.01, 0.72, 0.66])
    candle = _make(catalog, "candle", "Candle", (0.0, 0.8, 0.0), parent="stand")
    candle.size = np.array([0.04, 0.17, 0.04])
    knife = _make(catalog, "knife", "Knife", (0.0, 1.0, -1.0))
    knife.size = np.array([0.01, 0.05, 0.33])
    hand = np.array([0.0, 1.2, -0.8])  # in front of the stand (its -z side)
    near = find_spot(knife, stand, [candle], near=hand)
    centred = find_spot(knife, stand, [candle])
    assert near is not None and centred is not None
    placed = _make(catalog, "placed", "Knife", tuple(near[0]), yaw=near[1])
    placed.size = knife.size
    c = placed.corners()
    assert near[0][2] < -0.1  # at the front
    assert np.all(np.abs(c[:, 0]) <= 0.505 + 1e-9) and np.all(np.abs(c[:, 2]) <= 0.33 + 1e-9)  # on the top
    assert abs(centred[0][2]) < abs(near[0][2])  # without a hand: nearest the centre
    assert find_placement(knife, stand, [candle]) is not None


# ---- open / close / toggle -------------------------------------------------------------------

def test_open_and_close(table: ObjectTable) -> None:
    table.open("fridge", True)
    assert table.objects["fridge"].is_open
    with pytest.raises(InteractionError, match="fridge .*already open"):
        table.open("fridge", True)
    table.open("fridge", False)
    assert not table.objects["fridge"].is_open
    with pytest.raises(InteractionError, match="fridge .*already closed"):
        table.open("fridge", False)


def test_not_openable(table: ObjectTable) -> None:
    with pytest.raises(InteractionError, match="counter .*not openable"):
        table.open("counter", True)


def test_microwave_cannot_open_while_running(table: ObjectTable) -> None:
    table.toggle("microwave", True)
    with pytest.raises(InteractionError, match="microwave"):
        table.open("microwave", True)
    assert not table.objects["microwave"].is_open
    table.toggle("microwave", False)
    table.open("microwave", True)
    assert table.objects["microwave"].is_open


def test_open_microwave_cannot_be_turned_on(table: ObjectTable) -> None:
    table.open("microwave", True)
    with pytest.raises(InteractionError, match="microwave"):
        table.toggle("microwave", True)
    assert not table.objects["microwave"].is_toggled


def test_toggle(table: ObjectTable) -> None:
    table.toggle("faucet", True)
    assert table.objects["faucet"].is_toggled
    with pytest.raises(InteractionError, match="faucet .*already on"):
        table.toggle("faucet", True)
    table.toggle("faucet", False)
    with pytest.raises(InteractionError, match="faucet .*already off"):
        table.toggle("faucet", False)
    with pytest.raises(InteractionError, match="apple .*not toggleable"):
        table.toggle("apple", True)


# ---- slice -----------------------------------------------------------------------------------

def test_slice_needs_a_knife_in_hand(table: ObjectTable) -> None:
    with pytest.raises(InteractionError, match="apple"):
        table.slice("apple")
    table.pickup("potato", HAND)
    with pytest.raises(InteractionError, match="apple"):
        table.slice("apple")
    assert not table.objects["apple"].is_sliced and table.objects["apple"].active


@pytest.mark.parametrize("slicer", ["knife", "butterknife"])
def test_slice_apple(table: ObjectTable, slicer: str) -> None:
    table.pickup(slicer, HAND)
    apple = table.objects["apple"]
    pieces = table.slice("apple")
    assert len(pieces) >= 2
    assert apple.is_sliced and not apple.active
    with pytest.raises(InteractionError, match="apple"):
        table.get("apple")  # gone from the scene ...
    assert "apple" in table.objects  # ... but kept for metadata
    for piece in pieces:
        assert piece.type == "AppleSliced"
        assert piece.active and piece.parent == "counter" and piece.sliced_from == "apple"
        assert piece.affords("pickupable") and not piece.affords("sliceable")
        assert table.objects[piece.id] is piece
        assert _inside_footprint(piece, table.objects["counter"])
    assert len({p.id for p in pieces}) == len(pieces)
    # the slices together take the apple's place
    np.testing.assert_allclose(np.mean([p.position for p in pieces], axis=0), apple.position, atol=1e-9)
    with pytest.raises(InteractionError):
        table.slice("apple")


def test_slice_egg_cracks_it(table: ObjectTable) -> None:
    table.pickup("knife", HAND)
    pieces = table.slice("egg")
    assert [p.type for p in pieces] == ["EggCracked"]
    assert table.objects["egg"].is_sliced


def test_slices_can_be_picked_up_and_toasted(table: ObjectTable) -> None:
    table.pickup("knife", HAND)
    slices = table.slice("bread")
    assert all(s.type == "BreadSliced" for s in slices)
    table.put("counter", find_spot)
    _carry(table, slices[0].id, "toaster")
    table.toggle("toaster", True)
    assert slices[0].is_cooked and slices[0].temperature == "Hot"
    assert not slices[1].is_cooked


def test_slice_fails_on_non_sliceable_and_held(table: ObjectTable) -> None:
    table.pickup("knife", HAND)
    with pytest.raises(InteractionError, match="mug .*not sliceable"):
        table.slice("mug")
    with pytest.raises(InteractionError, match="knife"):
        table.slice("knife")


def test_slicing_a_held_sliceable_fails(table: ObjectTable) -> None:
    table.pickup("knife", HAND)
    # Force the odd state of a sliceable being carried (e.g. inside a held bowl).
    table.objects["tomato"].is_picked_up = True
    table.objects["tomato"].parent = None
    with pytest.raises(InteractionError, match="tomato"):
        table.slice("tomato")


# ---- contextual effects ----------------------------------------------------------------------

def test_faucet_then_cup_fills_and_cleans(table: ObjectTable) -> None:
    cup = table.objects["cup"]
    assert cup.is_dirty and not cup.is_filled
    table.toggle("faucet", True)
    _carry(table, "cup", "sink")
    assert cup.is_filled and cup.fill_liquid == "water" and not cup.is_dirty


def test_cup_then_faucet_fills_and_cleans(table: ObjectTable) -> None:
    cup = table.objects["cup"]
    _carry(table, "cup", "sink")
    assert cup.is_dirty and not cup.is_filled  # water still off
    table.toggle("faucet", True)
    assert cup.is_filled and cup.fill_liquid == "water" and not cup.is_dirty


def test_water_stays_after_faucet_off_and_carrying(table: ObjectTable) -> None:
    cup = table.objects["cup"]
    _carry(table, "cup", "sink")
    table.toggle("faucet", True)
    table.toggle("faucet", False)
    _carry(table, "cup", "counter")
    assert cup.is_filled and cup.fill_liquid == "water" and not cup.is_dirty


def test_faucet_far_from_sink_does_nothing(catalog: AssetCatalog) -> None:
    table = _kitchen(catalog)
    table.objects["faucet"].position = np.array([5.0, 1.1, 8.0])
    table.toggle("faucet", True)
    _carry(table, "cup", "sink")
    assert not table.objects["cup"].is_filled and table.objects["cup"].is_dirty


def test_cup_on_counter_stays_dry_with_faucet_on(table: ObjectTable) -> None:
    table.toggle("faucet", True)
    assert not table.objects["cup"].is_filled


@pytest.mark.parametrize("machine_first", [True, False])
def test_coffee_machine_fills_a_mug(table: ObjectTable, machine_first: bool) -> None:
    mug = table.objects["mug"]
    if machine_first:
        table.toggle("coffee", True)
    _carry(table, "mug", "coffee")
    if not machine_first:
        assert not mug.is_filled
        table.toggle("coffee", True)
    assert mug.is_filled and mug.fill_liquid == "coffee"


def test_mug_beside_running_coffee_machine_stays_empty(table: ObjectTable) -> None:
    table.toggle("coffee", True)
    assert not table.objects["mug"].is_filled


def test_potato_in_running_microwave_is_cooked_and_hot(table: ObjectTable) -> None:
    potato = table.objects["potato"]
    table.open("microwave", True)
    _carry(table, "potato", "microwave")
    assert potato.parent == "microwave"
    assert not potato.is_cooked and potato.temperature == "RoomTemp"
    table.open("microwave", False)
    table.toggle("microwave", True)
    assert potato.is_cooked and potato.temperature == "Hot"
    table.toggle("microwave", False)
    assert potato.is_cooked  # cooking is permanent


def test_potato_beside_microwave_is_not_cooked(table: ObjectTable) -> None:
    table.toggle("microwave", True)
    assert not table.objects["potato"].is_cooked


def test_fridge_contents_are_cold(table: ObjectTable) -> None:
    assert table.objects["tomato"].temperature == "Cold"  # there from the start
    assert table.objects["apple"].temperature == "RoomTemp"
    table.open("fridge", True)
    _carry(table, "apple", "fridge")
    assert table.objects["apple"].temperature == "Cold"


def test_cooked_potato_put_in_fridge_is_cold_but_stays_cooked(table: ObjectTable) -> None:
    table.open("microwave", True)
    _carry(table, "potato", "microwave")
    table.open("microwave", False)
    table.toggle("microwave", True)
    table.toggle("microwave", False)
    table.open("microwave", True)
    table.open("fridge", True)
    _carry(table, "potato", "fridge")
    potato = table.objects["potato"]
    assert potato.is_cooked and potato.temperature == "Cold"


def test_held_object_is_not_affected(table: ObjectTable) -> None:
    table.toggle("faucet", True)
    table.pickup("cup", HAND)
    table.apply_effects()
    assert not table.objects["cup"].is_filled


# ---- real house ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def house0() -> dict[str, Any]:
    return load_house("houses_dev.jsonl.gz", 0)


@pytest.fixture()
def house_table(house0: dict[str, Any], catalog: AssetCatalog) -> ObjectTable:
    table = ObjectTable(build_objects(house0, catalog), catalog)
    table.apply_effects()
    return table


def test_real_house_fridge_contents(house_table: ObjectTable) -> None:
    fridge = next(o for o in house_table.objects.values() if o.type == "Fridge")
    inside = house_table.children(fridge.id)
    assert inside, "house 0 keeps food in the fridge"
    assert all(o.temperature == "Cold" for o in inside)
    with pytest.raises(InteractionError, match=fridge.id):
        house_table.pickup(inside[0].id, HAND)
    house_table.open(fridge.id, True)
    house_table.pickup(inside[0].id, HAND)
    assert house_table.held == inside[0].id


def test_real_house_cup_in_real_sink(house_table: ObjectTable) -> None:
    sink = next(o for o in house_table.objects.values() if o.type == "Sink")
    faucet = next(o for o in house_table.objects.values() if o.type == "Faucet")
    cup = next(o for o in house_table.objects.values() if o.type == "Cup")
    _carry(house_table, cup.id, sink.id)
    house_table.toggle(faucet.id, True)
    assert cup.parent == sink.id and cup.is_filled and cup.fill_liquid == "water"


def test_real_house_potato_in_real_microwave(house_table: ObjectTable) -> None:
    microwave = next(o for o in house_table.objects.values() if o.type == "Microwave")
    potato = next(o for o in house_table.objects.values() if o.type == "Potato" and o.parent != "6|1")
    house_table.open(microwave.id, True)
    _carry(house_table, potato.id, microwave.id)
    house_table.open(microwave.id, False)
    house_table.toggle(microwave.id, True)
    assert potato.is_cooked and potato.temperature == "Hot"


def test_objects_on_a_closed_toilet_can_be_picked_up(house_table: ObjectTable) -> None:
    toilet = next(o for o in house_table.objects.values() if o.type == "Toilet")
    on_it = house_table.children(toilet.id)
    assert on_it and not toilet.is_open
    house_table.pickup(on_it[0].id, HAND)
    assert house_table.held == on_it[0].id


def test_put_on_a_closed_toilet(house_table: ObjectTable) -> None:
    toilet = next(o for o in house_table.objects.values() if o.type == "Toilet")
    soap = next(o for o in house_table.objects.values() if o.type == "DishSponge")
    house_table.pickup(soap.id, HAND)
    house_table.put(toilet.id, find_spot)
    assert soap.parent == toilet.id
