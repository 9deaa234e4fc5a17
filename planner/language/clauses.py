"""Clause splitting: an instruction's text -> sentences -> clauses (token lists with spans).

Sentences end at . ! ? ; : and line breaks; a sentence splits into clauses at ",", "then", and
"and"/"or" when a verb follows (so "a mug and a bowl" stays one list). A verbless comma piece
after a clause that still lacks a destination is glued back ("put the mug, the bowl and the plate
in the sink"). Politeness and filler are dropped first. Mixed into ``InstructionParser``; it
needs the noun lexicon (``nouns``) only to tell a noun from a verb ("microwave the potato").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from planner import vocabulary as V
from planner.language.types import (WHEN, WHY, _CONTRACTIONS, _MULTI_VERB_KEYS, _SPLIT_PUNCT, _TOKEN_RE, _Clause,
                                    _drop_phrases, _skip_sequencers, _stem, _strip_sequencers,
                                    _trim_sequencers)

if TYPE_CHECKING:
    from planner.language.types import _Chunk


# What follows a verb in a chore's title ("Tidy-up:", "Clean up:", "Wash-up time:").
_TITLE_PARTICLES = frozenset({"up", "away", "down", "out", "time", "day"})


class ClauseSplitting:
    """Mixin: ``_sentences`` and ``_clauses`` (uses ``self.lexicon`` and ``self._chunk``)."""

    # Provided by the parser (InstructionParser.__init__) and the NounPhrases mixin.
    lexicon: dict[tuple[str, ...], tuple[str, tuple[str, ...], bool]]
    base_of: dict[str, str]

    if TYPE_CHECKING:
        def _chunk(self, toks: list[tuple[str, int, int]], verb_class: str | None) -> list[_Chunk]: ...
        def _longest(self, words: Sequence[str], i: int) -> tuple[int, tuple[str, tuple[str, ...], bool]] | None: ...

    def _sentences(self, text: str) -> list[_Clause]:
        toks: list[tuple[str, int, int]] = []
        for m in _TOKEN_RE.finditer(text):
            w = m.group(0).lower().replace("’", "'")
            if w in _DASHES:
                w = DASH  # a clause break that, unlike a comma, never continues an object list
            for part in _CONTRACTIONS.get(w, (w,)):
                toks.append((part, m.start(), m.end()))
        toks = _verb_from_noun(_mark_purpose(_join_hyphens(_parenthetical_count(toks))))
        toks = _verb_from_gerund(_drop_phrases(toks, V.POLITE_PHRASES))
        sentences: list[_Clause] = []
        cur: list[tuple[str, int, int]] = []
        for t in toks:
            if t[0] in _SPLIT_PUNCT:
                if cur:
                    sentences.append(_Clause(cur, heading=t[0] == ":" and not self._opens_with_request(cur),
                                             colon=t[0] == ":"))
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
        # "frying pan", "toaster oven", "water bottle": a verb form opening a longer name is that
        # name (the frying pan washed was read as "fry the pan")
        hit = self._longest(words, i)
        if hit is not None and hit[0] >= 2 and hit[1][0] == "type":
            return False
        if w in V.LIQUID_PHRASES and nxt in ("in", "into", "for", "inside"):
            return False  # "water in the wine bottle": the liquid, not the verb
        if key in self.lexicon and self.lexicon[key][0] == "type" and (
                nxt in ("and", ",", "") or (nxt in ("on", "off", "open") and i + 2 >= len(words))):
            return False
        return True

    def _opens_with_request(self, toks: list[tuple[str, int, int]]) -> bool:
        """Whether the words before a colon are a request ("Put these away: ...") rather than a
        title: a verb alone or with its particle ("Tidy-up:", "Clean up:") names the chore, it
        asks nothing of an object."""
        words = _strip_sequencers([t[0] for t in toks])
        if len(words) <= 2 and all(w in _TITLE_PARTICLES for w in words[1:]):
            return False
        return self._has_verb_start(toks)

    def _has_verb_start(self, toks: list[tuple[str, int, int]]) -> bool:
        words = _strip_sequencers([t[0] for t in toks])
        return bool(words) and self._is_verb_at(words, 0)

    def _clauses(self, sentence: _Clause) -> list[_Clause]:
        """Split a sentence at ',', 'then' and 'and <verb>'; glue verbless comma pieces back on."""
        words = sentence.words
        pieces: list[tuple[str, list[tuple[str, int, int]]]] = [("", [])]  # (separator before, tokens)
        skipped: dict[int, int] = {}  # _skip_sequencers' memo for this sentence
        for i, t in enumerate(sentence.tokens):
            w = t[0]
            # asked only after "and"/"or" (the one place it matters), by index: no copies of the rest
            follows_verb = w in ("and", "or") and self._is_verb_at(words, _skip_sequencers(words, i + 1, skipped))
            by_gerund = w in ("by", "while") and i + 1 < len(words) and words[i + 1].endswith("ing") and \
                _stem(words[i + 1]) in V.VERBS
            if w in (WHY, WHEN):  # "so they don't distract me": a purpose clause starts here
                pieces.append((w, [t]))
                continue
            if w in (",", DASH) or (w == "then" and pieces[-1][1]) or \
                    (w in ("and", "or") and follows_verb and pieces[-1][1]) \
                    or by_gerund:
                if pieces[-1][1]:
                    pieces.append((w, []))
                continue
            pieces[-1][1].append(t)
        out: list[list[tuple[str, int, int]]] = []
        pieces = self._merge_forward(pieces)
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
        return [_Clause(p, heading=sentence.heading, colon=sentence.colon) for p in out]

    def _merge_forward(self, pieces: list[tuple[str, list[tuple[str, int, int]]]]
                       ) -> list[tuple[str, list[tuple[str, int, int]]]]:
        """"loo roll, vase, statue and candle to the bedroom", "television, candle and lamp on":
        comma pieces that are only noun phrases join the next comma piece when it starts with a
        noun phrase too and ends in a destination or a state (a verbless list whose predicate
        comes at its end)."""
        out = list(pieces)
        k = len(out) - 2
        while k >= 0:
            (sep, piece), (nsep, nxt) = out[k], out[k + 1]
            if nsep == "," and piece and nxt and self._np_only(piece) and not self._has_verb_start(nxt) \
                    and not self._has_verb_start(piece):
                first = self._chunk(nxt, None)
                dest = any(c.kind == "prep" and c.value[0] in ("on", "in", "to") for c in first)
                # "television, candle and lamp on": the list's end state comes at its end
                state = bool(first) and first[-1].kind == "state" and all(c.kind in ("np", "and", "state")
                                                                           for c in first)
                if first and first[0].kind == "np" and not first[0].value.pronoun and (dest or state):
                    out[k] = (sep, piece + [("and", nxt[0][1], nxt[0][1])] + nxt)
                    del out[k + 1]
            k -= 1
        return out

    def _np_only(self, toks: list[tuple[str, int, int]]) -> bool:
        chunks = self._chunk(toks, None)
        # Bare nouns only: "a mug of coffee", "sliced bread", "a cooked egg" say something already.
        return bool(chunks) and all(c.kind in ("np", "and") for c in chunks) and not any(
            c.value.pronoun or c.value.liquid or c.value.adjective or c.value.type in self.base_of
            for c in chunks if c.kind == "np")

    def _needs_more(self, prev: list[tuple[str, int, int]], piece: list[tuple[str, int, int]]) -> bool:
        """Is a verbless comma piece the rest of the previous clause's object list?"""
        prev_words = [t[0] for t in prev]
        if not self._is_verb_at(prev_words, 0):
            return False
        chunks = self._chunk([t for t in piece], verb_class=None)
        if not any(c.kind == "np" for c in chunks) or any(c.kind == "neg" for c in chunks):
            return False  # ", not the fridge" is a negation of its own, not more objects
        has_pred = any(c.kind in ("prep", "state", "held") for c in chunks)
        prev_chunks = self._chunk(prev[1:], verb_class=None)
        prev_has_dest = any(c.kind == "prep" and c.value[0] in ("on", "in", "to") for c in prev_chunks)
        # A piece with its own destination or state continues the list only when the previous
        # clause still needs a destination ("put the mug, the bowl on the shelf" is rare; "light
        # the candle, basketball on the armchair" is two requests).
        return not has_pred or (not prev_has_dest and V.VERBS.get(prev_words[0]) in ("place", "bring"))


