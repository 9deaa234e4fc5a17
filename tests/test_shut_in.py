"""What the agent shuts in a box it opened is opened again before it acts on it.

The search shuts what it looked into and found nothing wanted in (``planner.goal_search``); what
it saw inside is out of view from every pose once the box is closed, so the agent remembers it as
shut in (``HoloMindAgent._note_shut_in``) and the skill acting on it opens the box first
(``Skills._open_what_shut_it_in``). Before, a pick of a credit card seen in a dresser's drawer
walked every viewpoint round the dresser and was refused as not visible (dev-012-0).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from household.assets import default_catalog
from household.types import Action, ActionFeedback
from planner.episode_state import EpisodeState
from planner.holomind import HoloMindAgent
from planner.roles import Subgoal
from planner.skills import Skills
from tests.skill_fakes import FakeAgentView

DRAWER = "6|1|Drawer|1"


def _obj(oid: str, kind: str, centre: tuple[float, float, float], last_seen: int,
         half: float = 0.04) -> SimpleNamespace:
    c = np.array(centre)
    return SimpleNamespace(object_id=oid, object_type=kind, centroid=c, box_min=c - half, box_max=c + half,
                           last_seen=last_seen, gone=False, state={})


def _agent(visible: set[str]) -> HoloMindAgent:
    """A drawer (x 1.0-1.4, y 0.3-0.5, z 2.0-2.4) opened at step 100 and closed at 110, and what
    the agent saw round it."""
    agent = HoloMindAgent.__new__(HoloMindAgent)  # only what _note_shut_in reads
    objects = {o.object_id: o for o in [
        SimpleNamespace(object_id=DRAWER, object_type="Drawer", centroid=np.array([1.2, 0.4, 2.2]),
                        box_min=np.array([1.0, 0.3, 2.0]), box_max=np.array([1.4, 0.5, 2.4]),
                        last_seen=110, gone=False, state={}),
        _obj("card", "CreditCard", (1.2, 0.4, 1.7), 105),  # in the drawer pulled out, 0.3 m past its box
        _obj("keys", "KeyChain", (1.1, 0.35, 2.1), 108),  # inside, and seen only while open
        _obj("old", "Pen", (1.2, 0.4, 2.2), 90),  # seen there before the drawer was opened
        _obj("lamp", "CellPhone", (1.2, 0.95, 2.2), 105),  # on the dresser's top, above the drawer
        _obj("floor", "Book", (1.2, 0.05, 1.8), 105),  # on the floor in front
        _obj("far", "CreditCard", (3.0, 0.4, 2.2), 105),  # 1.6 m off
        _obj("seen", "Watch", (1.2, 0.4, 2.1), 105),  # still in view once closed: not inside
        _obj("3|Drawer|2", "Drawer", (1.2, 0.25, 2.2), 105),  # another drawer: not pickupable
    ]}
    agent.tracker = SimpleNamespace(objects=objects, get=objects.get,  # type: ignore[assignment]
                                    visible_now={oid: 1 for oid in visible})
    agent.catalog = default_catalog()
    agent.state = EpisodeState()
    agent.state.touched[DRAWER] = (100, "OpenObject")
    agent.notes_log = []
    agent.obs = SimpleNamespace(step=110)  # type: ignore[assignment]
    return agent


def test_what_was_seen_inside_while_open_and_is_hidden_once_closed_is_shut_in() -> None:
    agent = _agent(visible={DRAWER, "seen"})
    agent._note_shut_in("CloseObject", DRAWER)
    assert agent.state.shut_in == {"card": DRAWER, "keys": DRAWER}
    assert "step 110: card shut in 6|1|Drawer|1" in agent.notes_log
    agent._note_shut_in("OpenObject", DRAWER)  # opened again: nothing in it is hidden
    assert agent.state.shut_in == {}


def test_a_box_the_agent_did_not_open_shuts_nothing_in() -> None:
    agent = _agent(visible=set())
    agent.state.touched[DRAWER] = (95, "PutObject")  # its latest interaction was not the opening
    agent._note_shut_in("CloseObject", DRAWER)
    assert agent.state.shut_in == {}
    agent.state.touched.pop(DRAWER)
    agent._note_shut_in("CloseObject", DRAWER)
    assert agent.state.shut_in == {}


def test_take_shut_in_answers_once() -> None:
    agent = _agent(visible=set())
    agent.state.shut_in["card"] = DRAWER
    assert agent.take_shut_in("card") == DRAWER
    assert agent.take_shut_in("card") is None


class _ShutInAgent(FakeAgentView):
    """A card in view and in reach by the memory, which it remembers shut in a closed drawer."""

    held_id = None
    held_type = None

    def __init__(self, drawer_open: bool) -> None:
        super().__init__()
        self.shut = {"card": DRAWER}
        card = SimpleNamespace(object_type="CreditCard", state={}, distance_3d=lambda _p: 0.5)
        drawer = SimpleNamespace(object_type="Drawer", state={"isOpen": drawer_open}, distance_3d=lambda _p: 0.6)
        self.tracker = SimpleNamespace(get=lambda oid: drawer if oid == DRAWER else card,
                                       visible_now={"card": 1, DRAWER: 1})

    def take_shut_in(self, object_id: str) -> str | None:
        return self.shut.pop(object_id, None)


class _Recording(Skills):
    def navigate_to(self, object_id: str, closer: bool = False) -> Any:
        yield from ()
        return True


def _sent(agent: _ShutInAgent) -> list[Action]:
    gen = _Recording(agent).interact(Subgoal("pick", {"object_id": "card"}, "g1"), "card")  # type: ignore[arg-type]
    sent = [next(gen)]
    try:
        while True:
            sent.append(gen.send(SimpleNamespace(feedback=ActionFeedback(sent[-1].name, True, ""))))
    except StopIteration:
        return sent


def test_a_pick_of_what_was_shut_in_opens_the_box_first() -> None:
    agent = _ShutInAgent(drawer_open=False)
    assert _sent(agent) == [Action("OpenObject", DRAWER), Action("PickupObject", "card")]
    assert agent.notes == ["card was shut in 6|1|Drawer|1: opening it first"]
    assert agent.shut == {}  # asked once
    assert _sent(agent) == [Action("PickupObject", "card")]


def test_a_box_open_already_is_not_opened_again() -> None:
    agent = _ShutInAgent(drawer_open=True)
    assert _sent(agent) == [Action("PickupObject", "card")]
    assert agent.notes == []
