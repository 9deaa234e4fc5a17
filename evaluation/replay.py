"""``replay_bag``: play a recorded bag through perception -> spatial memory -> belief tracker, as
fast as possible and deterministically, and score what the bag lets us score.

Deterministic: frames are processed in stamp order, one at a time, with the hash text encoder by
default (no model weights, no randomness); the same bag gives the same replay.json (apart from
timings). Nothing waits for a clock: the point of a replay is to be much faster than real time.

What is scored (each only when the bag carries what it needs):
- ``memory``: the spatial memory at the end against the last recorded ground truth
  (/worldmind/ground_truth, evaluation only), with ``evaluation.memory_metrics`` (precision,
  recall of objects perception kept in a frame, centroid error, duplicates, text-query top-1/5).
  The ground-truth box centre is the THOR axis-aligned box centre of the recorded metadata.
- ``belief_qa``: WorldLines-style "where is mug_1 now?", "is fridge_1 open or closed now?",
  "is desklamp_1 on or off now?" about the objects the robot acted on, answered by the belief
  tracker (fed with the agent's recorded belief updates plus events derived from the recorded
  action feedback) and checked against the final ground truth. Entities are named
  ``<type>_<n>`` in order of first appearance (the tracker's entity form).
- ``trajectory_qa``: EMemBench-style questions generated from the replayed trajectory
  (``evaluation.trajectory_qa``); scored only when an ``answerer`` is given (no answerer of
  trajectory questions exists in the repo yet), else the questions and gold answers are written.

Outputs (atomic writes): ``replay.json`` (machine) and ``replay.md`` (people) in ``out_dir``; on a
truncated or corrupt bag the results of everything read before the damage are written, with the
error, and the ``BagReadError`` is re-raised. A bag that is not a whole recording (no
metadata.yaml, fewer messages than it states, an interrupted recording: ``bag_integrity``) is
replayed as far as it goes, with ``partial`` true and the reasons in ``partial_reasons``.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from household.frames import thor_to_ros_points
from household.text import printable
from sim_bridge.replay.bag import NS, BagReader, BagReadError, EventItem, FrameItem
from sim_bridge.ros import payloads
from household.types import WorldState
from memory.belief.effects import action_effects

Progress = Callable[[str], None]
Answerer = Callable[[str], "str | None"]
ROBOT = "robot"


@dataclass
class ReplayConfig:
    voxel_size: float = 0.05
    text_encoder: str = "hash"
    match_distance: float = 0.5
    duplicate_distance: float = 1.0
    per_ability: int = 3  # trajectory-QA questions per ability
    horizon: int | None = None  # trajectory-QA query horizon (steps)
    progress_every_s: float = 2.0


@dataclass
class StageTimes:
    read_s: float = 0.0  # bag read + CDR decode + conversion to Observations
    perception_s: float = 0.0
    memory_s: float = 0.0
    belief_s: float = 0.0


class EntityNames:
    """Simulator object ids -> the belief tracker's entity form ``<type>_<n>``, in order of first use."""

    def __init__(self) -> None:
        self.of: dict[str, str] = {}
        self._count: Counter = Counter()

    def __call__(self, object_id: str, object_type: str) -> str:
        if object_id not in self.of:
            base = re.sub(r"[^a-z0-9]", "", object_type.lower()) or "object"
            if not base[0].isalpha():
                base = "o" + base
            self._count[base] += 1
            self.of[object_id] = f"{base}_{self._count[base]}"
        return self.of[object_id]


def gt_objects(world: WorldState) -> list[Any]:
    """``memory_metrics.GTObject``s from recorded THOR-shaped metadata (REP 103)."""
    from evaluation.memory_metrics import GTObject

    types = {o["objectId"]: o["objectType"] for o in world.objects}
    out = []
    for o in world.objects:
        if o.get("isActive") is False or o.get("isPickedUp"):
            continue
        aabb = o.get("axisAlignedBoundingBox") or {}
        c = aabb.get("center") or o["position"]
        center = thor_to_ros_points(np.array([c["x"], c["y"], c["z"]]))
        p = o["position"]
        position = thor_to_ros_points(np.array([p["x"], p["y"], p["z"]]))
        corners = np.asarray((o.get("objectOrientedBoundingBox") or {}).get("cornerPoints") or
                             aabb.get("cornerPoints") or [[c["x"], c["y"], c["z"]]] * 4, dtype=float)
        ros = thor_to_ros_points(corners)
        low = ros[np.argsort(ros[:, 2])[:4]][:, :2]
        order = np.argsort(np.arctan2(low[:, 1] - low[:, 1].mean(), low[:, 0] - low[:, 0].mean()))
        room = world.room_of_point(p["x"], p["z"])
        parents = o.get("parentReceptacles") or []
        out.append(GTObject(o["objectId"], o["objectType"], center, position, low[order],
                            room.id if room else None, room.room_type if room else None,
                            types.get(parents[0]) if parents else None, bool(o.get("pickupable"))))
    return out


