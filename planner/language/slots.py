"""A clause's chunks sorted into slots: the objects, the prepositional groups (role, phrase, what)
and the rest; and where one verb's clause holds several object-destination pairs ("the vase on the
stand and the statue on the shelf"). Read by goal building (``planner.language.goals``) and by the
parser's harvest of objects from clauses that ask nothing."""

from __future__ import annotations

from typing import Any, Callable

from planner.language.types import Mention, _Chunk


def _split_slots(chunks: list[_Chunk], movable: Callable[[Mention], bool] = lambda m: True,
                 ) -> tuple[list[Mention], list[tuple[str, str, Any]], list[_Chunk]]:
    """Objects (noun phrases before the first preposition, and a movable one joined by "and" to a
    source: "the eggs from the fridge and the soap bottle"), prepositional groups (role, phrase,
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
            if isinstance(what, str) and what not in ("there", "me") and role in ("in", "at", "on") and \
                    phrase not in ("into", "onto", "in to", "on to"):  # "off the desk and into the kitchen"
                prev_np = groups[-1][2] if groups and isinstance(groups[-1][2], Mention) else None
                if isinstance(prev_np, Mention) and prev_np.room is None and not prev_np.pronoun:
                    prev_np.room = what
                    continue
            seen_prep = True
            groups.append((role, phrase, what))
            continue
        if c.kind == "np" and (not seen_prep or (i > 0 and chunks[i - 1].kind == "also")):
            objects.append(c.value)  # "put it on the bed along with my watch": the watch too
        elif c.kind == "np" and groups and groups[-1][0] == "from" and i > 0 and chunks[i - 1].kind == "and" \
                and movable(c.value):
            objects.append(c.value)  # "the eggs from the fridge and the soap bottle in the bin": another object
        elif c.kind == "np" and seen_prep and groups and isinstance(groups[-1][2], Mention) and i > 0 and \
                chunks[i - 1].kind == "and":
            groups[-1][2].also.append(c.value)  # "into the mug and the bowl"
        elif c.kind == "np" and seen_prep and groups and groups[-1][2] is not None and i > 0 and \
                chunks[i - 1].kind == "and":
            pass  # "in the kitchen and the bowl": nothing to join a noun to
        elif c.kind != "np":
            rest.append(c)
        i += 1
    # "place the mug in the kitchen on the dining table": a room right after the object, with a
    # receptacle to put it on or in after that, says which mug (the kitchen's), not where it goes
    if objects and len(groups) >= 2 and groups[0][0] in ("in", "at") and isinstance(groups[0][2], str) \
            and groups[0][2] not in ("there", "me") and groups[0][1] not in ("into", "in to") \
            and objects[-1].room is None and not objects[-1].pronoun \
            and any(isinstance(g[2], Mention) and g[0] in ("in", "on") for g in groups[1:]):
        objects[-1].room = groups.pop(0)[2]
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
