"""The error type for bad input, shared by every layer.

A library that finds a bad file, field or argument raises ``InputError`` with one line per
problem, each naming the file, field or option; the CLI prints those lines and exits with status 2
(no traceback). Format-specific errors (houses, episodes, bags, ...) may subclass it.
"""
from __future__ import annotations

from typing import Sequence


class InputError(ValueError):
    """Bad input; ``problems`` holds one line per problem."""

    def __init__(self, problems: str | Sequence[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class HouseError(InputError):
    """A house that cannot be used; the message names the house id and the offending field."""
