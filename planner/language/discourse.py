"""Discourse: what one clause leaves for the next, beyond pronouns.

Why a module of its own: people spread one request over several clauses, and each of these
habits is a class of its own, independent of which objects are named:
- a room said once for a stretch of clauses ("In the bedroom, ...", "Let's sort the bedroom
  first: ...", "I've got work to do in the bedroom, so ...") scopes the rest of the sentence (or,
  after a colon, the next one);
- "there" / "in there" / "while you're there" point back to the last room named;
- a correction ("on the table, no, on the counter", "turn it on, sorry, I mean off") replaces the
  matching part of the previous request: the last one wins;
- an elliptic clause ("then the cup as well", "do the same for a cup") repeats the previous
  request for a new object; an apposition ("both lamps: the desk lamp and the floor lamp") names
  which objects an ambiguous or plural noun meant.
The functions here are pure: the parser (``planner.language.parser``) keeps the state.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence, cast

from household.checklist import ChecklistItem, ObjectSelector, predicates_where
from planner import vocabulary as V

# Words that open a correction of the previous clause. "no" only counts alone or before a
# destination / state word (so "no eggs ..." is not a correction).
CORRECTION_MARKERS: tuple[tuple[str, ...], ...] = (
    ("or", "rather"), ("i", "mean"), ("i", "meant"), ("make", "that"), ("scratch", "that"), ("sorry",),
    ("actually",), ("rather",), ("wait",), ("oops",), ("correction",), ("no",), ("instead",),
)
# Clause openers before a room that scope the following clauses ("over in the kitchen",
# "while you're in there", "then in the living room").
_LEAD_WORDS = frozenset({"<when>", "you've", "got", "have", "over", "out", "back", "down", "up", "then", "while",
                         "when", "once", "you", "are", "we", "right", "and", "now", "first", "also"})
_ROOM_PREPS = frozenset({"in", "at", "inside"})
# Predicates a room in scope narrows: the object itself for in-place state changes (it does not
# move), the destination for placements.
IN_PLACE_PREDICATES = predicates_where(in_place=True)  # household.checklist: isToggled, isOpen, ...
SPEAKER_WORDS = frozenset({"i", "i'm", "i've", "i'll", "i'd", "we", "we're", "we've", "we'll", "we'd"})
_ELLIPSIS_OPENERS: tuple[tuple[str, ...], ...] = (
    ("do", "the", "same", "for"), ("do", "the", "same", "with"), ("the", "same", "for"), ("the", "same", "with"),
    ("same", "for"), ("same", "with"), ("same", "goes", "for"), ("the", "same", "goes", "for"), ("likewise",),
    ("and",), ("then",),
)


def correction_prefix(words: Sequence[str], is_prep_or_state) -> int:
    """How many leading words are correction markers (0 when the clause is no correction)."""
    k = 0
    changed = True
    while changed:
        changed = False
        for marker in CORRECTION_MARKERS:
            if tuple(words[k:k + len(marker)]) == marker:
                if marker == ("no",) and k + 1 < len(words) and not is_prep_or_state(words[k + 1]):
                    continue
                k += len(marker)
                changed = True
                break
        while k < len(words) and words[k] == ",":
            k += 1
    return k


def leading_room(words: Sequence[str], room_at, last_room: str | None) -> tuple[str | None, int]:
    """A room phrase opening a clause ("in the kitchen", "over in the bedroom", "while you're in
    there"): (room, number of words it takes), or (None, 0). ``room_at(words, i)`` returns
    (length, room) for a room phrase at i, or None."""
    i = 0
    while i < len(words) and words[i] in _LEAD_WORDS:
        i += 1
    if i < len(words) and words[i] == "there" and i > 0:  # "when you're there"
        return (last_room, i + 1) if last_room else (None, 0)
    if i >= len(words) or words[i] not in _ROOM_PREPS:
        return None, 0
    i += 1
    while i < len(words) and words[i] in ("the", "my", "our", "your", "that"):
        i += 1
    if i < len(words) and words[i] == "there":
        return (last_room, i + 1) if last_room else (None, 0)
    hit = room_at(words, i)
    if hit is None:
        return None, 0
    length, room = hit
    return room, i + length


def elliptic_object(words: Sequence[str]) -> int:
    """Words opening an elliptic clause ("do the same for a cup"): how many to skip."""
    for opener in sorted(_ELLIPSIS_OPENERS, key=len, reverse=True):
        if tuple(words[:len(opener)]) == opener:
            return len(opener)
    return 0


def with_scope_room(item: ChecklistItem, room: str) -> ChecklistItem:
    """The item narrowed to a room said for a stretch of clauses, where it names none itself."""
    if item.predicate == "inReceptacle" and item.target is not None and item.target.room is None:
        return replace(item, target=replace(item.target, room=room))
    if item.predicate in IN_PLACE_PREDICATES and item.object.room is None:
        return replace(item, object=replace(item.object, room=room))
    return item


def apposition(prev_items: Sequence[ChecklistItem], alternatives: str, types: Sequence[str],
               counts: Sequence[int | None]) -> list[ChecklistItem] | None:
    """Items of the previous clause with an ambiguous or plural object replaced by the objects an
    apposition names ("turn on both lamps: the desk lamp and the floor lamp"); None when the
    named types are not among that object's candidates."""
    if not prev_items or len(types) < 1:
        return None
    chosen = prev_items[0].object.type
    candidates = {chosen} | {a for a in alternatives.split(",") if a}
    plural = (prev_items[0].object.count or 1) > 1
    if not set(types) <= candidates or not (len(candidates) > 1 or plural) or (len(types) < 2 and not plural):
        return None
    out: list[ChecklistItem] = []
    for item in prev_items:
        if item.object.type != chosen:
            out.append(item)
            continue
        for t, n in zip(types, counts):
            out.append(replace(item, object=replace(item.object, type=t, count=n if n and n > 1 else None)))
    return out


def ellipsis(prev_items: Sequence[ChecklistItem], types: Sequence[str], counts: Sequence[int | None],
             affords) -> list[ChecklistItem]:
    """The previous clause's request repeated for new objects ("fill a bowl with water, then the
    cup as well"): its items about its first object, with that object replaced, where the new
    type can take the predicate (``affords(type, predicate)``)."""
    if not prev_items:
        return []
    first = prev_items[0].object.type
    out: list[ChecklistItem] = []
    for t, n in zip(types, counts):
        for item in prev_items:
            if item.object.type != first or not affords(t, item.predicate):
                continue
            obj = replace(item.object, type=t, count=n if n and n > 1 else None)
            out.append(replace(item, object=obj))
    return out


def merge_bring_then_place(raw: list[tuple[list[ChecklistItem], str, dict[str, str]]]) -> None:
    """"Take a cup to the bedroom and leave it on the bed": the room the object was taken to is
    where the later destination is, and the end state is only the later placement. In place."""
    for i, (items, _, _) in enumerate(raw):
        for item in list(items):
            if item.predicate != "inRoom" or not isinstance(item.value, str):
                continue
            for later, _, _ in raw[i + 1:]:
                hit = [k for k, x in enumerate(later) if x.predicate == "inReceptacle" and x.object == item.object
                       and x.target is not None and x.target.room in (None, item.value)]
                if hit:
                    for k in hit:
                        x = later[k]
                        # hit keeps only items with a target
                        later[k] = replace(x, target=replace(cast(ObjectSelector, x.target), room=item.value))
                    items.remove(item)
                    break


def is_state_word(word: str) -> bool:
    return word in V.STATE_WORDS
