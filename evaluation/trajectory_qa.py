"""EMemBench-style questions about the agent's OWN trajectory, with deterministic answers.

The runner's ``EpisodeResult`` keeps the agent path and the GC timeline, not which object each
step acted on, so ``record_trajectory`` re-runs an episode with ``RecordingAgent`` wrapped around
the agent (the oracle by default) on the embedded simulator and keeps a ``TrajectoryLog``: per
step the action, object id and type, success, the agent's room, the held object type and time.

``generate_trajectory_qa`` turns a log into questions in EMemBench's seven abilities (single-hop,
multi-hop, induction, spatial, temporal, logical, adversarial), up to ``per_ability`` each so
abilities are balanced. Query-horizon control: with ``horizon=h`` only steps 1..h are used, both
to pick what to ask and to compute the answer, so episode length does not confound difficulty.
Adversarial questions ask about an object type the agent never touched within the horizon; the
answer is "not answerable" (answerability control).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from household.types import Action, point_in_polygon

ABILITIES = ("single_hop", "multi_hop", "induction", "spatial", "temporal", "logical", "adversarial")
NOT_ANSWERABLE = "not answerable"
SECONDS_PER_STEP = 1.0


@dataclass
class TrajectoryStep:
    step: int
    action: str
    object_id: str | None
    object_type: str | None
    success: bool
    room: str | None
    held: str | None  # type of the held object after the step
    time: float


@dataclass
class TrajectoryLog:
    episode_id: str
    house: str
    steps: list[TrajectoryStep] = field(default_factory=list)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"episode_id": self.episode_id, "house": self.house}) + "\n" +
                              "".join(json.dumps(asdict(s)) + "\n" for s in self.steps))

    @classmethod
    def load(cls, path: str | Path) -> "TrajectoryLog":
        lines = Path(path).read_text().splitlines()
        head = json.loads(lines[0])
        return cls(head["episode_id"], head["house"], [TrajectoryStep(**json.loads(x)) for x in lines[1:] if x.strip()])


class RecordingAgent:
    """Wraps an agent; records each action's outcome when the next observation arrives."""

    def __init__(self, agent: Any, env: Any) -> None:
        self.agent, self.env = agent, env
        self.name = getattr(agent, "name", "agent")
        self.log: TrajectoryLog | None = None
        self._last: Action | None = None

    def reset(self, episode: Any, observation: Any) -> None:
        self.agent.reset(episode, observation)
        self.log = TrajectoryLog(str(getattr(episode, "id", "")), str(getattr(self.env.layout, "house_id", "")))
        self._last = None

    def _room(self) -> str | None:
        pose = self.env.pose
        for r in self.env.layout.rooms:
            if point_in_polygon(pose.x, pose.z, list(r.polygon)):
                return r.room_type
        return None

    def _record(self, success: bool, held: str | None) -> None:
        if self._last is None or self.log is None:
            return
        obj = self.env.table.objects.get(self._last.object_id) if self._last.object_id else None
        n = len(self.log.steps) + 1
        self.log.steps.append(TrajectoryStep(n, self._last.name, self._last.object_id, obj.type if obj else None,
                                             bool(success), self._room(), held, n * SECONDS_PER_STEP))

    def act(self, observation: Any) -> Action:
        self._record(observation.feedback.success, observation.agent.held_object_type)
        action = self.agent.act(observation)
        self._last = action if action.name != "Stop" else None
        return action

    def finish(self) -> TrajectoryLog:
        """Record the last action (the runner ends without another observation)."""
        if self._last is not None and self.log is not None:
            meta = self.env.metadata()  # the simulator's last-action feedback is that step's outcome
            held = meta["inventoryObjects"][0]["objectType"] if meta["inventoryObjects"] else None
            self._record(meta["lastActionSuccess"], held)
            self._last = None
        assert self.log is not None
        return self.log


def record_trajectory(episode: Any, *, max_steps: int | None = None) -> TrajectoryLog:
    """Run ``episode`` with the oracle on the embedded simulator (no rendering) and log it."""
    from evaluation.runner import run_episode
    from privileged.oracle import OraclePlanner
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    rec = RecordingAgent(OraclePlanner(env), env)
    run_episode(env, rec, episode, max_steps=max_steps)
    return rec.finish()


