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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

from evaluation.checklist import ChecklistItem, ObjectSelector
from planner import vocabulary as V
from planner.roles import Goal, PlannerContext

# Longest instruction accepted: checked before any tokenising, so a 50 MB string costs O(1) time
# and no memory beyond the caller's. The longest free-form instruction we have is ~600 characters.
MAX_INSTRUCTION_CHARS = 10_000
_MULTI_VERB_KEYS = frozenset(tuple(k.split()) for k in V.MULTI_VERBS)
_FLAGS = ("pickupable", "receptacle", "openable", "toggleable", "sliceable", "cookable", "fillable", "dirtyable")
_TOKEN_RE = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?|\d+|\n|[^\sA-Za-z\d]")
_SPLIT_PUNCT = frozenset({".", "!", "?", ";", ":", "\n"})
_CONTRACTIONS = {"that's": ("that", "is"), "it's": ("it", "is"), "there's": ("there", "is"),
                 "what's": ("what", "is"), "they're": ("they", "are"), "you're": ("you", "are"),
                 "isn't": ("is", "not"), "aren't": ("are", "not"), "dont": ("don't",)}
_NEGATIONS = frozenset({"don't", "not", "never", "no", "doesn't", "shouldn't", "mustn't", "avoid"})
_SLICE_NOUNS = frozenset({"slice", "slices", "piece", "pieces", "wedge", "wedges", "chunk", "chunks", "bit",
                          "bits", "half", "halves"})
_HELD_PHRASES = (("in", "hand"), ("in", "your", "hand"), ("in", "your", "hands"), ("in", "hand", "s"),
                 ("holding",), ("in", "the", "hand"), ("in", "its", "hand"), ("in", "the", "gripper"))
# The affordance each reading needs of its object, used to choose among ambiguous types.
_NEEDS = {"turn": "toggleable", "on": "toggleable", "off": "toggleable", "open": "openable",
          "close": "openable", "slice": "sliceable", "cook": "cookable", "fill": "fillable", "pour": "fillable",
          "clean": "dirtyable", "place": "pickupable", "bring": "pickupable", "pick": "pickupable",
          "hold": "pickupable", "empty": "fillable", "isToggled": "toggleable", "isOpen": "openable",
          "isSliced": "sliceable", "isCooked": "cookable", "isFilledWithLiquid": "fillable",
          "isDirty": "dirtyable", "isHeld": "pickupable", "inReceptacle": "pickupable", "inRoom": "pickupable"}


@dataclass(frozen=True)
class UnparsedClause:
    """A clause that produced no goal, and why (kept so a run report can show what was dropped)."""

    text: str
    reason: str


@dataclass
class Mention:
    """One object noun phrase of a clause, before it becomes a selector."""

    types: tuple[str, ...]  # candidate types, most likely first (several only for ambiguous words)
    start: int = 0
    end: int = 0
    count: int | None = None
    quantifier: str | None = None  # "all" for "all the mugs"
    room: str | None = None  # "kitchen counter", "the candle in the bathroom"
    liquid: str | None = None  # "a mug of coffee"
    adjective: tuple[str, bool] | None = None  # ("isCooked", True) for "a cooked potato"
    pronoun: bool = False
    slice_ref: bool = False  # "a slice", "the pieces": slices of the last thing sliced
    hints: dict[str, str] = field(default_factory=dict)  # carried from an acquisition

    @property
    def type(self) -> str:
        return self.types[0]


@dataclass
class _Chunk:
    kind: str  # np | room | prep | state | liquid | and | me | there | word | held
    value: Any
    start: int
    end: int
    raw: str = ""


@dataclass
class _Clause:
    tokens: list[tuple[str, int, int]]
    heading: bool = False  # ended with ":" ("Tidy-up:")

    @property
    def words(self) -> list[str]:
        return [t[0] for t in self.tokens]


@dataclass
class _Pending:
    """An acquisition ("take X from the bathroom") waiting for a clause that says what to do."""

    mentions: list[Mention]
    start: int
    end: int
    hints: dict[str, str]
    hold_if_unused: bool


@dataclass
class _Reading:
    """What one clause produced: items, hints, and the mentions later pronouns refer to."""

    items: list[ChecklistItem] = field(default_factory=list)
    hints: dict[str, str] = field(default_factory=dict)
    antecedents: list[Mention] = field(default_factory=list)
    pending: _Pending | None = None
    consumed: bool = False  # used the pending acquisition
    reason: str = ""  # why nothing was produced
    silent: bool = False  # produced nothing on purpose ("go to the kitchen")
    last_place: Mention | str | None = None


