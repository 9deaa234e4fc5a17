"""Noun-phrase resolution: the lexicon built from the asset database, chunking a clause into
noun phrases / rooms / prepositions / state words, and choosing one type for an ambiguous noun.

Mixed into ``InstructionParser``. Word lists live in ``planner.vocabulary``; the grounding of an
unknown noun (everyday-name table, then an optional text-embedding match) is ``grounding``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from planner import vocabulary as V
from planner.language.types import (_FLAGS, _OF_QUANTIFIERS, _HELD_PHRASES, _NEGATIONS, _SLICE_NOUNS, Mention, _Chunk,
                                    _match_any, _take_mods)

if TYPE_CHECKING:
    from planner.language.grounding import Grounding


# Words that are never a noun to ground ("me", "here", copulas, pronouns, determiners).
_FUNCTION_WORDS = frozenset(V.DETERMINERS | V.PRONOUNS | V.COPULAS | {"me", "here", "there", "us", "and", "or", "so",
                                                                     "i", "you", "we", "my", "your", "as", "well",
                                                                     "too", "up", "out", "down", "away", "back"})
# A part named after its object ("the fridge door", "the kettle lid"): the object is what the
# checklist speaks of (opening the fridge's door opens the fridge); "door" alone is a doorway.
_PART_NOUNS = frozenset({"door", "doors", "lid", "lids", "handle", "handles"})
# A part of a room ("in the corner of the bedroom", "the middle of the living room"): the room is
# what the checklist can say; the part alone ("in the corner") names no place and stays unread.
_ROOM_PARTS = frozenset({"corner", "corners", "middle", "centre", "center", "back", "end", "side"})


class NounPhrases:
    """Mixin: lexicon, ``_chunk``, ``_longest``, ``affords``, ``_resolve``."""

    # Set by the parser (InstructionParser.__init__).
    flags: dict[str, frozenset[str]]
    sliced: dict[str, str]  # base type -> sliced type
    base_of: dict[str, str]  # sliced type -> base type
    lexicon: dict[tuple[str, ...], tuple[str, tuple[str, ...], bool]]
    # Plural forms a synonym entry took over as a name of its own ("pens", "tomatoes"): still
    # plural for "both" ("both pens" is two pens, "both the pot and the kettle" is no count).
    plural_forms: frozenset[tuple[str, ...]] = frozenset()
    max_phrase: int
    grounding_notes: dict[str, Grounding]

    def _build_lexicon(self) -> dict[tuple[str, ...], tuple[str, tuple[str, ...], bool]]:
        """phrase tokens -> (kind "type"|"category"|"room"|"prep"|"liquid", values, plural)."""
        lex: dict[tuple[str, ...], tuple[str, tuple[str, ...], bool]] = {}
        plural_forms: set[tuple[str, ...]] = set()

        def add(phrase: str, kind: str, values: tuple[str, ...], plural: bool = False, force: bool = False) -> None:
            key = tuple(phrase.replace("-", " ").split())
            if key and (force or key not in lex):
                if key in lex and lex[key] == (kind, values, True) and not plural:
                    plural_forms.add(key)  # "pens" as a synonym of Pen: the plural of "pen" still
                lex[key] = (kind, values, plural)

        def add_noun(phrase: str, types: tuple[str, ...], force: bool = False) -> None:
            add(phrase, "type", types, False, force)
            words = phrase.split()
            # the head is the last word, or the one before "of": "bottles of wine", "boxes of tissues"
            head = words.index("of") - 1 if "of" in words[1:] else len(words) - 1
            for many in {V.plural(words[head]), V.plural(words[head], informal=True)}:
                add(" ".join(words[:head] + [many] + words[head + 1:]), "type", types, True, force)

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
        for phrase, ts in V.CATEGORIES.items():
            known = tuple(t for t in ts if t in self.flags)
            if known:
                add(phrase, "category", known, True, force=True)
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
        self.plural_forms = frozenset(plural_forms)
        return lex

    def affords(self, type_name: str, flag: str) -> bool:
        return flag in self.flags.get(type_name, frozenset())

    def _chunk(self, toks: list[tuple[str, int, int]], verb_class: str | None) -> list[_Chunk]:
        words = [t[0] for t in toks]
        chunks: list[_Chunk] = []
        mods: dict[str, Any] = {}
        i = 0
        n = len(words)
        while i < n:
            w = words[i]
            start = toks[i][1]
            if w in _ROOM_PARTS and i + 2 < n and words[i + 1] == "of":
                j = i + 2
                while j < n and words[j] in V.DETERMINERS:
                    j += 1
                part_of = self._longest(words, j)
                if part_of is not None and part_of[1][0] == "room":
                    i = j  # "the corner of the bedroom": the bedroom
                    continue
            held = _match_any(words, i, _HELD_PHRASES)
            if held:
                chunks.append(_Chunk("held", True, start, toks[i + held - 1][2]))
                i += held
                continue
            match = self._longest(words, i)
            if match is not None:
                length, (kind, values, plural) = match
                end = toks[i + length - 1][2]
                prev_prep = chunks[-1].value[0] if chunks and chunks[-1].kind == "prep" else ""
                if kind == "type":
                    shared = self._shared_head(words, i, length)
                    if shared is not None:  # "desk and floor lamps": the desk lamp
                        values = shared
                if kind == "type" and values == ("WineBottle",) and length == 1 and (
                        prev_prep in ("with", "of") or verb_class in ("fill", "pour", "make")):
                    kind, values = "liquid", ("wine",)
                if kind == "category":  # "the dishes": the plates and the bowls and ... (each plural)
                    taken = _take_mods(mods, True)
                    # "the dirty dishes": the checklist has no state selector, and an adjective on a
                    # conjunction of nouns reads as a goal for the first one (as "dirty plates and bowls" does)
                    taken.pop("adjective", None)
                    if chunks and chunks[-1].kind == "state" and i > 0 and chunks[-1].raw == words[i - 1]:
                        chunks.pop()  # a leading "dirty" is that adjective too, not a goal of its own
                    for k, t in enumerate(values):
                        if k:
                            chunks.append(_Chunk("and", "and", start, end))
                        m = Mention((t,), start, end, **dict(taken))
                        m.plural = True
                        m.hints["category"] = " ".join(words[i:i + length])
                        chunks.append(_Chunk("np", m, start, end))
                    i += length
                    continue
                if kind == "type":
                    m = Mention(tuple(values), start, end, **_take_mods(
                        mods, plural or tuple(words[i:i + length]) in self.plural_forms))
                    m.plural = plural and words[i + length - 1] not in V.ONE_OBJECT_PLURALS
                    j = i + length
                    if j < n and words[j] in _PART_NOUNS and values != ("Doorway",):
                        j += 1  # "the fridge door": the fridge
                        m.end = toks[j - 1][2]
                    if j + 1 < n and words[j] == "of":
                        lq = self._longest(words, j + 1)
                        if lq is not None and lq[1][0] == "type" and lq[1][1] == ("WineBottle",) and lq[0] == 1:
                            lq = (1, ("liquid", ("wine",), False))  # "a mug of wine": the drink, not its bottle
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
                    elif phrase == "of" and (after in _SLICE_NOUNS or (i > 0 and words[i - 1] in _OF_QUANTIFIERS)):
                        # "a couple of mugs", "one of the potatoes", "both of them": no relation
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
                if w == "one" and i + 1 < n and words[i + 1] == "of":
                    mods["quantifier"] = "one of"  # "one of the potatoes": a single one, any of them
                    i += 1
                    continue
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
            if w in ("that", "this", "the") and i + 1 < n and words[i + 1] == "one":
                # "that one", "the one": one pronoun, not two
                chunks.append(_Chunk("np", Mention(("",), start, toks[i + 1][2], pronoun=True), start,
                                     toks[i + 1][2], "that one"))
                i += 2
                continue
            if w in ("along", "together") and i + 1 < n and words[i + 1] == "with":
                chunks.append(_Chunk("also", w, start, toks[i + 1][2]))  # "... on the bed along with my watch"
                i += 2
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
            boxed = self._container_participle(w)
            if boxed is not None:  # "pen boxed": in the box
                chunks.append(_Chunk("prep", ("in", "in"), start, start, "in"))
                chunks.append(_Chunk("np", Mention((boxed,), start, toks[i][2]), start, toks[i][2]))
                i += 1
                continue
            grounded = self._ground_unknown(words, toks, i, chunks, verb_class)
            if grounded is not None:
                m = Mention(grounded[1], start, toks[i + grounded[0] - 1][2], **_take_mods(mods, False))
                m.hints["grounded"] = grounded[2]
                chunks.append(_Chunk("np", m, start, m.end))
                i += grounded[0]
                continue
            chunks.append(_Chunk("word", w, start, toks[i][2]))
            i += 1
        return chunks

    def _known_word(self, words: Sequence[str], j: int) -> bool:
        w = words[j]
        return (not w.isalpha() and "'" not in w) or self._longest(words, j) is not None or w in _FUNCTION_WORDS \
            or w in V.VERBS or w in V.STATE_WORDS or w in _NEGATIONS or w in V.NUMBERS

    def _ground_unknown(self, words: Sequence[str], toks, i: int, chunks: list[_Chunk], verb_class: str | None
                        ) -> tuple[int, tuple[str, ...], str] | None:
        """A run of unknown words in a noun slot (after a determiner, a number, a preposition, or
        the verb) grounded by ``self.grounder``: (length, types, note), or None. Every attempt is
        recorded in ``self.grounding_notes``."""
        grounder = getattr(self, "grounder", None)
        if grounder is None:
            return None
        prev = words[i - 1] if i else ""
        slot = prev in V.DETERMINERS or prev in V.NUMBERS or (chunks and chunks[-1].kind == "prep") or \
            (i == 0 and verb_class is not None)
        if not slot:
            return None
        j = i
        while j < len(words) and not self._known_word(words, j):
            j += 1
        run = j - i
        if run == 0 or run > 3:
            return None
        head = self._longest(words, j) if j < len(words) else None
        if head is not None and head[1][0] == "type" and grounder.encoder is not None:
            # "portable computer": the whole phrase is compared, not just its known head; when it
            # does not ground, the head alone is read as the lexicon says.
            whole = grounder.ground(" ".join(words[i:j + head[0]]))
            self.grounding_notes[whole.phrase] = whole
            if whole.type is not None:
                return run + head[0], (whole.type,), whole.describe()
            return None
        g = grounder.ground(" ".join(words[i:j]))
        self.grounding_notes[g.phrase] = g
        if g.type is None:
            return None
        return run, (g.type,), g.describe()

    def _shared_head(self, words: Sequence[str], i: int, length: int) -> tuple[str, ...] | None:
        """In "desk and floor lamps" the head "lamps" is shared: "desk" means "desk lamp" when the
        next conjunct ends in a head that makes a type with it."""
        j = i + length
        if j >= len(words) or words[j] != "and":
            return None
        j += 1
        while j < len(words) and words[j] in V.DETERMINERS:
            j += 1
        nxt = self._longest(words, j)
        if nxt is None or nxt[1][0] != "type" or nxt[0] < 2:
            return None
        head = words[j + nxt[0] - 1]
        if head in _SLICE_NOUNS and not head.endswith("s"):
            return None  # "potato and tomato slice cooked": one slice comes from one thing, the tomato
        hit = self.lexicon.get(tuple(words[i:i + length]) + (head,))
        if hit is not None and hit[0] == "type" and hit[1] != self.lexicon[tuple(words[i:i + length])][1]:
            return hit[1]
        return None

    def _container_participle(self, word: str) -> str | None:
        """"boxed", "binned", "bagged": a verb made of a container noun means "in that container"."""
        if not word.endswith("ed") or len(word) < 5:
            return None
        stem = word[:-2]
        for cand in (stem, stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem, stem + "e"):
            hit = self.lexicon.get((cand,))
            if hit is not None and hit[0] == "type" and len(hit[1]) == 1 and self.affords(hit[1][0], "receptacle"):
                return hit[1][0]
        return None

    def _longest(self, words: Sequence[str], i: int):
        for length in range(min(self.max_phrase, len(words) - i), 0, -1):
            entry = self.lexicon.get(tuple(words[i:i + length]))
            if entry is not None:
                return length, entry
        return None

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
    from household.assets import AssetCatalog, default_catalog

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
        # any asset of the type (a type's first asset can be a static prop: a television that
        # does not switch, a vase that cannot be picked up)
        flags[t] = frozenset(f for f in _FLAGS if catalog.type_affords(t, f))
    for t, f in V.EXTRA_TYPES.items():
        flags.setdefault(t, f)
    return flags
