"""Moving readings: where an object goes ("put the mug on the shelf", "take the laptop to the
living room", "leave the box on the armchair open"), which object a place says it is, and
pronoun destinations ("put the statue inside it"). A mixin of ``planner.language.goals.GoalBuilding``
(and so of ``InstructionParser``), split from it by job."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence

from planner import vocabulary as V
from planner.language.types import _NEEDS, Mention, _Chunk, _Clause, _Pending, _Reading, _fail

# Prepositions that make a phrase a destination even after a bring verb ("take it into the box").
_INTO = ("into", "onto", "inside", "inside of", "on top of", "on to", "in to")

# (mention, predicate, value, target): what ``_emit`` turns into checklist items.
_Spec = tuple[Mention, str, Any, Mention | None]


# A destination preposition with nothing after it ("put the pen inside"): inside the receptacle
# named before, as "inside it" is.
_BARE_INTO = frozenset({"inside", "in", "into", "within"})


class MoveReading:
    """Mixin: ``_read_move`` (uses ``GoalBuilding._emit``/``_resolve`` and the noun table's
    ``affords``), ``_describes_where``, ``_other_ref``."""

    if TYPE_CHECKING:
        _antecedents: list[Mention]

        def affords(self, type_name: str, flag: str) -> bool: ...
        def _resolve(self, m: Mention, need: str, role: str = "object",
                     hints: dict[str, str] | None = None) -> None: ...
        def _emit(self, r: _Reading, specs: Sequence[_Spec], reading: str,
                  groups: list[tuple[str, str, Any]], in_place: bool = False,
                  appliance: bool = False) -> _Reading: ...

    def _read_move(self, verb: str, objs: list[Mention], groups: list[tuple[str, str, Any]],
                   state_words: list[str], unknown: list[str], r: _Reading, last_place: Mention | str | None,
                   chunks: list[_Chunk], clause: _Clause) -> _Reading:
        dest_roles = ("on", "in", "to") if verb == "place" else ("to",)
        dests = [g for g in groups if (g[0] in dest_roles or (verb != "place" and g[1] in _INTO))
                 and g[2] != "me"]
        sources = [g for g in groups if g not in dests and g[0] in ("from", "in", "on", "at")]
        near = [g for g in groups if g[0] == "near"]
        # "take the bat by the bed": which bat (a destination "near" is not in the checklist vocabulary)
        near_what = [g[2] for g in near if isinstance(g[2], Mention) and g[2].type and not g[2].pronoun]
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
                if near_what:  # "bring me the spray bottle by the chest of drawers": which one
                    hints.setdefault("object_near", near_what[0].type)
                r.hints.update(hints)
                return self._emit(r, [(m, "isHeld", True, None) for m in objs], "hold", [])
        target: Mention | str | None = None
        if dests:
            # The first destination is the target; later ones describe it ("in the mug on the desk").
            nps = [g for g in dests if isinstance(g[2], Mention)]
            if len(nps) >= 2 and nps[0][2].type and not nps[0][2].pronoun and \
                    not self.affords(nps[0][2].type, "pickupable"):
                # "the remote on the dining table on the armchair": a table is on nothing, so it
                # says where the objects are, and the next one is where they go
                hints["object_source"] = nps[0][2].type
                nps = nps[1:]
            target = nps[0][2] if nps else dests[-1][2]
            for g in nps[1:]:
                r.hints.setdefault("target_location", g[2].type)
            if isinstance(target, Mention) and target.pronoun:
                target = self._other_ref(objs, last_place)
            if target == "there":
                # "open the microwave and put the mug in there": with no place said before, what
                # the clause before named, as "in it" would
                target = last_place if last_place is not None else self._other_ref(objs, None)
            if target is None and any(g[2] is None and g[1] in _BARE_INTO for g in dests):
                # "open the drawer, put the pen inside": inside what was named before ("inside it")
                target = self._other_ref(objs, last_place)
        elif any(c.kind == "there" for c in chunks):
            target = last_place
        for m in objs:
            if m.room and (target is not None or verb != "place"):
                hints.setdefault("object_room", m.room)
                m.room = None
        states = [s for s in state_words if s in V.STATE_WORDS and s != "held"]
        if target is not None and states and self._describes_where(clause, chunks, states):
            # "leave the box on the armchair open": which box, left open (not moved onto the armchair)
            if isinstance(target, str):
                hints.setdefault("object_room", target)
            elif not target.pronoun:
                hints.setdefault("object_source", target.type)
            target = None
        # "on the side table by the dresser": a relation after the destination says which
        # destination; before it ("the mug by the sink on the table"), which object
        after_target = []
        if isinstance(target, Mention) and not target.pronoun:
            at = next((k for k, g in enumerate(groups) if g[2] is target), None)
            after_target = [g[2] for k, g in enumerate(groups) if at is not None and k > at and g[0] == "near"
                            and isinstance(g[2], Mention) and g[2].type and not g[2].pronoun]
        if after_target:
            r.hints["target_near"] = after_target[0].type
        near_what = [w for w in near_what if not any(w is t for t in after_target)]
        if near_what and (target is not None or verb != "place" or states):
            hints["object_near"] = near_what[0].type
        pred: str | None  # a state word's (predicate, value); None for a word that has none
        value: bool | str | None
        if target is None:
            if near and not states and (verb == "place" or not near_what):
                return _fail(r, f"spatial relation '{near[0][1]}' is not in the checklist vocabulary", unknown)
            if states:
                pred, value = V.STATE_WORDS[states[-1]]
                flag = _NEEDS[pred]
                # "get the telly on": a fixed appliance the database lists without the flag is
                # still read; "bring the mug on" (a portable object that lacks it) is not.
                if pred in ("isToggled", "isOpen") and not any(
                        self.affords(m.type, flag) or not self.affords(m.type, "pickupable") for m in objs):
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
        specs: list[_Spec] = [(m, "inReceptacle", None, target) for m in objs]
        specs += [(m, "isFilledWithLiquid", m.liquid, None) for m in objs if m.liquid]
        for w in state_words:  # "leave the laptop open on the desk": placed, and left open
            pred, value = V.STATE_WORDS.get(w, (None, None))
            if pred in ("isOpen", "isToggled"):
                specs += [(m, pred, value, None) for m in objs if self.affords(m.type, _NEEDS[pred])]
        r.ignored += [f"'{o.type}' after the destination reads as a second place for the same object; "
                      "the first is kept" for o in target.also if o.type]
        return self._emit(r, specs, "place", [])

    @staticmethod
    def _describes_where(clause: _Clause, chunks: list[_Chunk], states: list[str]) -> bool:
        """After "leave" or "keep", a place named before a closing open/closed/on/off state says
        where the object is ("leave the box on the armchair open"); "leave the laptop open on the
        desk" and "put the box on the shelf open" still move it there."""
        if clause.words[:1] not in (["leave"], ["keep"]):
            return False
        if not any(V.STATE_WORDS[w][0] in ("isOpen", "isToggled") for w in states):
            return False
        preps = [k for k, c in enumerate(chunks) if c.kind == "prep" and c.value[0] in ("on", "in", "to", "at")]
        last_state = max((k for k, c in enumerate(chunks) if c.kind == "state"), default=-1)
        return bool(preps) and last_state > preps[0] and last_state == len(chunks) - 1

    def _other_ref(self, objs: list[Mention], last_place: Mention | str | None) -> Mention | str | None:
        """A pronoun destination ("put the statue inside it"): the previous clause's receptacle
        object ("open the box and ..."), else the last destination named."""
        own = {m.type for m in objs}
        for m in reversed(self._antecedents):
            if m.type not in own and self.affords(m.type, "receptacle"):
                return replace(m, hints={})
        return last_place
