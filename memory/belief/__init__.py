"""ObsMem-style belief tracker: what the robot knows, how it knows it, and how sure it is.

Events reach memory only through the observer gate (``events.perceived_by``); from them the
tracker keeps an append-only Event track (durable, ``log``), a State track (per entity and
attribute, with provenance and point-in-time lookup), Belief statuses (``beliefs``), Commitments,
episode cards and causal links from actions to the state changes they caused. ``retrieval``
turns a question into a query plan and at most k typed evidence records.
"""

from memory.belief.events import Event, EventError, StateAtom
from memory.belief.answer import Answer
from memory.belief.tracker import BeliefTracker

__all__ = ["Answer", "BeliefTracker", "Event", "EventError", "StateAtom"]
