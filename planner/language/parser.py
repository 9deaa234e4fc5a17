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
from dataclasses import dataclass, field
from typing import Any

from household.checklist import PREDICATES, ChecklistItem, ObjectSelector
from planner.language.clauses import ClauseSplitting
from planner.language.goals import GoalBuilding
from planner.language.nouns import NounPhrases, _affordances
from planner.language.states import FLAG_OF_PROPERTY, state_refusal, with_slices
from planner import vocabulary as V
from planner.language import discourse as D
from planner.language.slots import _split_slots
from planner.language.grounding import Grounding, NounGrounder, noun_phrases
from planner.language.routines import RoutineExpander
from planner.language.types import (_NEEDS, MAX_INSTRUCTION_CHARS, WHEN, WHY, _TOKEN_RE, Mention, UnparsedClause,
                                    _Clause, _Pending)
from planner.roles import Goal, PlannerContext


class InstructionParser(ClauseSplitting, NounPhrases, GoalBuilding):
    """Rule-based ``Decomposer``: asset-database vocabulary plus a small grammar of household verbs.

    ``asset_db`` is the raw database (``load_asset_database()``), an ``AssetCatalog``, or None for
    the packaged one. ``unparsed`` lists the clauses of the last ``decompose`` call that yielded
    no goal, with the reason.
    """

    def __init__(self, asset_db: Any = None, routines: bool = False, encoder: Any = None) -> None:
        """``encoder``: a text encoder for grounding unknown nouns by embedding (see
        ``planner.language.grounding``; ``default_encoder()`` gives all-MiniLM-L6-v2 where the
        ``text`` extra is installed); None grounds by vocabulary and head noun only."""
        self.asset_db = asset_db
        self.encoder = encoder
        self.routines = routines  # expand routine words ("tidy") into inferred goals
        self.flags: dict[str, frozenset[str]] = _affordances(asset_db)
        self.sliced: dict[str, str] = with_slices(self.flags)  # base type -> sliced type
        self.base_of = {v: k for k, v in self.sliced.items()}
        self.lexicon: dict[tuple[str, ...], tuple[str, tuple[str, ...], bool]] = self._build_lexicon()
        self.max_phrase = max(len(k) for k in self.lexicon)
        self.grounder = NounGrounder(noun_phrases(self.lexicon), encoder)
        self._expander: RoutineExpander | None = None
        self.grounding_notes: dict[str, Grounding] = {}  # phrase -> how it was grounded (last decompose)
        self.unparsed: list[UnparsedClause] = []
        self._last_room: str | None = None  # the last room said, for "there" (set per clause)

    def with_routines(self) -> "InstructionParser":
        """The same parser with routine expansion on (a new instance; this one is unchanged)."""
        return InstructionParser(self.asset_db, routines=True, encoder=self.encoder)

    def decompose(self, instruction: str, context: PlannerContext | None = None) -> list[Goal]:
        """Goals in instruction order, one per clause that states something to make true."""
        if isinstance(instruction, str) and len(instruction) > MAX_INSTRUCTION_CHARS:
            raise ValueError(f"instruction too long: {len(instruction)} characters, the limit is "
                             f"{MAX_INSTRUCTION_CHARS} (a household instruction is a few sentences)")
        if isinstance(instruction, str) and instruction.strip() and not re.search(r"[A-Za-z]", instruction) and \
                re.search(r"\w", instruction):
            raise ValueError("instruction has no English words: the deterministic parser reads English household "
                             "instructions only (e.g. 'Put the mug in the sink')")
        if not isinstance(instruction, str) or not _TOKEN_RE.search(instruction or "") or not re.search(
                r"[A-Za-z]", instruction):
            raise ValueError("empty instruction: nothing to decompose (expected household English, e.g. "
                             "'Put the mug in the sink')")
        self.unparsed = []
        self.grounding_notes = {}
        self._text = instruction
        held = context.held_object_type if context is not None else None
        st = _State(antecedents=[Mention((held,))] if held else [])
        for sentence in self._sentences(instruction):
            st.scope, st.next_scope = st.next_scope, None
            st.target, st.next_target = st.next_target, None
            clauses = self._clauses(sentence)
            for k, clause in enumerate(clauses):
                self._clause(clause, sentence.colon, st, last_in_sentence=k == len(clauses) - 1)
        if st.pending is not None:
            self._flush_pending(st.pending, st.goals)
        if not any(items for items, _, _ in st.goals) and not _looks_english(instruction):
            self.unparsed.insert(0, UnparsedClause(instruction[:80], "not recognised as English: the deterministic "
                                                   "parser reads English household instructions only"))
        D.merge_bring_then_place(st.goals)
        if self.routines:
            if self._expander is None:
                self._expander = RoutineExpander(None, self.affords)
            self._expander.expand(instruction, st.goals, self.unparsed, UnparsedClause)
        return self._finish(st.goals)

    # ------------------------------------------------------------------------------ one clause
    def _clause(self, clause: _Clause, colon: bool, st: "_State", last_in_sentence: bool = True) -> None:
        """Read one clause in the light of the discourse so far (``st``), and update it."""
        text = self._text[clause.tokens[0][1]:clause.tokens[-1][2]]
        words = clause.words
        if words[0] == WHY:
            self.unparsed.append(UnparsedClause(text, "purpose or reason clause: says why, not what to do"))
            return
        odd = _ODD_COUNT.search(text)
        if odd is not None:
            # "-5 mugs" read as 5, "0 cups" as 1, "1e3" as 3: a count that is no count of objects
            self.unparsed.append(UnparsedClause(text, f"'{odd.group(0).strip()}' is not a number of objects "
                                                      "(a whole number from 1 is)"))
            return
        if self._correction(clause, text, st):
            return
        room, n = D.leading_room(words, self._room_at, st.last_room)
        if words[0] == WHEN and room is not None and n == len(words) and words[-1] == "there" \
                and last_in_sentence and st.goals:
            # "go to the kitchen; put the apple on the counter while you're there": after the
            # request, the room "there" means (``leading_room``) narrows it (its target, or what
            # it changes in place); before one ("while you're in there, leave my watch on the
            # counter") it scopes what follows, below
            items, goal_text, hints = st.goals[-1]
            st.goals[-1] = ([D.with_scope_room(i, room) for i in items], goal_text, hints)
            return
        if words[0] == WHEN and (room is None or n < len(words)):
            if room is not None:
                st.scope, st.last_room = room, room
            self.unparsed.append(UnparsedClause(text, "circumstance clause: says when, not what to do"))
            return
        if room is not None:
            st.last_room = room
            if colon:
                st.next_scope = room
            else:
                st.scope = room
            if n >= len(words):
                return
            clause = _Clause(clause.tokens[n:], heading=clause.heading, colon=clause.colon)
            text = self._text[clause.tokens[0][1]:clause.tokens[-1][2]]
            words = clause.words
        if clause.heading and self._heading_target(clause, st):
            return  # "Bed: cup and book; nightstand: phone"
        if words[:2] in (["there", "is"], ["there", "are"]) or words[0] in D.SPEAKER_WORDS:
            self._harvest(clause, st, colon)
            reason = "describes the scene, not a request" if words[0] == "there" else \
                "a statement about the speaker, not a request"
            self.unparsed.append(UnparsedClause(text, reason + " (its room and objects are kept for later references)"))
            return
        snapshot = (list(st.antecedents), st.last_place, st.last_sliced)
        notes_before = set(self.grounding_notes)
        self._last_sliced = st.last_sliced
        self._last_room = st.last_room
        reading = self._read(clause, st.antecedents, st.last_place, st.pending)
        st.last_sliced = self._last_sliced
        if not reading.items and reading.pending is None:
            if not last_in_sentence and self._topic(clause, st):
                return  # "The mug and the apple — both of those go on the counter"
            if st.target is not None and self._onto_target(clause, text, st):
                return
            if self._elliptic(clause, text, st):
                return
        if reading.consumed and st.pending is not None:
            text = self._text[st.pending.start:clause.tokens[-1][2]]
            st.pending = None
        if reading.pending is not None:
            if st.pending is not None:
                self._flush_pending(st.pending, st.goals)
            st.pending = reading.pending
            st.antecedents = reading.pending.mentions
            self._note_rooms(clause, st)
            return
        if reading.antecedents:
            st.antecedents = reading.antecedents
        if reading.last_place is not None:
            st.last_place = reading.last_place
        if reading.items:
            items = [D.with_scope_room(i, st.scope) for i in reading.items] if st.scope else reading.items
            st.goals.append((items, text, reading.hints))
            missed = [k for k, g in self.grounding_notes.items() if k not in notes_before and g.type is None]
            left_out = [f"'{k}' names no known object" for k in missed] + reading.ignored
            if left_out:  # "... and the banana too": the rest was read, this part was not
                self.unparsed.append(UnparsedClause(text, "partly understood: " + ", ".join(left_out)))
            st.last = (clause, snapshot, len(st.goals) - 1, text)
            self._note_rooms(clause, st)
            return
        rooms = self._note_rooms(clause, st)
        if not reading.silent and not (clause.heading and not rooms):
            self.unparsed.append(UnparsedClause(text, reading.reason or "no goal recognised"))
        # A clause that asks for nothing but names one room scopes what follows ("Set things out
        # in the living room: ...", "I'm planning a night in the living room, so ...").
        if len(set(rooms)) == 1:
            if colon:
                st.next_scope = rooms[-1]
            else:
                st.scope = rooms[-1]
        self._harvest(clause, st, colon, rooms_done=True)

    def _room_at(self, words, i: int):
        hit = self._longest(words, i)
        if hit is not None and hit[1][0] == "room":
            return hit[0], hit[1][1][0]
        return None

    def _note_rooms(self, clause: _Clause, st: "_State") -> list[str]:
        """Rooms a clause names, in order; the last becomes what "there" refers to."""
        rooms: list[str] = []
        for c in self._chunk(clause.tokens, None):
            if c.kind == "room":
                rooms.append(c.value)
            elif c.kind == "np" and c.value.room:
                rooms.append(c.value.room)
        if rooms:
            st.last_room = rooms[-1]
        return rooms

    def _harvest(self, clause: _Clause, st: "_State", colon: bool, rooms_done: bool = False) -> None:
        """From a clause that asks nothing ("There's a plate in the living room", "I'll be working
        at the dining table"): its objects become what a later "it" / "that one" means, its room
        the scope of what follows."""
        words = clause.words
        skip = 2 if words[:2] in (["there", "is"], ["there", "are"]) else 0
        chunks = self._chunk(clause.tokens[skip:], None)
        objects, groups, _ = _split_slots(chunks)
        nps = objects + [g[2] for g in groups if isinstance(g[2], Mention) and not g[2].pronoun]
        room_groups = [g[2] for g in groups if isinstance(g[2], str) and g[2] not in ("there", "me")]
        for m in nps:
            if m.room is None and room_groups:
                m.room = room_groups[-1]
        nps = [m for m in nps if m.type and not m.pronoun and not m.slice_ref]
        if nps:
            st.antecedents = nps
            st.last_place = nps[-1]
        if rooms_done:
            return
        rooms = self._note_rooms(clause, st)
        if len(set(rooms)) == 1:
            if colon:
                st.next_scope = rooms[-1]
            else:
                st.scope = rooms[-1]

    def _correction(self, clause: _Clause, text: str, st: "_State") -> bool:
        """"on the table, no, on the counter" / "turn it on, sorry, I mean off": the last word
        wins. Returns True when the clause was a correction (applied, awaited or reported)."""
        words = clause.words
        k = D.correction_prefix(words, lambda w: self._is_prep(w) or D.is_state_word(w) or self._is_verb_at([w], 0))
        if k == 0 and not st.correcting:
            return False
        rest = clause.tokens[k:]
        if not rest:
            st.correcting = True  # "sorry," alone: the replacement follows
            return True
        st.correcting = False
        if st.last is None:
            if k:
                self.unparsed.append(UnparsedClause(text, "correction with nothing before it to correct"))
            return bool(k)
        prev_clause, (ants, place, sliced), idx, prev_text = st.last
        rest_words = [t[0] for t in rest]
        spliced: list[tuple[str, int, int]] | None
        if self._is_verb_at(rest_words, 0):
            spliced = rest  # "no, put it in the fridge": a new request replaces the old one
            ants = st.antecedents  # whose "it" is the corrected request's object
        else:
            spliced = _splice(prev_clause.tokens, rest, self._is_prep, self._prep_role, self._room_at)
        if spliced is None:
            if not k:
                return False
            self.unparsed.append(UnparsedClause(text, "correction not understood: say the whole request again"))
            return True
        self._last_sliced = sliced
        self._last_room = st.last_room
        reading = self._read(_Clause(spliced), ants, place, None)
        if not reading.items:
            if not k:
                return False
            self.unparsed.append(UnparsedClause(text, "correction not understood: " + (reading.reason or "no goal")))
            return True
        items = [D.with_scope_room(i, st.scope) for i in reading.items] if st.scope else reading.items
        st.goals[idx] = (items, prev_text + " ... " + text, reading.hints)
        if reading.antecedents:
            st.antecedents = reading.antecedents
        if reading.last_place is not None:
            st.last_place = reading.last_place
        return True

    def _heading_target(self, clause: _Clause, st: "_State") -> bool:
        """A heading that is one receptacle ("Bed:") is where the next list goes."""
        chunks = self._chunk(clause.tokens, None)
        if len(chunks) != 1 or chunks[0].kind != "np":
            return False
        m = chunks[0].value
        if m.pronoun or not m.type:
            return False
        self._resolve(m, "receptacle")
        if not self.affords(m.type, "receptacle"):
            return False
        st.next_target = m
        return True

    def _onto_target(self, clause: _Clause, text: str, st: "_State") -> bool:
        """Noun phrases only, after a receptacle heading: they go on (in) it."""
        chunks = self._chunk(clause.tokens, None)
        if not chunks or any(c.kind not in ("np", "and") for c in chunks):
            return False
        nps = [c.value for c in chunks if c.kind == "np"]
        if any(m.pronoun or m.slice_ref or not m.type for m in nps):
            return False
        target = st.target
        items = []
        for m in nps:
            self._resolve(m, "pickupable")
            items.append(self._item(m, "inReceptacle", None, target))
        st.goals.append((items, text, {}))
        st.antecedents = nps
        st.last_place = target
        return True

    def _topic(self, clause: _Clause, st: "_State") -> bool:
        """A clause of noun phrases only, with more of the sentence to come: the objects the next
        clause talks about ("the mug and the apple — both of those go on the counter")."""
        chunks = self._chunk(clause.tokens, None)
        if not chunks or any(c.kind not in ("np", "and") for c in chunks):
            return False
        nps = [c.value for c in chunks if c.kind == "np"]
        if any(m.pronoun or m.slice_ref or not m.type for m in nps):
            return False
        st.antecedents = nps
        return True

    def _elliptic(self, clause: _Clause, text: str, st: "_State") -> bool:
        """"then the cup as well" / "the desk lamp and the floor lamp" after a request: repeat
        it for these objects, or say which objects an ambiguous plural meant."""
        if st.last is None:
            return False
        words = clause.words
        skip = D.elliptic_object(words)
        chunks = self._chunk(clause.tokens[skip:], None)
        # "..., and the laptop by the dining table too", "and the TV remote from the dining table
        # too": which laptop, which remote, said after it
        relation = None
        relation_key = "object_near"
        if len(chunks) >= 3 and chunks[-2].kind == "prep" and chunks[-2].value[0] in ("near", "from", "on", "in", "at") \
                and chunks[-1].kind == "np" and chunks[-1].value.type and not chunks[-1].value.pronoun:
            relation = chunks[-1].value.type
            relation_key = "object_near" if chunks[-2].value[0] == "near" else "object_source"
            chunks = chunks[:-2]
            if sum(c.kind == "np" for c in chunks) != 1:
                return False
        if not chunks or any(c.kind not in ("np", "and") for c in chunks):
            return False
        nps = [c.value for c in chunks if c.kind == "np"]
        if any(m.pronoun or m.slice_ref or not m.type for m in nps):
            return False
        idx = st.last[2]
        prev_items, prev_text, hints = st.goals[idx]
        types = [m.type for m in nps]
        counts = [m.count for m in nps]
        swapped = D.apposition(prev_items, hints.get("object_alternatives", ""), types, counts)
        if swapped is not None:
            st.goals[idx] = (swapped, prev_text + ", " + text, hints)
            return True
        need = lambda t, pred: self.affords(t, _NEEDS.get(pred, "pickupable"))  # noqa: E731
        copies = D.ellipsis(prev_items, types, counts, need)
        if not copies:
            return False
        hints = dict(hints)
        if relation is not None:  # the earlier object's own qualifiers are not this one's
            for key in ("object_near", "object_source", "object_alternatives"):
                hints.pop(key, None)
            hints[relation_key] = relation
        st.goals.append((copies, text, hints))
        return True

    def _is_prep(self, word: str) -> bool:
        hit = self.lexicon.get((word,))
        return hit is not None and hit[0] == "prep"

    def _prep_role(self, word: str) -> str:
        hit = self.lexicon.get((word,))
        return hit[1][0] if hit is not None and hit[0] == "prep" else ""

    def _flush_pending(self, pending: _Pending, goals: list) -> None:
        """An acquisition nothing used: "grab the mug" means the mug ends up held."""
        text = self._text[pending.start:pending.end]
        if not pending.hold_if_unused:
            self.unparsed.append(UnparsedClause(text, "only says to find something; no end state to reach"))
            return
        goals.append(([self._item(m, "isHeld", True) for m in pending.mentions], text, dict(pending.hints)))

    def _category_members(self, items: list[ChecklistItem], text: str,
                          hints: dict[str, str]) -> tuple[list[ChecklistItem], dict[str, str]]:
        """A collective noun ("open the gadgets") keeps the member types the action applies to
        (the laptops: a phone cannot be opened; a television cannot be carried); none left is an
        unparsed clause that says so."""
        def affords(item: ChecklistItem) -> bool:
            pred = PREDICATES[item.predicate]
            needs = FLAG_OF_PROPERTY.get(pred.requires or ("CanPickup" if pred.moves else ""))
            return needs is None or self.affords(item.object.type, needs)

        kept = [i for i in items if affords(i)]
        if not kept:
            what = ", ".join(sorted({i.object.type for i in items}))
            self.unparsed.append(UnparsedClause(text, f"{hints['category']} ({what}): none of them can be "
                                                f"{items[0].predicate if items else 'acted on'}"))
            return [], hints
        types = [t for t in hints.get("all_of", "").split(",") if t]
        if types:
            left = {i.object.type for i in kept}
            hints = {**hints, "all_of": ",".join(t for t in types if t in left)}
        return kept, hints

    def _doable(self, items: list[ChecklistItem], text: str) -> list[ChecklistItem]:
        """The items whose state the object can take, by the asset database
        (``planner.language.states``): "clean the table" (a table is never dirty), "boil the
        kettle", "empty the bin" would be goals met before the agent moves, or never; they are
        reported, not read."""
        refusals = [state_refusal(self.flags, i) for i in items]
        if not any(refusals):
            return items
        notes = sorted({note for note in refusals if note is not None})
        kept = [i for i, note in zip(items, refusals) if note is None]
        reason = ("the asset database says " if not kept else "partly understood: the asset database says ")
        self.unparsed.append(UnparsedClause(text, reason + ", ".join(notes)))
        return kept

    def _finish(self, raw: list[tuple[list[ChecklistItem], str, dict[str, str]]]) -> list[Goal]:
        """Add implied slicing, drop repeats, number the goals."""
        seen: set[ChecklistItem] = set()
        sliced_bases = {i.object.type for items, _, _ in raw for i in items if i.predicate == "isSliced"}
        out: list[Goal] = []
        for items, text, hints in raw:
            if "category" in hints:
                items, hints = self._category_members(items, text, hints)
            items = self._doable(items, text)
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


