"""One JSON schema (plus a semantic validator) per planner role, built from the agent's context.

Why per-context schemas: the vocabulary is closed (object types from ``context.object_types``,
predicates from ``household.checklist.PREDICATES``, skills from ``planner.roles.SKILLS``) and the
only object ids a role may name are those in the agent's memory (``context.known_objects``).
Putting them in ``enum``s lets providers with constrained decoding (OpenAI json_schema, vLLM,
llama.cpp grammars) make invented names impossible, and lets ``jsonschema`` flag them everywhere
else, so a hallucinated id becomes a validation failure that triggers a repair prompt rather
than an action on a nonexistent object.

The JSON schema cannot say everything (which predicates need a target, which args each skill
takes, whether a bound object has the right type), so each role also has a validator returning
human-readable problems, which the client quotes in its repair prompt. Schemas are built
deterministically (sorted enums) because they are part of the response-cache key.
"""

from __future__ import annotations

from typing import Any

from household.interactions import INTERACTIONS
from planner.plan_checks import binding_problems, plan_problems, type_fits
from household.checklist import LIQUIDS, PREDICATES, ChecklistItem, ChecklistSchemaError
from planner.goal_hints import HINT_KEYS
from planner.language.states import default_flags, state_refusal
from planner.roles import SKILLS, Goal, Grounding, PlannerContext

# Per skill: (required args, optional args). Mirrors the comments on planner.roles.SKILLS.
SKILL_ARGS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "navigate_to": (frozenset({"object_id"}), frozenset()),
    "search": (frozenset({"object_type"}), frozenset({"room"})),
    "inspect": (frozenset({"object_id"}), frozenset()),
    **{i.skill: (frozenset(i.skill_args), frozenset()) for i in INTERACTIONS},  # household.interactions
    "put_down": (frozenset(), frozenset()),
}
assert set(SKILL_ARGS) == set(SKILLS), "SKILL_ARGS must cover planner.roles.SKILLS exactly"

BINDING_ROLES: tuple[str, ...] = ("object", "target", "tool")
VERDICTS: tuple[str, ...] = ("pass", "refine", "replan")
REPLAN_LEVELS: tuple[str, ...] = ("low", "high")
_GOAL_ID = {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,32}$"}


# --------------------------------------------------------------------------- vocabulary


def object_types(context: PlannerContext) -> list[str]:
    return sorted(set(context.object_types))


def known_ids(context: PlannerContext) -> list[str]:
    return sorted({o.object_id for o in context.known_objects})


def _string_enum(values: list[str]) -> dict[str, Any]:
    """An enum over the vocabulary; an empty vocabulary admits any non-empty string (a context
    without an asset database should not make every answer invalid)."""
    return {"type": "string", "enum": values} if values else {"type": "string", "minLength": 1}


# Bounds on what a role may write. A constrained decoder (llama.cpp's grammar) only stops a small
# model that loops when the schema makes the loop impossible: on the GPU benchmark of the 0.5B model
# (README "A local model") 32 of 90 decompositions ran on inside one string until the token cap and
# were cut off. Bounded strings and arrays (llama.cpp's grammar honours maxLength and maxItems) make
# every string and list end; the bounds are far above what a household instruction needs (the
# longest checklist in our sets has 12 items).
MAX_GOALS = 24
MAX_ITEMS_PER_GOAL = 8
MAX_TEXT_CHARS = 200
MAX_NAME_CHARS = 48  # a room type or room id
MAX_HINTS = 16  # the parser writes at most 4 a goal; the agent adds count_of, distinct_group, ...
MAX_HINT_CHARS = 500  # other_goal_types lists every other goal's type
MAX_COUNT = 50
MAX_SUBGOALS = 16


def _name() -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS}


def _selector(types: list[str], ids: list[str], with_count: bool) -> dict[str, Any]:
    props: dict[str, Any] = {"type": _string_enum(types), "room": _name()}
    if ids:  # no known objects: an id field would have no valid value, so it is not offered
        props["id"] = {"type": "string", "enum": ids}
    if with_count:
        props["count"] = {"type": "integer", "minimum": 1, "maximum": MAX_COUNT}
    return {"type": "object", "properties": props, "required": ["type"], "additionalProperties": False}


def _value_schema(kind: str) -> dict[str, Any]:
    """An item's value by its predicate's kind; null (omitted) means true, except for a room."""
    if kind == "liquid":
        return {"enum": [True, False, *LIQUIDS, None]}
    if kind == "room":
        return _name()
    return {"type": ["boolean", "null"]}


