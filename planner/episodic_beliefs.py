"""The agent's episodic status in the belief tracker: what its own actions did, as evidence.

HoloMind's episodic memory keeps status (what is held, what state the agent left things in) and
history. Here that status is not a private dict but events in ``memory.belief.BeliefTracker``,
the same ObsMem-style tracker that serves WorldLines: every successful interaction becomes an
``action`` event by the robot with the state atoms it made true (observed, timestamped by the
step), a failure that reveals a state ("X is already on") becomes an ``observation`` event, and
so does what a close look shows changed (the state classifier's flags on a frame,
``household.visible_states``: "the fridge stands open", "the mug is dirty"), once per change,
and where a thing is seen standing (on or in which receptacle, from the agent's own boxes: a mug
someone else moved has its new place, not only "moved").
So the planner reads object states with provenance and history ("the fridge: opened at step
212, closed at step 230"), and the log can be written to disk (``path``) and replayed like any
other belief log.

States the agent never observed stay unknown: the tracker holds only what passed through the
robot's own actions, feedback and frames, never ground truth.
"""

from __future__ import annotations

import os
from typing import Any

from household.interactions import BY_ACTION, INTERACTIONS
from household.outcomes import Failure, failure_of
from memory.belief.effects import LOCATION, THOR_FLAGS, action_effects, held_location
from memory.belief.events import Event, StateAtom
from memory.belief.tracker import BeliefTracker

ROBOT = "robot"
HAND = held_location(ROBOT)  # the location of what the robot holds
# THOR flag -> the belief value when False, for the flags an interaction sets both ways
# (isOpen: "closed", isToggled: "off"); from the one table of interactions
_FALSE_VALUES: dict[str, str] = {i.thor_flag: i.belief[1] for i in INTERACTIONS
                                 if i.thor_flag and i.thor_value is False and i.belief}
# the flags a close look shows that no interaction row carries a belief for (rinsing, cooking
# and filling change them through other objects): THOR flag -> belief attribute
_SEEN_ONLY: dict[str, str] = {"isDirty": "dirty", "isCooked": "cooked", "isFilledWithLiquid": "filled"}
_EMPTY = "empty"  # the "filled" value of a vessel seen holding nothing


def seen_atom(flag: str, value: Any) -> tuple[str, str] | None:
    """(attribute, value) in the belief vocabulary for what a close look showed of one THOR
    flag (``household.visible_states``: booleans, the liquid's name for a filled vessel), or
    None for a flag the vocabulary has no attribute for."""
    if flag in THOR_FLAGS:
        attribute, true_value = THOR_FLAGS[flag]
        return attribute, true_value if value else _FALSE_VALUES.get(flag, "false")
    if flag not in _SEEN_ONLY:
        return None
    if flag == "isFilledWithLiquid":
        return _SEEN_ONLY[flag], str(value) if value else _EMPTY
    return _SEEN_ONLY[flag], "true" if value else "false"


class EpisodicBeliefs:
    """Writes the agent's own actions into a belief tracker and reads object states back."""

    def __init__(self, session: str = "", path: str | os.PathLike[str] | None = None) -> None:
        self.session = session
        self.tracker = BeliefTracker(path, self_name=ROBOT)
        self._count = 0
        self._last_t = self.tracker.last_t  # a reopened log goes on after its last event

    def _time(self, step: int) -> float:
        self._last_t = max(self._last_t, float(step))
        return self._last_t

    def _ingest(self, step: int, kind: str, action: str, target: str | None, effects: list[StateAtom],
                args: dict[str, Any] | None = None, success: bool = True, error: str = "") -> None:
        self._count += 1
        event = Event(id=f"{self.session or 'episode'}:{step}:{self._count}", t=self._time(step), actor=ROBOT,
                      kind=kind, action=action, observers=(ROBOT,), target=target, args=dict(args or {}),
                      effects=tuple(effects), success=success, error=error, session=self.session)
        report = self.tracker.ingest([event])
        if report.rejected:  # our own events are well-formed; a rejection is a bug worth seeing
            raise ValueError(f"belief tracker refused the agent's event: {report.rejected[0]}")

    def record(self, step: int, action: str, object_id: str, success: bool, error: str = "",
               held_before: str | None = None, failure: str = "") -> None:
        """One interaction and its feedback (``held_before``: what was in hand when it was sent;
        ``failure``: the backend's typed outcome, read from ``error`` where it sent none)."""
        if success:
            atoms = [StateAtom(*atom) for atom in action_effects(action, object_id, held_before, ROBOT)]
            if atoms and action == "PutObject":
                self._ingest(step, "action", "place", held_before, atoms, {"to": object_id})
            elif atoms:
                self._ingest(step, "action", BY_ACTION[action].skill, object_id, atoms)
            return
        row = BY_ACTION.get(action)
        if row is not None and row.belief and failure_of(False, failure, error) is Failure.ALREADY_STATE:
            # "is already on": what the action would have made true holds already
            attribute, value = row.belief
            self._ingest(step, "observation", "inspect", object_id, [StateAtom(object_id, attribute, value)],
                         {"after": action})

    def observe(self, step: int, object_id: str, states: tuple[tuple[str, Any], ...]) -> int:
        """What a close look at the object showed (THOR flag, value pairs), as an ``observation``
        event by the robot of the atoms that differ from what the tracker holds now: a change
        the agent saw (or a first look) is evidence, the same look again every frame is not.
        Returns the number of atoms recorded."""
        atoms = []
        for flag, value in states:
            atom = seen_atom(flag, value)
            if atom is None:
                continue
            now = self.tracker.state.current(object_id, atom[0])
            if now is None or now.value != atom[1]:
                atoms.append(StateAtom(object_id, *atom))
        if atoms:
            self._ingest(step, "observation", "inspect", object_id, atoms, {"by": "state classifier"})
        return len(atoms)

    def observe_location(self, step: int, object_id: str, receptacle_id: str) -> bool:
        """The object seen standing on or in the receptacle (``planner.support.support_of`` on
        the agent's own boxes), as an ``observation`` of its ``location`` when that differs from
        what the tracker holds: a thing someone else moved gets its new place, not only
        "moved". Returns whether it was recorded."""
        now = self.tracker.state.current(object_id, LOCATION)
        if now is not None and now.value == receptacle_id:
            return False
        self._ingest(step, "observation", "inspect", object_id, [StateAtom(object_id, LOCATION, receptacle_id)],
                     {"by": "object memory"})
        return True

    def state_of(self, object_id: str) -> dict[str, Any]:
        """The latest observed flags (isOpen, isToggled, isSliced, isBroken, and what looks
        showed of isDirty, isCooked, isFilledWithLiquid) and location, if any."""
        out: dict[str, Any] = {}
        for flag, (attribute, true_value) in THOR_FLAGS.items():
            entry = self.tracker.state.current(object_id, attribute)
            if entry is not None:
                out[flag] = entry.value == true_value
        for flag, attribute in _SEEN_ONLY.items():
            entry = self.tracker.state.current(object_id, attribute)
            if entry is not None:
                out[flag] = ((entry.value if entry.value != _EMPTY else False) if flag == "isFilledWithLiquid"
                             else entry.value == "true")
        where = self.tracker.state.current(object_id, LOCATION)
        if where is not None:
            out["location"] = where.value
        return out

    def history(self, object_id: str, attribute: str) -> list[tuple[int, str]]:
        """(step, value) of every recorded change, oldest first."""
        return [(int(e.t), e.value) for e in self.tracker.state.history(object_id, attribute)]

    def __len__(self) -> int:
        return len(self.tracker)

    def close(self) -> None:
        self.tracker.close()
