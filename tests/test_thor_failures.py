"""THOR's own failure messages -> typed outcomes (sim_bridge.thor.failures).

The corpus (tests/data/thor_error_messages.json) holds the errorMessage strings AI2-THOR's Unity
agent sets for the actions the planner uses, collected from its C# source with THOR-format ids
filled in, each labelled with the situation it describes. The patterns were written against this
corpus: the figure it gives is agreement on the messages they were written for, not a held-out
score. What the test guards is that a change to the patterns keeps every one of THOR's messages
typed as it was, and that the generic text fallback (what the critic read before) is not relied on.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from household.outcomes import FAILURES, Failure, classify_text
from sim_bridge.thor.failures import thor_failure

CORPUS = json.loads((Path(__file__).parent / "data" / "thor_error_messages.json").read_text())
MESSAGES = CORPUS["messages"]


def test_corpus_is_labelled_in_the_projects_vocabulary() -> None:
    assert len(MESSAGES) >= 60
    assert {m["situation"] for m in MESSAGES} <= set(FAILURES)
    counts = Counter(m["situation"] for m in MESSAGES)
    # the situations the critic has a fix for are all represented
    for situation in ("closed", "hand_full", "not_holding", "out_of_reach", "not_visible", "no_room",
                      "wrong_receptacle", "not_capable", "running", "is_open_device", "blocked", "unknown_object"):
        assert counts[situation] >= 1, situation


@pytest.mark.parametrize("entry", MESSAGES, ids=[f"{m['action']}-{i}" for i, m in enumerate(MESSAGES)])
def test_every_thor_message_gets_its_situation(entry: dict) -> None:
    assert thor_failure(entry["message"]).value == entry["situation"], entry["message"]


def test_the_generic_text_fallback_alone_would_misread_most_of_thor() -> None:
    """Why THOR needs its own table: the embedded simulator's patterns read a minority of THOR's
    messages right (the exception names alone, "InvalidOperationException", read as unknown ids)."""
    right = sum(classify_text(m["message"]).value == m["situation"] for m in MESSAGES)
    assert right < len(MESSAGES) / 2


@pytest.mark.parametrize("text, situation", [
    ("PickupObject: object Nope|1|2 does not exist in house 3", "unknown_object"),
    ("PickupObject: object small|6|2 is out of reach (1.62 m > 1.50 m)", "out_of_reach"),
    ("PickupObject: object small|6|9 is not visible from the agent's view", "not_visible"),
    ("Agent's hand is already holding small|6|1; cannot pick up 6|1", "hand_full"),
    ("6|1 (Fridge) is closed; open it before putting small|6|1 in it", "closed"),
    ("No valid positions to place object small|6|26 (Cup) in 7|0|1 (Sofa)", "no_room"),
    ("5|1 (Toilet) only accepts Cloth, not Apple", "wrong_receptacle"),
    ("MoveAhead blocked: the agent would collide with wall wall|1", "blocked"),
    ("small|6|31 (Microwave) is running; turn it off before opening it", "running"),
])
def test_the_stand_in_players_wording_is_typed_too(text: str, situation: str) -> None:
    """The THOR stand-in player answers with the embedded simulator's messages."""
    assert thor_failure(text).value == situation


def test_empty_or_strange_messages_are_unknown() -> None:
    assert thor_failure("") is Failure.UNKNOWN
    assert thor_failure("the gremlins did it") is Failure.UNKNOWN
