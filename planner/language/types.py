"""Shared records and word-level helpers of the deterministic instruction parser.

Why a module of its own: clause splitting (``clauses``), noun-phrase resolution (``nouns``) and
goal building (``goals``) all pass these records between them; keeping them here lets each of
those modules import them without importing each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from household.checklist import ChecklistItem
from household.interactions import BY_ACTION, INTERACTIONS, setter
from planner import vocabulary as V

# Longest instruction accepted: checked before any tokenising, so a 50 MB string costs O(1) time
# and no memory beyond the caller's. The longest free-form instruction we have is ~600 characters.
MAX_INSTRUCTION_CHARS = 10_000
# Token standing for "so"/"because" when it opens a purpose or reason clause (not a request).
WHY = "<why>"
# Token standing for "while"/"when"/"once" opening a circumstance clause ("while you're there").
WHEN = "<when>"
_MULTI_VERB_KEYS = frozenset(tuple(k.split()) for k in V.MULTI_VERBS)
_FLAGS = ("pickupable", "receptacle", "openable", "toggleable", "sliceable", "cookable", "fillable", "dirtyable")
_TOKEN_RE = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?|\d+(?:[.,]\d+)*|\n|[^\sA-Za-z\d]")  # 2.5, 1,000: one token
_SPLIT_PUNCT = frozenset({".", "!", "?", ";", ":", "\n"})
_CONTRACTIONS = {"that's": ("that", "is"), "it's": ("it", "is"), "there's": ("there", "is"),
                 "what's": ("what", "is"), "they're": ("they", "are"), "you're": ("you", "are"),
                 "isn't": ("is", "not"), "aren't": ("are", "not"), "dont": ("don't",)}
_NEGATIONS = frozenset({"don't", "not", "never", "no", "doesn't", "shouldn't", "mustn't", "avoid", "none", "nowhere",
                        "neither", "nor", "without"})
# Words after which "of" is a partitive, not a relation ("a couple of mugs", "one of the potatoes").
_OF_QUANTIFIERS = frozenset({"couple", "pair", "one", "both", "all", "each", "some", "few", "several", "any",
                             "two", "three", "four", "five", "none", "either", "neither", "most", "lot", "lots"})
_SLICE_NOUNS = frozenset({"slice", "slices", "piece", "pieces", "wedge", "wedges", "chunk", "chunks", "bit",
                          "bits", "half", "halves"})
_HELD_PHRASES = (("in", "hand"), ("in", "your", "hand"), ("in", "your", "hands"), ("in", "hand", "s"),
                 ("holding",), ("in", "the", "hand"), ("in", "its", "hand"), ("in", "the", "gripper"))
# The affordance each reading needs of its object, used to choose among ambiguous types.
_NEEDS = {
    # what the interaction table says each flag's interaction needs, and the verbs of VERB_STATES
    **{i.thor_flag: i.affordance for i in INTERACTIONS if i.thor_flag},
    **{verb: BY_ACTION[i.action].affordance for verb, (flag, value) in V.VERB_STATES.items()
       if (i := setter(flag, value)) is not None},
    "turn": "toggleable", "on": "toggleable", "off": "toggleable", "open": "openable",
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
    plural: bool = False  # "the mugs": with no count, every one the agent finds (read as "all")
    slice_ref: bool = False  # "a slice", "the pieces": slices of the last thing sliced
    hints: dict[str, str] = field(default_factory=dict)  # carried from an acquisition
    # noun phrases joined to this one by "and" after a preposition ("into the mug and the bowl"):
    # a pour fills each; a move reports them (one object has one destination)
    also: list["Mention"] = field(default_factory=list)

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
    heading: bool = False  # a verbless sentence that ended with ":" ("Tidy-up:")
    colon: bool = False  # the sentence ended with ":" (what follows elaborates it)

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
    ignored: list[str] = field(default_factory=list)  # parts left out of the items produced, and why
    silent: bool = False  # produced nothing on purpose ("go to the kitchen")
    last_place: Mention | str | None = None


def _fail(r: _Reading, reason: str, unknown: Iterable[str]) -> _Reading:
    """``r`` as a reading that produced nothing, with the reason and the words not understood."""
    words = [w for w in unknown if w.isalpha()]
    r.reason = reason + (f" (unknown words: {', '.join(dict.fromkeys(words))})" if words else "")
    r.items = []
    return r


def _take_mods(mods: dict[str, Any], plural: bool) -> dict[str, Any]:
    out: dict[str, Any] = {k: mods[k] for k in ("count", "quantifier", "room", "adjective") if k in mods}
    if mods.get("both") and not plural:
        out.pop("count", None)
    mods.clear()
    return out


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


def _skip_sequencers(words: Sequence[str], i: int = 0, memo: dict[int, int] | None = None) -> int:
    """The index after the sequencer words ("then", "after that", ",", "after washing ...") that
    start ``words[i:]``. Moves an index instead of slicing (slicing copied the rest of the sentence
    for every word stripped: long runs of commas cost cubic time). A pass of the rules from a
    given index always ends at the same index, so a caller that asks from many indices of one
    sentence passes ``memo`` and each index is passed over once (a run of 2,400 "and"s took 11 s)."""
    memo = {} if memo is None else memo
    chain: list[int] = []
    while i not in memo:
        nxt = _one_pass(words, i)
        if nxt == i:
            memo[i] = i
            break
        chain.append(i)
        i = nxt
    end = memo[i]
    for k in chain:
        memo[k] = end
    return end


def _one_pass(words: Sequence[str], i: int) -> int:
    n = len(words)
    for p in V.SEQUENCER_PHRASES:
        if tuple(words[i:i + len(p)]) == p:
            i += len(p)
    if i < n and words[i] in V.SEQUENCERS:
        i += 1
    if i < n and words[i] in (",", "to"):
        i += 1
    if n - i > 1 and words[i] in ("after", "before", "once", "when", "while") and _stem(words[i + 1]) in V.VERBS:
        i += 1  # "after washing the cup, ..."
    return i


def _strip_sequencers(words: Sequence[str]) -> list[str]:
    return list(words[_skip_sequencers(words):])


def _trim_sequencers(toks: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    return toks[_skip_sequencers([t[0] for t in toks]):]


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
