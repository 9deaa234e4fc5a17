"""Looking over a surface from close by (planner/surface_look.py): behind a detector that drops
small instances, a search visit goes on to the parts of a long top a credit card would not show on
from where the visit ended; with a segmenter that reports whatever shows, nothing changes.

Found under ``--sensors realistic`` (dev-039-1, dev-076-1: the cards the search gave up on lay at
the far end of dining tables it had visited, in no frame); the tests build the situation from
scratch on an open floor with the real navigator."""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from household.assets import AssetCatalog, default_catalog
from household.types import Action, CameraIntrinsics, InstanceLabel
from planner.agent_config import AgentConfig
from planner.factory import _env_detector_min_pixels, make_agent
from planner.navigation import Navigator, Pose
from planner.object_memory import TrackedObject
from planner.occupancy import OccupancyConfig, OccupancyMap
from planner.surface_look import detection_distance, far_points, glimpsed, look_again, look_into, look_over
from sim_bridge.sensors.profiles import PROFILES
from household.errors import InputError

CARD = (0.086, 0.004, 0.054)  # the database's median CreditCard box
PLATE = (0.237, 0.023, 0.237)
FOCAL = 120.0  # 320x240 with THOR's 90-degree vertical field of view


def test_the_detection_distance_follows_size_height_and_the_detectors_threshold() -> None:
    assert detection_distance(CARD, 0.76, FOCAL, 0) == math.inf  # every instance kept
    card = detection_distance(CARD, 0.76, FOCAL, 40)
    assert 0.9 < card < 1.4  # a card flat on a dining table: about a metre
    assert detection_distance(PLATE, 0.76, FOCAL, 40) > 2.0 * card
    assert detection_distance(CARD, 0.76, FOCAL, 120) < card  # a stricter detector: closer
    assert detection_distance(CARD, 0.39, FOCAL, 40) < card  # a dresser top, nearer eye height: flatter view
    # at the distance found, the pinhole estimate gives the threshold
    s = 0.76 / card
    pixels = FOCAL ** 2 * (CARD[0] * CARD[2] * s + CARD[0] * CARD[1] * math.sqrt(1 - s * s)) / card ** 2
    assert pixels == pytest.approx(40.0, rel=1e-3)
    # too small to reach the threshold even from straight above
    assert detection_distance((0.001, 0.001, 0.001), 0.76, FOCAL, 40) == pytest.approx(0.76)


def table(x0: float, x1: float) -> TrackedObject:
    lo, hi = np.array([x0, 0.0, 1.0]), np.array([x1, 0.74, 1.8])
    return TrackedObject("table|1", "DiningTable", (lo + hi) / 2.0, lo, hi, 0, 0)


def test_far_points_are_the_parts_of_the_top_beyond_reach() -> None:
    top = table(0.0, 2.4)
    assert far_points(top, [(1.2, 0.5)], 5.0) == []
    far = far_points(top, [(-0.2, 0.6)], 1.0)
    assert far and all(math.hypot(x + 0.2, z - 0.6) > 1.0 for x, z in far)
    assert max(x for x, _ in far) == pytest.approx(2.4)  # the far edge is among them
    assert (0.0, 1.0) not in far and all(x > 0.0 for x, z in far if z < 1.2)  # the near corner is in reach
    assert far_points(top, [(-0.2, 0.6), (2.6, 0.6)], 1.0) == [p for p in far if math.hypot(p[0] - 2.6, p[1] - 0.6) > 1.0]


def open_floor() -> OccupancyMap:
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=10.0))
    lo, hi = occ.cell(-2.0, -2.0), occ.cell(5.0, 4.0)
    occ.floor[lo[0]:hi[0], lo[1]:hi[1]] = True
    t0, t1 = occ.cell(0.0, 1.0), occ.cell(2.4, 1.8)
    occ.obstacle[t0[0]:t1[0] + 1, t0[1]:t1[1] + 1] = True  # the table's footprint
    occ._grid = None
    return occ


