"""ALFRED/LongAct actions -> ai2thor 5.0 ``Controller.step`` calls.

One table instead of ad-hoc dicts, because the two vocabularies differ in ways that silently
break a run: ai2thor 5.0's ``PutObject`` takes the RECEPTACLE as ``objectId`` (ALFRED's 2.1.0
took the held object plus ``receptacleObjectId``), moves and turns need explicit magnitudes so
the step size does not depend on the build's defaults, and ALFRED's ``Stop`` is THOR's ``Done``.
Actions outside the vocabulary (``DropHandObject``, ...) pass through unchanged so a backend
extra needs no code here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from household.interactions import INTERACTIONS
from household.types import Action

MOVES = ("MoveAhead", "MoveBack", "MoveLeft", "MoveRight")
TURNS = ("RotateLeft", "RotateRight")
LOOKS = ("LookUp", "LookDown")
# Object actions and the fixed arguments ai2thor 5.0 documents for them (the interaction table's
# ``thor_args``, household.interactions).
OBJECT_ACTIONS: dict[str, dict[str, Any]] = {i.action: dict(i.thor_args) for i in INTERACTIONS}
# Controller.step raises ValueError for these errorCodes instead of returning a failed event.
RAISING_ERROR_CODES = ("InvalidAction", "MissingArguments", "AmbiguousAction", "InvalidArgument")


class ActionError(ValueError):
    """The action cannot be expressed as a THOR call (e.g. an object action without a target);
    the backend turns it into a failed step without asking THOR."""


@dataclass(frozen=True)
class StepSizes:
    """Magnitudes sent with every move, turn and look (metres / degrees)."""

    move: float = 0.25
    rotate: float = 30.0
    look: float = 30.0


def to_thor_call(action: Action, sizes: StepSizes) -> dict[str, Any]:
    """The ``Controller.step`` dict for one action. ``action.args`` override the defaults
    (e.g. ``forceAction=True``) and are otherwise passed through."""
    name = action.name
    args = dict(action.args)
    if name in MOVES:
        call: dict[str, Any] = {"action": name, "moveMagnitude": float(args.pop("moveMagnitude", sizes.move))}
    elif name in TURNS:
        call = {"action": name, "degrees": float(args.pop("degrees", sizes.rotate))}
    elif name in LOOKS:
        call = {"action": name, "degrees": float(args.pop("degrees", sizes.look))}
    elif name in OBJECT_ACTIONS:
        target = action.object_id
        if name == "PutObject" and "receptacleObjectId" in args:
            target = args.pop("receptacleObjectId")  # ALFRED / ai2thor 2.1 spelling
        if not target:
            what = "the receptacle id" if name == "PutObject" else "an objectId"
            raise ActionError(f"{name} needs {what}")
        call = {"action": name, "objectId": str(target), **OBJECT_ACTIONS[name]}
    elif name == "Stop":
        call = {"action": "Done"}
    else:
        call = {"action": name}
        if action.object_id is not None:
            call["objectId"] = action.object_id
    call.update(args)
    return call
