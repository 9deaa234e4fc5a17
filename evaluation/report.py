"""Episode and summary reports: JSON for machines, Markdown and PNG for people.

``write_episode_report`` writes report.json, report.md and report.png into one folder;
``write_summary`` writes summary.json and summary.md over many episodes. Every file is written
to a temporary file in the same folder and moved into place with ``os.replace``, so a crash or a
reader never sees half a report. Reports hold results only: ``extra`` is scrubbed of keys that
look like credentials, and nothing from the environment is written.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.checklist import ChecklistResult
from evaluation.episodes import Episode
from evaluation.metrics import DEFAULT_IR_SEGMENTS, ScoreTimeline, StepCounter, improvement_rate
from evaluation.report_plot import render_episode_png
from sim_bridge.embedded.house_geometry import HouseLayout
from sim_bridge.types import WorldState

# Keys dropped from ``extra`` wherever they occur: reports are shared, credentials are not.
_SECRET_KEY = re.compile(r"api[_-]?key|secret|passw(or)?d|authorization|access[_-]?token|bearer|credential", re.I)

METRIC_KEYS = ("gc", "sr", "steps_nav", "steps_manip", "steps_total", "ir")
REPORT_FILE_MODE = 0o644


def scrub(value: Any) -> Any:
    """A JSON-ready copy of caller-supplied ``extra`` data: dict entries whose key looks like a
    credential are dropped, numpy values become Python ones, non-finite floats become None (JSON
    has no NaN), sets become sorted lists and anything else unserialisable becomes its repr, so
    a planner's odd annotation cannot crash the report at the end of a long episode."""
    if isinstance(value, dict):
        return {str(k): scrub(v) for k, v in value.items() if not _SECRET_KEY.search(str(k))}
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((scrub(v) for v in value), key=repr)
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return scrub(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int)):
        return value
    return repr(value)


