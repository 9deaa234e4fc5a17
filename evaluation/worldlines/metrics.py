"""WorldLines metrics: answer accuracy, Judge/Perfect, Session Any@5, Event R@5 and the planning probe.

- Accuracy: structured answers compared exactly after normalisation (case, spaces, a trailing
  full stop). Hidden-state questions also require the right uncertainty: the answer's status
  must be one of the sample's ``accept_status`` ("unknown" for never-perceived things; a
  not-fresh status with the last perceived value for things changed out of view).
- Judge / Perfect: a 0-3 rubric judge (a ``Judge``) when a model is configured; Judge is the mean
  score / 3, Perfect the share of 3s. Without a model they are reported as None.
- Event R@5: share of a question's gold evidence events cited by the top-5 records.
- Session Any@5: 1 if any top-5 record comes from a session holding gold evidence.
- Planning: State consistency (remembered constraint values equal the truth), Precondition
  validity (the plan runs on the true world, every step's preconditions met, checked by the
  executor), Memory use (constraints the memory supplied a value for and the plan used) and
  Action order (LCS of the plan's actions with the reference, over the reference length).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from evaluation.worldlines.baselines import MemoryAnswer
from evaluation.worldlines.samples import PlanSample, QASample
from evaluation.worldlines.world import HouseWorld


class Judge(Protocol):
    def score(self, question: str, reference: str | None, answer: str | None) -> int: ...


def normalise(value: str | None) -> str:
    return " ".join(str(value).strip().lower().rstrip(".").split()) if value is not None else ""


def qa_correct(sample: QASample, ans: MemoryAnswer) -> bool:
    if sample.accept_status is not None:
        if ans.status not in sample.accept_status:
            return False
        return sample.answer is None or normalise(ans.value) == normalise(sample.answer)
    return ans.value is not None and normalise(ans.value) == normalise(sample.answer)


def event_recall(sample: QASample, ans: MemoryAnswer, k: int = 5) -> float | None:
    if not sample.evidence or ans.records is None:
        return None
    got = {eid for ids, _ in ans.records[:k] for eid in ids}
    return sum(e in got for e in sample.evidence) / len(sample.evidence)


def session_any(sample: QASample, ans: MemoryAnswer, k: int = 5) -> float | None:
    if not sample.sessions or ans.records is None:
        return None
    return float(any(s in sample.sessions for _, s in ans.records[:k]))


def plan_with_memory(sample: PlanSample, ask: Callable[[str], MemoryAnswer], containers: set[str],
                     room_of: dict[str, str]) -> tuple[list[list[str]], dict[str, str | None]]:
    """A deterministic fetch-and-place plan built from what the memory answers."""
    loc = ask(f"Where is {sample.object} now?").value
    used: dict[str, str | None] = {f"{sample.object}.location": loc}
    if loc is None or loc not in room_of:
        return [], used
    steps = [["navigate_to", room_of[loc]]]
    if loc in containers:
        state = ask(f"Is {loc} open or closed now?").value
        used[f"{loc}.open"] = state
        steps += [["open", loc], ["pick", sample.object], ["close", loc]] if state != "open" else [["pick", sample.object]]
    else:
        steps.append(["pick", sample.object])
    steps += [["navigate_to", room_of[sample.destination]], ["place", sample.destination, sample.object]]
    return steps, used


def execute_plan(world: HouseWorld, steps: list[list[str]], actor: str = "robot") -> bool:
    """Run a plan on (a copy of) the true world; True if every step's preconditions held."""
    w = world.copy()
    for step in steps:
        args = {"object": step[2]} if len(step) > 2 else {}
        if not w.execute(actor, step[0], step[1], args).success:
            return False
    return bool(steps)


def lcs_ratio(plan: list[list[str]], ref: list[list[str]]) -> float:
    a, b = [tuple(s) for s in plan], [tuple(s) for s in ref]
    dp = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a)):
        for j in range(len(b)):
            dp[i + 1][j + 1] = dp[i][j] + 1 if a[i] == b[j] else max(dp[i][j + 1], dp[i + 1][j])
    return dp[-1][-1] / len(b) if b else 0.0


@dataclass
class PlanScore:
    state_consistency: float
    precondition_validity: float
    memory_use: float
    action_order: float


def score_plan(sample: PlanSample, steps: list[list[str]], used: dict[str, str | None], world: HouseWorld) -> PlanScore:
    truth = {f"{e}.{a}": v for e, a, v in sample.constraints}
    consistent = sum(used.get(k) == v for k, v in truth.items()) / len(truth)
    planned = {tuple(s[:2]) for s in steps}
    uses = 0
    for e, a, _v in sample.constraints:
        if used.get(f"{e}.{a}") is None:
            continue
        if a == "location":
            uses += ("pick", e) in planned
        elif a == "open":
            uses += (("open", e) in planned) == (used[f"{e}.{a}"] == "closed")
    return PlanScore(consistent, float(execute_plan(world, steps)), uses / len(sample.constraints),
                     lcs_ratio(steps, sample.reference_plan))


def mean(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None
