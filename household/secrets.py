"""Keeping the configured API key out of everything the project writes.

Why a registry instead of per-field scrubbing: a secret reaches output through paths nobody plans
for (a model that echoes its key into a goal text, then the report, the LLM cache and a bag). So
the LLM configuration registers the *name* of its key's environment variable here, and each kind
of output redacts at its one chokepoint: ``household.atomic_io.atomic_write_text`` (reports,
summaries, episodes, replay results), the LLM cache writer, the belief log's record encoder, the
bag writer (same-length masking, so CDR length prefixes stay valid) and the ROS launcher's node
logs. Values are read from the environment at redaction time, so a key set after the config was
built is still caught; values shorter than ``MIN_SECRET_LEN`` are ignored (they would mask
ordinary words).
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

MASK = "***"
MIN_SECRET_LEN = 4
MIN_BINARY_SECRET_LEN = 8  # binary payloads (images) could contain a short value by chance

_names: set[str] = set()
_values: set[str] = set()
_lock = threading.Lock()


def register_secret_env(name: str | None) -> None:
    """Treat the value of environment variable ``name`` as a secret from now on."""
    if name:
        with _lock:
            _names.add(name)


def register_secret_value(value: str | None) -> None:
    """Treat ``value`` itself as a secret from now on (the password inside a configured URL)."""
    if value and len(value) >= MIN_SECRET_LEN:
        with _lock:
            _values.add(value)


def url_credentials(url: str | None) -> list[str]:
    """The ``user:password`` (and the password alone) of a URL's userinfo, percent-decoded forms
    included: what must never reach a report or log (issue 32: ``http://u:p@host/v1`` as api_base)."""
    if not url or "@" not in url:
        return []
    from urllib.parse import unquote, urlsplit

    try:
        netloc = urlsplit(url if "//" in url else f"//{url}").netloc
    except ValueError:
        return []
    userinfo = netloc.rpartition("@")[0]
    if not userinfo:
        return []
    password = userinfo.partition(":")[2]
    return [v for v in {userinfo, unquote(userinfo), password, unquote(password)} if v]


def url_without_credentials(url: str | None) -> str | None:
    """``url`` with its userinfo replaced by ``***`` (scheme, host, port, path and query kept)."""
    if not url or "@" not in url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=f"{MASK}@{parts.netloc.rpartition('@')[2]}"))


def registered_names() -> list[str]:
    with _lock:
        return sorted(_names)


def secret_values(min_len: int = MIN_SECRET_LEN) -> list[str]:
    """Current values of the registered variables, longest first (so a key containing another wins)."""
    values = {os.environ.get(n) or "" for n in registered_names()}
    with _lock:
        values |= _values
    return sorted((v for v in values if len(v) >= min_len), key=len, reverse=True)


def _forms(value: str) -> list[str]:
    """The value as it may appear in text: raw, and escaped inside a JSON string."""
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    return sorted(forms, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every registered secret (raw or JSON-escaped) replaced by ``***``."""
    for value in secret_values():
        if value in text or any(f in text for f in _forms(value)):
            for form in _forms(value):
                text = text.replace(form, MASK)
    return text


def redact_json(value: Any) -> Any:
    """A copy of a JSON-like value with secrets redacted from every string (keys included)."""
    if not secret_values():
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_json(k) if isinstance(k, str) else k: redact_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_json(v) for v in value]
    return value


def redact_bytes(data: Any) -> Any:
    """Binary payloads: each secret's bytes replaced by as many ``*``, so lengths and offsets hold.

    ``data`` is returned as it came (no copy) when no secret is configured."""
    values = secret_values(MIN_BINARY_SECRET_LEN)
    if not values:
        return data
    data = bytes(data)
    for value in values:
        raw = value.encode("utf-8")
        if raw in data:
            data = data.replace(raw, b"*" * len(raw))
    return data


def contains_secret(text: str | bytes) -> bool:
    """True when a registered secret appears in ``text`` (for tests and the bad-input benchmark)."""
    if isinstance(text, bytes):
        return any(v.encode("utf-8") in text for v in secret_values())
    return any(v in text for v in secret_values())
