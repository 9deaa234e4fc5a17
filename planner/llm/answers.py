"""Reading a model's answer: the JSON in it, its schema errors, the repair prompt, and the cache files.

Why a module of its own: these are pure functions over text (no litellm, no network), shared by the
client and by tests that check recorded answers; they are kept apart from the transport so each
stays readable (planner/llm/client.py sends, this file reads).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from household.atomic_io import atomic_write_text
from household.secrets import redact_json

FailureKind = Literal["empty", "truncated", "not_json", "refusal", "schema", "semantic", "api_error", "timeout",
                      "too_large", "not_recorded"]

_REFUSAL = re.compile(
    r"\b(i'?m sorry|i am sorry|i apologi[sz]e|i can(?:'|no)t|i cannot|i am unable|i'm unable|i won'?t|"
    r"as an ai|unable to (?:help|assist|comply))\b",
    re.IGNORECASE,
)


def parse_json_answer(text: str, finish_reason: str | None = None,
                      refusal: str | None = None) -> tuple[Any, tuple[FailureKind, str] | None]:
    """The JSON object in a model's answer, or (kind, message). Tolerates code fences and prose
    around one object (small local models add both); classifies empty, truncated and refusals."""
    if refusal:
        return None, ("refusal", f"the model refused: {str(refusal)[:200]!r}")
    if text is not None and not isinstance(text, str):
        return None, ("not_json", f"the answer is a {type(text).__name__}, not text")
    if text and len(text) > MAX_ANSWER_CHARS:
        return None, ("not_json", f"the answer has {len(text)} characters, over the {MAX_ANSWER_CHARS} limit")
    s = (text or "").strip()
    if not s:
        return None, ("truncated" if finish_reason == "length" else "empty",
                      "the answer was empty" + (" (stopped at max_tokens)" if finish_reason == "length" else ""))
    fenced = re.fullmatch(r"```(?:json|JSON)?\s*(.*?)\s*```", s, re.DOTALL)
    if fenced:
        s = fenced.group(1)
    try:
        value = json.loads(s)
    except RecursionError:
        return None, ("not_json", "the JSON is nested too deeply")
    except json.JSONDecodeError as exc:
        value = _outermost_object(s)
        if value is None:
            if finish_reason == "length" or _is_truncated(s):
                return None, ("truncated", f"the JSON is cut off ({exc.msg} at char {exc.pos} of {len(s)})")
            if _REFUSAL.search(s):
                return None, ("refusal", f"the model answered with prose instead of JSON: {s[:200]!r}")
            return None, ("not_json", f"not valid JSON ({exc.msg} at char {exc.pos}): {s[:200]!r}")
    if not isinstance(value, dict):
        return None, ("schema", f"the top level must be a JSON object, got {type(value).__name__}")
    return value, None


MAX_ANSWER_CHARS = 200_000  # ~50k tokens: far above max_tokens; a longer "answer" is not one
MAX_ANSWER_DEPTH = 32  # role schemas nest 4-5 levels; deeper JSON would only stress the validators


def _depth_over(value: Any, limit: int) -> bool:
    """True when ``value`` nests deeper than ``limit`` (iterative: no recursion on hostile input)."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            if d > limit:
                return True
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return False


def _outermost_object(s: str) -> Any:
    i, j = s.find("{"), s.rfind("}")
    if i < 0 or j <= i:
        return None
    try:
        value = json.loads(s[i:j + 1])
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _is_truncated(s: str) -> bool:
    """Unclosed brackets or string at the end of text that starts like JSON."""
    start = min((i for i in (s.find("{"), s.find("[")) if i >= 0), default=-1)
    if start < 0:
        return False
    depth, in_str, esc = 0, False, False
    for ch in s[start:]:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return in_str or depth > 0


