"""LongAct-style episodes as data: parsing, loading from disk, and validation against a house.

An episode file is JSON:
``{"id", "house": {"file", "index"} | <inline house dict>, "scenario",
"instructions": {"detailed", "concise"}, "checklist": [item, ...], "max_steps",
"agent_start"?: {"position": {x, y, z}, "rotation": {x, y, z}, "horizon"} (THOR frame),
"goals"?: [generator goal records, kept opaque], "oracle"?: {reference figures, kept opaque},
"object_states"?: [{"id", "isDirty"}, ...]}``.
``object_states`` sets start states the house file does not carry (a dirty mug to wash); they
are written into the house's own object fields (ProcTHOR's ``isDirty``) when the house is
resolved, so every backend that reads the house (embedded, THOR's CreateHouse) starts alike.
Top-level keys beyond these are kept in ``Episode.extra`` and written back unchanged, so a
generator can annotate episodes without this module dropping its fields.

Errors are ``EpisodeError`` and name the episode id and the field path, e.g.
"episode dev-003: checklist[4].object.type: no object of type 'Toaster' in house
houses_dev.jsonl.gz#12"; loaders prefix the file (and line) they read. Parsing checks the
schema; ``validate_episode`` checks the episode against a concrete house and asset database,
because only then can it tell whether a Toaster, a Garage or object "4|1" exist.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from household.checklist import ChecklistItem, ChecklistSchemaError
from household.house_data import HouseError, load_house
from household.input_files import MB, NotARegularFile, check_input_file, unique_keys
from evaluation.episode_errors import EpisodeError, _fail, _join
from evaluation.episode_validation import _walk, validate_episode
from planner.language.types import MAX_INSTRUCTION_CHARS

INSTRUCTION_KINDS = ("detailed", "concise")
_FIELDS = ("id", "house", "scenario", "instructions", "checklist", "max_steps", "agent_start", "goals", "oracle",
           "object_states")
# Start states an episode may set per object: ProcTHOR house object field -> value type.
OBJECT_STATE_FIELDS = {"isDirty": bool}
_REQUIRED = ("house", "scenario", "instructions", "checklist", "max_steps")


@dataclass(frozen=True)
class HouseRef:
    """A house by file and 0-based line index, resolved with ``load_house``."""

    file: str
    index: int

    @property
    def label(self) -> str:
        """The id ``load_house`` gives the house ("houses_dev.jsonl.gz#12")."""
        return f"{Path(self.file).name}#{self.index}"


@dataclass(frozen=True)
class AgentStart:
    """Where the agent starts, in THOR's frame (y up; rotation.y is the yaw in degrees)."""

    position: tuple[float, float, float]
    rotation: tuple[float, float, float]
    horizon: float

    @classmethod
    def from_dict(cls, data: Any, episode_id: str) -> "AgentStart":
        if not isinstance(data, dict):
            raise _fail(episode_id, "agent_start", f"expected {{position, rotation, horizon}}, got {data!r}")
        return cls(_xyz(data.get("position"), episode_id, "agent_start.position"),
                   _xyz(data.get("rotation"), episode_id, "agent_start.rotation"),
                   _number(data.get("horizon"), episode_id, "agent_start.horizon"))

    def to_dict(self) -> dict[str, Any]:
        return {"position": dict(zip("xyz", self.position)), "rotation": dict(zip("xyz", self.rotation)),
                "horizon": self.horizon}