class _Agent:
    """The parts of the HoloMind agent the look reads, with the real navigator on an open floor
    around a 2.4 m table; a walk ends where its plan ends, a turn or pitch sets the pose."""

    def __init__(self, min_pixels: int) -> None:
        self.config = replace(AgentConfig(), detector_min_pixels=min_pixels)
        self.obs = SimpleNamespace(intrinsics=CameraIntrinsics.from_fov(320, 240, 90.0), step=0, id_to_label={})
        self.tracker = SimpleNamespace(get=lambda object_id: None)
        self.catalog = default_catalog()
        self.navigator = Navigator(open_floor())
        self.pose = Pose(-0.3, 0.5, 90.0, 30.0)  # at the table's near end, facing along it
        self.notes: list[str] = []
        self.walks = 0
        self.skills = SimpleNamespace(walk=self._walk, turn_to=self._turn_to, set_horizon=self._set_horizon)

    def _walk(self, actions: list[str], limit: int | None = None) -> Any:
        """Replay the lattice's moves (0.25 m, 30 degrees) from the pose."""
        self.walks += 1
        x, z, yaw = self.pose.x, self.pose.z, self.pose.yaw
        for name in actions:
            yield Action(name)
            if name in ("RotateLeft", "RotateRight"):
                yaw = (yaw + (30.0 if name == "RotateRight" else -30.0)) % 360.0
                continue
            heading = math.radians(yaw + {"MoveAhead": 0.0, "MoveRight": 90.0, "MoveBack": 180.0, "MoveLeft": 270.0}[name])
            x, z = x + 0.25 * math.sin(heading), z + 0.25 * math.cos(heading)
        self.pose = Pose(x, z, yaw, self.pose.horizon)
        return True

    def _turn_to(self, x: float, z: float) -> Any:
        yaw = math.degrees(math.atan2(x - self.pose.x, z - self.pose.z)) % 360.0
        self.pose = Pose(self.pose.x, self.pose.z, yaw, self.pose.horizon)
        yield Action("RotateRight")

    def _set_horizon(self, h: float) -> Any:
        self.pose = Pose(self.pose.x, self.pose.z, self.pose.yaw, h)
        yield Action("LookDown")

    def note(self, text: str) -> None:
        self.notes.append(text)


def _run(gen: Any) -> list[Action]:
    sent = []
    try:
        sent.append(gen.send(None))
        while True:
            sent.append(gen.send(None))
    except StopIteration:
        return sent


def test_behind_a_detector_the_look_walks_on_to_the_far_end_of_a_long_table() -> None:
    agent = _Agent(min_pixels=40)
    card_at = (2.2, 1.4)  # on the far end of the top
    seen = []

    def found() -> bool:
        p = agent.pose
        d3 = math.hypot(math.hypot(card_at[0] - p.x, card_at[1] - p.z), 1.5 - 0.74)
        seen.append(d3)
        return d3 <= detection_distance(CARD, 1.5 - 0.74, 120.0, 40)

    start = agent.pose
    actions = _run(look_over(agent, table(0.0, 2.4), "CreditCard", found))
    assert actions and agent.walks >= 1 and seen
    assert found()  # it ended where the card shows
    assert agent.pose.x > start.x + 1.0
    assert "looking over table|1 for a CreditCard" in agent.notes[0]


def test_a_larger_thing_or_a_segmenter_without_a_threshold_needs_no_further_stop() -> None:
    for agent, kind in ((_Agent(min_pixels=0), "CreditCard"), (_Agent(min_pixels=40), "Television")):
        before = agent.pose
        assert _run(look_over(agent, table(0.0, 2.4), kind, lambda: False)) == []
        assert agent.pose == before and agent.notes == []


def test_the_look_makes_at_most_three_further_stops_and_ends_when_found() -> None:
    agent = _Agent(min_pixels=40)
    _run(look_over(agent, table(0.0, 2.4), "CellPhone", lambda: False))
    assert 1 <= agent.walks <= 3
    agent = _Agent(min_pixels=40)
    _run(look_over(agent, table(0.0, 2.4), "CellPhone", lambda: True))
    assert agent.walks == 1


def test_the_detectors_threshold_comes_from_the_sensor_profile_or_the_caller() -> None:
    assert _env_detector_min_pixels(SimpleNamespace(profile=PROFILES["ideal"])) == 0
    assert _env_detector_min_pixels(SimpleNamespace(profile=PROFILES["realistic"])) == 40
    assert _env_detector_min_pixels(object()) == 0
    env = SimpleNamespace(profile=PROFILES["realistic"])
    assert make_agent("deterministic", env).config.detector_min_pixels == 40
    assert make_agent("deterministic", env, detector_min_pixels=0).config.detector_min_pixels == 0
    with pytest.raises(InputError, match="detector_min_pixels"):
        make_agent("deterministic", env, detector_min_pixels=-3)


def test_the_typical_size_is_the_median_box_of_the_types_assets() -> None:
    catalog = AssetCatalog({"Mug": [
        {"assetId": f"Mug_{i}", "objectType": "Mug", "boundingBox": {"x": x, "y": 0.1, "z": 0.09},
         "primaryProperty": "CanPickup", "secondaryProperties": []} for i, x in enumerate((0.10, 0.14, 0.12))]})
    assert catalog.typical_size("Mug") == (0.12, 0.1, 0.09)
    assert catalog.typical_size("Teapot") is None
    assert default_catalog().typical_size("CreditCard") == pytest.approx(CARD, abs=1e-3)


def fridge() -> TrackedObject:
    lo, hi = np.array([1.0, 0.0, 1.0]), np.array([1.8, 1.8, 1.7])
    return TrackedObject("fridge|1", "Fridge", (lo + hi) / 2.0, lo, hi, 0, 0)