class _Replay:
    def __init__(self, cfg: ReplayConfig, answerer: Answerer | None) -> None:
        from memory.belief.tracker import BeliefTracker
        from memory.pipeline import MemoryPipeline
        from memory.spatial.memory import MemoryConfig
        from perception.encoders import make_encoders

        self.cfg = cfg
        self.answerer = answerer
        encoders = make_encoders(cfg.text_encoder)
        self.pipeline = MemoryPipeline.build(encoders, MemoryConfig(voxel_size=cfg.voxel_size))
        self.memory = self.pipeline.memory
        self.tracker = BeliefTracker(self_name=ROBOT)
        self.names = EntityNames()
        self.times = StageTimes()
        self.visible: set[str] = set()
        self.type_of: dict[str, str] = {}  # object id -> type, from label tables the robot saw
        self.frames = 0
        self.skipped_frames: list[str] = []
        self.world: WorldState | None = None
        self.events: Counter = Counter()
        self.belief_rejected: list[str] = []
        self.belief_events = 0
        self.last_plan: dict[str, Any] | None = None
        self.trajectory: list[dict[str, Any]] = []  # per action: step, action, object_id, success, held, stamp
        self.room_at: list[str | None] = []
        self.first_stamp: int | None = None
        self.last_stamp: int | None = None

    def t_of(self, stamp: int) -> float:
        return (stamp - (self.first_stamp or stamp)) / NS

    # ---- frames ---------------------------------------------------------------------------------
    def frame(self, item: FrameItem) -> None:
        obs = item.observation
        self.first_stamp = item.stamp_ns if self.first_stamp is None else self.first_stamp
        self.last_stamp = item.stamp_ns
        for lab in obs.id_to_label.values():
            self.type_of.setdefault(lab.object_id, lab.object_type)
        result = self.pipeline.process(obs)
        if result.skipped:
            self.skipped_frames.append(f"frame {self.frames} (step {obs.step}): {'; '.join(result.report.warnings)}")
        else:
            self.visible.update(result.seen)
            self.times.perception_s += result.perception_s
            self.times.memory_s += result.memory_s
        self.frames += 1
        fb = obs.feedback
        if self.frames > 1 and fb.action:
            self.trajectory.append({"step": len(self.trajectory) + 1, "action": fb.action,
                                    "object_id": item.action_object_id, "success": bool(fb.success),
                                    "held": obs.agent.held_object_type, "stamp_ns": item.stamp_ns,
                                    "position": list(obs.agent.position)})
            t0 = time.perf_counter()
            self._derive_event(self.trajectory[-1], obs)
            self.times.belief_s += time.perf_counter() - t0

    def _derive_event(self, step: dict[str, Any], obs: Any) -> None:
        """The robot's own successful interaction as a belief event (it perceived its own act)."""
        oid = step["object_id"]
        if not step["success"] or not oid:
            return
        typ = self.type_of.get(oid) or (oid.split("|")[0] if "|" in oid else oid)
        ent = self.names(oid, typ)
        action = step["action"]
        held = self.names(*self._held_before) if self._held_before else None
        effects = [list(atom) for atom in action_effects(action, ent, held, ROBOT)]
        event = {"id": f"replay-step-{step['step']}", "t": self.t_of(step["stamp_ns"]), "actor": ROBOT,
                 "kind": "action", "action": action, "target": ent, "observers": [ROBOT],
                 "text": f"robot {action} {ent}"}
        if effects:
            event["effects"] = effects
        self._ingest([event])

    _held_before: tuple[str, str] | None = None

    def track_held(self, obs: Any) -> None:
        a = obs.agent
        self._held_before = (a.held_object_id, a.held_object_type) if a.held_object_id else None

    def _ingest(self, events: list[dict[str, Any]]) -> None:
        t0 = time.perf_counter()
        report = self.tracker.ingest(events)
        self.times.belief_s += time.perf_counter() - t0
        self.belief_events += len(report.acknowledged)
        self.belief_rejected += report.rejected

    # ---- side channel ---------------------------------------------------------------------------
    def event(self, item: EventItem) -> None:
        self.events[item.kind] += 1
        if item.kind == "ground_truth":
            self.world = payloads.world_state_from_payload(item.data)
        elif item.kind == "belief_update":
            self._ingest(list(item.data["events"]))
        elif item.kind == "goal_dag":
            self.last_plan = item.data

    # ---- scoring --------------------------------------------------------------------------------
    def score_memory(self) -> dict[str, Any] | None:
        if self.world is None:
            return None
        from evaluation.memory_metrics import make_queries, match, object_metrics, query_metrics

        gt = gt_objects(self.world)
        m = match(self.memory, gt, self.cfg.match_distance, self.cfg.duplicate_distance)
        out = object_metrics(m, gt, self.visible)
        out["queries"] = query_metrics(self.memory, make_queries(gt, self.visible), m)
        return out

    def belief_questions(self) -> list[dict[str, Any]]:
        if self.world is None:
            return []
        by_id = {o["objectId"]: o for o in self.world.objects}
        out = []
        for oid, ent in sorted(self.names.of.items(), key=lambda kv: kv[1]):
            o = by_id.get(oid)
            if o is None:
                continue
            gold: str | None
            if o.get("pickupable"):
                if o.get("isPickedUp"):
                    gold = f"held:{ROBOT}"
                else:
                    parents = o.get("parentReceptacles") or []
                    gold = self.names.of.get(parents[0]) if parents else None
                if gold:
                    out.append({"question": f"where is {ent} now?", "answer": gold})
            if o.get("openable"):
                out.append({"question": f"is {ent} open or closed now?", "answer": "open" if o.get("isOpen") else "closed"})
            if o.get("toggleable"):
                out.append({"question": f"is {ent} on or off now?", "answer": "on" if o.get("isToggled") else "off"})
        return out

    def score_belief(self) -> dict[str, Any]:
        qs = self.belief_questions()
        now = self.t_of(self.last_stamp) + 1.0 if self.last_stamp is not None else 0.0
        rows = []
        for q in qs:
            ans = self.tracker.answer(q["question"], now)
            rows.append({**q, "got": ans.value, "status": ans.status, "correct": ans.value == q["answer"]})
        return {"questions": len(rows), "accuracy": (sum(r["correct"] for r in rows) / len(rows)) if rows else None,
                "items": rows[:50]}

    def trajectory_log(self) -> Any:
        from evaluation.trajectory_qa import SECONDS_PER_STEP, TrajectoryLog, TrajectoryStep

        log = TrajectoryLog("replay", self.world.house_id if self.world else "")
        by_id = {o["objectId"]: o for o in self.world.objects} if self.world else {}
        for s in self.trajectory:
            oid = s["object_id"]
            typ = self.type_of.get(oid) or (by_id.get(oid) or {}).get("objectType") if oid else None
            room = None
            if self.world is not None:
                from household.frames import ros_to_thor_points

                p = ros_to_thor_points(np.array(s["position"]))
                r = self.world.room_of_point(float(p[0]), float(p[2]))
                room = r.room_type if r else None
            log.steps.append(TrajectoryStep(s["step"], s["action"], oid, typ, s["success"], room, s["held"],
                                            s["step"] * SECONDS_PER_STEP))
        return log

    def score_trajectory(self) -> dict[str, Any]:
        from evaluation.trajectory_qa import generate_trajectory_qa, score_trajectory_answers

        if not self.trajectory:
            return {"questions": 0, "scored": False, "reason": "no actions in the bag"}
        qs = generate_trajectory_qa(self.trajectory_log(), horizon=self.cfg.horizon, per_ability=self.cfg.per_ability)
        out: dict[str, Any] = {"questions": len(qs), "per_ability": dict(Counter(q.ability for q in qs)),
                               "items": [asdict(q) for q in qs]}
        if self.answerer is None:
            out.update(scored=False, reason="no trajectory-QA answerer configured; questions and gold answers listed")
        else:
            out.update(scored=True, accuracy=score_trajectory_answers(qs, [self.answerer(q.question) for q in qs]))
        return out