class InstructionParser:
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

    # ----------------------------------------------------------------------------------- lexicon
    def _build_lexicon(self) -> dict[tuple[str, ...], tuple[str, tuple[str, ...], bool]]:
        """phrase tokens -> (kind "type"|"room"|"prep"|"liquid", values, plural)."""
        lex: dict[tuple[str, ...], tuple[str, tuple[str, ...], bool]] = {}

        def add(phrase: str, kind: str, values: tuple[str, ...], plural: bool = False, force: bool = False) -> None:
            key = tuple(phrase.replace("-", " ").split())
            if key and (force or key not in lex):
                lex[key] = (kind, values, plural)

        def add_noun(phrase: str, types: tuple[str, ...], force: bool = False) -> None:
            add(phrase, "type", types, False, force)
            words = phrase.split()
            add(" ".join(words[:-1] + [V.plural(words[-1])]), "type", types, True, force)

        for t in self.flags:
            if t in self.base_of:
                continue
            parts = V.camel_words(t)
            add_noun(" ".join(parts), (t,))
            add_noun("".join(parts), (t,))
        for phrase, t in V.SYNONYMS.items():
            add_noun(phrase, (t,), force=True)
        for phrase, ts in V.AMBIGUOUS.items():
            add_noun(phrase, ts, force=True)
        for base, st in self.sliced.items():
            for w in V.type_phrases(base):
                if " " in w or w.endswith("s"):
                    continue
                for tail in ("slice", "piece", "wedge", "chunk"):
                    add_noun(f"{w} {tail}", (st,), force=True)
                add(f"sliced {w}", "type", (st,), False, True)
                add(f"sliced {V.plural(w)}", "type", (st,), True, True)
                add(f"chopped {w}", "type", (st,), False, True)
        add_noun("cracked egg", ("EggCracked",), force=True)
        for phrase, room in V.ROOM_PHRASES.items():
            add(phrase, "room", (room,), force=True)
            add(V.plural(phrase), "room", (room,), True, force=True)
        for phrase, role in V.PREPOSITIONS.items():
            add(phrase, "prep", (role, phrase), force=len(phrase.split()) > 1)
        for phrase, liquid in V.LIQUID_PHRASES.items():
            add(phrase, "liquid", (liquid,), force=False)
        return lex

    def with_routines(self) -> "InstructionParser":
        """The same parser with routine expansion on (a new instance; this one is unchanged)."""
        return InstructionParser(self.asset_db, routines=True)

    def affords(self, type_name: str, flag: str) -> bool:
        return flag in self.flags.get(type_name, frozenset())

    # --------------------------------------------------------------------------------- decompose
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

    # --------------------------------------------------------------------------------- splitting
    def _sentences(self, text: str) -> list[_Clause]:
        toks: list[tuple[str, int, int]] = []
        for m in _TOKEN_RE.finditer(text):
            w = m.group(0).lower().replace("’", "'")
            for part in _CONTRACTIONS.get(w, (w,)):
                toks.append((part, m.start(), m.end()))
        toks = _drop_phrases(toks, V.POLITE_PHRASES)
        sentences: list[_Clause] = []
        cur: list[tuple[str, int, int]] = []
        for t in toks:
            if t[0] in _SPLIT_PUNCT:
                if cur:
                    sentences.append(_Clause(cur, heading=t[0] == ":" and not self._has_verb_start(cur)))
                cur = []
            elif t[0] in ("-", "(", ")", '"', "'", "*", "/") and not cur:
                continue
            else:
                cur.append(t)
        if cur:
            sentences.append(_Clause(cur))
        return sentences

    def _is_verb_at(self, words: Sequence[str], i: int) -> bool:
        if i >= len(words):
            return False
        w = words[i]
        if tuple(words[i:i + 2]) in _MULTI_VERB_KEYS:
            return True
        verb = w in V.VERBS or _stem(w) in V.VERBS
        if not verb:
            return False
        # "microwave", "toast", "light" are also nouns: a verb is followed by an object, not by "and".
        nxt = words[i + 1] if i + 1 < len(words) else ""
        key = (w,)
        if key in self.lexicon and self.lexicon[key][0] == "type" and (
                nxt in ("and", ",", "") or (nxt in ("on", "off", "open") and i + 2 >= len(words))):
            return False
        return True

    def _has_verb_start(self, toks: list[tuple[str, int, int]]) -> bool:
        words = _strip_sequencers([t[0] for t in toks])
        return bool(words) and self._is_verb_at(words, 0)

    def _clauses(self, sentence: _Clause) -> list[_Clause]:
        """Split a sentence at ',', 'then' and 'and <verb>'; glue verbless comma pieces back on."""
        words = sentence.words
        pieces: list[tuple[str, list[tuple[str, int, int]]]] = [("", [])]  # (separator before, tokens)
        for i, t in enumerate(sentence.tokens):
            w = t[0]
            follows_verb = self._is_verb_at(_strip_sequencers(words[i + 1:]), 0)
            by_gerund = w in ("by", "while") and i + 1 < len(words) and words[i + 1].endswith("ing") and \
                _stem(words[i + 1]) in V.VERBS
            if w == "," or (w == "then" and pieces[-1][1]) or (w in ("and", "or") and follows_verb and pieces[-1][1]) \
                    or by_gerund:
                if pieces[-1][1]:
                    pieces.append((w, []))
                continue
            pieces[-1][1].append(t)
        out: list[list[tuple[str, int, int]]] = []
        for sep, piece in pieces:
            trimmed = _trim_sequencers(piece)
            if not trimmed:
                continue
            starts_verb = self._is_verb_at([t[0] for t in trimmed], 0)
            glue = sep == "," and len(trimmed) == len(piece)  # ", then ..." starts a new clause
            if out and glue and not starts_verb and self._needs_more(out[-1], trimmed):
                out[-1] = out[-1] + [("and", trimmed[0][1], trimmed[0][1])] + trimmed
            else:
                out.append(trimmed)
        return [_Clause(p, heading=sentence.heading) for p in out]

    def _needs_more(self, prev: list[tuple[str, int, int]], piece: list[tuple[str, int, int]]) -> bool:
        """Is a verbless comma piece the rest of the previous clause's object list?"""
        prev_words = [t[0] for t in prev]
        if not self._is_verb_at(prev_words, 0):
            return False
        chunks = self._chunk([t for t in piece], verb_class=None)
        if not any(c.kind == "np" for c in chunks):
            return False
        has_pred = any(c.kind in ("prep", "state", "held") for c in chunks)
        prev_chunks = self._chunk(prev[1:], verb_class=None)
        prev_has_dest = any(c.kind == "prep" and c.value[0] in ("on", "in", "to") for c in prev_chunks)
        return not has_pred or not prev_has_dest

    # ---------------------------------------------------------------------------------- chunking
    def _chunk(self, toks: list[tuple[str, int, int]], verb_class: str | None) -> list[_Chunk]:
        words = [t[0] for t in toks]
        chunks: list[_Chunk] = []
        mods: dict[str, Any] = {}
        i = 0
        n = len(words)
        while i < n:
            w = words[i]
            start = toks[i][1]
            held = _match_any(words, i, _HELD_PHRASES)
            if held:
                chunks.append(_Chunk("held", True, start, toks[i + held - 1][2]))
                i += held
                continue
            match = self._longest(words, i)
            if match is not None:
                length, (kind, values, plural) = match
                end = toks[i + length - 1][2]
                prev_kind = chunks[-1].kind if chunks else ""
                prev_prep = chunks[-1].value[0] if chunks and chunks[-1].kind == "prep" else ""
                if kind == "type" and values == ("WineBottle",) and length == 1 and (
                        prev_prep in ("with", "of") or verb_class in ("fill", "pour", "make")):
                    kind, values = "liquid", ("wine",)
                if kind == "type":
                    m = Mention(tuple(values), start, end, **_take_mods(mods, plural))
                    j = i + length
                    if j + 1 < n and words[j] == "of":
                        lq = self._longest(words, j + 1)
                        if lq is not None and lq[1][0] == "liquid":
                            m.liquid = lq[1][1][0]
                            j += 1 + lq[0]
                            m.end = toks[j - 1][2]
                    chunks.append(_Chunk("np", m, start, m.end))
                    i = j
                    continue
                if kind == "room":
                    nxt = self._longest(words, i + length + (1 if i + length < n and words[i + length] == "'s" else 0))
                    if nxt is not None and nxt[1][0] == "type":
                        mods["room"] = values[0]
                        i += length
                        continue
                    chunks.append(_Chunk("room", values[0], start, end))
                    mods.clear()
                    i += length
                    continue
                if kind == "prep":
                    role, phrase = values
                    after = words[i + length] if i + length < n else ""
                    if phrase in ("on", "off") and (after in ("", "and", "please") or after in V.COPULAS
                                                    or after in _NEGATIONS):
                        chunks.append(_Chunk("state", phrase, start, end, phrase))
                    elif phrase == "of" and after in _SLICE_NOUNS:
                        i += length
                        continue
                    else:
                        chunks.append(_Chunk("prep", (role, phrase), start, end, phrase))
                    i += length
                    continue
                if kind == "liquid":
                    chunks.append(_Chunk("liquid", values[0], start, end))
                    mods.clear()
                    i += length
                    continue
            if w in _SLICE_NOUNS and not (i == 0 and verb_class is None and w in V.VERBS):
                # "a slice of bread", "the slices", "cut it into pieces"
                j = i + 1
                types: tuple[str, ...] = ()
                if j < n and words[j] == "of":
                    inner = self._longest(words, j + 1)
                    if inner is not None and inner[1][0] == "type":
                        base = inner[1][1][0]
                        types = (self.sliced.get(base, base),)
                        j = j + 1 + inner[0]
                m = Mention(types or ("",), start, toks[j - 1][2], **_take_mods(mods, w.endswith("s")))
                m.slice_ref = not types
                chunks.append(_Chunk("np", m, start, m.end))
                i = j
                continue
            if w in V.NUMBERS or w.isdigit():
                nxt_is_noun = i + 1 < n and (self._longest(words, i + 1) is not None or words[i + 1] in ("of",)
                                             or words[i + 1] not in V.PRONOUNS)
                if w == "one" and not (i + 1 < n and self._longest(words, i + 1) is not None):
                    chunks.append(_Chunk("np", Mention(("",), start, toks[i][2], pronoun=True), start, toks[i][2]))
                    i += 1
                    continue
                if nxt_is_noun:
                    mods["count"] = int(w) if w.isdigit() else V.NUMBERS[w]
                    if w == "both":
                        mods["both"] = True
                    i += 1
                    continue
            if w in ("all", "every", "each", "everything"):
                mods["quantifier"] = "all"
                if w != "everything":
                    i += 1
                    continue
            if w in V.PRONOUNS or w == "everything":
                nxt = self._longest(words, i + 1) if i + 1 < n else None
                is_det = w in ("that", "this", "those", "these") and nxt is not None and nxt[1][0] == "type"
                if not is_det:
                    chunks.append(_Chunk("np", Mention(("",), start, toks[i][2], pronoun=True,
                                                       quantifier="all" if w == "everything" else None),
                                         start, toks[i][2], w))
                    i += 1
                    continue
            if w in ("me", "here", "us"):
                chunks.append(_Chunk("me", w, start, toks[i][2]))
                i += 1
                continue
            if w == "there":
                chunks.append(_Chunk("there", w, start, toks[i][2]))
                i += 1
                continue
            if w in ("and", ",", "&", "plus"):
                chunks.append(_Chunk("and", w, start, toks[i][2]))
                i += 1
                continue
            if w in V.STATE_WORDS and w not in ("on", "off"):
                nxt = self._longest(words, i + 1) if i + 1 < n else None
                if nxt is not None and nxt[1][0] == "type" and chunks and chunks[-1].kind != "np":
                    mods["adjective"] = V.STATE_WORDS[w]
                else:
                    chunks.append(_Chunk("state", w, start, toks[i][2], w))
                i += 1
                continue
            if w in V.DETERMINERS or w in ("couple", "pair", "of"):
                i += 1
                continue
            if w in _NEGATIONS:
                chunks.append(_Chunk("neg", w, start, toks[i][2]))
                i += 1
                continue
            chunks.append(_Chunk("word", w, start, toks[i][2]))
            i += 1
        return chunks

    def _longest(self, words: Sequence[str], i: int):
        for length in range(min(self.max_phrase, len(words) - i), 0, -1):
            entry = self.lexicon.get(tuple(words[i:i + length]))
            if entry is not None:
                return length, entry
        return None

    # ----------------------------------------------------------------------------------- reading
    def _read(self, clause: _Clause, antecedents: list[Mention], last_place: Mention | str | None,
              pending: _Pending | None) -> _Reading:
        words = clause.words
        self._antecedents = antecedents
        if words and words[0] in _NEGATIONS:
            return _Reading(reason="negated instruction (says what not to do)")
        verb, vlen = self._verb(words)
        chunks = self._chunk(clause.tokens[vlen:], verb)
        if any(c.kind == "neg" for c in chunks):
            return _Reading(reason="negated instruction (says what not to do)")
        parts = _gapped(chunks)
        if len(parts) == 1:
            return self._interpret(verb, chunks, clause, antecedents, last_place, pending)
        # "leave the vase on the TV stand and the statue on the shelf": one verb, several pairs.
        merged = _Reading()
        for part in parts:
            r = self._interpret(verb, part, clause, antecedents, last_place, pending)
            if not r.items:
                return r
            merged.items += r.items
            for k, v in r.hints.items():
                merged.hints.setdefault(k, v)
            merged.antecedents += r.antecedents
            merged.consumed = merged.consumed or r.consumed
            merged.last_place = r.last_place or merged.last_place
        return merged

    def _interpret(self, verb: str | None, chunks: list[_Chunk], clause: _Clause, antecedents: list[Mention],
                   last_place: Mention | str | None, pending: _Pending | None) -> _Reading:
        objects, groups, rest = _split_slots(chunks)
        states = [c for c in rest if c.kind in ("state", "held")]
        liquids = [c.value for c in chunks if c.kind == "liquid"]
        unknown = [c.value for c in chunks if c.kind == "word" and c.value not in V.COPULAS]
        r = _Reading()
        need = _NEEDS.get(verb or "", "") if verb not in ("place", "bring", "pick", "hold") else ""
        if verb is None and states:
            sw = states[-1].value if states[-1].kind == "state" else "held"
            need = _NEEDS.get(V.STATE_WORDS.get(sw, ("isHeld", True))[0], "")
        # Resolve pronouns / elided objects against the previous clause.
        used_pending = False
        resolved: list[Mention] = []
        for m in objects:
            if m.pronoun:
                ref = pending.mentions if pending is not None else antecedents
                used_pending = used_pending or pending is not None
                resolved.extend(self._copy_ref(self._pick_ref(ref, need, last_place), m))
            elif m.slice_ref:
                if self._last_sliced:
                    resolved.append(replace(m, types=(self.sliced.get(self._last_sliced, self._last_sliced),),
                                            slice_ref=False))
            else:
                if pending is not None and any(p.type == m.type for p in pending.mentions):
                    used_pending = True
                resolved.append(m)
        needs_object = verb not in (None, "go", "make", "pour", "water", "find")
        first_prep = next((i for i, c in enumerate(chunks) if c.kind == "prep"), len(chunks))
        slot_has_words = any(c.kind == "word" and c.value not in V.COPULAS for c in chunks[:first_prep])
        if not objects and needs_object and not slot_has_words and not (verb == "turn" and not states and not groups):
            ref = pending.mentions if pending is not None else antecedents
            if ref:
                resolved = self._copy_ref(self._pick_ref(ref, need, last_place), Mention(("",), pronoun=True))
                used_pending = pending is not None
        if used_pending and pending is not None:
            for m in resolved:
                for k, v in pending.hints.items():
                    m.hints.setdefault(k, v)
        r.consumed = used_pending
        if verb is None:
            return self._read_state(resolved, groups, states, liquids, unknown, r, objects, chunks)
        return self._read_verb(verb, resolved, groups, states, liquids, unknown, chunks, r, last_place, objects,
                               clause)

    def _pick_ref(self, ref: list[Mention], need: str, last_place: Mention | str | None) -> list[Mention]:
        """What a pronoun means: the previous objects, unless they lack what the verb needs and the
        last destination has it ("put the apple in the fridge, then close it" closes the fridge)."""
        if need and ref and not any(self.affords(m.type, need) for m in ref) and isinstance(last_place, Mention) \
                and self.affords(last_place.type, need):
            return [replace(last_place, room=last_place.room)]
        return ref

    def _copy_ref(self, ref: list[Mention], pron: Mention) -> list[Mention]:
        out = []
        for m in ref:
            c = replace(m, hints=dict(m.hints), start=pron.start, end=pron.end, liquid=None, adjective=None)
            out.append(c)
        return out

    def _verb(self, words: list[str]) -> tuple[str | None, int]:
        if not words:
            return None, 0
        two = " ".join(words[:2])
        if two in V.MULTI_VERBS:
            return V.MULTI_VERBS[two], 2
        if not self._is_verb_at(words, 0):
            return None, 0
        w = words[0] if words[0] in V.VERBS else _stem(words[0])
        cls = V.VERBS[w]
        if cls == "turn" and len(words) > 1 and words[1] in ("on", "off"):
            return words[1], 2  # "turn on the lamp"
        if w == "take" and len(words) > 1 and words[1] == "out" and "of" not in words[2:3]:
            return "bring", 2
        return cls, 1

    # verb readings -------------------------------------------------------------------------------
    def _read_verb(self, verb: str, objs: list[Mention], groups: list[tuple[str, str, Any]],
                   states: list[_Chunk], liquids: list[str], unknown: list[str], chunks: list[_Chunk],
                   r: _Reading, last_place: Mention | str | None, raw_objects: list[Mention],
                   clause: _Clause) -> _Reading:
        state_words = [c.value if c.kind == "state" else "held" for c in states]
        if verb == "go":
            r.silent = True
            rooms = [g[2] for g in groups if isinstance(g[2], str)]
            if rooms:
                r.last_place = rooms[-1]
            return r
        if verb == "make":
            return self._read_make(objs, liquids, unknown, r)
        if verb == "water":
            targets = objs or [Mention(("HousePlant",))]
            return self._emit(r, [(m, "isFilledWithLiquid", "water", None) for m in targets], "fill", groups)
        if verb == "pour":
            dests = [g for g in groups if g[0] in ("in", "on", "to") and isinstance(g[2], Mention)]
            liquid = liquids[0] if liquids else None
            vessels = [g[2] for g in dests] or [m for m in objs if m.liquid] or (
                [Mention((V.DEFAULT_VESSEL[liquid],))] if liquid else [])
            if not vessels:
                return _fail(r, "pour: no vessel or liquid recognised", unknown)
            return self._emit(r, [(m, "isFilledWithLiquid", m.liquid or liquid or True, None) for m in vessels],
                              "fill", [])
        if not objs:
            if raw_objects and all(m.pronoun or m.slice_ref for m in raw_objects):
                return _fail(r, f"{verb}: 'pronoun' has nothing to refer to", unknown)
            if raw_objects or unknown:
                return _fail(r, f"{verb}: object not recognised", unknown)
            return _fail(r, f"{verb}: no object named", unknown)
        if verb in ("turn", "on", "off"):
            value = verb == "on"
            if verb == "turn":
                toggles = [s for s in state_words if s in ("on", "off")]
                turn_dest = [g for g in groups if g[1] in ("on", "off")]
                if toggles:
                    value = toggles[-1] == "on"
                elif turn_dest:
                    value = turn_dest[0][1] == "on"
                else:
                    return _fail(r, "turn: neither 'on' nor 'off' given", unknown)
            return self._emit(r, [(m, "isToggled", value, None) for m in objs], verb, groups, in_place=True)
        if verb in ("open", "close"):
            value = verb == "open"
            specs = []
            for m in objs:
                self._resolve(m, "openable")
                if not self.affords(m.type, "openable") and self.affords(m.type, "toggleable"):
                    specs.append((m, "isToggled", value, None))  # "open the tap"
                else:
                    specs.append((m, "isOpen", value, None))
            return self._emit(r, specs, verb, groups, in_place=True)
        if verb == "slice":
            specs = []
            for m in objs:
                self._resolve(m, "sliceable")
                base = self.base_of.get(m.type, m.type)
                specs.append((replace(m, types=(base,)), "isSliced", True, None))
                self._last_sliced = base
            pieces = [replace(m, types=(self.sliced.get(self.base_of.get(m.type, m.type), m.type),))
                      for m in objs]
            into = [g[2] for g in groups if g[1] in ("into", "onto", "in to", "on to") and
                    isinstance(g[2], Mention) and not g[2].slice_ref and g[2].type]
            if into:  # "crack an egg into the pan": the pieces end up there
                self._resolve(into[0], "receptacle", role="target", hints=r.hints)
                specs += [(p, "inReceptacle", None, into[0]) for p in pieces]
                r.last_place = into[0]
            r = self._emit(r, specs, verb, [g for g in groups if g[2] not in into])
            r.antecedents = pieces
            return r
        if verb == "cook":
            specs = []
            toast = clause.words and clause.words[0] == "toast"
            for m in objs:
                self._resolve(m, "cookable")
                t = self.sliced.get("Bread") if toast and m.type == "Bread" else m.type
                specs.append((replace(m, types=(t,)), "isCooked", True, None))
            return self._emit(r, specs, verb, groups, appliance=True)
        if verb in ("fill", "empty"):
            liquid: bool | str = liquids[0] if liquids else True
            value = False if verb == "empty" else liquid
            return self._emit(r, [(m, "isFilledWithLiquid", m.liquid or value if verb == "fill" else value, None)
                                  for m in objs], verb, groups, appliance=True)
        if verb == "clean":
            return self._emit(r, [(m, "isDirty", False, None) for m in objs], verb, groups, appliance=True)
        if verb == "hold" or (verb in ("place", "bring", "pick") and "held" in state_words):
            return self._emit(r, [(m, "isHeld", True, None) for m in objs], "hold", groups)
        if verb in ("place", "bring", "pick", "find"):
            return self._read_move(verb, objs, groups, state_words, unknown, r, last_place, chunks, clause)
        return _fail(r, f"verb class {verb!r} not handled", unknown)

    def _read_make(self, objs: list[Mention], liquids: list[str], unknown: list[str], r: _Reading) -> _Reading:
        specs = []
        for m in objs:
            if m.liquid:
                specs.append((m, "isFilledWithLiquid", m.liquid, None))
            elif m.type == "Bed":
                specs.append((m, "isDirty", False, None))  # THOR: making the bed cleans it
            elif m.type in self.base_of and m.type == self.sliced.get("Bread"):
                specs.append((m, "isCooked", True, None))  # "make toast"
        if not specs and liquids:
            specs.append((Mention((V.DEFAULT_VESSEL[liquids[0]],)), "isFilledWithLiquid", liquids[0], None))
        if not specs:
            return _fail(r, "make: nothing this parser knows how to make (coffee, a drink, the bed, toast)", unknown)
        return self._emit(r, specs, "fill", [])

    def _read_move(self, verb: str, objs: list[Mention], groups: list[tuple[str, str, Any]],
                   state_words: list[str], unknown: list[str], r: _Reading, last_place: Mention | str | None,
                   chunks: list[_Chunk], clause: _Clause) -> _Reading:
        dest_roles = ("on", "in", "to") if verb == "place" else ("to",)
        dest_phrases_bring = ("into", "onto", "inside", "inside of", "on top of", "on to", "in to")
        dests = [g for g in groups if (g[0] in dest_roles or (verb != "place" and g[1] in dest_phrases_bring))
                 and g[2] != "me"]
        sources = [g for g in groups if g not in dests and g[0] in ("from", "in", "on", "at")]
        near = [g for g in groups if g[0] == "near"]
        hints: dict[str, str] = {}
        for _, _, what in sources:
            if isinstance(what, str):
                hints["object_room"] = what
            elif isinstance(what, Mention) and not what.pronoun:
                hints["object_source"] = what.type
                if what.room:
                    hints["object_room"] = what.room
        if any(c.kind == "me" for c in chunks) and verb in ("bring", "pick", "place", "find"):
            if not dests or all(g[2] in (None, "me") for g in dests):
                r.hints.update(hints)
                return self._emit(r, [(m, "isHeld", True, None) for m in objs], "hold", [])
        target: Mention | str | None = None
        if dests:
            # The first destination is the target; later ones describe it ("in the mug on the desk").
            nps = [g for g in dests if isinstance(g[2], Mention)]
            target = nps[0][2] if nps else dests[-1][2]
            for g in nps[1:]:
                r.hints.setdefault("target_location", g[2].type)
            if isinstance(target, Mention) and target.pronoun:
                target = self._other_ref(objs, last_place)
            if target == "there":
                target = last_place
        elif any(c.kind == "there" for c in chunks):
            target = last_place
        for m in objs:
            if m.room and (target is not None or verb != "place"):
                hints.setdefault("object_room", m.room)
                m.room = None
        if target is None:
            if near:
                return _fail(r, f"spatial relation '{near[0][1]}' is not in the checklist vocabulary", unknown)
            states = [s for s in state_words if s in V.STATE_WORDS and s != "held"]
            if states:
                pred, value = V.STATE_WORDS[states[-1]]
                flag = _NEEDS[pred]
                if pred in ("isToggled", "isOpen") and not any(self.affords(m.type, flag) for m in objs):
                    return _fail(r, f"'{verb} ... {states[-1]}': {objs[0].type} is not {flag}", unknown)
                r.hints.update(hints)
                return self._emit(r, [(m, pred, value, None) for m in objs], pred, [], in_place=True)
            if verb == "place" and clause.words[:2] in (["put", "down"], ["set", "down"]) or "down" in clause.words:
                r.hints.update(hints)
                return self._emit(r, [(m, "isHeld", False, None) for m in objs], "hold", [])
            if verb == "place":
                objs_room = [m for m in objs if m.room]
                if objs_room:
                    return self._emit(r, [(m, "inRoom", m.room, None) for m in objs], "place", [])
                return _fail(r, "no destination given for the object", unknown)
            for m in objs:
                for k, v in hints.items():
                    m.hints.setdefault(k, v)
            r.pending = _Pending(objs, clause.tokens[0][1], clause.tokens[-1][2], hints, verb != "find")
            return r
        r.hints.update(hints)
        if isinstance(target, str):
            r.last_place = target
            return self._emit(r, [(m, "inRoom", target, None) for m in objs], "place", [])
        self._resolve(target, "receptacle", role="target", hints=r.hints)
        r.last_place = target
        specs = [(m, "inReceptacle", None, target) for m in objs]
        specs += [(m, "isFilledWithLiquid", m.liquid, None) for m in objs if m.liquid]
        return self._emit(r, specs, "place", [])

    def _other_ref(self, objs: list[Mention], last_place: Mention | str | None) -> Mention | str | None:
        """A pronoun destination ("put the statue inside it"): the previous clause's receptacle
        object ("open the box and ..."), else the last destination named."""
        own = {m.type for m in objs}
        for m in reversed(self._antecedents):
            if m.type not in own and self.affords(m.type, "receptacle"):
                return replace(m, hints={})
        return last_place

    # state descriptions (no verb) ------------------------------------------------------------------
    def _read_state(self, objs: list[Mention], groups: list[tuple[str, str, Any]], states: list[_Chunk],
                    liquids: list[str], unknown: list[str], r: _Reading, raw_objects: list[Mention],
                    chunks: list[_Chunk]) -> _Reading:
        if not objs:
            if liquids and not raw_objects:
                vessel = Mention((V.DEFAULT_VESSEL[liquids[0]],))
                return self._emit(r, [(vessel, "isFilledWithLiquid", liquids[0], None)], "fill", [])
            if any(g[0] == "to" and isinstance(g[2], str) for g in groups):
                r.silent = True  # "to the kitchen" alone
                return r
            return _fail(r, "no verb and no known object", unknown)
        specs: list[tuple[Mention, str, Any, Mention | None]] = []
        state_words = [c.value if c.kind == "state" else "held" for c in states]
        dests = [g for g in groups if g[0] in ("on", "in", "to")]
        in_place = bool(state_words)
        if state_words:
            for w in state_words:
                pred, value = ("isHeld", True) if w == "held" else V.STATE_WORDS[w]
                if pred == "isFilledWithLiquid" and value is True and liquids:
                    value = liquids[0]
                for m in objs:
                    if pred == "isSliced":
                        m = replace(m, types=(self.base_of.get(m.type, m.type),))
                    specs.append((m, pred, value, None))
        elif dests:
            target = dests[-1][2]
            if isinstance(target, str):
                specs += [(m, "inRoom", target, None) for m in objs]
            elif isinstance(target, Mention) and not target.pronoun:
                self._resolve(target, "receptacle", role="target", hints=r.hints)
                specs += [(m, "inReceptacle", None, target) for m in objs]
                r.last_place = target
            for m in objs:
                if m.room:
                    r.hints.setdefault("object_room", m.room)
                    m.room = None
        for m in objs:
            if m.liquid:
                specs.append((m, "isFilledWithLiquid", m.liquid, None))
            if m.adjective and not state_words:
                specs.append((m, m.adjective[0], m.adjective[1], None))
            if not specs and m.type in self.base_of:
                specs.append((replace(m, types=(self.base_of[m.type],)), "isSliced", True, None))
        if not specs:
            return _fail(r, "no action or end state recognised", unknown)
        preds = {s[1] for s in specs}
        return self._emit(r, specs, next(iter(preds)), groups if in_place else [], in_place=in_place)

    # item building ----------------------------------------------------------------------------------
    def _emit(self, r: _Reading, specs: list[tuple[Mention, str, Any, Mention | None]], reading: str,
              groups: list[tuple[str, str, Any]], in_place: bool = False, appliance: bool = False) -> _Reading:
        """Turn (mention, predicate, value, target) into items; rooms in groups narrow or hint."""
        room_groups = [g for g in groups if isinstance(g[2], str) and g[0] in ("in", "from", "at", "on")]
        for role, phrase, what in groups:
            if role == "with" and isinstance(what, Mention):
                r.hints["tool"] = what.type
            elif role in ("in", "at", "on") and isinstance(what, Mention) and appliance:
                r.hints["appliance"] = what.type
        for m, pred, value, target in specs:
            self._resolve(m, _NEEDS.get(pred, _NEEDS.get(reading, "pickupable")), hints=r.hints)
            if not m.type:
                continue
            room = m.room
            if room_groups and room is None:
                room = room_groups[-1][2]
            if room is not None and not (in_place or pred in ("isToggled", "isOpen")) and \
                    self.affords(m.type, "pickupable"):
                r.hints.setdefault("object_room", room)
                room = None
            m.room = room
            for k, v in m.hints.items():
                r.hints.setdefault(k, v)
            if m.quantifier:
                r.hints["quantifier"] = m.quantifier
            r.items.append(self._item(m, pred, value, target))
        r.antecedents = [m for m, _, _, _ in specs if m.type] if not r.antecedents else r.antecedents
        if not r.items:
            r.reason = "object not recognised"
        return r

    def _item(self, m: Mention, pred: str, value: Any, target: Mention | None = None) -> ChecklistItem:
        count = m.count if m.count is not None and m.count > 1 else None
        obj = ObjectSelector(m.type, m.room if pred not in ("inRoom",) else None, None, count)
        tsel = ObjectSelector(target.type, target.room) if target is not None else None
        if pred in ("isSliced", "isCooked") and value is True:
            value = None  # written as the generator writes them ("isSliced" with no value)
        return ChecklistItem(obj, pred, tsel, value)

    def _resolve(self, m: Mention, need: str, role: str = "object", hints: dict[str, str] | None = None) -> None:
        """Pick one type of an ambiguous mention by the affordance needed; keep the rest as hints."""
        if len(m.types) <= 1:
            return
        fit = [t for t in m.types if self.affords(t, need)] or list(m.types)
        if hints is not None and len(fit) > 1:
            hints[f"{role}_alternatives"] = ",".join(fit[1:])
        m.types = (fit[0],)


