"""The hints a goal carries beside its propositions, read once into typed fields.

Why a module: a goal's hints (``planner.roles.Goal.hints``) are text, ``{"object_room":
"Bathroom"}``, because they travel as text (reports, LLM prompts and their JSON schemas, parsed
instructions). The planner reads them in many places; with string keys a misspelt key read as
absent and a number or list was parsed again at each reader. Here every known key is written
once, as a field of the frozen ``GoalHints`` with its meaning and how its text is read (listed as
``HINT_KEYS``), and a goal's hints are read into one ``GoalHints`` when the goal is made
(``Goal.typed_hints``).

Writers (the instruction parser, an LLM decomposer, ``planner.goal_dag``) still write text. A key
not in the table is kept in ``Goal.hints`` and ignored here; a known key whose text cannot be read
("count_of": "lots") is left at its default, as if absent: a hint an LLM role wrote wrongly is
ignored, never fatal. Adding a hint: one field of ``GoalHints``, made with ``_hint``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, Literal, Mapping

Relation = Literal["object_near", "object_source"]  # stands by the anchor / stands on or in it


@dataclass(frozen=True)
class CountOf:
    """Which object of a counted group a goal serves: ``index`` of ``total`` ("2/3"), or of
    however many the agent finds (``total`` None: "2/all", "all the eggs")."""

    index: int
    total: int | None

    @classmethod
    def parse(cls, text: str) -> "CountOf":
        """From the hint's text form ("2/3", "1/all"); ValueError naming the hint otherwise."""
        head, _, tail = text.partition("/")
        try:
            index = int(head)
            total = None if tail == "all" else int(tail)
        except ValueError:
            raise ValueError(f"goal hint count_of: expected 'k/n' or 'k/all', got {text!r}") from None
        if index < 1 or (total is not None and index > total):
            raise ValueError(f"goal hint count_of: {text!r} is out of range")
        return cls(index, total)

    def __str__(self) -> str:
        return f"{self.index}/{'all' if self.total is None else self.total}"


def _text(value: str) -> str:
    return value  # kept as written ("" too: a key present with no text is not a key absent)


def _types(value: str) -> tuple[str, ...]:
    """A comma-separated list of object types ("Cup,Plate"), empty entries dropped."""
    return tuple(t for t in value.split(",") if t)


def _hint(meaning: str, parse: Callable[[str], Any] = _text, default: Any = None) -> Any:
    """A field of ``GoalHints``: a hint key, what it means, how its text is read."""
    return field(default=default, metadata={"meaning": meaning, "parse": parse})


# Hints that make a goal one of several the instruction counts ("two mugs", "both", "all the eggs").
_COUNTING = ("count_of", "quantifier", "distinct_group")


@dataclass(frozen=True)
class GoalHints:
    """A goal's hints, typed; None or empty where the goal has none. Each field is a known key
    (``HINT_KEYS``), the text it is read from given under the same name in ``Goal.hints``."""

    object_room: str | None = _hint("the room the object is taken from ('the towel from the bathroom'): "
                                    "which one, and where to look first")
    object_source: str | None = _hint("the furniture type the object stands on or in ('the mug from the table')")
    object_near: str | None = _hint("the furniture type the object stands by ('the lamp by the sofa')")
    target_near: str | None = _hint("the furniture type the target stands by ('on the dresser by the bed')")
    target_location: str | None = _hint("the furniture type the target stands on ('in the mug on the desk')")
    quantifier: str | None = _hint("how the instruction counts the object ('all', 'one of')")
    all_of: tuple[str, ...] = _hint("the object types an 'all' phrase is about ('all the mugs and cups')", _types, ())
    distinct_group: str | None = _hint("copies of one counted item share it: each binds a different object")
    count_of: CountOf | None = _hint("which of the group this copy is: 'k/n', or 'k/all' for 'all the X'",
                                     CountOf.parse)
    other_goal_types: tuple[str, ...] = _hint("the types the other goals are about (a borrowed vessel avoids "
                                              "them)", _types, ())
    object_alternatives: tuple[str, ...] = _hint("other types the object's noun may name, tried when none of "
                                                 "the first is known", _types, ())
    target_alternatives: tuple[str, ...] = _hint("other types the target's noun may name", _types, ())
    tool: str | None = _hint("the type named as the tool ('with the knife')")
    appliance: str | None = _hint("the appliance type named for the action ('in the microwave')")
    category: str | None = _hint("the category word the object came from ('the dishes')")
    grounded: str | None = _hint("how a noun phrase the vocabulary lacks was matched to a type")
    inferred: str | None = _hint("the routine that inferred the goal (not said in the instruction)")
    basis: str | None = _hint("what an inferred goal rests on (the statistics file)")
    # Not a key: set when a counting hint is given, readable or not (the description is meant
    # to fit several: "two mugs", "both", "all the eggs").
    counted: bool = False

    @classmethod
    def parse(cls, hints: Mapping[str, str]) -> "GoalHints":
        values: dict[str, Any] = {}
        for key in _keys():
            if key.name in hints:
                try:
                    values[key.name] = key.parse(hints[key.name])
                except ValueError:
                    pass  # unreadable: as if absent (see the module docstring)
        return cls(**values, counted=any(k in hints for k in _COUNTING))

    def relations(self, role: Literal["object", "target"]) -> tuple[tuple[Relation, str], ...]:
        """The furniture the instruction relates the role to, as (relation, anchor type) in the
        order a grounder tries them: by it first, then on or in it. The target's "by the bed" and
        "on the desk" are the same relations as the object's."""
        pairs: tuple[tuple[Relation, str | None], ...] = (
            (("object_near", self.object_near), ("object_source", self.object_source)) if role == "object"
            else (("object_near", self.target_near), ("object_source", self.target_location)))
        return tuple((relation, anchor) for relation, anchor in pairs if anchor)


@dataclass(frozen=True)
class HintKey:
    name: str
    meaning: str
    parse: Callable[[str], Any]


def _keys() -> tuple[HintKey, ...]:
    return tuple(HintKey(f.name, f.metadata["meaning"], f.metadata["parse"]) for f in fields(GoalHints) if f.metadata)


# The known hint keys, from the fields of ``GoalHints`` (name, meaning, how the text is read).
HINT_KEYS = _keys()

