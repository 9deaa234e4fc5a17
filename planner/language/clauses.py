"""Clause splitting: an instruction's text -> sentences -> clauses (token lists with spans).

Sentences end at . ! ? ; : and line breaks; a sentence splits into clauses at ",", "then", and
"and"/"or" when a verb follows (so "a mug and a bowl" stays one list). A verbless comma piece
after a clause that still lacks a destination is glued back ("put the mug, the bowl and the plate
in the sink"). Politeness and filler are dropped first. Mixed into ``InstructionParser``; it
needs the noun lexicon (``nouns``) only to tell a noun from a verb ("microwave the potato").
"""

from __future__ import annotations

from typing import Sequence

from planner import vocabulary as V
from planner.language.types import (_CONTRACTIONS, _MULTI_VERB_KEYS, _SPLIT_PUNCT, _TOKEN_RE, _Clause,
                                    _drop_phrases, _stem, _strip_sequencers, _trim_sequencers)


class ClauseSplitting:
    """Mixin: ``_sentences`` and ``_clauses`` (uses ``self.lexicon`` and ``self._chunk``)."""

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