@dataclass
class _State:
    """The discourse so far: goals, what pronouns and "there" refer to, the room in scope."""

    antecedents: list[Mention] = field(default_factory=list)
    goals: list[tuple[list[ChecklistItem], str, dict[str, str]]] = field(default_factory=list)
    last_place: Mention | str | None = None
    last_sliced: tuple[str, ...] | None = None
    last_room: str | None = None
    pending: _Pending | None = None
    scope: str | None = None  # room said for the rest of this sentence
    next_scope: str | None = None  # room said in a heading ("... in the bedroom:") for the next one
    target: Mention | None = None  # receptacle heading in force ("Bed: cup and book")
    next_target: Mention | None = None
    correcting: bool = False  # a bare "sorry," / "no," was read: the next clause corrects
    # The last clause that produced a goal: (clause, (antecedents, last_place, last_sliced) before
    # it, index of its goal, its text), so a correction can re-read it.
    last: tuple[_Clause, tuple[list[Mention], Mention | str | None, tuple[str, ...] | None], int, str] | None = None


def _splice(prev: list[tuple[str, int, int]], rest: list[tuple[str, int, int]], is_prep, prep_role, room_at=None
            ) -> list[tuple[str, int, int]] | None:
    """The previous clause with its matching part replaced by a correction: a state word replaces
    the last state word of the same kind ("on" -> "off"); a destination ("on the counter")
    replaces the last destination. None when nothing matches."""
    words = [t[0] for t in rest]
    first = words[0]
    pwords = [t[0] for t in prev]
    if first in V.STATE_WORDS and len(words) <= 2:
        pred = V.STATE_WORDS[first][0]
        for i in range(len(prev) - 1, 0, -1):
            w = pwords[i]
            if w in V.STATE_WORDS and V.STATE_WORDS[w][0] == pred:
                return prev[:i] + [rest[0]] + prev[i + 1:]
        return None
    if room_at is not None:  # "— sorry, the bathroom one": the last room said is replaced
        k = 1 if first == "the" else 0
        hit = room_at(words, k)
        if hit is not None and words[k + hit[0]:] in (["one"], []):
            new_room = rest[k:k + hit[0]]
            for i in range(len(prev) - 1, 0, -1):
                old = room_at(pwords, i)
                if old is not None:
                    return prev[:i] + new_room + prev[i + old[0]:]
            return None
        for i in range(len(prev) - 1, 0, -1):
            if is_prep(pwords[i]) and prep_role(pwords[i]) in ("on", "in", "to"):
                return prev[:i] + rest
    return None


# Common English function words: an instruction with none of them is not read as English.
# A number written where a count goes that is not a positive whole number: signed, zero, with a
# decimal or thousands separator, or in exponent form.
_ODD_COUNT = re.compile(r"(?<![\w.,])(?:[-+\u2212]\s*\d+(?:[.,]\d+)*|0+(?:[.,]\d+)?|\d+(?:[.,]\d+)+|\d+[eE][-+]?\d+)"
                        r"(?![\w.,]*\d)(?=\s*[a-zA-Z])")
_ENGLISH = frozenset({"the", "a", "an", "and", "in", "on", "to", "of", "it", "my", "please", "put", "with", "is",
                      "that", "this", "from", "for", "then", "me", "you", "your", "some", "into", "onto", "off"})


def _looks_english(text: str) -> bool:
    words = re.findall(r"[a-z']+", text[:2000].lower())
    return len(words) < 3 or sum(w in _ENGLISH for w in words) >= 0.15 * len(words)
