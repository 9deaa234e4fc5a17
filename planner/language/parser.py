"""Deterministic (no-LLM) instruction decomposer: household English -> goals in checklist terms.

``InstructionParser(asset_db).decompose(instruction, context)`` implements the ``Decomposer``
protocol of ``planner.roles``. It is the offline default and the baseline the LLM decomposer is
measured against, so it must be predictable: the same text always gives the same goals, and what
it cannot read is reported (``parser.unparsed``) rather than guessed.

How it reads an instruction:

1. Words are tokenised with their character spans (a goal's ``text`` is the original wording),
   politeness and filler ("could you", "please", "make sure") are dropped.
2. Sentences are split at . ! ? ; : and then into clauses at "," / "then" / "and" when a verb
   follows (so "a mug and a bowl" stays one list). A comma piece without a verb after a clause
   that still lacks a destination is glued back ("put the mug, the bowl and the plate in the sink").
3. Each clause is chunked: noun phrases are found by longest match against a lexicon built from
   the asset database's object types (CamelCase split, written together, plurals) plus the hand
   tables of ``planner.vocabulary``; room phrases, prepositions, liquids, pronouns, state words.
4. The clause's leading verb picks a reading (place, bring, slice, cook, fill, clean, toggle,
   open/close, hold, ...); a verbless clause is read as a final-state description ("laptop on",
   "a mug of coffee", "the book on the desk"), which is how concise instructions are written.
5. Pronouns ("it", "them", an elided object) resolve to the previous clause's objects; "take X
   from the bathroom" without a destination is an acquisition whose source becomes a search hint
   (``object_room``/``object_source``) for the clause that says what to do with it; if nothing
   does, it means "hold X".

Rooms: a room named with a destination is the target selector's room ("the TV stand in the living
room"); a room named with the object of a state change done in place (toggle, open) narrows the
object selector ("the candle in the bathroom"), because the checklist tests the end state and such
objects do not move. For objects that move (place, bring, fill, cook, ...) the room is where they
are now, which the end state contradicts, so it goes to ``hints["object_room"]`` instead.

Ambiguous words ("lamp", "table"): a selector holds one type, so the parser keeps the candidates
that have the affordance the verb needs (toggleable for "turn on", receptacle for a destination)
and takes the first in ``vocabulary.AMBIGUOUS`` order; the others are recorded in the goal's hints
(``object_alternatives`` / ``target_alternatives``) for the grounding role to fall back on.

Module layout (planner/language/): ``clauses`` (clause splitting), ``nouns`` (noun-phrase
chunking and type choice), ``grounding`` (unknown nouns: everyday names, embedding match),
``goals`` (readings -> checklist items), ``routines`` (inferred expansions of intent words),
``types`` (shared records), ``scoring`` (the benchmark's matching rule). This class composes them.
"""

from __future__ import annotations

import re
from typing import Any

from evaluation.checklist import ChecklistItem, ObjectSelector
from planner.language.clauses import ClauseSplitting
from planner.language.goals import GoalBuilding
from planner.language.nouns import NounPhrases, _affordances
from planner.language.types import (MAX_INSTRUCTION_CHARS, _TOKEN_RE, Mention, UnparsedClause, _Pending)
from planner.roles import Goal, PlannerContext


