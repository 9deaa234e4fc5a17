"""WorldLines-style traces: records, the event builder and JSONL files.

A trace is DATA: a ``TraceMeta`` header (house, members, seed, the static map, the initial
ground truth and the routines the members follow) and a time-ordered list of ``Event``s with
their observers. The header's truth fields are for sample generation and scoring only; a memory
under test gets events, one by one, and the observer gate decides what it keeps.

``TraceBuilder`` executes actions on a ``HouseWorld`` (preconditions checked), computes who
perceived each event (everyone in the room where it happens; for navigate_to, the rooms left and
entered) and renders the event's text. ``load_trace`` reads a trace file, reporting malformed
lines by line number instead of failing.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evaluation.worldlines.world import HouseWorld
from household.atomic_io import atomic_write_text
from memory.belief.events import Commitment, Event, EventError, StateAtom

ROBOT = "robot"
ACTION_SECONDS = (60, 180)


@dataclass
class TraceMeta:
    house_file: str
    house_index: int
    house_id: str
    seed: int
    days: int
    members: list[str]
    rooms: dict[str, str]
    room_of: dict[str, str]
    entities: list[str]
    initial: list[list[str]]  # ground truth atoms at t=0 (scoring only)
    routines: list[dict[str, Any]] = field(default_factory=list)  # ground truth (scoring only)
    dock: str = ""
    sessions: list[dict[str, Any]] = field(default_factory=list)  # {"id", "project", "start", "end"}
    receptacles: list[str] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    mobiles: list[str] = field(default_factory=list)


@dataclass
class Trace:
    meta: TraceMeta
    events: list[Event]

    def save(self, path: str | os.PathLike[str]) -> Path:
        lines = [json.dumps({"meta": asdict(self.meta)})] + [json.dumps(ev.to_dict()) for ev in self.events]
        return atomic_write_text(path, "".join(line + "\n" for line in lines))


def load_trace(path: str | os.PathLike[str]) -> tuple[Trace, list[str]]:
    """Read a trace file; malformed event lines are skipped and reported as "file:line: why"."""
    problems: list[str] = []
    meta: TraceMeta | None = None
    events: list[Event] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                if lineno == 1:
                    meta = TraceMeta(**rec["meta"])
                else:
                    events.append(Event.from_dict(rec))
            except (ValueError, KeyError, TypeError, EventError) as exc:
                if lineno == 1:
                    raise ValueError(f"{path}:1: trace header is not a valid meta record ({exc})") from None
                problems.append(f"{path}:{lineno}: skipped malformed event line ({exc})")
    if meta is None:
        raise ValueError(f"{path}: empty trace file")
    return Trace(meta, events), problems


class TraceBuilder:
    """Runs scripted household activity on a world and records it as events."""

    def __init__(self, world: HouseWorld, rng: random.Random, tag: str) -> None:
        self.world = world
        self.rng = rng
        self.tag = tag
        self.t = 0.0
        self.session = ""
        self.events: list[Event] = []

    def _observers(self, rooms: tuple[str, ...], actor: str) -> tuple[str, ...]:
        return tuple(sorted({a for a, r in self.world.actor_room.items() if r in rooms and a != actor}))

    def _emit(self, **kw: Any) -> Event:
        ev = Event(id=f"{self.tag}-e{len(self.events):06d}", t=round(self.t), session=self.session, **kw)
        self.events.append(ev)
        self.t += self.rng.randint(*ACTION_SECONDS)
        return ev

    def wait_until(self, t: float) -> None:
        self.t = max(self.t, t)

    def act(self, actor: str, action: str, target: str, **args: Any) -> Event:
        w = self.world
        src = w.actor_room.get(actor)
        prev_loc = w.location.get(target)
        out = w.execute(actor, action, target, args)
        rooms = out.observers_rooms or ((out.room,) if out.room else ())
        observers = self._observers(rooms, actor)
        room = out.room
        if action == "navigate_to":
            args = {**args, "from": src, "to": target}
        if not out.success:
            text = f"{actor} tried to {action} {target} but failed: {out.error}"
        else:
            text = _render(actor, action, target, args, room, prev_loc, w)
        return self._emit(actor=actor, kind="action", action=action, target=target, args=args, room=room,
                          observers=observers, effects=tuple(StateAtom(*a) for a in out.effects),
                          success=out.success, error=out.error, text=text)

    def look(self, actor: str = ROBOT) -> Event:
        """The robot looks around its room: an observation of everything in view."""
        room = self.world.actor_room[actor]
        scope, atoms = self.world.visible_in(room)
        shown = "; ".join(f"{e} {'on ' if a == 'location' else ''}{v}" for e, a, v in atoms)
        return self._emit(actor=actor, kind="observation", action="inspect", target=room, args={"scope": scope},
                          room=room, observers=self._observers((room,), actor),
                          effects=tuple(StateAtom(*a) for a in atoms), text=f"{actor} looked around {room}: {shown}")

    def say(self, speaker: str, text: str, speech_act: str, *, claims: tuple[tuple[str, str, str], ...] = (),
            commitment: Commitment | None = None) -> Event:
        room = self.world.actor_room[speaker]
        return self._emit(actor=speaker, kind="utterance", action="say", room=room,
                          observers=self._observers((room,), speaker), claims=tuple(StateAtom(*c) for c in claims),
                          speech_act=speech_act, commitment=commitment, text=f'{speaker} said: "{text}"')


def _render(actor: str, action: str, target: str, args: dict, room: str | None, prev: str | None, w: HouseWorld) -> str:
    if action == "navigate_to":
        return f"{actor} went from {args.get('from')} to {target}"
    if action == "pick":
        return f"{actor} picked up {target} from {prev} in {room}"
    if action == "place":
        return f"{actor} put {args.get('object')} on {target} in {room}"
    if action in ("open", "close"):
        return f"{actor} {'opened' if action == 'open' else 'closed'} {target} in {room}"
    if action == "set_device_state":
        return f"{actor} turned {args.get('value')} {target} in {room}"
    if action == "handoff":
        return f"{actor} handed {args.get('object')} to {target} in {room}"
    return f"{actor} inspected {target} in {room}"