def _item(types: list[str], ids: list[str]) -> dict[str, Any]:
    """One checklist item, one alternative per kind of predicate (needs a target or not; value
    true/false, a liquid or a room), so the schema itself holds the rules ``item_problems`` checks:
    a decoder held to it cannot give inRoom a target or leave inReceptacle without one."""
    kinds: dict[tuple[bool, str], list[str]] = {}
    for name in sorted(PREDICATES):
        p = PREDICATES[name]
        kinds.setdefault((p.needs_target, p.value_kind), []).append(name)
    alternatives = []
    for (needs_target, kind), names in sorted(kinds.items()):
        props: dict[str, Any] = {"object": _selector(types, ids, with_count=True),
                                 "predicate": {"type": "string", "enum": names}}
        required = ["object", "predicate"]
        if needs_target:
            props["target"] = _selector(types, ids, with_count=False)
            required.append("target")
        props["value"] = _value_schema(kind)
        if kind == "room":
            required.append("value")
        alternatives.append({"type": "object", "properties": props, "required": required,
                             "additionalProperties": False})
    return alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}


def _hints() -> dict[str, Any]:
    """A goal's hints: only the known keys (``planner.goal_hints.HINT_KEYS``), each a bounded
    string. Named properties, not free names: llama.cpp's grammar ignores ``propertyNames``, so
    with free names a small model could write a hint name without end."""
    return {"type": "object", "maxProperties": MAX_HINTS,
            "properties": {k.name: {"type": "string", "maxLength": MAX_HINT_CHARS} for k in HINT_KEYS},
            "additionalProperties": False}


def _goal(types: list[str], ids: list[str], goal_id: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "id": goal_id,
            "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS},
            "items": {"type": "array", "minItems": 1, "maxItems": MAX_ITEMS_PER_GOAL, "items": _item(types, ids)},
            "hints": _hints(),
        },
        "required": ["id", "text", "items"],
        "additionalProperties": False,
    }


def _subgoal(types: list[str], ids: list[str]) -> dict[str, Any]:
    args: dict[str, Any] = {"object_type": _string_enum(types), "room": _name(),
                            "liquid": {"type": "string", "enum": list(LIQUIDS)}}
    if ids:
        args["object_id"] = {"type": "string", "enum": ids}
        args["receptacle_id"] = {"type": "string", "enum": ids}
    return {
        "type": "object",
        "properties": {
            "skill": {"type": "string", "enum": list(SKILLS)},
            "args": {"type": "object", "properties": args, "additionalProperties": False},
        },
        "required": ["skill", "args"],
        "additionalProperties": False,
    }


# --------------------------------------------------------------------------- schemas


def decompose_schema(context: PlannerContext) -> dict[str, Any]:
    """{"goals": [Goal]} in execution order (dependencies first)."""
    types, ids = object_types(context), known_ids(context)
    return {
        "type": "object",
        "properties": {"goals": {"type": "array", "minItems": 1, "maxItems": MAX_GOALS,
                                 "items": _goal(types, ids, _GOAL_ID)}},
        "required": ["goals"],
        "additionalProperties": False,
    }


def refine_schema(goal: Goal, context: PlannerContext) -> dict[str, Any]:
    """The same Goal record, same id, made self-contained against memory."""
    return _goal(object_types(context), known_ids(context), {"type": "string", "enum": [goal.id]})


def excluded_ids(context: PlannerContext) -> set[str]:
    """Ids the grounder must not bind (they serve finished goals or failed twice)."""
    return set(getattr(context, "excluded_ids", None) or ())


def ground_schema(context: PlannerContext, goal: Goal | None = None) -> dict[str, Any]:
    """{"bindings": {role: known id or null}}; "object" is required, target/tool optional.
    Excluded ids are left out of the enum so constrained decoders cannot pick them; with the
    goal, each role lists only the ids whose type fits it (null: "not seen yet"), so a decoder
    held to the schema cannot bind a credit card to a vase goal."""
    excluded = excluded_ids(context)
    ids = [i for i in known_ids(context) if i not in excluded]
    types = _types_by_id(context)
    wanted: dict[str, set[str]] = {}
    if goal is not None:
        wanted = {"object": {i.object.type for i in goal.items},
                  "target": {i.target.type for i in goal.items if i.target is not None}}

    def binding(role: str) -> dict[str, Any]:
        fitting = [i for i in ids if not wanted.get(role) or type_fits(types.get(i, ""), wanted[role])]
        if not fitting:
            return {"type": "null"}
        return {"anyOf": [{"type": "string", "enum": fitting}, {"type": "null"}]}

    return {
        "type": "object",
        "properties": {
            "bindings": {
                "type": "object",
                "properties": {r: binding(r) for r in BINDING_ROLES},
                "required": ["object"],
                "additionalProperties": False,
            }
        },
        "required": ["bindings"],
        "additionalProperties": False,
    }


def translate_schema(context: PlannerContext) -> dict[str, Any]:
    """{"subgoals": [{"skill", "args"}]}; may be empty when the goal already holds."""
    types, ids = object_types(context), known_ids(context)
    return {
        "type": "object",
        "properties": {"subgoals": {"type": "array", "maxItems": MAX_SUBGOALS, "items": _subgoal(types, ids)}},
        "required": ["subgoals"],
        "additionalProperties": False,
    }


