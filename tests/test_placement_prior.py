"""Where things are kept (planner.placement_prior): counted on the dev houses' receptacle lists,
used to order the receptacles the agent visits when exploring did not show an object."""
from __future__ import annotations

from collections import Counter

from planner.placement_prior import FLOOR_PROBABILITY, PlacementPrior, dev_placement_prior


def test_food_is_kept_in_the_fridge_more_than_on_a_sofa() -> None:
    prior = dev_placement_prior()
    for food in ("Apple", "Tomato", "Egg"):
        assert prior.probability("Fridge", food) > 5 * prior.probability("Sofa", food)
    assert prior.probability("DiningTable", "Plate") > prior.probability("Bed", "Plate")
    # a distribution per object type (add-one: every receptacle type possible, none certain)
    assert 0.95 <= sum(prior.probability(r, "Apple") for r in prior.receptacle_types) <= 1.0


def test_the_walk_per_find_puts_a_far_fridge_before_a_near_sofa_for_an_apple() -> None:
    prior = dev_placement_prior()
    assert 10.0 / prior.probability("Fridge", "Apple") < 2.0 / prior.probability("Sofa", "Apple")


def test_counts_are_smoothed_and_an_unknown_type_gets_the_floor() -> None:
    prior = PlacementPrior({"Apple": Counter({"Fridge": 3})}, frozenset({"Fridge", "Sofa"}))
    assert prior.probability("Fridge", "Apple") == 4 / 6 and prior.probability("Sofa", "Apple") == 1 / 6
    assert prior.probability("Fridge", "Spaceship") == FLOOR_PROBABILITY


def test_after_exploring_a_closed_fridge_outranks_the_counters_already_looked_at() -> None:
    """A wine bottle is kept on counters more than in fridges; one that exploring did not show on
    any counter is likelier behind the fridge door."""
    prior = dev_placement_prior()
    assert prior.probability("CounterTop", "WineBottle") > prior.probability("Fridge", "WineBottle")
    assert prior.still_there("Fridge", "WineBottle", closed=True) > prior.still_there("CounterTop", "WineBottle", closed=False)


def test_a_drawer_counts_as_the_dresser_it_belongs_to():
    prior = PlacementPrior({"Pencil": Counter({"Dresser": 4, "Desk": 1})}, frozenset({"Dresser", "Desk"}))
    assert prior.probability("Drawer", "Pencil") == prior.probability("Dresser", "Pencil")
    assert prior.still_there("Drawer", "Pencil", closed=True) > prior.still_there("Desk", "Pencil", closed=False)