# ----------------------------------------------------------------------------------- helpers
def _affordances(asset_db: Any) -> dict[str, frozenset[str]]:
    """type -> affordance flags, from a raw asset database, an AssetCatalog, or the packaged one."""
    from sim_bridge.embedded.assets import AssetCatalog, default_catalog

    if asset_db is None:
        catalog = default_catalog()
    elif isinstance(asset_db, AssetCatalog):
        catalog = asset_db
    elif isinstance(asset_db, dict):
        catalog = AssetCatalog(asset_db)
    else:
        raise TypeError(f"asset_db: expected the asset database dict or an AssetCatalog, got {type(asset_db)!r}")
    flags: dict[str, frozenset[str]] = {}
    for t in catalog.object_types:
        info = catalog.type_info(t)
        if info is not None:
            flags[t] = frozenset(f for f in _FLAGS if getattr(info, f))
    for t, f in V.EXTRA_TYPES.items():
        flags.setdefault(t, f)
    return flags


def _fail(r: _Reading, reason: str, unknown: Iterable[str]) -> _Reading:
    words = [w for w in unknown if w.isalpha()]
    r.reason = reason + (f" (unknown words: {', '.join(dict.fromkeys(words))})" if words else "")
    r.items = []
    return r


def _take_mods(mods: dict[str, Any], plural: bool) -> dict[str, Any]:
    out = {k: mods[k] for k in ("count", "quantifier", "room", "adjective") if k in mods}
    if mods.get("both") and not plural:
        out.pop("count", None)
    mods.clear()
    return out


