"""Reading the recorded real-model run (tests/data/llm/README.md) back into the planner's terms.

The fixture holds every HTTP request and answer of one ``worldmind run`` with Qwen2.5-Coder-0.5B
behind llama-cpp-python's server. This module groups the calls into role conversations (a first
request, then the repair turns that extend it) and rebuilds, from the prompt text, what the role
saw: the goal, the bindings, and a PlannerContext whose known objects are the listed ones (each
placed at its listed distance from the agent, so the distances a prompt shows come out the same).
The contract tests and the prompt-size measurement both use it.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from household.checklist import ChecklistItem
from planner.roles import Goal, Grounding, KnownObject, PlannerContext

FIXTURE = Path(__file__).parent / "data" / "llm" / "qwen2.5-coder-0.5b-demo-calls.jsonl.gz"
FORMAT_NOTE = "\n\nAnswer with one JSON object only."
ROLE_OF_SYSTEM = {"task decomposer": "decompose", "goal refiner": "refine", "object grounder": "ground",
                  "skill planner": "translate", "critic": "critique"}
# The first sentence of each repair prompt the client sends (planner.llm.answers._repair_prompt),
# filed under planner.llm.attribution's reasons.
REPAIR_REASON = {"Your JSON uses names or ids that are not allowed here.": "refused_by_checks",
                 "Your JSON does not match the required schema.": "schema_invalid",
                 "Your answer was not valid JSON.": "invalid_json", "Your answer was empty.": "invalid_json",
                 "Your answer was cut off": "invalid_json",
                 "Your answer was not the requested JSON.": "refusal"}


@dataclass
class Call:
    messages: list[dict[str, str]]
    response_format: dict[str, Any] | None
    answer: str
    finish_reason: str | None
    prompt_tokens: int
    latency_s: float


@dataclass
class Conversation:
    role: str
    calls: list[Call] = field(default_factory=list)

    @property
    def first(self) -> Call:
        return self.calls[0]

    def recorded_refusals(self) -> list[str]:
        """The reason (REASONS category) the run gave for refusing each answer that was followed
        by a repair turn, read from that repair prompt."""
        out = []
        for call in self.calls[1:]:
            repair = call.messages[-1]["content"]
            out.append(next((r for k, r in REPAIR_REASON.items() if repair.startswith(k)), "unknown"))
        return out


def load_calls(path: Path = FIXTURE) -> list[Call]:
    calls = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            req, resp = row["request"], row["response"]
            calls.append(Call(req["messages"], req.get("response_format"), resp["content"] or "",
                              resp.get("finish_reason"), int((resp.get("usage") or {}).get("prompt_tokens") or 0),
                              float(row["latency_s"])))
    return calls


def role_of(messages: list[dict[str, str]]) -> str:
    system = messages[0]["content"]
    return next((r for k, r in ROLE_OF_SYSTEM.items() if system.startswith(f"You are the {k}")), "unknown")


def conversations(calls: list[Call] | None = None) -> list[Conversation]:
    """Calls grouped: a repair turn repeats its conversation's first two messages."""
    out: list[Conversation] = []
    for call in calls if calls is not None else load_calls():
        last = out[-1] if out else None
        if (last is not None and len(call.messages) == len(last.calls[-1].messages) + 2
                and call.messages[:2] == last.first.messages[:2]):
            last.calls.append(call)
        else:
            out.append(Conversation(role_of(call.messages), [call]))
    return out


_OBJECT_LINE = re.compile(r"^- (?P<id>.+?) \| (?P<type>[A-Za-z]+) \| (?P<room>[^|]+?) \| (?P<state>.*?)(?: \| (?P<d>[0-9.]+)m)?$")


def context_of(messages: list[dict[str, str]]) -> PlannerContext:
    """The PlannerContext a recorded prompt was built from, as far as the prompt shows it."""
    system, user = messages[0]["content"], messages[1]["content"]
    step = int(re.search(r"Agent memory at step (\d+)", user).group(1))
    held_m = re.search(r"^held: (\S+)(?: \((\w+)\))?$", user, re.M)
    held_id = None if held_m is None or held_m.group(1) == "nothing" else held_m.group(1)
    held_type = held_m.group(2) if held_m is not None and held_id else None
    rooms_m = re.search(r"^rooms seen: (.*)$", user, re.M)
    rooms = [] if rooms_m is None or rooms_m.group(1) == "none" else rooms_m.group(1).split(", ")
    pos_m = re.search(r"^agent at x=(-?[0-9.]+) y=(-?[0-9.]+)$", user, re.M)
    ax, ay = (float(pos_m.group(1)), float(pos_m.group(2))) if pos_m else (0.0, 0.0)
    objects: list[KnownObject] = []
    for i, line in enumerate(user.splitlines()):
        m = _OBJECT_LINE.match(line)
        if m is None or m.group("id").startswith("..."):
            continue
        d = float(m.group("d") or 0.0)
        room = m.group("room").strip()
        objects.append(KnownObject(m.group("id"), m.group("type"), None if room == "?" else room,
                                   (ax + d, ay, 0.0), last_seen_step=step - i))
    types_m = re.search(r"^Object types: (.*)$", system, re.M)
    types = types_m.group(1).split(", ") if types_m else sorted({o.object_type for o in objects})
    done_m = re.search(r"^done \(newest last\): (.*)$", user, re.M)
    lessons_m = re.search(r"^lessons: (.*)$", user, re.M)
    excluded_m = re.search(r"^Do not bind \(finished goals or failed twice\): (.*)$", user, re.M)
    return PlannerContext(step=step, held_object_id=held_id, held_object_type=held_type, known_objects=objects,
                          rooms_seen=rooms, history=done_m.group(1).split("; ") if done_m else [],
                          experience=lessons_m.group(1).split("; ") if lessons_m else [], object_types=types,
                          agent_position=(ax, ay, 0.0) if pos_m else None,
                          excluded_ids=excluded_m.group(1).split(", ") if excluded_m else [])


def goal_of(messages: list[dict[str, str]]) -> Goal:
    raw = json.loads(re.search(r"^Goal: (\{.*\})$", messages[1]["content"], re.M).group(1))
    return Goal(id=str(raw["id"]), text=str(raw["text"]),
                items=tuple(ChecklistItem.from_dict(i) for i in raw["items"]),
                hints={str(k): str(v) for k, v in (raw.get("hints") or {}).items()})


def grounding_of(messages: list[dict[str, str]], goal_id: str) -> Grounding:
    m = re.search(r"^Bindings: (\{.*\})$", messages[1]["content"], re.M)
    return Grounding(goal_id=goal_id, bindings=json.loads(m.group(1)) if m else {})


def without_note(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The messages as the role built them, before the client appended its format note."""
    out = [dict(m) for m in messages]
    if out[-1]["content"].endswith(FORMAT_NOTE):
        out[-1]["content"] = out[-1]["content"][: -len(FORMAT_NOTE)]
    return out