class InstructionParser(ClauseSplitting, NounPhrases, GoalBuilding):
    """Rule-based ``Decomposer``: asset-database vocabulary plus a small grammar of household verbs.

    ``asset_db`` is the raw database (``load_asset_database()``), an ``AssetCatalog``, or None for
    the packaged one. ``unparsed`` lists the clauses of the last ``decompose`` call that yielded
    no goal, with the reason.
    """

    def __init__(self, asset_db: Any = None, routines: bool = False) -> None:
        self.asset_db = asset_db
        self.routines = routines  # expand routine words ("tidy") into inferred goals
        self.flags: dict[str, frozenset[str]] = _affordances(asset_db)
        self.sliced: dict[str, str] = {}  # base type -> sliced type
        for t, f in list(self.flags.items()):
            if "sliceable" in f:
                st = "EggCracked" if t == "Egg" else f"{t}Sliced"
                self.sliced[t] = st
                self.flags.setdefault(st, frozenset({"pickupable", "cookable"}))
        self.base_of = {v: k for k, v in self.sliced.items()}
        self.lexicon: dict[tuple[str, ...], tuple[str, tuple[str, ...], bool]] = self._build_lexicon()
        self.max_phrase = max(len(k) for k in self.lexicon)
        self.unparsed: list[UnparsedClause] = []

    def with_routines(self) -> "InstructionParser":
        """The same parser with routine expansion on (a new instance; this one is unchanged)."""
        return InstructionParser(self.asset_db, routines=True)

    def decompose(self, instruction: str, context: PlannerContext | None = None) -> list[Goal]:
        """Goals in instruction order, one per clause that states something to make true."""
        if isinstance(instruction, str) and len(instruction) > MAX_INSTRUCTION_CHARS:
            raise ValueError(f"instruction too long: {len(instruction)} characters, the limit is "
                             f"{MAX_INSTRUCTION_CHARS} (a household instruction is a few sentences)")
        if not isinstance(instruction, str) or not _TOKEN_RE.search(instruction or "") or not re.search(
                r"[A-Za-z]", instruction):
            raise ValueError("empty instruction: nothing to decompose (expected household English, e.g. "
                             "'Put the mug in the sink')")
        self.unparsed = []
        self._text = instruction
        held = context.held_object_type if context is not None else None
        goals: list[tuple[list[ChecklistItem], str, dict[str, str]]] = []
        antecedents: list[Mention] = [Mention((held,))] if held else []
        last_place: Mention | str | None = None
        last_sliced: str | None = None
        pending: _Pending | None = None
        for sentence in self._sentences(instruction):
            for clause in self._clauses(sentence):
                text = instruction[clause.tokens[0][1]:clause.tokens[-1][2]]
                self._last_sliced = last_sliced
                reading = self._read(clause, antecedents, last_place, pending)
                last_sliced = self._last_sliced
                if reading.consumed and pending is not None:
                    text = instruction[pending.start:clause.tokens[-1][2]]
                    pending = None
                if reading.pending is not None:
                    if pending is not None:
                        self._flush_pending(pending, goals)
                    pending = reading.pending
                    antecedents = reading.pending.mentions
                    continue
                if reading.antecedents:
                    antecedents = reading.antecedents
                if reading.last_place is not None:
                    last_place = reading.last_place
                if reading.items:
                    goals.append((reading.items, text, reading.hints))
                elif not reading.silent and not clause.heading:
                    self.unparsed.append(UnparsedClause(text, reading.reason or "no goal recognised"))
        if pending is not None:
            self._flush_pending(pending, goals)
        return self._finish(goals)

    def _flush_pending(self, pending: _Pending, goals: list) -> None:
        """An acquisition nothing used: "grab the mug" means the mug ends up held."""
        text = self._text[pending.start:pending.end]
        if not pending.hold_if_unused:
            self.unparsed.append(UnparsedClause(text, "only says to find something; no end state to reach"))
            return
        goals.append(([self._item(m, "isHeld", True) for m in pending.mentions], text, dict(pending.hints)))

    def _finish(self, raw: list[tuple[list[ChecklistItem], str, dict[str, str]]]) -> list[Goal]:
        """Add implied slicing, drop repeats, number the goals."""
        seen: set[ChecklistItem] = set()
        sliced_bases = {i.object.type for items, _, _ in raw for i in items if i.predicate == "isSliced"}
        out: list[Goal] = []
        for items, text, hints in raw:
            kept: list[ChecklistItem] = []
            for item in items:
                base = self.base_of.get(item.object.type)
                if base is not None and base not in sliced_bases:
                    # A slice only exists once its whole was sliced: the end state has it sliced.
                    sliced_bases.add(base)
                    kept.append(ChecklistItem(ObjectSelector(base), "isSliced"))
                if item not in seen:
                    seen.add(item)
                    kept.append(item)
            if kept:
                out.append(Goal(f"g{len(out) + 1}", tuple(kept), text, dict(hints)))
        return out