def _number(value: Any, episode_id: str, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(episode_id, path, f"expected a number, got {value!r}")
    if not math.isfinite(value):  # JSON's NaN/Infinity would start the agent nowhere and score GC 0
        raise _fail(episode_id, path, f"expected a finite number, got {value!r}")
    return float(value)


def _xyz(value: Any, episode_id: str, path: str) -> tuple[float, float, float]:
    if not isinstance(value, dict):
        raise _fail(episode_id, path, f"expected {{x, y, z}}, got {value!r}")
    x, y, z = (_number(value.get(k), episode_id, f"{path}.{k}") for k in "xyz")
    return x, y, z


@dataclass
class Episode:
    """One task: a house, instructions, the final-state checklist and a step budget. ``house`` is
    a HouseRef or an inline house dict (kept as given, not copied)."""

    id: str
    house: HouseRef | dict[str, Any]
    scenario: str
    instructions: dict[str, str]
    checklist: list[ChecklistItem]
    max_steps: int
    agent_start: AgentStart | None = None
    goals: list[dict[str, Any]] | None = None
    oracle: dict[str, Any] | None = None
    object_states: list[dict[str, Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def house_label(self) -> str:
        if isinstance(self.house, HouseRef):
            return self.house.label
        return str(self.house.get("id", "<inline house>"))

    def instruction(self, kind: str) -> str:
        if kind not in self.instructions:
            raise EpisodeError(f"episode {self.id}: instructions.{kind}: no such instruction "
                               f"(has: {', '.join(sorted(self.instructions))})")
        return self.instructions[kind]

    def resolve_house(self, data_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """The house dict: the inline one, or ``load_house(file, index, data_dir)``."""
        if not isinstance(self.house, HouseRef):
            return apply_object_states(self.house, self.object_states, self.id)
        try:
            house = load_house(self.house.file, self.house.index, data_dir)
        except (HouseError, FileNotFoundError) as exc:
            raise EpisodeError(f"episode {self.id}: house: {exc}") from exc
        return apply_object_states(house, self.object_states, self.id)

    @classmethod
    def from_dict(cls, data: Any) -> "Episode":
        """Parse and schema-check one episode; raises EpisodeError naming the id and field."""
        if not isinstance(data, dict):
            raise EpisodeError(f"episode <no id>: expected a JSON object, got {type(data).__name__}")
        eid = data.get("id")
        if not isinstance(eid, str) or not eid:
            raise _fail("<no id>", "id", f"expected a non-empty string, got {eid!r}")
        for key in _REQUIRED:
            if key not in data:
                raise _fail(eid, key, "missing field")
        scenario = data["scenario"]
        if not isinstance(scenario, str) or not scenario:
            raise _fail(eid, "scenario", f"expected a non-empty string, got {scenario!r}")
        max_steps = data["max_steps"]
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise _fail(eid, "max_steps", f"expected a positive integer, got {max_steps!r}")
        goals, oracle = data.get("goals"), data.get("oracle")
        if goals is not None and (not isinstance(goals, list) or not all(isinstance(g, dict) for g in goals)):
            raise _fail(eid, "goals", "expected a list of goal objects")
        if oracle is not None and not isinstance(oracle, dict):
            raise _fail(eid, "oracle", f"expected an object, got {oracle!r}")
        start = data.get("agent_start")
        states = _parse_object_states(data.get("object_states"), eid)
        return cls(
            id=eid,
            house=_parse_house(data["house"], eid),
            scenario=scenario,
            instructions=_parse_instructions(data["instructions"], eid),
            checklist=_parse_checklist(data["checklist"], eid),
            max_steps=max_steps,
            agent_start=AgentStart.from_dict(start, eid) if start is not None else None,
            goals=goals,
            oracle=oracle,
            object_states=states,
            extra={k: v for k, v in data.items() if k not in _FIELDS},
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "house": ({"file": self.house.file, "index": self.house.index} if isinstance(self.house, HouseRef)
                      else self.house),
            "scenario": self.scenario,
            "instructions": dict(self.instructions),
            "checklist": [item.to_dict() for item in self.checklist],
            "max_steps": self.max_steps,
        }
        if self.agent_start is not None:
            out["agent_start"] = self.agent_start.to_dict()
        if self.goals is not None:
            out["goals"] = self.goals
        if self.oracle is not None:
            out["oracle"] = self.oracle
        if self.object_states is not None:
            out["object_states"] = [dict(s) for s in self.object_states]
        out.update(self.extra)
        return out


def _parse_object_states(data: Any, eid: str) -> list[dict[str, Any]] | None:
    if data is None:
        return None
    if not isinstance(data, list):
        raise _fail(eid, "object_states", f"expected a list of {{id, <state>}} objects, got {data!r}")
    out = []
    for i, raw in enumerate(data):
        where = f"object_states[{i}]"
        if not isinstance(raw, dict):
            raise _fail(eid, where, f"expected {{id, <state>}}, got {raw!r}")
        if not isinstance(raw.get("id"), str) or not raw["id"]:
            raise _fail(eid, f"{where}.id", f"expected an object id, got {raw.get('id')!r}")
        states = {k: v for k, v in raw.items() if k != "id"}
        if not states:
            raise _fail(eid, where, f"no state given (known: {', '.join(OBJECT_STATE_FIELDS)})")
        for key, value in states.items():
            kind = OBJECT_STATE_FIELDS.get(key)
            if kind is None:
                raise _fail(eid, f"{where}.{key}", f"unknown object state (known: {', '.join(OBJECT_STATE_FIELDS)})")
            if not isinstance(value, kind):
                raise _fail(eid, f"{where}.{key}", f"expected {kind.__name__}, got {value!r}")
        out.append(dict(raw))
    return out


def apply_object_states(house: dict[str, Any], states: list[dict[str, Any]] | None, eid: str) -> dict[str, Any]:
    """The house with the episode's start states written into its objects (a copy of the object
    list; the input is not changed, so a cached house serves other episodes unchanged). An id
    the house lacks is an EpisodeError naming the field."""
    if not states:
        return house
    import copy

    out = dict(house)
    out["objects"] = copy.deepcopy(house.get("objects") or [])
    by_id = {str(o.get("id")): o for o in _walk(out["objects"])}
    for i, state in enumerate(states):
        obj = by_id.get(state["id"])
        if obj is None:
            raise _fail(eid, f"object_states[{i}].id", f"no object with id {state['id']!r} in house "
                                                       f"{house.get('id', '<inline house>')}")
        obj.update({k: v for k, v in state.items() if k != "id"})
    return out


def _parse_house(data: Any, eid: str) -> HouseRef | dict[str, Any]:
    if isinstance(data, dict) and "file" in data:
        unknown = sorted(set(data) - {"file", "index"})
        if unknown:
            raise _fail(eid, f"house.{unknown[0]}", "unknown field (a house reference is {file, index})")
        file, index = data["file"], data.get("index")
        if not isinstance(file, str) or not file:
            raise _fail(eid, "house.file", f"expected a file name, got {file!r}")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise _fail(eid, "house.index", f"expected a 0-based line index, got {index!r}")
        return HouseRef(file, index)
    if isinstance(data, dict) and "rooms" in data and "objects" in data:
        return data
    raise _fail(eid, "house", "expected {file, index} or an inline house dict with rooms and objects")


def _parse_instructions(data: Any, eid: str) -> dict[str, str]:
    if not isinstance(data, dict):
        raise _fail(eid, "instructions", f"expected {{detailed, concise}}, got {data!r}")
    unknown = sorted(set(data) - set(INSTRUCTION_KINDS))
    if unknown:
        raise _fail(eid, f"instructions.{unknown[0]}",
                    f"unknown instruction kind (known: {', '.join(INSTRUCTION_KINDS)})")
    for kind in INSTRUCTION_KINDS:
        text = data.get(kind)
        if not isinstance(text, str) or not text.strip():
            raise _fail(eid, f"instructions.{kind}", f"expected a non-empty string, got {text!r}")
        if len(text) > MAX_INSTRUCTION_CHARS:  # the parser refuses it: the episode would run blind
            raise _fail(eid, f"instructions.{kind}", f"{len(text):,} characters, over the instruction parser's "
                                                     f"limit of {MAX_INSTRUCTION_CHARS:,}")
    return {kind: data[kind] for kind in INSTRUCTION_KINDS}


def _parse_checklist(data: Any, eid: str) -> list[ChecklistItem]:
    if not isinstance(data, list) or not data:
        raise _fail(eid, "checklist", "expected a non-empty list of items")
    items = []
    for i, raw in enumerate(data):
        try:
            items.append(ChecklistItem.from_dict(raw))
        except ChecklistSchemaError as exc:
            raise _fail(eid, _join(f"checklist[{i}]", exc.field), exc.message) from None
    return items


# --- loading -----------------------------------------------------------------------------------

# An episode file is a few kB; a .jsonl of many episodes a few MB.
MAX_EPISODE_FILE_BYTES = 256 * MB


def _open_text(path: Path):
    check_input_file(path, "an episode file", MAX_EPISODE_FILE_BYTES)
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def _is_jsonl(path: Path) -> bool:
    return path.name.endswith((".jsonl", ".jsonl.gz"))


_unique_keys = unique_keys  # household/input_files.py: one helper for every JSON input


def load_episode(path: str | os.PathLike[str]) -> Episode:
    """One episode from a .json file holding one episode object; errors start with the path."""
    p = Path(path)
    try:
        with _open_text(p) as fh:
            data = json.load(fh, object_pairs_hook=_unique_keys)
    except NotARegularFile as exc:  # before ValueError: it is one
        raise EpisodeError(str(exc)) from None
    except (OSError, UnicodeDecodeError, EOFError) as exc:  # before ValueError: UnicodeDecodeError is one
        raise EpisodeError(f"{p}: unreadable episode file ({exc})") from None
    except ValueError as exc:
        raise EpisodeError(f"{p}: malformed JSON ({exc})") from None
    except RecursionError:
        raise EpisodeError(f"{p}: malformed JSON (nested too deeply)") from None
    try:
        return Episode.from_dict(data)
    except EpisodeError as exc:
        raise EpisodeError([f"{p}: {m}" for m in exc.problems]) from None


def _records(path: Path) -> Iterator[tuple[str, Any, str | None]]:
    """(where, parsed JSON or None, error or None) for every episode record in one file."""
    try:
        with _open_text(path) as fh:
            if _is_jsonl(path):
                for lineno, line in enumerate(fh, start=1):
                    if not line.strip():
                        continue
                    try:
                        yield f"{path}:{lineno}", json.loads(line, object_pairs_hook=_unique_keys), None
                    except ValueError as exc:
                        yield f"{path}:{lineno}", None, f"malformed JSON ({exc})"
                    except RecursionError:
                        yield f"{path}:{lineno}", None, "malformed JSON (nested too deeply)"
                return
            data = json.load(fh, object_pairs_hook=_unique_keys)
    except NotARegularFile as exc:  # before ValueError: it is one
        yield str(path), None, str(exc).removeprefix(f"{path}: ")
        return
    except (OSError, UnicodeDecodeError, EOFError) as exc:  # before ValueError: UnicodeDecodeError is one
        yield str(path), None, f"unreadable episode file ({exc})"
        return
    except ValueError as exc:
        yield str(path), None, f"malformed JSON ({exc})"
        return
    except RecursionError:
        yield str(path), None, "malformed JSON (nested too deeply)"
        return
    if isinstance(data, list):
        for i, record in enumerate(data):
            yield f"{path}[{i}]", record, None
    else:
        yield str(path), data, None


def load_episodes(source: str | os.PathLike[str]) -> tuple[list[Episode], list[str]]:
    """Episodes from a directory of *.json / *.jsonl(.gz) files, or from one such file (a .json
    file may hold one episode or a list). Bad records are reported as "file[:line]: problem" and
    skipped, as is a repeated episode id (reports are written per id, so ids must be unique).
    A missing source raises FileNotFoundError: that is not a malformed file but a wrong path."""
    src = Path(source)
    if not src.exists():
        raise FileNotFoundError(f"episode source {src} does not exist")
    if src.is_dir():
        files = sorted(p for p in src.iterdir() if p.is_file() and p.name.endswith((".json", ".jsonl", ".jsonl.gz")))
    else:
        files = [src]
    episodes: list[Episode] = []
    errors: list[str] = []
    first_seen: dict[str, str] = {}
    for path in files:
        for where, data, error in _records(path):
            if error is not None:
                errors.append(f"{where}: {error}")
                continue
            try:
                episode = Episode.from_dict(data)
            except EpisodeError as exc:
                errors.extend(f"{where}: {m}" for m in exc.problems)
                continue
            if episode.id in first_seen:
                errors.append(f"{where}: episode {episode.id}: id: duplicate episode id "
                              f"(first in {first_seen[episode.id]})")
                continue
            first_seen[episode.id] = where
            episodes.append(episode)
    return episodes, errors


__all__ = ["AgentStart", "Episode", "EpisodeError", "HouseRef", "INSTRUCTION_KINDS", "apply_object_states",
           "load_episode", "load_episodes", "validate_episode"]