def test_the_pitches_over_a_height_span_are_those_the_current_view_leaves_out() -> None:
    nav = Navigator(open_floor())  # camera 1.5 m up
    # 0.75 m from a fridge's middle, looking 60 degrees down: its shelves above 1 m are out of view
    assert nav.horizons_over(Pose(1.4, 0.6, 0.0, 60.0), 1.4, 1.35, 0.0, 1.8) == [0.0]
    # from 2 m away the whole fridge shows at 30 degrees: no pitch needed
    assert nav.horizons_over(Pose(1.4, -0.65, 0.0, 30.0), 1.4, 1.35, 0.0, 1.8) == []
    # a cabinet under the counter looked at from 1 m: as it is
    assert nav.horizons_over(Pose(0.0, 0.0, 0.0, 30.0), 0.0, 1.0, 0.0, 0.9) == []
    # a tall cabinet from up close: both ends, the nearer pitch first
    assert nav.horizons_over(Pose(0.0, 0.0, 0.0, 30.0), 0.0, 0.3, 0.0, 2.4) == [60.0, -30.0]


class _Fridge(_Agent):
    """``_Agent`` before an opened fridge, a tomato on its top shelf: a frame shows it only with
    the camera level (pitch 0); the memory believes it after ``confirm_views`` such frames."""

    def __init__(self, confirm_views: int) -> None:
        super().__init__(min_pixels=40)
        self.config = replace(self.config, confirm_views=confirm_views)
        self.pose = Pose(1.4, 0.6, 0.0, 60.0)
        self.views = 0
        self.tracker = SimpleNamespace(get=lambda object_id: object() if self.views >= confirm_views else None)

    def _set_horizon(self, h: float) -> Any:
        yield from super()._set_horizon(h)
        shows = h == 0.0
        self.views += shows
        self.obs.id_to_label = {7: InstanceLabel("tomato|1", "Tomato")} if shows else {}

    def found(self) -> bool:
        return self.tracker.get("tomato|1") is not None


def test_an_opened_fridge_is_looked_into_and_a_glimpse_looked_at_again() -> None:
    agent = _Fridge(confirm_views=1)  # a segmenter believed at once: one pitch, found
    _run(look_into(agent, fridge(), "Tomato", agent.found))
    assert agent.found() and agent.pose.horizon == 0.0 and agent.views == 1
    agent = _Fridge(confirm_views=2)  # a detector's first view waits for a second: away and back
    actions = _run(look_into(agent, fridge(), "Tomato", agent.found))
    assert agent.found() and agent.views == 2 and len(actions) == 3 and agent.pose.horizon == 0.0
    assert not glimpsed(agent, "Tomato")  # believed now
    agent = _Fridge(confirm_views=2)
    agent.obs.id_to_label[3] = InstanceLabel("cup|2", "Cup")  # glimpses of another type: not looked at again
    assert glimpsed(agent, "Cup") and not glimpsed(agent, "Apple")
    agent.pose = Pose(1.4, -0.65, 0.0, 30.0)  # the whole fridge in view: nothing to do
    assert _run(look_into(agent, fridge(), "Apple", lambda: False)) == []



def test_a_glimpse_is_walked_up_to_and_looked_at_once() -> None:
    """Behind a detector (two views to believe) a key ring glimpsed once from a walk is walked up
    to, faced and looked at with the camera pitched at it; each glimpse once (dev-047-1)."""
    agent = _Agent(min_pixels=40)
    agent.config = replace(agent.config, confirm_views=2)
    key = np.array([2.2, 0.75, 1.4])  # on the table's far end
    agent.tracker = SimpleNamespace(get=lambda object_id: None,
                                    glimpses=lambda t: {"key|1": key} if t == "KeyChain" else {})

    def facing_it_close_by() -> bool:
        p = agent.pose
        bearing = math.degrees(math.atan2(key[0] - p.x, key[2] - p.z)) % 360.0
        return math.hypot(key[0] - p.x, key[2] - p.z) < 1.0 and abs((bearing - p.yaw + 180.0) % 360.0 - 180.0) < 20.0

    looked: set[str] = set()
    actions = _run(look_again(agent, "KeyChain", facing_it_close_by, looked))
    assert actions and agent.walks == 1 and looked == {"key|1"} and facing_it_close_by()
    assert agent.pose.horizon == 60.0  # pitched at it: 0.75 m below the camera, under a metre away
    assert agent.notes == ["looking again at a KeyChain glimpsed once at (2.20, 1.40)"]
    assert _run(look_again(agent, "KeyChain", lambda: False, looked)) == []  # looked at already
    assert _run(look_again(agent, "Mug", lambda: False, set())) == []  # nothing glimpsed of the type