_DASHES = frozenset({"—", "–", "--"})
DASH = "—"
# After "so", these start a purpose clause ("so I'm not distracted", "so it's cosy", "so that ...");
# "so could you ..." and "so please ..." are filler and stay so.
_PURPOSE_SUBJECTS = frozenset({"i", "i'm", "i've", "i'll", "i'd", "it", "they", "we", "you", "that", "he", "she",
                               "there", "nothing", "everything", "the", "my", "our", "everyone", "nobody"})


_PIECES = frozenset({"slices", "pieces"})


def _parenthetical_count(toks: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """"make some toast (two slices)" reads as "make two slices of toast": a count of pieces in
    brackets after a noun says how many (the brackets were dropped, and one slice toasted)."""
    out: list[tuple[str, int, int]] = []
    k = 0
    while k < len(toks):
        t = toks[k]
        if t[0] == "(" and out and out[-1][0].isalpha() and k + 3 < len(toks) and toks[k + 3][0] == ")" \
                and (toks[k + 1][0] in V.NUMBERS or toks[k + 1][0].isdigit()) and toks[k + 2][0] in _PIECES:
            noun = out.pop()
            if out and out[-1][0] in ("some", "a", "an", "the"):
                out.pop()
            out.extend([toks[k + 1], toks[k + 2], ("of", toks[k + 2][2], toks[k + 2][2]), noun])
            k += 4
            continue
        out.append(t)
        k += 1
    return out


def _join_hyphens(toks: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Drop a hyphen written inside a word ("living-room" reads as "living room"); a spaced
    hyphen (" - ") is a clause break like a dash."""
    out: list[tuple[str, int, int]] = []
    for k, t in enumerate(toks):
        if t[0] == "-" and 0 < k < len(toks) - 1:
            prev, nxt = toks[k - 1], toks[k + 1]
            if prev[2] == t[1] and nxt[1] == t[2] and prev[0].isalpha() and nxt[0].isalpha():
                continue
            if prev[2] < t[1] and nxt[1] > t[2]:
                t = (DASH, t[1], t[2])
        out.append(t)
    return out


def _mark_purpose(toks: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Replace the "so" / "because" / "so that" opening a purpose or reason clause by ``WHY``,
    before filler is dropped (filler drops a bare "so", which would leave "I'm not distracted"
    to read as a negated instruction)."""
    out: list[tuple[str, int, int]] = []
    for k, t in enumerate(toks):
        nxt = toks[k + 1][0] if k + 1 < len(toks) else ""
        ahead = [x[0] for x in toks[k + 1:k + 6]]
        if (t[0] == "so" and nxt in _PURPOSE_SUBJECTS) or t[0] in ("because", "cause", "'cause"):
            out.append((WHY, t[1], t[2]))
        elif t[0] in ("while", "when", "once", "whilst") and nxt in ("you", "you've", "you're", "we", "i") and \
                not {"done", "finished", "through"} & set(ahead):
            out.append((WHEN, t[1], t[2]))  # "while you've got it open": a circumstance, not a request
        else:
            out.append(t)
    return out


# "give X a wash": the action is the noun at the end. Noun -> the verb that says it.
_ACTION_NOUNS = {**{w: w for w, cls in V.VERBS.items() if cls == "clean"}, "drink": "water", "water": "water"}
_ACTION_SOFTENERS = frozenset({"good", "quick", "proper", "little", "thorough", "gentle", "nice"})
_CLAUSE_ENDS = frozenset({".", "!", "?", ";", ":", ",", "and", "then", "\n"})


def _verb_from_noun(toks: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Rewrite "give the dirty bowl a (good) wash" as "wash the dirty bowl" and "give the plant a
    drink" as "water the plant": otherwise "give" reads as bringing, and "dirty" as the goal."""
    words = [t[0] for t in toks]
    out = list(toks)
    for i in range(len(words) - 1, -1, -1):
        if words[i] not in ("give", "gave"):
            continue
        for j in range(i + 2, len(words)):
            if words[j] in _CLAUSE_ENDS:
                break
            if words[j] not in ("a", "an"):
                continue
            k = j + 1
            while k < len(words) and words[k] in _ACTION_SOFTENERS:
                k += 1
            at_end = k + 1 == len(words) or (k + 1 < len(words) and words[k + 1] in _CLAUSE_ENDS)
            if k < len(words) and words[k] in _ACTION_NOUNS and at_end:
                out[i] = (_ACTION_NOUNS[words[k]], toks[i][1], toks[i][2])
                del out[j:k + 1]
            break
    return out


# "X needs washing": the words that ask for an action on X with a gerund, and where X starts.
_NEED_WORDS = frozenset({"need", "needs", "want", "wants"})
_SUBJECT_BREAKS = (_CLAUSE_ENDS - {"and"}) | {DASH, WHY, WHEN}  # "and" is judged apart: see below


def _verb_from_gerund(toks: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Rewrite "the plant needs watering" as "water the plant" and "the blinds in the bedroom need
    opening" as "open the blinds in the bedroom": everyday English asks for an action with
    need(s) + gerund, which read as a state description kept only the room ("the blinds are in
    the bedroom"). The subject is what stands before "need(s)" back to the clause's start (after
    an "and" that ends a request: "put the mug away and the plant needs watering"). A gerund that
    is no verb the parser knows ("the rug needs vacuuming") is left alone, to be reported."""
    out: list[tuple[str, int, int]] = []
    k = 0
    while k < len(toks):
        w = toks[k][0]
        verb = _stem(toks[k + 1][0]) if w in _NEED_WORDS and k + 1 < len(toks) else ""
        if verb in V.VERBS and verb != toks[k + 1][0]:
            start = len(out)
            while start > 0 and out[start - 1][0] not in _SUBJECT_BREAKS:
                start -= 1
            subject = out[start:]
            ands = [i for i, t in enumerate(subject) if t[0] == "and"]
            if ands and subject[0][0] in V.VERBS:  # "put the mug away and the plant needs watering"
                start += ands[-1] + 1
                subject = out[start:]
            if subject and subject[0][0] not in V.VERBS:
                out[start:] = [(verb, toks[k + 1][1], toks[k + 1][2])] + subject
                k += 2
                continue
        out.append(toks[k])
        k += 1
    return out