def schema_errors(value: Any, schema: dict[str, Any], limit: int = 4) -> list[str]:
    """JSON-schema violations as short messages with a JSON path (enum lists abbreviated: the
    vocabulary can run to hundreds of names and the model has it in the prompt already)."""
    import jsonschema
    from jsonschema.exceptions import best_match

    validator = jsonschema.Draft202012Validator(schema)
    out: list[str] = []
    for err in sorted(validator.iter_errors(value), key=lambda e: (len(e.path), list(map(str, e.path)))):
        if err.validator == "anyOf" and err.context:
            # "is not valid under any of the given schemas" tells a model nothing: quote what the
            # alternative for its own predicate says (a checklist item's), else the closest one.
            err = best_match(_own_alternative(err) or [e for e in err.context if list(e.path)[-1:] == ["predicate"]]
                             or err.context)
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        if err.validator in ("maxItems", "maxLength", "maxProperties"):
            # The instance is what ran on; quoting it would fill the repair prompt with the loop.
            what = {"maxItems": "items", "maxLength": "characters", "maxProperties": "entries"}[err.validator]
            msg = f"too long: {len(err.instance)} {what}, at most {err.validator_value}"
        elif err.validator == "enum":
            allowed = list(err.validator_value)
            shown = ", ".join(map(json.dumps, allowed[:12])) + (", ..." if len(allowed) > 12 else "")
            msg = f"{err.instance!r} is not an allowed value (allowed: {shown})"
        else:
            msg = err.message if len(err.message) <= 300 else err.message[:300] + "..."
        out.append(f"at {path}: {msg}")
        if len(out) >= limit:
            break
    return out


def _own_alternative(err: Any) -> list[Any]:
    """The sub-errors of an ``anyOf`` from the alternative whose "predicate" enum holds the
    instance's predicate (the checklist item schemas have one alternative per kind); none for an
    unknown predicate, whose own enum errors the caller quotes instead."""
    predicate = err.instance.get("predicate") if isinstance(err.instance, dict) else None
    for k, alt in enumerate(err.validator_value):
        names = ((alt.get("properties") or {}).get("predicate") or {}).get("enum") or ()
        if predicate in names:
            return [e for e in err.context if e.relative_schema_path and e.relative_schema_path[0] == k]
    return []


def _repair_prompt(kind: FailureKind, detail: str) -> str:
    why = {
        "empty": "Your answer was empty.",
        "truncated": "Your answer was cut off before the JSON was complete; give a shorter, complete answer.",
        "not_json": "Your answer was not valid JSON.",
        "refusal": "Your answer was not the requested JSON. This is a harmless household-robot planning task.",
        "schema": "Your JSON does not match the required schema.",
        "semantic": "Your JSON uses names or ids that are not allowed here.",
        "api_error": "The previous request failed.",
        "timeout": "The previous request timed out.",
        "too_large": "Your answer was far too long; give only the short JSON object.",
    }[kind]
    return (f"{why} Problem: {detail}\nReply again with only the corrected JSON object, using only the "
            "object types, predicates, skills and object ids listed above.")


MAX_CACHE_ENTRY_BYTES = 4 << 20


def _read_cache_entry(path: Path) -> tuple[dict[str, Any] | None, str]:
    """(entry, "") for a well-formed cache file, else (None, problem naming the file).

    A damaged entry (a crash cannot leave one: writes are atomic, but a disk or a person can) is a
    cache miss in read_write mode, so the call is made again and the entry rewritten.
    """
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CACHE_ENTRY_BYTES + 1)
        if len(raw) > MAX_CACHE_ENTRY_BYTES:
            return None, f"{path}: over the {MAX_CACHE_ENTRY_BYTES}-byte limit for a cache entry"
        entry = json.loads(raw.decode("utf-8"))
    except RecursionError:
        return None, f"{path}: nested too deeply"
    except (OSError, ValueError) as exc:
        return None, f"{path}: not a JSON cache entry ({type(exc).__name__})"
    if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
        return None, f"{path}: field 'text' missing or not a string"
    digest = entry.get("text_sha256")  # absent in entries written before checksums
    if digest is not None and digest != hashlib.sha256(entry["text"].encode("utf-8", "surrogatepass")).hexdigest():
        return None, f"{path}: field 'text' does not match its checksum (the entry was altered)"
    for key in ("finish_reason", "refusal"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            return None, f"{path}: field {key!r} must be a string or null"
    return entry, ""


def _atomic_write_json(path: Path, data: dict[str, Any]) -> None:
    """A cache entry is written whole or not at all, with no key in it (household.atomic_io)."""
    clean = redact_json(data)
    text = json.dumps(clean, ensure_ascii=False, sort_keys=True, indent=1)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a model's "\ud800": stored escaped, read back the same
        text = json.dumps(clean, ensure_ascii=True, sort_keys=True, indent=1)
    atomic_write_text(path, text)
