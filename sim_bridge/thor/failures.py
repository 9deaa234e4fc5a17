"""AI2-THOR's failure messages -> typed outcomes (``household.outcomes.Failure``).

Why: THOR reports a failed action as ``lastActionSuccess: False`` plus an English
``errorMessage`` written in the Unity agent's C# (``PhysicsRemoteFPSAgentController``), with no
code a client can act on. The planner acts on the situation (closed: open it; no room: choose
another receptacle), so this backend reads THOR's own wording once, here, instead of every
consumer matching text. The patterns are checked against a corpus of THOR's messages collected
from its source (``tests/data/thor_error_messages.json``); a message none of them matches falls
back to ``household.outcomes.classify_text`` and then to ``UNKNOWN``.
"""

from __future__ import annotations

import re

from household.outcomes import Failure, classify_text

# First match wins; order matters where THOR's sentences mention two things ("Target object not
# found within the specified visibility" is about visibility, not an unknown id; "collision is
# blocking held object from being placed" is about room on the receptacle, not a blocked move).
_THOR_PATTERNS: tuple[tuple[Failure, str], ...] = (
    (Failure.BAD_REQUEST, r"must be in \[0|must be > ?0|cannot rotate by 0 degrees|requires positive degree"
                          r"|multiple of 0\.1|missing liquid|not a valid liquid type|can't look (up|down) beyond"
                          r"|invalid ?action|missing ?arguments?|invalid ?argument|ambiguous ?action|unknown action"),
    (Failure.UNKNOWN, r"cannot be sliced if it is in the agent's hand"),  # the embedded simulator's "is held"
    (Failure.NOT_VISIBLE, r"not found within the specified visibility|outside of agent viewport|not currently visible"
                          r"|not visible|not interactable|occluded|not in view|cannot see|no longer visible"),
    (Failure.UNKNOWN_OBJECT, r"appears to be invalid|is not the objectid on any object|object with id .* is null"
                             r"|object not found|no valid receptacle found|objectid required|does not exist"
                             r"|no sim ?objects? found at"
                             r"|doesn't exist|no object with id"),
    (Failure.ALREADY_STATE, r"already (open|opened|closed|toggled|on\b|off\b|sliced|broken|filled|full of)"),
    (Failure.HAND_FULL, r"has something in it already|an empty hand is required|(already|currently) holding"
                        r"|hand is already holding"),
    (Failure.NOT_HOLDING, r"nothing is in the agent's hand|not holding any object|no object (is )?held"
                          r"|isn't holding anything"),
    (Failure.RUNNING, r"must be off to open"),
    (Failure.DEVICE_OPEN, r"must be closed to toggle on"),
    (Failure.CLOSED, r"is closed|must be open(ed)? to|closed receptacle"),
    (Failure.OUT_OF_REACH, r"must be making contact|hyperextended|too far|out of reach|beyond (the )?interaction"),
    (Failure.NO_ROOM, r"no valid positions?|collision is blocking held object from being placed|is full right now"
                      r"|does not fit|not enough (room|space)"),
    (Failure.WRONG_RECEPTACLE, r"not a valid object type to be placed|not a (valid )?receptacle|only accepts"
                               r"|cannot be placed in"),
    (Failure.NOT_CAPABLE, r"must have the property|does not have (the )?\w+ property|must pass in openable"
                          r"|controlled by another sim object|is broken and cannot|is not an? (pickupable|openable"
                          r"|toggleable|sliceable|breakable)|is not (pickupable|openable|toggleable|sliceable"
                          r"|breakable)"),
    (Failure.NEEDS_TOOL, r"needs a knife|knife or butterknife"),
    (Failure.BLOCKED, r"is blocking|can't be dropped|clear of all other collision|scene bounds do not contain"
                      r"|would bring it beyond the max distance|with something if agent rotates|blocked|collide"),
)
_COMPILED = tuple((f, re.compile(p)) for f, p in _THOR_PATTERNS)
# THOR reports an action that threw as "<ExceptionType>: <message>. trace: <stack>"; the situation
# is in the message, and the exception's name ("InvalidOperationException") must not be read as one.
_EXCEPTION_PREFIX = re.compile(r"^\s*[\w.]*exception:\s*")
_TRACE = re.compile(r"\s*trace:.*$", re.DOTALL)


def thor_failure(error: str) -> Failure:
    """The typed outcome of a THOR ``errorMessage`` (or the ValueError text the Controller raises
    for InvalidAction-class error codes, which ``BAD_REQUEST`` covers)."""
    text = _TRACE.sub("", _EXCEPTION_PREFIX.sub("", (error or "").strip().lower()))
    if not text:
        return Failure.UNKNOWN
    for failure, pattern in _COMPILED:
        if pattern.search(text):
            return failure
    return classify_text(text)