def _md(result: dict[str, Any]) -> str:
    r = result
    lines = [f"# Replay of `{r['bag']}`", ""]
    if r.get("error"):
        lines += [f"**Stopped early:** {r['error']} (results below cover what was read before the damage)", ""]
    if r.get("partial_reasons"):
        lines += ["**Partial bag:** not the whole recording; the results below cover what is in it.", ""]
        lines += [f"- {why}" for why in r["partial_reasons"][:30]] + [""]
    lines += ["| | |", "|---|---|", f"| frames | {r['frames']} |", f"| bag duration | {r['bag_duration_s']:.2f} s |",
              f"| wall time | {r['wall_time_s']:.2f} s |",
              f"| x real time | {r['x_real_time']:.1f} |" if r.get("x_real_time") else "| x real time | n/a |",
              f"| memory objects | {r['memory_objects']} |", f"| belief events | {r['belief_events']} |", ""]
    mem = r.get("memory")
    if mem:
        lines += ["## Spatial memory vs recorded ground truth", "",
                  f"precision {_f(mem['precision'])}, recall (visible) {_f(mem['recall_visible'])}, "
                  f"centroid error mean {_f(mem['centroid_error_mean'])} m, duplicates {mem['duplicates']}", ""]
        for kind, q in mem["queries"].items():
            if kind != "failures":
                lines.append(f"- text query `{kind}`: top-1 {_f(q['top1_accuracy'])}, top-5 {_f(q['top5_accuracy'])} "
                             f"over {q['queries']}")
        lines.append("")
    else:
        lines += ["No ground truth in the bag: memory not scored.", ""]
    b = r["belief_qa"]
    lines += ["## Belief QA (WorldLines-style, final state)", "",
              f"{b['questions']} question(s), accuracy {_f(b['accuracy'])}", ""]
    t = r["trajectory_qa"]
    lines += ["## Trajectory QA (EMemBench-style)", "", f"{t['questions']} question(s); "
              + (f"accuracy {_f(t['accuracy']['overall'])}" if t.get("scored") else t.get("reason", "")), ""]
    read = r["read"]
    problems = read["problems"]
    if problems:
        lines += ["## Problems in the bag", ""] + [f"- {p}" for p in problems[:30]] + [""]
    return "\n".join(lines) + "\n"


