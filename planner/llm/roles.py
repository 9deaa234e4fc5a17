"""LLM implementations of the planner roles (``planner.roles`` Protocols).

Each role builds a compact prompt (vocabulary, the agent's memory summary from PlannerContext,
one worked example), asks ``LLMClient.call_json`` with its role schema and validator, converts
the JSON into the role's record, and on ``LLMRoleError`` (the client's bounded repairs are spent)
hands the same call to ``fallback``, an object implementing the same Protocol (normally the
deterministic implementation; it is passed in, never imported, so the two stay independent).
Each fallback is recorded, with its reason, on the role (``fallback_log``) and in the client's
``usage()``, and every used answer as a model decision (``planner.llm.attribution``), so that
reports show how often the model was actually used.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, TypeVar

from household.checklist import PREDICATES, ChecklistItem, sliced_base_type
from household.interactions import INTERACTIONS
from planner.critic import situation_of
from planner.deterministic import VESSELS, tool_types
from planner.llm import schemas
from planner.llm.client import LLMClient, LLMRoleError
from planner.roles import (
    SKILLS,
    CriticDecision,
    CriticEvent,
    Critic,
    Decomposer,
    Goal,
    Grounding,
    GroundingRole,
    PlannerContext,
    Refiner,
    Subgoal,
    Translator,
)

T = TypeVar("T")

_SKILL_HELP = {
    "navigate_to": "object_id", "search": "object_type, room?", "inspect": "object_id",
    **{i.skill: ", ".join(i.skill_args) + (f" ({i.note})" if i.note else "") for i in INTERACTIONS},
    "put_down": "no args",
}


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------- prompt pieces


def goal_types(goal: Goal) -> set[str]:
    """The object types a goal can involve: its objects and targets (and what a sliced type is cut
    from), the tools its recipe picks up, and the vessels that carry water. Why: a small model
    reads a 100-object memory listing badly (the 0.5B grounder bound a Bowl for a Watch listed
    further down) and pays ~2,000 prompt tokens for it; the roles that work on one goal list only
    the objects these types cover (the schema and the checks still admit every remembered id)."""
    out: set[str] = set()
    for item in goal.items:
        for sel in (item.object, item.target):
            if sel is None:
                continue
            out.add(sel.type)
            base = sliced_base_type(sel.type)
            if base:
                out.add(base)
        out.update(tool_types(item))
        if item.predicate == "isFilledWithLiquid":
            out.update(VESSELS)
    return out


def vocabulary_text(context: PlannerContext, *, types: bool | set[str] = True, predicates: bool = False,
                    skills: bool = False) -> str:
    """The closed vocabulary a role may use, one line each; ``types`` as a set lists only those
    (the goal's), True the whole asset database."""
    lines: list[str] = []
    if isinstance(types, set):
        lines.append("Object types (this goal's): " + (", ".join(sorted(types)) or "(any)"))
    elif types:
        lines.append("Object types: " + (", ".join(schemas.object_types(context)) or "(any)"))
    if predicates:
        parts = []
        for name in sorted(PREDICATES):
            p = PREDICATES[name]
            kind = {"bool": "value true/false (default true)", "liquid": "value true/false/water/coffee/wine",
                    "room": "value = room type"}[p.value_kind]
            parts.append(f"{name} ({kind}{', needs target' if p.needs_target else ''})")
        lines.append("Predicates: " + "; ".join(parts))
    if skills:
        lines.append("Skills (args): " + "; ".join(f"{s}({_SKILL_HELP[s]})" for s in SKILLS))
    return "\n".join(lines)


def memory_summary(context: PlannerContext, max_objects: int = 80, max_history: int = 12, *,
                   types: set[str] | None = None, ids: set[str] | frozenset[str] = frozenset(),
                   list_objects: bool = True, per_type: int = 8) -> str:
    """What the agent knows (never ground truth), newest first, capped so prompts stay small.
    ``types``/``ids``: list only the objects of those types or ids (and the held one), saying how
    many others are known, at most ``per_type`` of each type (the nearest, else the most recently
    seen); ``list_objects=False``: only their number (the decomposer works on types)."""
    held = f"{context.held_object_id} ({context.held_object_type})" if context.held_object_id else "nothing"
    lines = [f"Agent memory at step {context.step}:", f"held: {held}",
             "rooms seen: " + (", ".join(context.rooms_seen) or "none")]
    pos = getattr(context, "agent_position", None)
    if pos is not None:
        lines.append(f"agent at x={pos[0]:.1f} y={pos[1]:.1f}")
    objs = sorted(context.known_objects, key=lambda o: (-o.last_seen_step, o.object_id))
    header = "id | type | room | state" + (" | distance" if pos is not None else "")
    total = len(objs)
    if not list_objects:
        lines.append(f"known objects: {total} (not listed)" if objs else "known objects: none")
        objs = []
    elif types is not None:
        must = set(ids) | ({context.held_object_id} if context.held_object_id else set())
        ranked = sorted(objs, key=lambda o: (math.dist(pos[:2], o.position[:2]) if pos is not None else 0.0,
                                             -o.last_seen_step, o.object_id))
        taken: dict[str, int] = {}
        keep: list[Any] = []
        for o in ranked:
            if o.object_id in must or (o.object_type in types and taken.get(o.object_type, 0) < per_type):
                keep.append(o)
                taken[o.object_type] = taken.get(o.object_type, 0) + (o.object_id not in must)
        candidates = sum(1 for o in objs if o.object_type in types or o.object_id in must)
        more = f"; {candidates - len(keep)} farther ones of these types not listed" if candidates > len(keep) else ""
        objs = keep
        lines.append(f"known objects of the goal's types ({len(objs)} of {total}{more}; {header}):" if objs
                     else f"known objects of the goal's types: none (of {total} known)")
    else:
        lines.append(f"known objects ({total}; {header}):" if objs else "known objects: none")
    for o in objs[:max_objects]:
        state = ",".join(f"{k}={_dumps(v)}" for k, v in sorted(o.state.items()) if isinstance(v, (bool, str, int)))
        row = f"- {o.object_id} | {o.object_type} | {o.room or '?'} | {state or '-'}"
        if pos is not None:
            row += f" | {math.dist(pos[:2], o.position[:2]):.1f}m"
        lines.append(row)
    if len(objs) > max_objects:
        lines.append(f"- ... {len(objs) - max_objects} older objects not listed")
    if context.history:
        lines.append("done (newest last): " + "; ".join(context.history[-max_history:]))
    if context.experience:
        lines.append("lessons: " + "; ".join(context.experience[-max_history:]))
    return "\n".join(lines)


_DECOMPOSE_EXAMPLE = (
    'Instruction: "Put a clean mug in the coffee machine and turn it on."\n'
    'Answer: {"goals":[{"id":"g1","text":"put a clean mug in the coffee machine","items":['
    '{"object":{"type":"Mug"},"predicate":"isDirty","value":false},'
    '{"object":{"type":"Mug"},"predicate":"inReceptacle","target":{"type":"CoffeeMachine"}}]},'
    '{"id":"g2","text":"turn it on","items":['
    '{"object":{"type":"CoffeeMachine"},"predicate":"isToggled","value":true}]}]}'
)
_REFINE_EXAMPLE = (
    'Goal: {"id":"g2","text":"turn it on","items":[{"object":{"type":"CoffeeMachine"},"predicate":"isToggled"}]} '
    'with memory "CoffeeMachine|1|2 | CoffeeMachine | Kitchen" and done "place Mug|3 in CoffeeMachine|1|2"\n'
    'Answer: {"id":"g2","text":"turn on the coffee machine CoffeeMachine|1|2 in the kitchen","items":['
    '{"object":{"type":"CoffeeMachine","id":"CoffeeMachine|1|2"},"predicate":"isToggled","value":true}],'
    '"hints":{"object_room":"Kitchen"}}'
)
_GROUND_EXAMPLE = (
    'Goal: a Mug inReceptacle a Sink; memory lists "Mug|1|2 | Mug | Kitchen" and no Sink\n'
    'Answer: {"bindings":{"object":"Mug|1|2","target":null}}'
)
_TRANSLATE_EXAMPLE = (
    'Goal: a Mug inReceptacle a Sink; bindings {"object":"Mug|1|2","target":null}; hand empty\n'
    'Answer: {"subgoals":[{"skill":"navigate_to","args":{"object_id":"Mug|1|2"}},'
    '{"skill":"pick","args":{"object_id":"Mug|1|2"}},{"skill":"search","args":{"object_type":"Sink"}}]}'
)
_CRITIQUE_EXAMPLE = (
    'Event: action PickupObject for pick(Mug|1|2) failed, error "hand is full", note "held: Apple|4|1"\n'
    'Answer: {"verdict":"refine","diagnosis":"The hand already held Apple|4|1, so the pick failed.",'
    '"fix":[{"skill":"put_down","args":{}}],"replan_level":"low"}'
)


def _system(role_text: str, vocabulary: str, example: str) -> str:
    return (f"You are the {role_text} of a household robot's planner. Use only the names and object ids "
            f"listed here; never invent an object id.\n{vocabulary}\nExample (the vocabulary in your task may "
            f"differ):\n{example}")


# --------------------------------------------------------------------------- roles


class _LLMRole:
    """Shared plumbing: call the model, convert, else fall back and record why."""

    role_name = ""

    def __init__(self, client: LLMClient, fallback: Any | None = None) -> None:
        self.client = client
        self.fallback = fallback
        self.fallback_log: list[dict[str, Any]] = []  # {"role", "kind", "reason", "step"}

    def _summary(self, context: PlannerContext, **select: Any) -> str:
        cfg = self.client.config
        return memory_summary(context, cfg.max_objects_in_prompt, cfg.max_history_in_prompt,
                              per_type=cfg.max_objects_per_type, **select)

    def _run(self, context: PlannerContext, messages: list[dict[str, str]], schema: dict[str, Any],
             validate: Callable[[Any], list[str]], convert: Callable[[Any], T],
             fallback_call: Callable[[Any], T]) -> T:
        try:
            value = self.client.call_json(self.role_name, messages, schema, validate)
            out = convert(value)
        except LLMRoleError as exc:
            return self._fall_back(context, exc.kind, str(exc), exc, fallback_call)
        except (ValueError, KeyError, TypeError) as exc:  # validated JSON that still would not convert
            err = LLMRoleError(self.role_name, "semantic", f"could not convert the answer: {exc}", 0)
            return self._fall_back(context, "semantic", str(err), err, fallback_call)
        self.client.record_decision(self.role_name)  # the model's answer is what the agent uses
        return out

    def _fall_back(self, context: PlannerContext, kind: str, reason: str, exc: LLMRoleError,
                   fallback_call: Callable[[Any], T]) -> T:
        self.fallback_log.append({"role": self.role_name, "kind": kind, "reason": reason, "step": context.step})
        if self.fallback is None:
            raise exc
        self.client.record_fallback(self.role_name, f"[{kind}] {reason}", kind)
        return fallback_call(self.fallback)


def _goal_from(value: dict[str, Any]) -> Goal:
    return Goal(id=str(value["id"]), text=str(value["text"]),
                items=tuple(ChecklistItem.from_dict(i) for i in value["items"]),
                hints={str(k): str(v) for k, v in (value.get("hints") or {}).items()})


def _subgoals_from(raw: list[dict[str, Any]], goal_id: str) -> list[Subgoal]:
    return [Subgoal(skill=sg["skill"], args=dict(sg.get("args") or {}), goal_id=goal_id) for sg in raw]


class LLMDecomposer(_LLMRole):
    """Instruction -> ordered goals in the checklist vocabulary (Decomposer)."""

    role_name = "decompose"

    def __init__(self, client: LLMClient, fallback: Decomposer | None = None) -> None:
        super().__init__(client, fallback)

    def messages(self, instruction: str, context: PlannerContext) -> list[dict[str, str]]:
        system = _system(
            "task decomposer",
            vocabulary_text(context, types=True, predicates=True)
            + "\nSplit the instruction into goals in execution order (what another goal needs comes first). "
              "Each goal lists checklist items that must be true when it is done; use the hint "
              '"object_room" when the instruction says where to find the object.',
            _DECOMPOSE_EXAMPLE)
        user = f"{self._summary(context, list_objects=False)}\n\nInstruction: {instruction!r}"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def decompose(self, instruction: str, context: PlannerContext) -> list[Goal]:
        return self._run(context, self.messages(instruction, context), schemas.decompose_schema(context),
                         lambda v: schemas.validate_decompose(v, context),
                         lambda v: [_goal_from(g) for g in v["goals"]],
                         lambda f: f.decompose(instruction, context))


class LLMRefiner(_LLMRole):
    """Goal -> the same goal made self-contained against memory (Refiner)."""

    role_name = "refine"

    def __init__(self, client: LLMClient, fallback: Refiner | None = None) -> None:
        super().__init__(client, fallback)

    def messages(self, goal: Goal, context: PlannerContext) -> list[dict[str, str]]:
        system = _system(
            "goal refiner",
            vocabulary_text(context, types=goal_types(goal), predicates=True)
            + "\nRewrite the goal so it is self-contained given the memory: resolve references (it, them, "
              "there) to object types or remembered ids, apply the lessons, add hints such as object_room. "
              "Keep the goal id and do not add unrelated items.",
            _REFINE_EXAMPLE)
        user = f"{self._summary(context, types=goal_types(goal))}\n\nGoal: {_dumps(goal.to_dict())}"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def refine(self, goal: Goal, context: PlannerContext) -> Goal:
        return self._run(context, self.messages(goal, context), schemas.refine_schema(goal, context),
                         lambda v: schemas.validate_refine(v, goal, context), _goal_from,
                         lambda f: f.refine(goal, context))


class LLMGrounder(_LLMRole):
    """Goal -> which remembered objects play its roles (GroundingRole)."""

    role_name = "ground"

    def __init__(self, client: LLMClient, fallback: GroundingRole | None = None) -> None:
        super().__init__(client, fallback)

    def messages(self, goal: Goal, context: PlannerContext) -> list[dict[str, str]]:
        system = _system(
            "object grounder",
            "Binding roles: object (what the goal acts on), target (the receptacle of inReceptacle), tool "
            "(e.g. a knife for slicing). Bind each to an object id from the memory whose type fits, "
            "preferring the hinted room and nearby, recently seen objects; use null when no remembered object fits.",
            _GROUND_EXAMPLE)
        user = f"{self._summary(context, types=goal_types(goal))}\n\nGoal: {_dumps(goal.to_dict())}"
        excluded = sorted(schemas.excluded_ids(context))
        if excluded:
            user += "\nDo not bind (finished goals or failed twice): " + ", ".join(excluded)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def ground(self, goal: Goal, context: PlannerContext) -> Grounding:
        def convert(v: dict[str, Any]) -> Grounding:
            bindings = {r: v["bindings"].get(r) for r in schemas.BINDING_ROLES if r in v["bindings"]}
            return Grounding(goal_id=goal.id, bindings=bindings)

        return self._run(context, self.messages(goal, context), schemas.ground_schema(context, goal),
                         lambda v: schemas.validate_ground(v, goal, context), convert,
                         lambda f: f.ground(goal, context))


class LLMTranslator(_LLMRole):
    """Goal + grounding -> skill calls (Translator)."""

    role_name = "translate"

    def __init__(self, client: LLMClient, fallback: Translator | None = None) -> None:
        super().__init__(client, fallback)

    def messages(self, goal: Goal, grounding: Grounding, context: PlannerContext) -> list[dict[str, str]]:
        system = _system(
            "skill planner",
            vocabulary_text(context, types=goal_types(goal), skills=True)
            + "\nTurn the goal into skill calls on the bound objects. If a needed object is unbound (null), end "
              "with a search for its type (you will be asked again once it is found). Free the hand before "
              "picking something else. An empty list means the goal already holds.",
            _TRANSLATE_EXAMPLE)
        bound = {v for v in grounding.bindings.values() if isinstance(v, str)}
        user = (f"{self._summary(context, types=goal_types(goal), ids=bound)}\n\nGoal: {_dumps(goal.to_dict())}\n"
                f"Bindings: {_dumps(grounding.bindings)}")
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def translate(self, goal: Goal, grounding: Grounding, context: PlannerContext) -> list[Subgoal]:
        return self._run(context, self.messages(goal, grounding, context), schemas.translate_schema(context),
                         lambda v: schemas.validate_translate(v, goal, grounding, context),
                         lambda v: _subgoals_from(v["subgoals"], goal.id),
                         lambda f: f.translate(goal, grounding, context))


def _event_selection(event: CriticEvent, context: PlannerContext) -> dict[str, Any]:
    """The objects a critic needs for one event: those its subgoal names (by id or type) and the
    types of those, so a fix can name another instance (the held object is always listed)."""
    args = dict(event.subgoal.args) if event.subgoal is not None else {}
    ids = {str(v) for k, v in args.items() if k in ("object_id", "receptacle_id") and v}
    types = {str(args["object_type"])} if args.get("object_type") else set()
    types |= {o.object_type for o in context.known_objects if o.object_id in ids}
    return {"types": types, "ids": ids}


class LLMCritic(_LLMRole):
    """Action or subgoal feedback -> pass / refine (with a local fix) / replan (Critic)."""

    role_name = "critique"

    def __init__(self, client: LLMClient, fallback: Critic | None = None) -> None:
        super().__init__(client, fallback)

    def messages(self, event: CriticEvent, context: PlannerContext) -> list[dict[str, str]]:
        system = _system(
            "critic",
            vocabulary_text(context, types=True, skills=True)
            + "\nJudge the event: pass if it succeeded or the failure does not matter; refine with fix skill "
              "calls for a local repair (another viewpoint, free the hand, open a container) before a retry; "
              "replan when the plan is wrong (low: the subgoals of this goal, high: the goals). The diagnosis "
              "is one sentence a later run can learn from.",
            _CRITIQUE_EXAMPLE)
        ev = {"kind": event.kind, "subgoal": event.subgoal.to_dict() if event.subgoal else None,
              "action": event.action, "success": event.success, "error": event.error, "note": event.context_note}
        user = f"{self._summary(context, **_event_selection(event, context))}\n\nEvent: {_dumps(ev)}"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def critique(self, event: CriticEvent, context: PlannerContext) -> CriticDecision:
        goal_id = event.subgoal.goal_id if event.subgoal is not None else ""

        def convert(v: dict[str, Any]) -> CriticDecision:
            verdict = v["verdict"]
            fix = tuple(_subgoals_from(v.get("fix") or [], goal_id)) if verdict == "refine" else ()
            # The model's words are kept for people; the situation the agent acts on is read from the
            # feedback itself (planner.critic.situation_of), so free text cannot switch it off.
            return CriticDecision(verdict=verdict, diagnosis=str(v["diagnosis"]), fix=fix,
                                  replan_level=v.get("replan_level", "low"), situation=situation_of(event))

        return self._run(context, self.messages(event, context), schemas.critique_schema(context),
                         lambda v: schemas.validate_critique(v, context), convert,
                         lambda f: f.critique(event, context))
