"""Why each unmet checklist unit of a LongAct run was missed, from the reports alone.

A report says which checklist items are unmet (``checklist``) and, for the HoloMind planner, what
each goal asked for, how it ended and why (``extra.goals``: predicate, object type, status, a
reason from ``planner.holomind.GOAL_REASONS``, the objects it was bound to, the steps it spent).
An unmet item is traced to the goal(s) that served it (same predicate and object type, and the
target type where the item names one) and gets one cause:

- ``agent_error``: the planner raised; the run stopped there;
- ``misread``: no goal asked for it (the instruction was read without it);
- ``wrong_object``: its goal was done with an object the item does not accept;
- ``wrong_target``: its goal was done with the right object but put it on or in a receptacle the
  item does not accept ("the side table by the dresser" bound to another side table);
- ``wrong_room``: an ``inRoom`` goal was done, but where the agent put the object is not the
  named room (its own map named the rooms wrongly);
- ``done_but_unmet``: its goal was done with an object (and target) the item accepts, yet the
  condition does not hold at the end (undone later, or the action's effect did not hold);
- a failed goal's reason: ``not_found``, ``unreachable``, ``refused``, ``step_cap``,
  ``skill_failed``, ``no_recipe``, ``contradicted`` (the agent saw the condition not hold);
- ``budget_spent``: its goal was still pending, active or deferred when the episode's step budget
  ran out;
- ``unknown``: a report without goal records (another planner), or a goal state not listed here.

The checklist items' object types come from the report (``object_type``, ``target_type``) or, for
reports written before those fields, from the episode files.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

CAUSES = ("misread", "not_found", "unreachable", "refused", "wrong_object", "wrong_target", "wrong_room",
          "done_but_unmet", "contradicted", "step_cap",
          "skill_failed", "no_recipe", "budget_spent", "agent_error", "unknown")
_FAILED_REASONS = {"not_found", "unreachable", "refused", "step_cap", "skill_failed", "no_recipe", "contradicted"}
# One sentence per cause, for people (report.md's "Why unmet").
CAUSE_SENTENCES = {
    "misread": "the instruction was read without it (no goal asked for it)",
    "not_found": "nothing of the type was found",
    "unreachable": "found, but the agent found no pose that sees and reaches it",
    "refused": "the receptacle refused the object",
    "wrong_object": "done with another object of the type than the one meant",
    "wrong_target": "put on or in another receptacle than the one meant",
    "wrong_room": "put where the agent's map names that room, which is not the room",
    "done_but_unmet": "the goal ran, but the condition does not hold at the end",
    "contradicted": "the agent saw the condition not hold after its goal ran, twice",
    "step_cap": "the goal's own step allowance ran out",
    "skill_failed": "a skill failed and the retries ran out",
    "no_recipe": "the planner has no plan for this predicate",
    "budget_spent": "the episode's step budget ran out before its goal finished",
    "agent_error": "the planner stopped with an error",
    "unknown": "no goal record says why",
}
# Causes where the report calls the goal done and the checklist item is unmet.
DONE_CAUSES = ("wrong_object", "wrong_target", "wrong_room", "done_but_unmet")


@dataclass(frozen=True)
class UnmetUnit:
    """One unmet checklist item of one episode (``units`` of credit missed) and why."""

    episode_id: str
    item_index: int
    predicate: str
    object_type: str
    units: int
    cause: str
    goal_ids: tuple[str, ...] = ()
    detail: str = ""
    # For an item whose goal was reported done: what the agent's own check of the goal said
    # (planner.goal_check: verified, unverified, contradicted; "" when the report has none).
    # "verified" beside an unmet item is a disagreement with no stated reason.
    agent_check: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {"item": self.item_index, "predicate": self.predicate, "type": self.object_type,
               "units": self.units, "cause": self.cause, "goals": list(self.goal_ids), "detail": self.detail}
        if self.agent_check:
            out["agent_check"] = self.agent_check
        return out


@dataclass
class Taxonomy:
    """Units missed and steps spent per cause over a set of episodes."""

    units: Counter = field(default_factory=Counter)
    items: Counter = field(default_factory=Counter)
    done_unmet: Counter = field(default_factory=Counter)  # units of items whose goal was done, by the agent's check
    steps: Counter = field(default_factory=Counter)  # steps the goals behind each cause spent
    episodes: int = 0
    total_units: int = 0

    def add(self, unmet: list[UnmetUnit], report: dict[str, Any]) -> None:
        self.episodes += 1
        self.total_units += sum(int(i.get("units", 0)) for i in report.get("checklist", []))
        goals = _goals(report)
        counted: set[tuple[str, str]] = set()
        for u in unmet:
            self.units[u.cause] += u.units
            self.items[u.cause] += 1
            if u.cause in DONE_CAUSES:
                self.done_unmet[u.agent_check or "no check"] += u.units
            for gid in u.goal_ids:
                if (u.cause, gid) not in counted:
                    counted.add((u.cause, gid))
                    self.steps[u.cause] += int(goals.get(gid, {}).get("steps_spent", 0))


def _goals(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    goals = (report.get("extra") or {}).get("goals") or {}
    return goals if isinstance(goals, dict) else {}


def _item_types(episode: dict[str, Any] | None) -> list[tuple[str, str | None]]:
    """(object type, target type or None) per checklist item of the episode file."""
    out: list[tuple[str, str | None]] = []
    for item in (episode or {}).get("checklist", []):
        target = item.get("target") or {}
        out.append((str((item.get("object") or {}).get("type", "?")), target.get("type") if target else None))
    return out


def _serves(goal: dict[str, Any], predicate: str, object_type: str, target_type: str | None) -> bool:
    if goal.get("predicate") != predicate or goal.get("object_type") != object_type:
        return False
    return target_type is None or goal.get("target_type") in (None, target_type)


def classify_report(report: dict[str, Any], episode: dict[str, Any] | None = None) -> list[UnmetUnit]:
    """The unmet checklist items of one report, each with its cause (see the module docstring)."""
    eid = str(report.get("episode_id", "?"))
    extra = report.get("extra") or {}
    stop = str(extra.get("stop_reason", ""))
    goals = _goals(report)
    types = _item_types(episode)
    out: list[UnmetUnit] = []
    for item in report.get("checklist", []):
        missed = int(item.get("units", 0)) - int(item.get("satisfied_units", 0))
        if missed <= 0:
            continue
        idx = int(item.get("index", len(out)))
        pred = str(item.get("predicate", "?"))
        if item.get("object_type"):  # reports written since the types were added to them
            obj_type, target_type = str(item["object_type"]), (str(item["target_type"]) or None
                                                                if item.get("target_type") else None)
        else:
            obj_type, target_type = types[idx] if idx < len(types) else ("?", None)

        def unit(cause: str, gids: tuple[str, ...] = (), detail: str = "", check: str = "") -> UnmetUnit:
            return UnmetUnit(eid, idx, pred, obj_type, missed, cause, gids, detail, check)  # noqa: B023 (called within this iteration)

        if stop.startswith("agent error"):
            out.append(unit("agent_error", detail=stop[:200]))
            continue
        if not goals:
            out.append(unit("unknown", detail="the report has no goal records"))
            continue
        serving = {gid: g for gid, g in goals.items() if _serves(g, pred, obj_type, target_type)}
        if not serving:
            out.append(unit("misread", detail=f"no goal asked for {pred} of {obj_type}"))
            continue
        gids = tuple(sorted(serving))
        candidates = set(item.get("candidate_ids") or ())
        done = [g for g in serving.values() if g.get("status") == "done"]
        # "a couple of phones" half done: the unit met is the done goal's, the one missed is the
        # goal that did not finish (its reason below), not a done goal's condition undone
        met_by = set(item.get("object_ids") or ())
        undone_copies = bool(done) and len(done) < len(serving) and all(
            (g.get("bindings") or {}).get("object") in met_by for g in done)
        if done and not undone_copies:
            checks = {str((g.get("check") or {}).get("status", "")) for g in done} - {""}
            # the weakest claim among the goals that served it: any doubt stated counts as stated
            check = next((c for c in ("contradicted", "unverified", "verified") if c in checks), "")
            bound = {str(b["object"]) for g in done if (b := g.get("bindings") or {}).get("object")}
            targets = {str(b["target"]) for g in done if (b := g.get("bindings") or {}).get("target")}
            accepted = set(item.get("target_ids") or ())
            if bound and candidates and not (bound & candidates):
                out.append(unit("wrong_object", gids, f"done with {', '.join(sorted(bound))}", check))
            elif targets and accepted and not targets <= accepted:
                out.append(unit("wrong_target", gids, f"put on {', '.join(sorted(targets - accepted))}, "
                                                      f"wanted {', '.join(sorted(accepted))}", check))
            elif pred == "inRoom":
                out.append(unit("wrong_room", gids, f"put on {', '.join(sorted(targets)) or '?'}, "
                                                    "not in the named room", check))
            else:
                out.append(unit("done_but_unmet", gids, "goal done; the condition does not hold at the end", check))
            continue
        if undone_copies:
            gids = tuple(sorted(gid for gid, g in serving.items() if g.get("status") != "done"))
        failed = [g for g in serving.values() if g.get("status") == "failed"]
        if failed:
            reason = str(failed[0].get("reason", ""))
            out.append(unit(reason if reason in _FAILED_REASONS else "unknown", gids, str(failed[0].get("detail", ""))))
            continue
        if stop == "budget":
            out.append(unit("budget_spent", gids, "the episode's step budget ran out before the goal finished"))
            continue
        if stop == "planning passes":  # as many Pass steps as the step budget: planning bounded too
            out.append(unit("budget_spent", gids, "the episode's Pass steps ran out before the goal finished"))
            continue
        statuses = ", ".join(sorted({str(g.get("status")) for g in serving.values()}))
        out.append(unit("unknown", gids, f"goal status {statuses}, stop reason {stop}"))
    return out


def format_taxonomy(tax: Taxonomy) -> str:
    """A table: cause, unmet items, units missed (share of all units), steps its goals spent."""
    lines = [f"{tax.episodes} episodes, {tax.total_units} checklist units, "
             f"{sum(tax.units.values())} missed",
             f"{'cause':<16} {'items':>6} {'units':>6} {'share':>7} {'goal steps':>11}"]
    for cause in sorted(tax.units, key=lambda c: (-tax.units[c], c)):
        share = tax.units[cause] / tax.total_units if tax.total_units else 0.0
        lines.append(f"{cause:<16} {tax.items[cause]:>6} {tax.units[cause]:>6} {share:>7.1%} {tax.steps[cause]:>11}")
    if tax.done_unmet:
        parts = ", ".join(f"{k} {v}" for k, v in sorted(tax.done_unmet.items()))
        lines.append(f"units unmet although their goal was reported done: {sum(tax.done_unmet.values())} "
                     f"(the agent's own check: {parts}; 'verified' and 'no check' are disagreements with no stated reason)")
    return "\n".join(lines)
