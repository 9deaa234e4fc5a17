"""The deterministic instruction decomposer's public names (the code lives in planner/language/).

Kept so importers (the planner, the CLI, benchmarks, tests) need no change: the parser was one
1,100-line module; it is now split by job into ``planner.language`` (clauses, nouns, grounding,
goals, routines, scoring), and ``planner.language.parser`` explains how an instruction is read.
"""

from __future__ import annotations

from planner.language.parser import InstructionParser
from planner.language.scoring import goal_items, items_match, match_count
from planner.language.types import MAX_INSTRUCTION_CHARS, Mention, UnparsedClause

__all__ = ["InstructionParser", "MAX_INSTRUCTION_CHARS", "Mention", "UnparsedClause", "goal_items", "items_match",
           "match_count"]
