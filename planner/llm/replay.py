"""Recorded model answers replayed to a new run by role and goal, not by the bytes of the prompt.

Why: the response cache (planner.llm.client) is keyed by sha256 of the whole prompt, so a
recording stops replaying as soon as any prompt text changes (the memory listing was cut, a
sentence reworded), although the question a role was asked, "ground this goal", "plan that
goal", is the same. A ``ReplayBook`` answers each role request of a new run with the answer the
recorded model gave to the same role for the same goal, and every answer still goes through the
client's parsing, schema, project checks (planner.plan_checks) and repair loop, exactly as a live
answer would: a recording is judged by today's rules.

The recording is a ``calls.jsonl`` (optionally gzipped): one JSON object per HTTP call in call
order, ``request.messages`` as sent and the answer either as an OpenAI chat completion
(``response.choices[0].message.content``/``finish_reason``, the full recording) or trimmed
(``response.content``/``finish_reason``, tests/data/llm/README.md). Rows whose ``status`` is not
200 or that carry no answer are skipped (counted in ``skipped_calls``).

Matching rules:

- Conversations. A call whose messages extend an earlier call's by one answer and one repair turn
  (the same first two messages, two more messages) continues that conversation: its answer is the
  answer to repair turn n (n = (len(messages) - 2) / 2). A conversation whose first call was not
  recorded (the recording began during its repairs) is kept but never answers a first request:
  a repair answer is not an answer to a first question.
- Role: read from the recorded system prompt ("You are the object grounder ..." -> ground).
- Goal identity, read from the first user message the same way for the recording and for the new
  request (``request_key``): for refine, ground and translate, the ``Goal: {...}`` line's text
  (case and spacing folded) and, per item, the object type, room and count, the predicate, the
  value, and the target type and room. Left out on purpose: the goal id (another decomposition
  numbers goals differently), ids pinned by a refiner and hints (a recorded refinement that today's
  checks refuse leaves today's goal without them), the memory listing, the bindings the
  translator is given and the step. A refiner that rewrote the goal's text or items and was used
  then but is refused now (or the reverse) makes the later requests for that goal unmatched: they
  ask about another goal. Decompose: the instruction. Critique: the event (kind, subgoal, action,
  success, error; not the free-text note).
- Order: among the recorded conversations with the request's role and key, the first one not yet
  used answers (in recorded order); it is then used, whether or not its answer is accepted. Its
  repair answers answer today's repair turns of the same request, turn by turn.
- Nothing to answer: no unused conversation with that role and key, or a repair turn the
  recording does not have (the run accepted the answer that today's checks refuse). The client
  raises ``ReplayMissError``; a first request then fails as kind ``not_recorded`` (the role falls
  back, counted under that reason in the attribution), a repair turn ends the repairs with the
  reason the last answer was refused for.

Nothing here reaches the network; litellm is never imported in a replay.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

ROLE_OF_SYSTEM: dict[str, str] = {"task decomposer": "decompose", "goal refiner": "refine",
                                  "object grounder": "ground", "skill planner": "translate", "critic": "critique"}
GOAL_ROLES = ("refine", "ground", "translate")
MAX_CALLS_BYTES = 256 << 20  # a recording is a few MB at most; a bigger file is the wrong path

_GOAL_LINE = re.compile(r"^Goal: (\{.*\})$", re.M)
_INSTRUCTION_LINE = re.compile(r"^Instruction: (.*)$", re.M)
_EVENT_LINE = re.compile(r"^Event: (\{.*\})$", re.M)


class ReplayMissError(RuntimeError):
    """No recorded answer for this request (see the module docstring); ``turn`` is the repair turn
    asked (0: the first request)."""

    def __init__(self, message: str, turn: int) -> None:
        super().__init__(message)
        self.turn = turn


class ReplayFileError(ValueError):
    """The calls file cannot be read as a recording (names the file and line)."""


@dataclass(frozen=True)
class RecordedAnswer:
    text: str
    finish_reason: str | None


@dataclass
class RecordedConversation:
    """One role invocation of the recorded run: its first request and the repair turns after it."""

    index: int  # in recorded order
    role: str
    key: str | None
    label: str
    prefix: list[dict[str, Any]]  # the first two messages (system, user), to attach repair turns
    first_turn: int  # 0, or the turn the recording began at
    answers: list[RecordedAnswer] = field(default_factory=list)
    used: bool = False

    @property
    def complete(self) -> bool:
        return self.first_turn == 0


def role_of(messages: list[dict[str, Any]]) -> str:
    """The role a recorded request was for, from its system prompt ("unknown" if none fits)."""
    system = str(messages[0].get("content") or "") if messages and messages[0].get("role") == "system" else ""
    return next((r for k, r in ROLE_OF_SYSTEM.items() if system.startswith(f"You are the {k}")), "unknown")


def _fold(text: Any) -> str:
    return " ".join(str(text).casefold().split()).rstrip(".")


def _selector(sel: Any) -> list[Any] | None:
    if not isinstance(sel, Mapping):
        return None
    return [sel.get("type"), sel.get("room"), sel.get("count")]


def goal_identity(goal: Mapping[str, Any]) -> str:
    """The goal as the matching rules see it (module docstring): text and items, no ids or hints."""
    items = []
    for item in goal.get("items") or ():
        if isinstance(item, Mapping):
            items.append([_selector(item.get("object")), item.get("predicate"), item.get("value", True),
                          _selector(item.get("target"))])
    return json.dumps({"text": _fold(goal.get("text", "")), "items": items}, sort_keys=True, separators=(",", ":"))


def _user_text(messages: list[dict[str, Any]]) -> str:
    return next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")


def _json_line(pattern: re.Pattern[str], text: str) -> Any:
    """The JSON value on the prompt line ``pattern`` captures, or None (no such line, or not JSON)."""
    m = pattern.search(text)
    try:
        return json.loads(m.group(1)) if m else None
    except ValueError:
        return None


def request_key(role: str, messages: list[dict[str, Any]]) -> tuple[str | None, str]:
    """(match key, a short label for people) of a role request; key None when the prompt states no
    goal, instruction or event this module can read."""
    user = _user_text(messages)
    if role in GOAL_ROLES:
        goal = _json_line(_GOAL_LINE, user)
        if not isinstance(goal, dict):
            return None, "a prompt without a readable Goal line"
        items = [i for i in goal.get("items") or () if isinstance(i, Mapping)]
        what = "; ".join(f"{(i.get('object') or {}).get('type')} {i.get('predicate')}"
                         + (f" {(i.get('target') or {}).get('type')}" if i.get("target") else "")
                         for i in items)
        return goal_identity(goal), f"goal {str(goal.get('text', ''))[:80]!r} ({what})"
    if role == "decompose":
        m = _INSTRUCTION_LINE.search(user)
        return (("instruction:" + _fold(m.group(1))), f"instruction {m.group(1)[:80]}") if m else \
            (None, "a prompt without an Instruction line")
    if role == "critique":
        event = _json_line(_EVENT_LINE, user)
        if not isinstance(event, dict):
            return None, "a prompt without a readable Event line"
        sg = event.get("subgoal") if isinstance(event.get("subgoal"), dict) else {}
        key = {k: event.get(k) for k in ("kind", "action", "success", "error")}
        key["subgoal"] = [sg.get("skill"), sg.get("args")] if sg else None
        return "event:" + json.dumps(key, sort_keys=True, separators=(",", ":")), \
            f"event {event.get('kind')} {sg.get('skill') if sg else ''} {event.get('action') or ''}".strip()
    return None, f"role {role!r}"


def _answer_of(row: Mapping[str, Any]) -> RecordedAnswer | None:
    resp = row.get("response")
    if not isinstance(resp, Mapping):
        return None
    if "choices" in resp:  # an OpenAI chat completion, as the server sent it
        choices = resp.get("choices") or []
        if not choices or not isinstance(choices[0], Mapping):
            return None
        message = choices[0].get("message") or {}
        text, finish = message.get("content"), choices[0].get("finish_reason")
    else:  # the trimmed form (tests/data/llm/README.md)
        text, finish = resp.get("content"), resp.get("finish_reason")
    if text is not None and not isinstance(text, str):
        return None
    return RecordedAnswer(text or "", finish if isinstance(finish, str) else None)


class ReplayBook:
    """The recorded conversations of one calls file, consumed in recorded order as a run asks
    (one book per LLM client: a run over several episodes goes on where the last one stopped)."""

    def __init__(self, conversations: Iterable[RecordedConversation], source: str = "",
                 skipped_calls: int = 0, model: str | None = None, schema_enforced: bool = False) -> None:
        self.conversations = list(conversations)
        self.source = source
        self.skipped_calls = skipped_calls
        self.model = model
        self.schema_enforced = schema_enforced
        self._active: dict[str, RecordedConversation] = {}  # prefix (json) -> the conversation answering it
        self.misses: Counter[str] = Counter()  # role -> requests nothing recorded answered

    # ----------------------------------------------------------------- loading

    @classmethod
    def load(cls, path: str | Path) -> "ReplayBook":
        p = Path(path)
        if not p.is_file():
            raise ReplayFileError(f"replay calls file not found: {p}")
        opener = gzip.open if p.suffix == ".gz" else open
        rows: list[dict[str, Any]] = []
        try:
            with opener(p, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
                size = 0
                for n, line in enumerate(fh, 1):
                    size += len(line)
                    if size > MAX_CALLS_BYTES:
                        raise ReplayFileError(f"{p}: over the {MAX_CALLS_BYTES}-byte limit for a calls file")
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except ValueError:
                        raise ReplayFileError(f"{p}:{n}: not a JSON object per line") from None
                    if not isinstance(row, dict):
                        raise ReplayFileError(f"{p}:{n}: not a JSON object per line")
                    rows.append(row)
        except (OSError, UnicodeDecodeError, EOFError) as exc:
            raise ReplayFileError(f"{p}: cannot read it as a calls file ({type(exc).__name__})") from None
        return cls.from_rows(rows, source=str(p))

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]], source: str = "") -> "ReplayBook":
        conversations: list[RecordedConversation] = []
        skipped = 0
        models: Counter[str] = Counter()
        enforced = False
        for row in rows:
            req = row.get("request")
            if not isinstance(req, Mapping):
                skipped += 1
                continue
            messages = req.get("messages")
            answer = _answer_of(row)
            status = row.get("status", 200)
            if (not isinstance(messages, list) or len(messages) < 2 or len(messages) % 2
                    or not all(isinstance(m, Mapping) for m in messages) or answer is None or status != 200):
                skipped += 1
                continue
            if isinstance(req.get("model"), str):
                models[req["model"]] += 1
            rf = req.get("response_format")
            enforced = enforced or (isinstance(rf, Mapping) and ("schema" in rf or "json_schema" in rf))
            turn = (len(messages) - 2) // 2
            prefix = [dict(m) for m in messages[:2]]
            # A repair turn continues the latest conversation with the same first two messages that
            # has answered the turn before.
            host = next((c for c in reversed(conversations)
                         if c.prefix == prefix and c.first_turn + len(c.answers) == turn), None)
            if host is not None and turn > 0:
                host.answers.append(answer)
                continue
            role = role_of(messages)
            key, label = request_key(role, messages)
            conversations.append(RecordedConversation(len(conversations), role, key, label, prefix, turn, [answer]))
        model = models.most_common(1)[0][0] if models else None
        return cls(conversations, source=source, skipped_calls=skipped, model=model, schema_enforced=enforced)

    # ----------------------------------------------------------------- answering

    def answer(self, role: str, messages: list[dict[str, Any]]) -> RecordedAnswer:
        """The recorded answer to this request (the first turn or a repair turn), else
        ``ReplayMissError`` saying why."""
        turn = max(0, (len(messages) - 2) // 2)
        prefix_key = json.dumps([dict(m) for m in messages[:2]], sort_keys=True)
        if turn > 0:
            conv = self._active.get(prefix_key)
            index = turn - (conv.first_turn if conv is not None else 0)
            if conv is None or index >= len(conv.answers):
                raise ReplayMissError(f"the recording has no answer to repair turn {turn} of this {role} request"
                                      + (f" ({conv.label})" if conv is not None else ""), turn)
            return conv.answers[index]
        key, label = request_key(role, messages)
        conv = None
        if key is not None:
            conv = next((c for c in self.conversations
                         if not c.used and c.complete and c.role == role and c.key == key), None)
        if conv is None:
            self.misses[role] += 1
            recorded = sum(1 for c in self.conversations if c.complete and c.role == role and c.key == key) \
                if key is not None else 0
            why = (f"{recorded} recorded, all used" if recorded else "none recorded") if key is not None else "unmatched"
            raise ReplayMissError(f"no recorded {role} answer for {label} ({why})", 0)
        conv.used = True
        self._active[prefix_key] = conv
        return conv.answers[0]

    def summary(self) -> dict[str, Any]:
        """Recorded conversations per role, how many a run used, left unused, and requests missed."""
        by_role: dict[str, dict[str, int]] = {}
        for c in self.conversations:
            row = by_role.setdefault(c.role, {"recorded": 0, "used": 0, "unused": 0, "incomplete": 0, "missed": 0})
            row["recorded"] += 1
            if not c.complete:
                row["incomplete"] += 1
            elif c.used:
                row["used"] += 1
            else:
                row["unused"] += 1
        for role, n in self.misses.items():
            by_role.setdefault(role, {"recorded": 0, "used": 0, "unused": 0, "incomplete": 0, "missed": 0})["missed"] = n
        return {"calls_file": Path(self.source).name if self.source else "", "model": self.model,
                "conversations": len(self.conversations), "skipped_calls": self.skipped_calls,
                "by_role": dict(sorted(by_role.items()))}