def _split_slots(chunks: list[_Chunk]) -> tuple[list[Mention], list[tuple[str, str, Any]], list[_Chunk]]:
    """Objects (noun phrases before the first preposition), prepositional groups (role, phrase,
    Mention | room | "there" | None) with rooms attached to the noun before them, and the rest."""
    objects: list[Mention] = []
    groups: list[tuple[str, str, Any]] = []
    rest: list[_Chunk] = []
    i = 0
    seen_prep = False
    while i < len(chunks):
        c = chunks[i]
        if c.kind == "prep":
            role, phrase = c.value
            j = i + 1
            while j < len(chunks) and chunks[j].kind == "word":
                j += 1
            what: Any = None
            if j < len(chunks) and chunks[j].kind in ("np", "room", "there", "me"):
                nxt = chunks[j]
                what = nxt.value if nxt.kind in ("np", "room") else nxt.kind
                if nxt.kind == "me":
                    rest.append(nxt)
                i = j + 1
            else:
                i += 1
            if role == "of":
                continue
            # "the TV stand in the living room": a room right after a noun narrows that noun.
            if isinstance(what, str) and what not in ("there", "me") and role in ("in", "at", "on"):
                prev_np = groups[-1][2] if groups and isinstance(groups[-1][2], Mention) else None
                if isinstance(prev_np, Mention) and prev_np.room is None and not prev_np.pronoun:
                    prev_np.room = what
                    continue
            seen_prep = True
            groups.append((role, phrase, what))
            continue
        if c.kind == "np" and not seen_prep:
            objects.append(c.value)
        elif c.kind == "np" and seen_prep and groups and groups[-1][2] is not None and i > 0 and \
                chunks[i - 1].kind == "and":
            pass  # "on the table and the desk": first destination wins
        elif c.kind != "np":
            rest.append(c)
        i += 1
    return objects, groups, rest