@dataclass
class TrajectoryQuestion:
    ability: str
    question: str
    answer: str
    horizon: int  # steps 1..horizon were used
    evidence_steps: list[int]


def _interactions(steps: list[TrajectoryStep]) -> list[TrajectoryStep]:
    return [s for s in steps if s.object_type and s.success]


def generate_trajectory_qa(log: TrajectoryLog, *, horizon: int | None = None, per_ability: int = 3,
                           seed: int = 0) -> list[TrajectoryQuestion]:
    steps = log.steps[:horizon] if horizon else list(log.steps)
    h = len(steps)
    rng = random.Random(f"tqa:{log.episode_id}:{horizon}:{seed}")
    inter = _interactions(steps)
    picks = [s for s in inter if s.action == "PickupObject"]
    cands: dict[str, list[TrajectoryQuestion]] = {a: [] for a in ABILITIES}

    def q(ability: str, text: str, answer: Any, ev: list[int]) -> None:
        cands[ability].append(TrajectoryQuestion(ability, text, str(answer), h, ev))

    for s in inter:
        q("single_hop", f"Which object type did the agent act on with {s.action} at step {s.step}?", s.object_type, [s.step])
    for _i, p in enumerate(picks):
        if sum(x.object_type == p.object_type for x in picks) == 1:
            q("multi_hop", f"In which room was the agent when it picked up the {p.object_type}?", p.room, [p.step])
            after = [s for s in inter if s.step > p.step]
            if after:
                q("temporal", f"What action did the agent perform on an object right after picking up the "
                  f"{p.object_type}?", after[0].action, [p.step, after[0].step])
            q("logical", f"Was the agent holding something right before it picked up the {p.object_type}?",
              "yes" if p.step > 1 and steps[p.step - 2].held else "no", [p.step - 1, p.step] if p.step > 1 else [p.step])
    counts = Counter(s.action for s in inter)
    for action, n in sorted(counts.items()):
        q("induction", f"How many successful {action} actions did the agent perform?", n,
          [s.step for s in inter if s.action == action])
    fails = [s for s in steps if not s.success]
    q("logical", "Did any of the agent's actions fail?", "yes" if fails else "no", [s.step for s in fails[:5]])
    rooms: list[str] = []
    for s in steps:
        if s.room and (not rooms or rooms[-1] != s.room):
            rooms.append(s.room)
    if rooms:
        q("spatial", "Which room type was the agent in at the start of the episode?", rooms[0], [steps[0].step])
        q("spatial", "How many room changes did the agent make?", len(rooms) - 1, [])
        q("spatial", "Which room type was the agent in at the end of the period asked about?", rooms[-1], [steps[-1].step])
    for a, b in zip(inter, inter[1:]):
        if a.object_type != b.object_type and Counter(x.object_type for x in inter)[a.object_type] == 1 \
                and Counter(x.object_type for x in inter)[b.object_type] == 1:
            first, second, ans = (a, b, "yes") if rng.random() < 0.5 else (b, a, "no")
            q("temporal", f"Did the agent interact with the {first.object_type} before the {second.object_type}?", ans,
              [a.step, b.step])
    touched = {s.object_type for s in inter}
    # _interactions keeps only steps with an object type
    later = sorted({cast(str, s.object_type) for s in _interactions(log.steps[h:]) if s.object_type not in touched})
    pool = later + sorted({"Television", "Toaster", "Kettle", "Plunger", "Safe", "Statue"} - touched)
    for t in pool[:per_ability + 2]:
        q("adversarial", f"In which room did the agent interact with the {t}?", NOT_ANSWERABLE, [])
    out: list[TrajectoryQuestion] = []
    for ability in ABILITIES:
        got = cands[ability]
        out += rng.sample(got, min(per_ability, len(got)))
    return out


def score_trajectory_answers(questions: list[TrajectoryQuestion], answers: list[str | None]) -> dict[str, float]:
    """Exact-match accuracy per ability (normalised) and overall."""
    per: dict[str, list[bool]] = {}
    for qn, a in zip(questions, answers):
        ok = a is not None and " ".join(str(a).lower().split()) == " ".join(qn.answer.lower().split())
        per.setdefault(qn.ability, []).append(ok)
    out = {k: sum(v) / len(v) for k, v in per.items()}
    allv = [x for v in per.values() for x in v]
    out["overall"] = sum(allv) / len(allv) if allv else 0.0
    return out
