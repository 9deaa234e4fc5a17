"""Seeded mutations shared by the fuzz suites: bytes-level (truncation, bit flips, splices) and
JSON-level (wrong types, NaN/Inf, huge numbers and strings, deep nesting)."""

from __future__ import annotations

import random
from typing import Any, Iterator

HOSTILE_VALUES: list[Any] = [
    None, True, -1, 0, 2**63, -(2**70), 1e308, float("nan"), float("inf"), float("-inf"), "", "x" * 100_000,
    "\x00\udcff", [], {}, [[[[[]]]]], {"a": {"b": {"c": None}}}, [1, "two", None], "NaN", "1e999",
]


def truncations(data: bytes, every: int) -> Iterator[tuple[str, bytes]]:
    for cut in range(0, len(data), max(1, every)):
        yield f"truncate@{cut}", data[:cut]


def bit_flips(data: bytes, rng: random.Random, n: int) -> Iterator[tuple[str, bytes]]:
    for _ in range(n):
        pos = rng.randrange(len(data))
        bit = rng.randrange(8)
        out = bytearray(data)
        out[pos] ^= 1 << bit
        yield f"flip@{pos}.{bit}", bytes(out)


def splices(data: bytes, rng: random.Random, n: int) -> Iterator[tuple[str, bytes]]:
    """Byte runs deleted, duplicated, zeroed or replaced by random bytes."""
    for _ in range(n):
        a = rng.randrange(len(data))
        b = min(len(data), a + rng.randint(1, 64))
        kind = rng.choice(["delete", "duplicate", "zero", "random"])
        if kind == "delete":
            out = data[:a] + data[b:]
        elif kind == "duplicate":
            out = data[:b] + data[a:b] + data[b:]
        elif kind == "zero":
            out = data[:a] + b"\0" * (b - a) + data[b:]
        else:
            out = data[:a] + bytes(rng.randrange(256) for _ in range(b - a)) + data[b:]
        yield f"{kind}@{a}:{b}", out


def deep(n: int, kind: str = "list") -> str:
    return ("[" * n + "]" * n) if kind == "list" else ('{"a":' * n + "1" + "}" * n)


def json_mutations(value: Any, rng: random.Random, n: int) -> Iterator[tuple[str, Any]]:
    """Copies of a JSON-like ``value`` with one leaf or container replaced by a hostile value."""
    paths = list(_paths(value))
    for _ in range(n):
        path = rng.choice(paths)
        hostile = rng.choice(HOSTILE_VALUES)
        yield f"set{path}={_short(hostile)}", _replace(value, path, hostile)


def _paths(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:8]):
            yield from _paths(v, prefix + (i,))


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) < 30 else r[:27] + "..."