def _gapped(chunks: list[_Chunk]) -> list[list[_Chunk]]:
    """Split at "and" where both sides pair objects with their own destination or state
    ("the vase on the stand and the statue on the shelf", "the TV on and the blinds open")."""
    parts: list[list[_Chunk]] = [[]]
    for i, c in enumerate(chunks):
        if c.kind == "and" and parts[-1] and _has_predicate(parts[-1]) and i + 1 < len(chunks) and \
                chunks[i + 1].kind == "np" and _has_predicate(chunks[i + 1:]) and \
                any(x.kind == "np" for x in parts[-1]):
            parts.append([])
            continue
        parts[-1].append(c)
    return [p for p in parts if p]


def _has_predicate(chunks: list[_Chunk]) -> bool:
    for i, c in enumerate(chunks):
        if c.kind in ("state", "held"):
            return True
        if c.kind == "prep" and c.value[0] in ("on", "in", "to") and i + 1 < len(chunks) and \
                chunks[i + 1].kind in ("np", "room"):
            return True
    return False


def _drop_phrases(toks: list[tuple[str, int, int]], phrases: frozenset[str]) -> list[tuple[str, int, int]]:
    keys = sorted((tuple(p.split()) for p in phrases), key=len, reverse=True)
    out: list[tuple[str, int, int]] = []
    i = 0
    words = [t[0] for t in toks]
    while i < len(toks):
        for k in keys:
            if tuple(words[i:i + len(k)]) == k:
                i += len(k)
                break
        else:
            out.append(toks[i])
            i += 1
    return out


