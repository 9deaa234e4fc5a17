"""The ExecuteSkill robot contract as data: atomic ALFRED/LongAct actions <-> skill goals.

Why this module: the planner thinks in atomic actions (``MoveAhead``, ``PickupObject``, ...) and
the in-process evaluation scores exactly those, while a robot implements a few skills
(``worldmind_interfaces/action/ExecuteSkill``: navigate_to, move, rotate, look, posture, stop, and one
skill per object interaction of ``household.interactions``: pick, place, open, close, toggle,
slice, pour, break). One bijective mapping, written once and free of rclpy, keeps the
planner node, the simulator adapter and the tests on the same contract: an action sent as a
skill goal and executed by the adapter is the action the in-process run executes, so step counts
and GC stay equal.

Public API
----------
- ``SKILLS``: the skill names (the ExecuteSkill constants' values); ``OBJECT_SKILLS`` need an
  ``object_id``.
- ``SkillGoal`` (frozen dataclass): the goal's fields without rclpy.
- ``SkillError(ValueError)``: an unknown skill or action, a missing object id, a bad direction;
  its message names the field.
- ``goal_for_action(action, object_id=None, args=None, step=-1, request_id="")``: the goal that
  performs one atomic action.
- ``action_for_goal(goal) -> (action, object_id, args)``: the inverse (what the simulator
  adapter executes). ``navigate_to`` has no atomic equivalent: it raises SkillError saying so.
- ``goal_to_msg(goal, Goal)`` / ``goal_from_msg(msg)``: to and from the generated
  ``ExecuteSkill.Goal`` class (passed in, so this module never imports ROS packages).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from household.interactions import BY_ACTION, INTERACTIONS, ROBOT_OBJECT_SKILLS

# The object skills come from the interaction table (household.interactions): an interaction
# declared there is a robot skill here, and the ExecuteSkill.action constants must list it
# (tests/test_interaction_table.py reads the .action file).
OBJECT_SKILLS = ROBOT_OBJECT_SKILLS
SKILLS = ("navigate_to", "move", "rotate", "look", "posture") + OBJECT_SKILLS + ("wait", "stop")
DEFAULT_DEGREES = 30.0

# atomic action -> (skill, direction, on)
_ATOMIC: dict[str, tuple[str, str, bool]] = {
    "MoveAhead": ("move", "ahead", False), "MoveBack": ("move", "back", False),
    "MoveLeft": ("move", "left", False), "MoveRight": ("move", "right", False),
    "RotateLeft": ("rotate", "left", False), "RotateRight": ("rotate", "right", False),
    "LookUp": ("look", "up", False), "LookDown": ("look", "down", False),
    "Crouch": ("posture", "crouch", False), "Stand": ("posture", "stand", False),
    **{i.action: (i.robot_skill, "", i.robot_on) for i in INTERACTIONS},
    "Pass": ("wait", "", False),
    "Stop": ("stop", "", False),
}
_BY_SKILL: dict[tuple[str, str, bool], str] = {v: k for k, v in _ATOMIC.items()}
DIRECTIONS = {"move": ("ahead", "back", "left", "right"), "rotate": ("left", "right"), "look": ("up", "down"),
              "posture": ("crouch", "stand")}


class SkillError(ValueError):
    """A skill goal or action that cannot be executed; ``field`` names what is wrong."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"field '{field}': {problem}")
        self.field = field
        self.problem = problem


@dataclass(frozen=True)
class SkillGoal:
    skill: str
    object_id: str = ""
    direction: str = ""
    amount: float = 0.0  # metres (move) or degrees (rotate, look); 0: the robot's default
    on: bool = False
    liquid: str = ""  # pour: THOR's fillLiquid (water, coffee, wine)
    request_id: str = ""
    step: int = -1
    target_frame: str = ""  # navigate_to by pose: target_pose.header.frame_id ("" = by object)
    target_xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    target_quat_xyzw: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)

    def validate(self) -> "SkillGoal":
        """Raise SkillError naming the field when the goal cannot be executed by any robot."""
        if self.skill not in SKILLS:
            raise SkillError("skill", f"unknown skill {self.skill!r} (skills: {', '.join(SKILLS)})")
        if self.skill in OBJECT_SKILLS and not self.object_id:
            raise SkillError("object_id", f"skill {self.skill!r} needs an object_id")
        if self.skill in DIRECTIONS and self.direction not in DIRECTIONS[self.skill]:
            raise SkillError("direction", f"skill {self.skill!r} takes direction "
                                          f"{' | '.join(DIRECTIONS[self.skill])}, got {self.direction!r}")
        if self.skill == "navigate_to" and not (self.object_id or self.target_frame):
            raise SkillError("target_pose", "navigate_to needs an object_id or a target_pose with a frame_id")
        if self.amount < 0 or self.amount != self.amount:
            raise SkillError("amount", f"must be >= 0, got {self.amount!r}")
        if self.skill == "pour" and not self.liquid:
            raise SkillError("liquid", "skill 'pour' needs the liquid (water, coffee, wine)")
        return self