def critique_schema(context: PlannerContext) -> dict[str, Any]:
    """CriticDecision: verdict, one-sentence diagnosis, fix subgoals (refine), replan level."""
    types, ids = object_types(context), known_ids(context)
    return {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": list(VERDICTS)},
            "diagnosis": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS},
            "fix": {"type": "array", "maxItems": MAX_SUBGOALS, "items": _subgoal(types, ids)},
            "replan_level": {"type": "string", "enum": list(REPLAN_LEVELS)},
        },
        "required": ["verdict", "diagnosis"],
        "additionalProperties": False,
    }


# --------------------------------------------------------------------------- semantic validators


def item_problems(items: Any, where: str) -> list[str]:
    """The checklist rules, for answers no decoder held to the schema (which states the target and
    value rules too, but not id vs count), with messages a repair prompt can quote; and, as the
    parser refuses them, states the asset database says the object cannot take
    (``planner.language.states``: "the dining table clean" is met before the robot moves)."""
    out: list[str] = []
    for i, raw in enumerate(items or ()):
        try:
            item = ChecklistItem.from_dict(raw)
        except ChecklistSchemaError as exc:
            out.append(f"at {where}[{i}].{exc.field}: {exc.message}" if exc.field else f"at {where}[{i}]: {exc}")
            continue
        refusal = state_refusal(default_flags(), item)
        if refusal is not None:  # the parser's rule too: a state the object cannot take is no goal
            out.append(f"at {where}[{i}].predicate: the asset database says {refusal}: no "
                       f"{item.object.type} can be {item.predicate} {item.expected!r}; leave the item out")
    return out


def validate_decompose(value: dict[str, Any], context: PlannerContext) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for g, goal in enumerate(value.get("goals", ())):
        if goal["id"] in seen:
            out.append(f"at $.goals[{g}].id: duplicate goal id {goal['id']!r}")
        seen.add(goal["id"])
        out += item_problems(goal.get("items"), f"$.goals[{g}].items")
    return out


def _types_by_id(context: PlannerContext) -> dict[str, str]:
    return {o.object_id: o.object_type for o in context.known_objects}


def validate_refine(value: dict[str, Any], goal: Goal, context: PlannerContext) -> list[str]:
    """Checklist rules, and the refined goal is this goal: the same predicates, and every pinned
    id an object of the type the goal's item asks for (planner.plan_checks)."""
    out = item_problems(value.get("items"), "$.items")
    if out:
        return out
    refined = list(value.get("items") or ())
    got, want = sorted(str(i.get("predicate")) for i in refined), sorted(i.predicate for i in goal.items)
    if got != want:
        out.append(f"at $.items: the refined goal has predicates {got}, the goal {want}: refine this goal, "
                   "not another")
    types = _types_by_id(context)
    for k, raw in enumerate(refined):
        pins = {"object": (raw.get("object") or {}).get("id"), "target": (raw.get("target") or {}).get("id")}
        out += binding_problems(pins, goal.items, types, f"$.items[{k}]")
    return out


def validate_ground(value: dict[str, Any], goal: Goal, context: PlannerContext) -> list[str]:
    excluded = excluded_ids(context)
    out: list[str] = []
    pins: dict[str, str | None] = {}
    for role, object_id in value.get("bindings", {}).items():
        if object_id is not None and object_id in excluded:
            out.append(f"at $.bindings.{role}: {object_id!r} is excluded (finished goal or failed twice); "
                       "bind another object or null")
        else:
            pins[role] = object_id
    return out + binding_problems(pins, goal.items, _types_by_id(context), "$.bindings")


def subgoal_problems(subgoals: Any, where: str, context: PlannerContext) -> list[str]:
    """Each skill's required/allowed args (SKILL_ARGS) and that ids exist in memory."""
    ids = set(known_ids(context))
    out: list[str] = []
    for i, sg in enumerate(subgoals or ()):
        required, optional = SKILL_ARGS[sg["skill"]]
        args = sg.get("args", {})
        missing = sorted(required - set(args))
        extra = sorted(set(args) - required - optional)
        if missing:
            out.append(f"at {where}[{i}].args: skill {sg['skill']!r} needs {missing}")
        if extra:
            out.append(f"at {where}[{i}].args: skill {sg['skill']!r} takes no {extra}")
        for key in ("object_id", "receptacle_id"):
            if key in args and args[key] not in ids:
                out.append(f"at {where}[{i}].args.{key}: {args[key]!r} is not an object id in the agent's memory")
    return out


def validate_translate(value: dict[str, Any], goal: Goal, grounding: Grounding, context: PlannerContext) -> list[str]:
    """Each skill's args, and the plan has the interaction the goal's predicate needs."""
    out = subgoal_problems(value.get("subgoals"), "$.subgoals", context)
    return out or plan_problems(value.get("subgoals") or (), goal.items, grounding.bindings)


def validate_critique(value: dict[str, Any], context: PlannerContext) -> list[str]:
    return subgoal_problems(value.get("fix"), "$.fix", context)
