"""The bounded-work changes of issue 27 (the decision time's tail), as behaviour:

- the room segmentation's growth and contacts (``planner.rooms.grow_labels``, ``contacts``)
  equal the whole-window loop they replace, label for label and in the contacts' order;
- a whole re-segmentation (``RoomSegmenter._segment``: its window, the growth, the label counts
  naming reads) equals the one before the flat-index growth, on maps the agent itself made
  in a dev house, and on maps whose labels touch the window's edges;
- the segmenter names its regions again only when the labelling or the objects changed, and a
  new labelling or another object is still seen;
- a lattice search cut at its cap says so (``stats``, ``Navigator.last_failure``,
  ``capped_searches``), apart from one that ran out of states.

No timings: the speed figures live in ``benchmarks/bench_agent_decision.py``."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

import planner.navigation as navigation
from evaluation.episodes import load_episode
from planner.holomind import HoloMindAgent
from planner.lattice_nav import LatticeState, plan_lattice
from planner.navigation import Navigator, Pose
from planner.occupancy import OccupancyConfig, OccupancyMap
from planner.rooms import RoomPrior, RoomSegmenter, contacts, core_labels, grow_labels
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

EPISODES = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev_v2"


def _grow_reference(labels: np.ndarray, allowed: np.ndarray, steps: int) -> np.ndarray:
    labels = labels.copy()
    for _ in range(steps):
        grown = ndimage.grey_dilation(labels, size=3)
        new = (labels == 0) & allowed & (grown > 0)
        if not new.any():
            break
        labels[new] = grown[new]
    return labels


def _contacts_reference(labels: np.ndarray) -> dict[tuple[int, int], int]:
    contact: dict[tuple[int, int], int] = defaultdict(int)
    for a, b in ((labels[:-1, :], labels[1:, :]), (labels[:, :-1], labels[:, 1:])):
        touch = (a > 0) & (b > 0) & (a != b)
        for x, y in zip(a[touch].tolist(), b[touch].tolist()):
            contact[(min(x, y), max(x, y))] += 1
    return dict(contact)


@pytest.mark.parametrize("seed", range(12))
def test_growth_and_contacts_equal_the_whole_window_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    h, w = rng.integers(5, 70, size=2)
    cores = np.zeros((h, w), dtype=np.int32)
    for k in range(1, int(rng.integers(1, 7))):
        i, j = rng.integers(0, h), rng.integers(0, w)
        cores[max(i - 2, 0):i + 3, max(j - 3, 0):j + 2] = k  # overlapping boxes, some labels lost
    allowed = rng.random((h, w)) < rng.uniform(0.4, 0.95)
    steps = int(rng.integers(1, 45))
    want = _grow_reference(cores, allowed, steps)
    got = grow_labels(cores.copy(), allowed, steps)
    assert np.array_equal(got, want)
    assert list(contacts(got).items()) == list(_contacts_reference(got).items())  # the same order too


@pytest.mark.parametrize("seed", range(6))
def test_growth_reaches_every_edge_of_the_window_as_the_whole_window_loop(seed: int) -> None:
    """Cores in the corners and along the edges, everything allowed or nearly: the padded flat
    indices must neither wrap a row's end onto the next row nor lose the edge cells."""
    rng = np.random.default_rng(100 + seed)
    h, w = rng.integers(3, 40, size=2)
    cores = np.zeros((h, w), dtype=np.int32)
    for k, (i, j) in enumerate(((0, 0), (0, w - 1), (h - 1, 0), (h - 1, w - 1), (h // 2, 0), (0, w // 2)), 1):
        if rng.random() < 0.7:
            cores[i, j] = k
    allowed = rng.random((h, w)) < (1.0 if seed % 2 else 0.8)
    for steps in (1, 3, 80):
        assert np.array_equal(grow_labels(cores.copy(), allowed, steps), _grow_reference(cores, allowed, steps))


def test_contacts_of_a_map_with_one_label_are_empty() -> None:
    assert contacts(np.ones((4, 4), dtype=np.int32)) == {}
    assert contacts(np.zeros((0, 3), dtype=np.int32)) == {}


def _room_map() -> OccupancyMap:
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=12.0))
    res = occ.config.resolution
    idx = np.arange(occ.n)
    x = (occ.x0 + res * idx)[:, None] * np.ones((1, occ.n))
    z = (occ.z0 + res * idx)[None, :] * np.ones((occ.n, 1))
    occ.floor[:] = (np.abs(x) <= 2.0) & (np.abs(z) <= 2.0)
    return occ


def test_the_segmenter_names_again_only_when_labels_or_objects_change() -> None:
    occ = _room_map()
    seg = RoomSegmenter(occ)
    kitchen = [("Fridge", 1.0, 1.0), ("StoveBurner", -1.0, 1.0), ("Toaster", 0.0, -1.0)]
    seg.update(kitchen)
    assert seg.rooms_seen() == ["Kitchen"]
    first = seg.regions
    seg.update(list(kitchen))  # the same objects, the same labelling: the regions kept as they are
    assert seg.regions is first
    bedroom = [("Bed", 1.0, 1.0), ("Dresser", -1.0, 1.0), ("AlarmClock", 0.0, -1.0)]
    seg.update(bedroom)  # other objects: named again
    assert seg.regions is not first and seg.rooms_seen() == ["Bedroom"]
    named = seg.regions
    occ.version += 1
    seg.update(bedroom, force=True)  # a new labelling: named again
    assert seg.regions is not named and seg.rooms_seen() == ["Bedroom"]


def _walled(thickness_cells: int) -> OccupancyMap:
    """Two halves of a 4 m x 4 m floor with a wall ``thickness_cells`` thick from x = 0.05 between
    them, no doorway; the wall starts a coarse block's second cell, so the coarse cells on either
    side are neighbours (4 fine cells a block) up to 6 cells of thickness."""
    occ = _room_map()
    res = occ.config.resolution
    i0 = occ.cell(0.0, 0.0)[0] + 1
    assert (i0 - 1) % 4 == 0
    band = slice(i0, i0 + thickness_cells)
    occ.floor[band, :] = False
    occ.obstacle[band, :] = True
    occ.wall[band, :] = True
    occ._disc = np.ones((1, 1), dtype=bool)  # no dilation: the wall stays as thin as drawn
    occ._grid = None
    assert res == 0.05
    return occ


def test_a_capped_search_says_so_and_an_exhausted_one_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    occ = _walled(5)
    nav = Navigator(occ, max_expansions=50)
    # the coarse graph joins the halves across the wall; switched off all the same, so the search
    # itself runs towards the far side whatever the wall's alignment
    monkeypatch.setattr(navigation, "connected", lambda *a, **k: True)
    start = Pose(-1.0, 0.0, 90.0, 30.0)
    assert nav.plan_to_point(start, 1.0, 0.0) is None
    assert "cap of 50 expansions" in nav.last_failure and nav.capped_searches == 1
    stats: dict[str, int] = {}
    grid = occ.free_grid()
    assert plan_lattice(LatticeState(-1.0, 0.0, 90.0), grid.is_free, lambda s: s.x > 0.3, lambda s: 0.0,
                        max_expansions=200_000, stats=stats) is None
    assert stats["capped"] == 0 and stats["expanded"] > 50  # ran out of states: no plan exists
    near = Navigator(occ)
    assert near.plan_to_point(start, -1.5, 1.0) is not None and near.last_failure == ""
    assert near.capped_searches == 0


def _segment_reference(seg: RoomSegmenter) -> tuple[np.ndarray, dict[tuple[int, int], int]]:
    """``RoomSegmenter._segment`` as it was before the flat-index growth (issue 27): the window
    from np.nonzero over the whole map, the whole-window growth loop, the contacts' loop."""
    m = seg.map
    seen = m.observed()
    ii, jj = np.nonzero(seen)
    full = np.zeros((m.n, m.n), dtype=np.int32)
    if len(ii) == 0:
        return full, {}
    i0, i1 = max(ii.min() - 2, 0), min(ii.max() + 3, m.n)
    j0, j1 = max(jj.min() - 2, 0), min(jj.max() + 3, m.n)
    walls = ndimage.binary_dilation(m.wall[i0:i1, j0:j1], iterations=2)
    space = m.free_grid().mask[i0:i1, j0:j1] & ~walls
    # the cores did not change (rooms.core_labels); the window, the growth and the contacts did
    cores = core_labels(space, seg.erosion, seg.min_core_cells)
    labels = _grow_reference(cores, seen[i0:i1, j0:j1] & ~walls, seg.grow_steps)
    full[i0:i1, j0:j1] = labels
    return full, _contacts_reference(labels)


def _assert_segments_as_before(occ: OccupancyMap) -> int:
    """Segment ``occ`` and compare with the reference: labels, contacts (in order), and what
    naming reads instead of the whole map (label counts, the set of labels present)."""
    seg = RoomSegmenter(occ, prior=RoomPrior({}, {}))
    seg._segment()
    want, want_contact = _segment_reference(seg)
    assert np.array_equal(seg.labels, want)
    assert list(seg.contact.items()) == list(_contacts_reference(want).items()) and seg.contact == want_contact
    whole = np.bincount(want.ravel())
    assert np.array_equal(seg.sizes[1:], whole[1:])
    present = set(np.union1d([0], np.flatnonzero(seg.sizes)).tolist()) - {0}
    assert list(present) == list(set(np.unique(want).tolist()) - {0})  # the same set, iterated the same
    return len(present)


def test_segmentation_of_the_agents_own_maps_equals_the_reference() -> None:
    """The agent's map of a dev house (dev-082-0, the issue's slowest episode) every 40 steps of
    its first 240: the segmentation is label for label the one before (rooms, walls, doorways,
    furniture as the depth frames drew them, not a hand-made map)."""
    env = EmbeddedEnvironment(EmbeddedConfig(width=160, height=120))
    episode = load_episode(EPISODES / "dev-082-0.json")
    agent = HoloMindAgent()
    obs = env.reset(episode)
    agent.reset(episode, obs)
    regions = []
    for step in range(1, 241):
        obs = env.step(agent.act(obs)).observation
        if step % 40 == 0:
            regions.append(_assert_segments_as_before(agent.occupancy))
    assert max(regions) >= 2  # more than one room seen: the growth met other regions' labels


def test_segmentation_of_a_hand_made_map_equals_the_reference() -> None:
    occ = _room_map()
    occ.wall[occ.cell(0.0, 0.0)[0], :] = True  # a wall across the room: two regions
    assert _assert_segments_as_before(occ) == 2
    assert _assert_segments_as_before(OccupancyMap((0.0, 0.0), OccupancyConfig(size=4.0))) == 0  # nothing seen