def _strip_sequencers(words: Sequence[str]) -> list[str]:
    words = list(words)
    changed = True
    while words and changed:
        changed = False
        for p in V.SEQUENCER_PHRASES:
            if tuple(words[:len(p)]) == p:
                words = words[len(p):]
                changed = True
        if words and words[0] in V.SEQUENCERS:
            words = words[1:]
            changed = True
        if words and words[0] in (",", "to"):
            words = words[1:]
            changed = True
        if len(words) > 1 and words[0] in ("after", "before", "once", "when", "while") and \
                _stem(words[1]) in V.VERBS:
            words = words[1:]  # "after washing the cup, ..."
            changed = True
    return words


def _trim_sequencers(toks: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    words = [t[0] for t in toks]
    rest = _strip_sequencers(words)
    return toks[len(words) - len(rest):]


def _match_any(words: Sequence[str], i: int, phrases: Iterable[tuple[str, ...]]) -> int:
    for p in sorted(phrases, key=len, reverse=True):
        if tuple(words[i:i + len(p)]) == p:
            return len(p)
    return 0


def _stem(word: str) -> str:
    """'washing' -> 'wash', 'slicing' -> 'slice', 'putting' -> 'put' (for "after slicing the bread")."""
    if word.endswith("ing") and len(word) > 5:
        stem = word[:-3]
        for cand in (stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem):
            if cand in V.VERBS:
                return cand
    return word


# ---------------------------------------------------------------------------- measuring a parse
def items_match(parsed: ChecklistItem, expected: ChecklistItem) -> bool:
    """The matching rule used to score a decomposition against an episode checklist.

    Same object type, predicate, effective value (omitted boolean = True), object count and
    target type; rooms (object's and target's) must agree only when both sides name one, because
    a checklist omits a room the sentence never said (and a concise instruction drops rooms the
    detailed one gives), and a parse can not invent one.
    """
    if parsed.predicate != expected.predicate or parsed.object.type != expected.object.type:
        return False
    if parsed.expected != expected.expected or parsed.object.units != expected.object.units:
        return False
    if (parsed.target is None) != (expected.target is None):
        return False
    if parsed.target is not None and expected.target is not None:
        if parsed.target.type != expected.target.type:
            return False
        if parsed.target.room and expected.target.room and parsed.target.room != expected.target.room:
            return False
    if parsed.object.room and expected.object.room and parsed.object.room != expected.object.room:
        return False
    return True


def match_count(parsed: Sequence[ChecklistItem], expected: Sequence[ChecklistItem]) -> int:
    """How many items pair up one-to-one under ``items_match`` (greedy, exact matches first)."""
    left = list(expected)
    matched = 0
    order = sorted(range(len(parsed)), key=lambda i: parsed[i] not in left)
    for i in order:
        for j, e in enumerate(left):
            if items_match(parsed[i], e):
                del left[j]
                matched += 1
                break
    return matched


def goal_items(goals: Sequence[Goal]) -> list[ChecklistItem]:
    return [item for g in goals for item in g.items]