def _f(v: Any) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def replay_bag(path: str | Path, out_dir: str | Path, *, config: ReplayConfig | None = None,
               progress: Progress | None = None, answerer: Answerer | None = None) -> dict[str, Any]:
    """Replay ``path`` and write replay.json / replay.md into ``out_dir``; returns the JSON dict.
    Raises BagReadError (after writing partial results) for a truncated or corrupt bag and
    FileNotFoundError for a missing one."""
    from evaluation.report import scrub
    from household.atomic_io import atomic_write_text

    cfg = config or ReplayConfig()
    out = Path(out_dir)
    reader = BagReader(path)
    rp = _Replay(cfg, answerer)
    started = time.perf_counter()
    last_report = time.monotonic()
    error: BagReadError | None = None
    t_read = time.perf_counter()
    try:
        for item in reader:
            rp.times.read_s += time.perf_counter() - t_read
            if isinstance(item, FrameItem):
                rp.frame(item)
                rp.track_held(item.observation)
            else:
                rp.event(item)
            if progress and time.monotonic() - last_report >= cfg.progress_every_s:
                last_report = time.monotonic()
                progress(f"{rp.frames} frames, {len(rp.memory)} objects, {rp.belief_events} belief events")
            t_read = time.perf_counter()
    except BagReadError as exc:
        error = exc
    wall = time.perf_counter() - started
    stats = reader.stats.to_dict()
    duration = stats["duration_s"]
    if rp.frames > 1 and duration > 0:
        # a bag of n frames at period p spans (n - 1) p; the last frame also stands for one period
        duration = duration * rp.frames / (rp.frames - 1)
    result: dict[str, Any] = {
        "bag": str(path), "error": str(error) if error else None,
        # not the whole recording (cut off, or disagreeing with what the bag states): the results
        # cover what is there, and say so
        "partial": bool(error) or bool(reader.stats.partial), "partial_reasons": list(reader.stats.partial[:100]),
        "frames": rp.frames,
        "skipped_frames": rp.skipped_frames[:50], "bag_duration_s": duration, "wall_time_s": wall,
        "x_real_time": duration / wall if wall > 0 and duration > 0 else None,
        "timing_ms_per_frame": {k: 1e3 * v / max(rp.frames, 1) for k, v in asdict(rp.times).items()},
        "memory_objects": len(rp.memory), "belief_events": rp.belief_events,
        "belief_rejected": rp.belief_rejected[:50], "events": dict(sorted(rp.events.items())),
        "ground_truth": rp.world is not None, "visible_objects": len(rp.visible),
        "memory": rp.score_memory(), "belief_qa": rp.score_belief(), "trajectory_qa": rp.score_trajectory(),
        "read": stats, "config": asdict(cfg),
    }
    result = scrub(result)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "replay.json", json.dumps(result, indent=2) + "\n")
    atomic_write_text(out / "replay.md", printable(_md(result)))
    if error is not None:
        raise error
    return result


def build_memory(observations: Any, voxel_size: float = 0.05, text_encoder: str = "hash") -> Any:
    """The spatial memory a sequence of Observations builds (what replay does per frame): used to
    check that a replayed bag rebuilds the live run's memory."""
    rp = _Replay(ReplayConfig(voxel_size=voxel_size, text_encoder=text_encoder), None)
    for i, obs in enumerate(observations):
        rp.frame(FrameItem(i, obs))
    return rp.memory


__all__ = ["ReplayConfig", "replay_bag", "build_memory", "gt_objects", "EntityNames", "BagReadError"]