@dataclass
class EpisodeResult:
    """Everything measured for one run of one episode. ``sr`` is 1.0 or 0.0 so that means over
    episodes are success rates; ``agent_path`` is THOR (x, z) per pose, start first."""

    episode_id: str
    scenario: str
    instruction_kind: str
    planner: str
    gc: float
    sr: float
    steps_nav: float
    steps_manip: float
    steps_total: float
    ir: float
    checklist: ChecklistResult
    timeline: ScoreTimeline
    agent_path: list[tuple[float, float]]
    num_actions: int
    failed_actions: int
    wall_time_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_run(cls, episode: Episode, *, instruction_kind: str, planner: str, checklist: ChecklistResult,
                 steps: StepCounter, timeline: ScoreTimeline, agent_path: list[tuple[float, float]],
                 wall_time_s: float, extra: dict[str, Any] | None = None,
                 ir_segments: int = DEFAULT_IR_SEGMENTS) -> "EpisodeResult":
        """Assemble a result from what the runner collected, so GC, SR, Steps and IR are
        computed in one place and the same way for every planner."""
        return cls(
            episode_id=episode.id, scenario=episode.scenario, instruction_kind=instruction_kind, planner=planner,
            gc=checklist.gc, sr=checklist.sr, steps_nav=steps.nav_steps, steps_manip=steps.manip_steps,
            steps_total=steps.total, ir=improvement_rate(timeline.gc, timeline.steps, ir_segments),
            checklist=checklist, timeline=timeline, agent_path=[(float(x), float(z)) for x, z in agent_path],
            num_actions=steps.actions, failed_actions=steps.failed_actions, wall_time_s=wall_time_s,
            extra=dict(extra or {}),
        )

    def metrics(self) -> dict[str, float]:
        return {key: float(getattr(self, key)) for key in METRIC_KEYS}

    def to_dict(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id, "scenario": self.scenario, "instruction_kind": self.instruction_kind,
            "planner": self.planner, **self.metrics(),
            "num_actions": self.num_actions, "failed_actions": self.failed_actions, "wall_time_s": self.wall_time_s,
            "checklist": self.checklist.to_list(), "timeline": self.timeline.to_dict(),
            "agent_path": [[x, z] for x, z in self.agent_path], "extra": scrub(self.extra),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EpisodeResult":
        """Read a report.json back (e.g. to rebuild a summary without rerunning)."""
        return cls(
            episode_id=str(data["episode_id"]), scenario=str(data["scenario"]),
            instruction_kind=str(data["instruction_kind"]), planner=str(data["planner"]),
            **{key: float(data[key]) for key in METRIC_KEYS},
            checklist=ChecklistResult.from_list(data["checklist"]), timeline=ScoreTimeline.from_dict(data["timeline"]),
            agent_path=[(float(x), float(z)) for x, z in data["agent_path"]], num_actions=int(data["num_actions"]),
            failed_actions=int(data["failed_actions"]), wall_time_s=float(data["wall_time_s"]),
            extra=dict(data.get("extra") or {}),
        )


# --- atomic writes -----------------------------------------------------------------------------

def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write via a temp file in the same folder and os.replace, so the file is old or new, never
    partial; the folder is created if needed."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, REPORT_FILE_MODE)  # mkstemp makes 0600; reports are for sharing
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def _json_text(data: Any) -> str:
    # allow_nan=False: a NaN metric is a bug to surface, not a token that breaks JSON readers.
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


# --- Markdown ----------------------------------------------------------------------------------

def _cell(value: Any) -> str:
    """A Markdown table cell: pipes escaped, newlines flattened."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def _fmt(value: float | None, digits: int = 3, sign: str = "") -> str:
    return "n/a" if value is None else f"{value:{sign}.{digits}f}"


def _episode_markdown(result: EpisodeResult) -> str:
    mark = {True: "✅", False: "❌"}
    lines = [
        f"# Episode `{result.episode_id}`",
        "",
        f"Scenario **{_cell(result.scenario)}**, {_cell(result.instruction_kind)} instruction, "
        f"planner **{_cell(result.planner)}**.",
        "",
        "| GC | SR | Steps (nav) | Steps (manip) | Steps (total) | IR | Actions | Failed actions | Wall time (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {result.gc:.3f} | {result.sr:.0f} | {result.steps_nav:.2f} | {result.steps_manip:.0f} | "
        f"{result.steps_total:.2f} | {result.ir:+.5f} | {result.num_actions} | {result.failed_actions} | "
        f"{result.wall_time_s:.1f} |",
        "",
        f"## Checklist ({result.checklist.satisfied_units}/{result.checklist.units} units)",
        "",
    ]
    for item in result.checklist.items:
        ids = f" — {', '.join(f'`{i}`' for i in item.object_ids)}" if item.object_ids else ""
        lines.append(f"- {mark[item.satisfied]} {_cell(item.description)} ({item.satisfied_units}/{item.units}){ids}")
    lines += ["", "![GC over steps and top-down map](report.png)", ""]
    extra = scrub(result.extra)
    if extra:
        lines += ["## Extra", "", "```json", json.dumps(extra, indent=2), "```", ""]
    return "\n".join(lines)


def write_episode_report(out_dir: str | os.PathLike[str], result: EpisodeResult, layout: HouseLayout,
                         world: WorldState) -> dict[str, Path]:
    """Write report.json, report.md and report.png for one episode into out_dir (created if
    missing); returns their paths by kind ("json", "md", "png")."""
    out = Path(out_dir)
    return {
        "json": atomic_write_text(out / "report.json", _json_text(result.to_dict())),
        "md": atomic_write_text(out / "report.md", _episode_markdown(result)),
        "png": atomic_write_bytes(out / "report.png", render_episode_png(result, layout, world)),
    }


# --- summary -----------------------------------------------------------------------------------

def _means(results: list[EpisodeResult]) -> dict[str, float | None]:
    if not results:
        return {key: None for key in METRIC_KEYS}
    return {key: sum(float(getattr(r, key)) for r in results) / len(results) for key in METRIC_KEYS}


def summarize(results: list[EpisodeResult]) -> dict[str, Any]:
    """Per-episode rows, overall means, and means per (planner, instruction kind) group, since
    a run usually compares planners or instruction kinds and an overall mean would blend them."""
    groups: dict[tuple[str, str], list[EpisodeResult]] = {}
    for r in results:
        groups.setdefault((r.planner, r.instruction_kind), []).append(r)
    return {
        "count": len(results),
        "means": _means(results),
        "groups": [{"planner": p, "instruction_kind": k, "count": len(rs), "means": _means(rs)}
                   for (p, k), rs in sorted(groups.items())],
        "episodes": [{"episode_id": r.episode_id, "scenario": r.scenario, "instruction_kind": r.instruction_kind,
                      "planner": r.planner, **r.metrics()} for r in results],
    }


def _summary_markdown(summary: dict[str, Any]) -> str:
    head = "| Episode | Planner | Instruction | GC | SR | Steps (nav) | Steps (manip) | Steps (total) | IR |"
    rule = "|---|---|---|---:|---:|---:|---:|---:|---:|"
    count = summary["count"]
    lines = [f"# LongAct summary ({count} episode{'' if count == 1 else 's'})", "", head, rule]
    for row in summary["episodes"]:
        lines.append(f"| {_cell(row['episode_id'])} | {_cell(row['planner'])} | {_cell(row['instruction_kind'])} | "
                     f"{row['gc']:.3f} | {row['sr']:.0f} | {row['steps_nav']:.2f} | {row['steps_manip']:.0f} | "
                     f"{row['steps_total']:.2f} | {row['ir']:+.5f} |")
    m = summary["means"]
    lines.append(f"| **mean** | | | {_fmt(m['gc'])} | {_fmt(m['sr'])} | {_fmt(m['steps_nav'], 2)} | "
                 f"{_fmt(m['steps_manip'], 2)} | {_fmt(m['steps_total'], 2)} | {_fmt(m['ir'], 5, '+')} |")
    if len(summary["groups"]) > 1:
        lines += ["", "## Means by planner and instruction", "",
                  "| Planner | Instruction | Episodes | GC | SR | Steps (nav) | Steps (manip) | Steps (total) | IR |",
                  rule]
        for g in summary["groups"]:
            gm = g["means"]
            lines.append(f"| {_cell(g['planner'])} | {_cell(g['instruction_kind'])} | {g['count']} | "
                         f"{_fmt(gm['gc'])} | "
                         f"{_fmt(gm['sr'])} | {_fmt(gm['steps_nav'], 2)} | {_fmt(gm['steps_manip'], 2)} | "
                         f"{_fmt(gm['steps_total'], 2)} | {_fmt(gm['ir'], 5, '+')} |")
    lines.append("")
    return "\n".join(lines)


def write_summary(out_dir: str | os.PathLike[str], results: list[EpisodeResult]) -> dict[str, Path]:
    """Write summary.json and summary.md over the given results (an empty list is a valid,
    empty summary: a run whose episodes all failed still leaves a record)."""
    out = Path(out_dir)
    summary = summarize(results)
    return {
        "json": atomic_write_text(out / "summary.json", _json_text(summary)),
        "md": atomic_write_text(out / "summary.md", _summary_markdown(summary)),
    }
