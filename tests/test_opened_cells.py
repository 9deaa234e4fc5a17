"""What an open drawer or door draws on the agent's map is taken back once it is shut
(``OccupancyMap.mark_opening`` / ``clear_opening``, called by ``HoloMindAgent._note_opening``).

The case: a dresser by the only way between two rooms. Its drawer, pulled out, fills the gap on
the map; shut again, the gap must open on the map too, while the dresser itself and the walls
stay. Before, a cell once an obstacle under exact depth stayed one, and a search that opened a
dresser's drawers by a bedroom's only way out shut the agent in (dev-022-1 in people's wording).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from scipy import ndimage

from household.types import Action
from planner.holomind import HoloMindAgent
from planner.occupancy import OccupancyConfig, OccupancyMap


def _box(occ: OccupancyMap, x0: float, z0: float, x1: float, z1: float) -> np.ndarray:
    """Flat indices of the cells of a THOR (x, z) rectangle."""
    i0, j0 = occ.cell(x0, z0)
    i1, j1 = occ.cell(x1, z1)
    ii, jj = np.mgrid[i0:i1 + 1, j0:j1 + 1]
    return (ii * occ.n + jj).ravel()


def _draw(occ: OccupancyMap, cells: np.ndarray) -> None:
    """Obstacle returns on ``cells``, as a frame's integration lays them down."""
    if occ.config.depth_noise_k > 0:
        occ._count(np.zeros(0, dtype=np.int64), np.repeat(cells, 3))
    else:
        occ.obstacle.reshape(-1)[cells] = True
    occ._grid = None


def _two_rooms(noise: bool) -> OccupancyMap:
    """Floor seen over 4 m x 4 m; a wall along x = 0 with a gap 0.7 m wide at |z| < 0.35; a
    dresser just east of the gap, north of it (x 0.1 to 0.5, z 0.4 to 0.8), drawers facing -z."""
    occ = OccupancyMap((0.0, 0.0), OccupancyConfig(size=6.0, depth_noise_k=0.0036 if noise else 0.0))
    i0, j0 = occ.cell(-2.0, -2.0)
    i1, j1 = occ.cell(2.0, 2.0)
    occ.floor[i0:i1 + 1, j0:j1 + 1] = True
    if noise:  # the floor's own returns, which the obstacle share is counted against
        occ.floor_hits[i0:i1 + 1, j0:j1 + 1] = 2
    _draw(occ, _box(occ, 0.0, -2.0, 0.0, -0.35))
    _draw(occ, _box(occ, 0.0, 0.35, 0.0, 2.0))
    _draw(occ, _box(occ, 0.1, 0.4, 0.5, 0.8))
    return occ


def _joined(occ: OccupancyMap) -> bool:
    """Whether the agent can get from the west room to the east room on its map."""
    labels, _ = ndimage.label(occ.free_grid().mask)
    west, east = labels[occ.cell(-1.0, 0.0)], labels[occ.cell(1.0, -1.0)]
    return bool(west and west == east)


@pytest.mark.parametrize("noise", [False, True], ids=["exact depth", "noisy depth"])
def test_a_drawer_shut_again_opens_the_gap_it_filled_and_leaves_what_stood_there_before(noise: bool) -> None:
    occ = _two_rooms(noise)
    assert _joined(occ)
    dresser = _box(occ, 0.1, 0.4, 0.5, 0.8)
    occ.mark_opening("dresser|drawer", (0.1, 0.4), (0.5, 0.8))
    drawer = _box(occ, 0.1, -0.1, 0.5, 0.35)
    _draw(occ, drawer)  # the frame that shows it pulled out
    far = _box(occ, 1.6, 1.6, 1.7, 1.7)  # seen meanwhile, beyond the drawer's reach
    _draw(occ, far)
    assert not _joined(occ)  # shut in on the map, as dev-022-1 was
    version = occ.version
    cleared = occ.clear_opening("dresser|drawer")
    assert cleared == drawer.size
    assert _joined(occ) and occ.version > version
    flat = occ.obstacle.reshape(-1)
    assert not flat[drawer].any()
    assert flat[dresser].all() and flat[far].all()  # what stood there before stays, and what is out of reach
    assert flat[_box(occ, 0.0, 0.35, 0.0, 2.0)].all()  # so do the walls
    if noise:
        assert not occ.obstacle_hits.reshape(-1)[drawer].any()  # counted afresh from the next frame
    assert occ.clear_opening("dresser|drawer") == 0  # taken back once only


def test_a_second_opening_of_the_same_thing_keeps_the_map_from_before_the_first() -> None:
    occ = _two_rooms(noise=False)
    occ.mark_opening("fridge", (0.1, 0.4), (0.5, 0.8))
    drawn = _box(occ, 0.1, -0.1, 0.5, 0.35)
    _draw(occ, drawn)
    occ.mark_opening("fridge", (0.1, 0.4), (0.5, 0.8))  # opened again while open: the first keeps
    assert occ.clear_opening("fridge") == drawn.size
    assert occ.clear_opening("never opened") == 0


class _Occupancy:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def mark_opening(self, key: str, box_min: tuple[float, float], box_max: tuple[float, float]) -> None:
        self.calls.append(("mark", key, box_min, box_max))

    def clear_opening(self, key: str) -> int:
        self.calls.append(("clear", key))
        return 12


def _agent(last: Action | None) -> HoloMindAgent:
    agent = HoloMindAgent.__new__(HoloMindAgent)  # only what _note_opening reads
    agent._last_action = last
    agent.occupancy = _Occupancy()  # type: ignore[assignment]
    dresser = SimpleNamespace(box_min=np.array([0.1, 0.0, 0.4]), box_max=np.array([0.5, 0.9, 0.8]))
    agent.tracker = SimpleNamespace(get=lambda oid: dresser if oid == "dresser" else None)  # type: ignore[assignment]
    agent.notes_log = []
    agent.obs = SimpleNamespace(step=7)  # type: ignore[assignment]
    return agent


def _frame(action: str | None, success: bool = True) -> Any:
    return SimpleNamespace(feedback=SimpleNamespace(action=action, success=success))


def test_the_agent_marks_before_the_open_frame_and_clears_before_the_closed_one() -> None:
    agent = _agent(Action("OpenObject", "dresser"))
    agent._note_opening(_frame("OpenObject"))
    assert agent.occupancy.calls == [("mark", "dresser", (0.1, 0.4), (0.5, 0.8))]  # type: ignore[attr-defined]
    agent = _agent(Action("CloseObject", "dresser"))
    agent._note_opening(_frame("CloseObject"))
    assert agent.occupancy.calls == [("clear", "dresser")]  # type: ignore[attr-defined]
    assert agent.notes_log == ["step 7: map: 12 cells dresser filled while open cleared"]


@pytest.mark.parametrize("last,frame", [
    (Action("OpenObject", "dresser"), _frame("OpenObject", success=False)),  # refused: nothing opened
    (Action("CloseObject", "dresser"), _frame("CloseObject", success=False)),  # still open
    (Action("OpenObject", "dresser"), _frame(None)),  # the first frame of an episode
    (Action("MoveAhead"), _frame("MoveAhead")),
    (Action("OpenObject", "unseen"), _frame("OpenObject")),  # no box known to mark round
    (None, _frame(None)),
])
def test_nothing_is_marked_or_cleared_for_other_frames(last: Action | None, frame: Any) -> None:
    agent = _agent(last)
    agent._note_opening(frame)
    assert agent.occupancy.calls == []  # type: ignore[attr-defined]
