"""Typed action outcomes: why an atomic action failed, as one enumerated situation.

Why this module: the critic, the skills, the refusal store and the experience pool act on *why* an
action failed (the receptacle is closed: open it; the hand is full: put down; no room: choose
another receptacle). Reading that from English error text ties them to one simulator's wording:
THOR's ``errorMessage`` and the embedded simulator's messages differ, and a robot adapter's differ
again. So every backend reports a failure as a ``Failure`` (in ``ActionFeedback.failure``) beside
its message, the way Nav2's action results carry an enumerated error code beside the text:

- the embedded simulator sets it where it raises (``sim_bridge.embedded.interactions``);
- the THOR backend maps THOR's own messages (``sim_bridge.thor.failures``, tested on a corpus of
  THOR's messages);
- the ROS ``ExecuteSkill`` result carries it as ``failure`` (a robot adapter fills it in);
- ``classify_text`` remains only as the fallback for a backend that sends no code (an older bag,
  an unknown robot adapter), tested on each backend's messages.

The values are stable strings: they are written to reports, experience pools and bags.
"""

from __future__ import annotations

import re
from enum import Enum


class Failure(str, Enum):
    """Why an action failed. ``NONE`` for success; ``UNKNOWN`` when no situation fits."""

    NONE = ""
    ALREADY_STATE = "already_state"  # already open/closed/on/off/sliced/broken: the wanted state holds
    CLOSED = "closed"  # the receptacle, or what encloses the object, is closed
    HAND_FULL = "hand_full"  # something is already held
    NOT_HOLDING = "not_holding"  # a put with nothing in hand
    OUT_OF_REACH = "out_of_reach"  # further than the arm reaches
    NOT_VISIBLE = "not_visible"  # not in view, occluded, or not interactable from here
    NO_ROOM = "no_room"  # the receptacle has no free place for the object
    WRONG_RECEPTACLE = "wrong_receptacle"  # not a receptacle, or does not accept this type
    NOT_CAPABLE = "not_capable"  # not pickupable/openable/toggleable/sliceable/fillable/breakable
    NEEDS_TOOL = "needs_knife"  # the interaction needs a tool in hand (slicing: a knife)
    RUNNING = "running"  # a device must be turned off first (open a running microwave)
    DEVICE_OPEN = "is_open_device"  # a device must be closed first (turn on an open microwave)
    BLOCKED = "blocked"  # a move or rotation collides; something is in the way
    UNKNOWN_OBJECT = "unknown_object"  # no such object (any more)
    BAD_REQUEST = "bad_request"  # malformed action: unknown action, missing argument, out of range
    UNKNOWN = "unknown"

    @classmethod
    def parse(cls, value: object) -> "Failure":
        """The Failure a stored/transported string names; anything unrecognised is UNKNOWN (an
        adapter newer than this code may send a code we do not know yet)."""
        if isinstance(value, Failure):
            return value
        try:
            return cls(str(value or ""))
        except ValueError:
            return cls.UNKNOWN


FAILURES: tuple[str, ...] = tuple(f.value for f in Failure if f is not Failure.NONE)

# The fallback: situations recognised in free error text, first match wins. Written against the
# embedded simulator's and THOR's wording; a backend that sends codes never reaches it.
_PATTERNS: tuple[tuple[Failure, str], ...] = (
    (Failure.ALREADY_STATE, r"is already (on|off|open|closed|sliced|broken)"),
    (Failure.CLOSED, r"is closed; open it|which is closed|is closed"),
    (Failure.HAND_FULL, r"hand is already holding|already holding"),
    (Failure.NOT_HOLDING, r"not holding any object"),
    (Failure.OUT_OF_REACH, r"out of reach|too far|distance"),
    (Failure.NOT_VISIBLE, r"not visible|not in view|cannot see"),
    (Failure.NO_ROOM, r"no valid positions|no room|does not fit"),
    (Failure.WRONG_RECEPTACLE, r"only accepts|not a receptacle"),
    (Failure.NOT_CAPABLE, r"is not (openable|pickupable|toggleable|sliceable|breakable)|cannot be filled"),
    (Failure.NEEDS_TOOL, r"needs a knife|knife or butterknife"),
    (Failure.RUNNING, r"is running; turn it off"),
    (Failure.DEVICE_OPEN, r"is open; close it before"),
    (Failure.BLOCKED, r"blocked|collide"),
    (Failure.UNKNOWN_OBJECT, r"invalid|does not exist|no longer exists"),
)
_COMPILED = tuple((f, re.compile(p)) for f, p in _PATTERNS)


def classify_text(error: str) -> Failure:
    """The situation free error text describes (the fallback for backends without codes)."""
    text = (error or "").lower()
    for failure, pattern in _COMPILED:
        if pattern.search(text):
            return failure
    return Failure.UNKNOWN


def failure_of(success: bool, failure: object, error: str) -> Failure:
    """The typed outcome of one action: the backend's code where it sent one, else the text's."""
    if success:
        return Failure.NONE
    code = Failure.parse(failure)
    return code if code is not Failure.NONE else classify_text(error)
