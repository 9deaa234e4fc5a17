"""Goal building: one clause's chunks -> a reading (verb class, objects, destinations, states)
-> checklist items, with pronouns resolved against earlier clauses.

Mixed into ``InstructionParser``. The verb picks a reading (place, bring, slice, cook, fill,
clean, toggle, open/close, hold, ...); a verbless clause is a final-state description ("laptop
on", "a mug of coffee"). Rooms: with a destination they narrow the target; with an in-place state
change (toggle, open) they narrow the object; for objects that move they are only a search hint.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence

from household.checklist import PREDICATES, ChecklistItem, ObjectSelector
from planner import vocabulary as V
from planner.language.moves import _INTO, MoveReading, _Spec
from planner.language.slots import _gapped, _split_slots
from planner.language.types import (_NEEDS, _NEGATIONS, Mention, _Chunk, _Clause, _Pending, _Reading,
                                    _fail, _stem)


# Where a fill without a named liquid takes place says which liquid.
_STATION_LIQUID = {"Sink": "water", "SinkBasin": "water", "Faucet": "water", "Bathtub": "water",
                   "BathtubBasin": "water", "CoffeeMachine": "coffee"}
# Where each in-place reading is done: "cook the potato in the microwave", "fill the bowl at the
# sink", "wash the mug in the sink". Any other furniture named with in / at / on says which object
# ("cook the potato in the refrigerator in the microwave": the potato in the fridge).
_APPLIANCES = {"cook": frozenset({"Microwave", "Toaster", "StoveBurner", "StoveKnob", "Pan", "Pot", "Kettle"}),
               "fill": frozenset(_STATION_LIQUID), "empty": frozenset(_STATION_LIQUID),
               "clean": frozenset(t for t, liquid in _STATION_LIQUID.items() if liquid == "water")}


# "out there", "over there": the adverb adds nothing to the room "there" names.
_THERE_ADVERBS = frozenset({"out", "over", "up", "down", "back"})
# Verb classes that change an object where it stands ("open the drawer there": that room's drawer).
_IN_PLACE_VERBS = frozenset({"turn", "on", "off", "open", "close"})
# Words that open a clause without being its verb ("but the clock goes in the dresser").
_CONNECTIVES = frozenset({"but", "and", "or", "so", "because", "since", "while", "whereas", "though", "although",
                          "if", "when", "once", "as", "yet", "still", "otherwise", "meanwhile", "instead", "besides",
                          "anyway", "right", "well", "now", "today", "tonight", "later", "first", "second"})
# Words after which an unknown first word reads as an imperative's verb ("dust THE shelf").
_IMPERATIVE_DETERMINERS = frozenset({"a", "an", "the", "some", "my", "your", "our", "his", "her", "their", "this",
                                     "that", "these", "those", "all", "both", "every", "each", "any"})


class GoalBuilding(MoveReading):
    """Mixin: ``_read`` a clause into a ``_Reading`` and ``_emit`` its items."""

    _last_sliced: tuple[str, ...] | None  # what was just sliced, for "the slices" (set per clause by the parser)
    # Provided by the parser (InstructionParser.__init__) and the other mixins.
    sliced: dict[str, str]  # base type -> sliced type
    base_of: dict[str, str]  # sliced type -> base type

    if TYPE_CHECKING:
        def affords(self, type_name: str, flag: str) -> bool: ...
        def _resolve(self, m: Mention, need: str, role: str = "object",
                     hints: dict[str, str] | None = None) -> None: ...
        def _is_verb_at(self, words: Sequence[str], i: int) -> bool: ...
        def _chunk(self, toks: list[tuple[str, int, int]], verb_class: str | None) -> list[_Chunk]: ...

    def _read(self, clause: _Clause, antecedents: list[Mention], last_place: Mention | str | None,
              pending: _Pending | None) -> _Reading:
        words = clause.words
        self._antecedents = antecedents
        if words and words[0] in _NEGATIONS:
            return _Reading(reason="negated instruction (says what not to do)")
        verb, vlen = self._verb(words)
        chunks = self._there(self._chunk(clause.tokens[vlen:], verb), verb)
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

    def _there(self, chunks: list[_Chunk], verb: str | None) -> list[_Chunk]:
        """"there" as a room: "the box there", "the plate in there", "switch the TV on in there",
        "bring a mug in there" name the last room said (``self._last_room``); "leave it there" /
        "put it in there" after a placement keep meaning the last destination."""
        room = getattr(self, "_last_room", None)
        if not room or not any(c.kind == "there" for c in chunks):
            return chunks
        out: list[_Chunk] = []
        for _i, c in enumerate(chunks):
            if c.kind != "there":
                out.append(c)
                continue
            if out and out[-1].kind == "word" and out[-1].value in _THERE_ADVERBS:
                out.pop()  # "on the TV stand out there": "out" says nothing "there" does not
            prev = out[-1] if out else None
            prep_before = lambda k: any(x.kind == "prep" for x in out[:k])  # noqa: E731
            as_room = _Chunk("room", room, c.start, c.end, "there")
            if prev is not None and prev.kind == "prep" and prev.value[0] in ("in", "at"):
                if len(out) >= 2 and out[-2].kind == "np" and prep_before(len(out) - 2):
                    out.append(as_room)  # "on the plate in there": narrows the plate
                elif verb in ("turn", "on", "off", "open", "close") or verb is None:
                    out.append(as_room)
                elif verb == "bring":
                    out[-1] = _Chunk("prep", ("to", "to"), prev.start, prev.end, "to")
                    out.append(as_room)
                else:
                    out.append(c)
            elif prev is not None and (prev.kind == "np" and prep_before(len(out) - 1)
                                       or verb in _IN_PLACE_VERBS and _after_object(out)):
                # "on the box there"; "open the drawer there", "switch the toaster on there" (what is
                # changed where it stands)
                out.append(_Chunk("prep", ("in", "in"), c.start, c.start, "in"))
                out.append(as_room)
            else:
                out.append(c)
        return out

    def _interpret(self, verb: str | None, chunks: list[_Chunk], clause: _Clause, antecedents: list[Mention],
                   last_place: Mention | str | None, pending: _Pending | None) -> _Reading:
        objects, groups, rest = _split_slots(
            chunks, lambda m: bool(m.type) and not m.pronoun and self.affords(m.type, "pickupable"))
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
                for base in self._last_sliced or ():
                    resolved.append(replace(m, types=(self.sliced.get(base, base),), slice_ref=False, hints={}))
            else:
                if pending is not None and any(p.type == m.type for p in pending.mentions):
                    used_pending = True
                resolved.append(m)
        needs_object = verb not in (None, "go", "make", "pour", "water", "find")
        first_prep = next((i for i, c in enumerate(chunks) if c.kind == "prep"), len(chunks))
        slot_has_words = any(c.kind == "word" and c.value not in V.COPULAS for c in chunks[:first_prep])
        # "put some water in the bowl": the liquid is what is put, not the last clause's object
        liquid_in_slot = any(c.kind == "liquid" for c in chunks[:first_prep])
        if not objects and needs_object and not slot_has_words and not liquid_in_slot \
                and not (verb == "turn" and not states and not groups):
            ref = pending.mentions if pending is not None else antecedents
            if ref:
                resolved = self._copy_ref(self._pick_ref(ref, need, last_place), Mention(("",), pronoun=True))
                used_pending = pending is not None
        if used_pending and pending is not None:
            for m in resolved:
                for k, v in pending.hints.items():
                    m.hints.setdefault(k, v)
        r.consumed = used_pending
        if verb is None and (unread := self._unknown_verb(clause, chunks)):
            # "dust the shelf in the living room" read as a state description had become "the
            # shelving unit is in the living room": a guessed goal for a verb never understood
            return _fail(r, f"'{unread}' is not a verb this parser knows: not understood", unknown)
        if verb is None:
            # "The remote goes in there too": "there" is the last destination, never a room named "there".
            groups = [(g[0], g[1], last_place) if g[2] == "there" else g for g in groups if g[2] != "there"
                      or last_place is not None]
            return self._read_state(resolved, groups, states, liquids, unknown, r, objects, chunks)
        return self._read_verb(verb, resolved, groups, states, liquids, unknown, chunks, r, last_place, objects,
                               clause)

    @staticmethod
    def _unknown_verb(clause: _Clause, chunks: list[_Chunk]) -> str | None:
        """The clause's first word, where it stands as an imperative's verb that no verb class
        holds: an unknown word followed by a determiner and a noun phrase, known or not ("dust
        the shelf", "yeet the mug into the sink", "polish the mirror"). A clause with no verb is
        otherwise read as an end state ("mug in the sink", "fluffy towel on the bed"), which for
        these would guess a goal."""
        words = clause.words
        if len(words) < 3 or not chunks or chunks[0].kind != "word" or words[1] not in _IMPERATIVE_DETERMINERS \
                or words[0] in _CONNECTIVES:
            return None
        return words[0] if chunks[0].value == words[0] and len(chunks) > 1 and chunks[1].kind in ("np", "word") \
            else None

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
        three = " ".join(words[:3])
        if three in V.MULTI_VERBS:
            return V.MULTI_VERBS[three], 3
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
        if verb == "go" and objs and "held" in state_words:
            # "come back holding the phone": end up holding it
            return self._emit(r, [(m, "isHeld", True, None) for m in objs], "hold", groups)
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
            # "pour coffee into the mug on the desk": what can hold a liquid is poured into; a desk
            # after it says which mug, and "by the dresser" which plant (both as hints, via _emit)
            into = [g for g in dests if any(self.affords(t, "fillable") for t in g[2].types)] or dests[:1]
            liquid = liquids[0] if liquids else None
            rest = [g for g in groups if not any(g is v for v in into)]
            # "into the mug and the bowl", "into the mug on the desk and the cup": each is filled
            joined = [v for g in into + [g for g in rest if isinstance(g[2], Mention)] if into
                      for v in self._fillable_also(g[2], r)]
            vessels = [g[2] for g in into] + joined or [m for m in objs if m.liquid] or (
                [Mention((V.DEFAULT_VESSEL[liquid],))] if liquid else [])
            if not vessels:
                return _fail(r, "pour: no vessel or liquid recognised", unknown)
            return self._emit(r, [(m, "isFilledWithLiquid", m.liquid or liquid or True, None) for m in vessels],
                              "fill", rest)
        if verb == "place" and not objs and liquids:
            # "put some water in the kettle": the kettle, filled
            vessels = [g[2] for g in groups if isinstance(g[2], Mention) and not g[2].pronoun
                       and (g[0] == "in" or g[1] in _INTO) and any(self.affords(t, "fillable") for t in g[2].types)]
            if vessels:
                rest = [g for g in groups if g[2] is not vessels[0]]
                return self._emit(r, [(v, "isFilledWithLiquid", liquids[0], None)
                                      for v in (vessels[0], *self._fillable_also(vessels[0], r))], "fill", rest)
        if not objs:
            if raw_objects and all(m.pronoun or m.slice_ref for m in raw_objects):
                return _fail(r, f"{verb}: 'pronoun' has nothing to refer to", unknown)
            if raw_objects or unknown:
                return _fail(r, f"{verb}: object not recognised", unknown)
            return _fail(r, f"{verb}: no object named", unknown)
        value: bool | str | None  # the predicate value this verb sets
        if verb in ("turn", "on", "off"):
            value = verb == "on"
            if verb == "turn":
                toggles = [s for s in state_words if s in ("on", "off")]
                turn_dest = [g for g in groups if g[1] in ("on", "off")]
                opens = [s for s in state_words if s in V.STATE_WORDS and V.STATE_WORDS[s][0] == "isOpen"]
                if opens and not toggles:  # "flip the laptop open"
                    return self._emit(r, [(m, "isOpen", V.STATE_WORDS[opens[-1]][1], None) for m in objs], "open",
                                      groups, in_place=True)
                if toggles:
                    value = toggles[-1] == "on"
                elif turn_dest:
                    value = turn_dest[0][1] == "on"
                else:
                    return _fail(r, "turn: neither 'on' nor 'off' given", unknown)
            return self._emit(r, [(m, "isToggled", value, None) for m in objs], verb, groups, in_place=True)
        if verb in ("open", "close"):
            value = verb == "open"
            specs: list[_Spec] = []
            for m in objs:
                self._resolve(m, "openable")
                if not self.affords(m.type, "openable") and self.affords(m.type, "toggleable"):
                    specs.append((m, "isToggled", value, None))  # "open the tap"
                else:
                    specs.append((m, "isOpen", value, None))
            return self._emit(r, specs, verb, groups, in_place=True)
        if verb in V.VERB_STATES:  # one state change in place ("break the vase"): planner.vocabulary's row
            pred, value = V.VERB_STATES[verb]
            return self._emit(r, [(m, pred, value, None) for m in objs], verb, groups,
                              in_place=PREDICATES[pred].in_place)
        if verb == "slice":
            specs = []
            bases: list[str] = []
            for m in objs:
                self._resolve(m, "sliceable")
                base = self.base_of.get(m.type, m.type)
                specs.append((replace(m, types=(base,)), "isSliced", True, None))
                bases.append(base)
            self._last_sliced = tuple(bases)  # "the slices" = the pieces of everything just sliced
            pieces = [replace(m, types=(self.sliced.get(self.base_of.get(m.type, m.type), m.type),))
                      for m in objs]
            into_targets = [g[2] for g in groups if g[1] in ("into", "onto", "in to", "on to") and
                            isinstance(g[2], Mention) and not g[2].slice_ref and g[2].type]
            if into_targets:  # "crack an egg into the pan": the pieces end up there
                self._resolve(into_targets[0], "receptacle", role="target", hints=r.hints)
                specs += [(p, "inReceptacle", None, into_targets[0]) for p in pieces]
                r.last_place = into_targets[0]
            r = self._emit(r, specs, verb, [g for g in groups if g[2] not in into_targets])
            r.antecedents = pieces
            return r
        if verb == "cook":
            specs = []
            for m in objs:
                self._resolve(m, "cookable")
                specs.append((replace(m, types=(self._cooked_type(m.type),)), "isCooked", True, None))
            return self._emit(r, specs, verb, groups, appliance=True)
        if verb in ("fill", "empty"):
            # "fill the kettle up at the sink": a sink gives water, a coffee machine coffee
            station = next((_STATION_LIQUID[g[2].type] for g in groups if isinstance(g[2], Mention)
                            and g[0] in ("in", "at", "on", "from") and g[2].type in _STATION_LIQUID), True)
            fill_liquid = liquids[0] if liquids else station
            value = False if verb == "empty" else fill_liquid
            return self._emit(r, [(m, "isFilledWithLiquid", m.liquid or value if verb == "fill" else value, None)
                                  for m in objs], verb, groups, appliance=True)
        if verb == "clean":
            return self._emit(r, [(m, "isDirty", False, None) for m in objs], verb, groups, appliance=True)
        # a destination for a bring verb ("to the lounge", "into the box"; "in the kitchen" says where from)
        moves_to = any(g[2] != "me" and (g[0] == "to" or g[1] in _INTO) for g in groups)
        if verb in ("bring", "pick") and objs and all(m.liquid for m in objs) and not moves_to:
            # "get the bowl of water": the vessel, filled; "bring me a glass of water": and in hand
            specs = [(m, "isFilledWithLiquid", m.liquid, None) for m in objs]
            if any(c.kind == "me" for c in chunks):
                specs += [(m, "isHeld", True, None) for m in objs]
            return self._emit(r, specs, "fill", groups)
        if verb == "bring" and liquids and objs and not moves_to and all(
                any(self.affords(t, "fillable") for t in m.types) for m in objs):
            # "give the plant some water", "get the kettle some water": the liquid is what is brought
            return self._emit(r, [(m, "isFilledWithLiquid", liquids[0], None) for m in objs], "fill", groups)
        if verb == "hold" or (verb in ("place", "bring", "pick") and "held" in state_words):
            return self._emit(r, [(m, "isHeld", True, None) for m in objs], "hold", groups)
        if verb == "discard" or (verb == "place" and clause.words[:1] in (["throw"], ["toss"], ["chuck"])
                                 and {"away", "out"} & set(clause.words)):
            # "throw away the bread", "get rid of the cans", "toss the peel out": into a bin,
            # unless the clause names where ("throw the bread out in the kitchen bin")
            if not any(g[0] in ("on", "in", "to") and isinstance(g[2], Mention) for g in groups):
                groups = [*groups, ("in", "in", Mention(("GarbageCan",)))]
            unknown = [w for w in unknown if w not in ("away", "out")]
            verb = "place"
        if verb in ("place", "bring", "pick", "find"):
            return self._read_move(verb, objs, groups, state_words, unknown, r, last_place, chunks, clause)
        return _fail(r, f"verb class {verb!r} not handled", unknown)

    def _cooked_type(self, type_name: str) -> str:
        """What gets cooked when a person says ``type_name`` is: the thing itself where it can be
        cooked (a potato), else its piece where that can (toast is a cooked slice of bread, a fried
        egg a cracked one: THOR cooks neither whole); a type with neither stays, and the goal
        reports it as impossible rather than guessing another object."""
        piece = self.sliced.get(type_name)
        if not self.affords(type_name, "cookable") and piece is not None and self.affords(piece, "cookable"):
            return piece
        return type_name

    def _fillable_also(self, m: Mention, r: _Reading) -> list[Mention]:
        """The nouns joined to a vessel by "and" that can be filled too ("into the mug and the
        bowl"); the others are reported, not dropped."""
        out = []
        for other in m.also:
            if other.type and any(self.affords(t, "fillable") for t in other.types):
                out.append(other)
            else:
                r.ignored.append(f"'{other.type or 'that'}' cannot be filled")
        return out

    def _read_make(self, objs: list[Mention], liquids: list[str], unknown: list[str], r: _Reading) -> _Reading:
        specs: list[_Spec] = []
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

    # state descriptions (no verb) ------------------------------------------------------------------
    def _read_state(self, objs: list[Mention], groups: list[tuple[str, str, Any]], states: list[_Chunk],
                    liquids: list[str], unknown: list[str], r: _Reading, raw_objects: list[Mention],
                    chunks: list[_Chunk]) -> _Reading:
        if not objs:
            prep_at = next((k for k, c in enumerate(chunks) if c.kind == "prep" and c.value[0] in ("in", "to")), None)
            vessels = [c.value for c in chunks[prep_at + 1:] if c.kind == "np" and not c.value.pronoun] \
                if prep_at is not None else []
            if liquids and not raw_objects and vessels:  # "water in a mug and a cup"
                return self._emit(r, [(m, "isFilledWithLiquid", liquids[0], None) for m in vessels], "fill", [])
            if liquids and not raw_objects:
                vessel = Mention((V.DEFAULT_VESSEL[liquids[0]],))
                return self._emit(r, [(vessel, "isFilledWithLiquid", liquids[0], None)], "fill", [])
            if any(g[0] == "to" and isinstance(g[2], str) for g in groups):
                r.silent = True  # "to the kitchen" alone
                return r
            return _fail(r, "no verb and no known object", unknown)
        specs: list[tuple[Mention, str, Any, Mention | None]] = []
        state_words = [c.value if c.kind == "state" else "held" for c in states]
        filled = [m.liquid for m in objs if m.liquid]
        if filled and not state_words and not groups and all(self.affords(m.type, "fillable") for m in objs):
            for m in objs:  # "bowl and cup of water": the liquid is said once for the list
                m.liquid = m.liquid or filled[-1]
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
                    elif pred == "isCooked":  # "bread toasted": a slice of it
                        m = replace(m, types=(self._cooked_type(m.type),))
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
    def _emit(self, r: _Reading, specs: Sequence[_Spec], reading: str,
              groups: list[tuple[str, str, Any]], in_place: bool = False, appliance: bool = False) -> _Reading:
        """Turn (mention, predicate, value, target) into items; rooms in groups narrow or hint."""
        room_groups = [g for g in groups if isinstance(g[2], str) and g[2] not in ("there", "me")
                       and g[0] in ("in", "from", "at", "on")]
        for role, _phrase, what in groups:
            if role == "with" and isinstance(what, Mention):
                r.hints["tool"] = what.type
            elif role == "near" and isinstance(what, Mention) and what.type and not what.pronoun:
                r.hints["object_near"] = what.type  # "the lamp by the sofa": which lamp
            elif role == "from" and isinstance(what, Mention) and what.type and not what.pronoun \
                    and what.type not in _STATION_LIQUID \
                    and not (reading == "fill" and self.affords(what.type, "pickupable")):
                # "fill the mug from the dining table": which mug. Not a tap or a coffee machine
                # (read above as the station), nor "water the plant from the kettle" (the vessel)
                r.hints.setdefault("object_source", what.type)
            elif role in ("in", "at", "on") and isinstance(what, Mention) and appliance \
                    and what.type in _APPLIANCES.get(reading, frozenset()):
                r.hints["appliance"] = what.type
            elif role in ("in", "at", "on") and isinstance(what, Mention) and what.type and not what.pronoun:
                r.hints.setdefault("object_source", what.type)  # "the candle in the bin": which candle
        emitted = {id(m) for m, _, _, _ in specs}
        for _, _, what in groups:
            if isinstance(what, Mention):  # "on the table and the desk": one object, one destination
                r.ignored += [f"'{o.type}' after '{what.type}' reads as a second place; the first is kept"
                              for o in what.also if o.type and id(o) not in emitted]
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
            quantifier = m.quantifier or ("all" if m.plural and m.count is None else None)
            if quantifier:  # "all the mugs", or "the mugs" with no number: every one found
                r.hints["quantifier"] = quantifier
                if quantifier == "all":  # which of the clause's objects "all" is about
                    types = [t for t in r.hints.get("all_of", "").split(",") if t]
                    r.hints["all_of"] = ",".join(dict.fromkeys(types + [m.type]))
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


def _after_object(out: list[_Chunk]) -> bool:
    """Whether the chunks so far end with an object, or an object and its state ("the toaster on")."""
    return bool(out) and (out[-1].kind == "np" or out[-1].kind == "state" and len(out) > 1 and out[-2].kind == "np")