def _passes(action: str) -> tuple[str, ...]:
    """The Action.args keys an interaction carries (the table's ``passes``); none for the rest."""
    row = BY_ACTION.get(action)
    return row.passes if row is not None else ()


def goal_for_action(action: str, object_id: str | None = None, args: Mapping[str, Any] | None = None,
                    step: int = -1, request_id: str = "") -> SkillGoal:
    """The skill goal that performs one atomic action (``args.degrees`` / ``args.metres`` set the amount)."""
    if action not in _ATOMIC:
        raise SkillError("skill", f"unknown action {action!r} (actions: {', '.join(_ATOMIC)})")
    skill, direction, on = _ATOMIC[action]
    args = dict(args or {})
    amount = float(args.get("degrees", args.get("metres", 0.0)) or 0.0)
    return SkillGoal(skill=skill, object_id=object_id or "", direction=direction, amount=amount, on=on,
                     liquid=str(args.get("fillLiquid", "")) if "fillLiquid" in _passes(action) else "",
                     request_id=request_id, step=step).validate()


def action_for_goal(goal: SkillGoal) -> tuple[str, str | None, dict[str, Any]]:
    """(atomic action, object id or None, args) executing ``goal``; SkillError if it has none."""
    goal.validate()
    if goal.skill == "navigate_to":
        raise SkillError("skill", "navigate_to has no atomic equivalent here: this robot executes the "
                                  "planner's moves (move/rotate/look); a Nav2 adapter implements it")
    on = goal.on if goal.skill == "toggle" else False
    action = _BY_SKILL[(goal.skill, goal.direction if goal.skill in DIRECTIONS else "", on)]
    args: dict[str, Any] = {}
    if goal.amount and goal.skill in ("rotate", "look") and goal.amount != DEFAULT_DEGREES:
        args["degrees"] = goal.amount
    if "fillLiquid" in _passes(action):
        args["fillLiquid"] = goal.liquid
    return action, (goal.object_id or None), args


def goal_to_msg(goal: SkillGoal, goal_cls: Any) -> Any:
    """An ``ExecuteSkill.Goal`` (the class is passed in) carrying ``goal``."""
    msg = goal_cls()
    msg.skill, msg.object_id, msg.direction = goal.skill, goal.object_id, goal.direction
    msg.amount, msg.on, msg.request_id, msg.step = float(goal.amount), bool(goal.on), goal.request_id, int(goal.step)
    msg.liquid = goal.liquid
    msg.target_pose.header.frame_id = goal.target_frame
    p, q = msg.target_pose.pose.position, msg.target_pose.pose.orientation
    p.x, p.y, p.z = (float(v) for v in goal.target_xyz)
    q.x, q.y, q.z, q.w = (float(v) for v in goal.target_quat_xyzw)
    return msg


def goal_from_msg(msg: Any) -> SkillGoal:
    """The SkillGoal an ``ExecuteSkill.Goal`` carries (not validated: call ``validate()``)."""
    p, q = msg.target_pose.pose.position, msg.target_pose.pose.orientation
    return SkillGoal(skill=str(msg.skill), object_id=str(msg.object_id), direction=str(msg.direction),
                     amount=float(msg.amount), on=bool(msg.on), liquid=str(getattr(msg, "liquid", "")),
                     request_id=str(msg.request_id), step=int(msg.step),
                     target_frame=str(msg.target_pose.header.frame_id), target_xyz=(p.x, p.y, p.z),
                     target_quat_xyzw=(q.x, q.y, q.z, q.w))
