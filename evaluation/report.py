"""Episode and summary reports: JSON for machines, Markdown and PNG for people.

``write_episode_report`` writes report.json, report.md and report.png into one folder;
``write_summary`` writes summary.json and summary.md over many episodes (GC, SR, Steps, IR, and
the agent statistics of AGENT_KEYS: failed actions, critic interventions, experience reuse, LLM
usage). Every file is written to a temporary file in the same folder and moved into place with
``os.replace``, so a crash or a reader never sees half a report. Reports hold results only: ``extra`` is scrubbed of keys that
look like credentials, and nothing from the environment is written.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from household.checklist import ChecklistResult
from evaluation.episodes import Episode
from evaluation.metrics import DEFAULT_IR_SEGMENTS, ScoreTimeline, StepCounter, improvement_rate, improvement_rate_paper
from sim_bridge.embedded.house_geometry import HouseLayout
from household.atomic_io import atomic_write_bytes, atomic_write_text
from household.text import printable
from household.types import WorldState
from planner.llm.attribution import MODEL_SHARE_THRESHOLD, Attribution, attribution_lines, share_warning

# Keys dropped from ``extra`` wherever they occur: reports are shared, credentials are not.
_SECRET_KEY = re.compile(r"api[_-]?key|secret|passw(or)?d|authorization|access[_-]?token|bearer|credential", re.I)

# ir: Improvement Rate on the LongAct paper's scale (GC in percent, time t/T in [0, 1]);
# ir_per_step: the same fit in GC (fraction) per step. See evaluation.metrics.
METRIC_KEYS = ("gc", "sr", "steps_nav", "steps_manip", "steps_total", "ir", "ir_per_step")
# Agent statistics in summaries: what the planner did besides scoring (HoloMind's critic and
# experience pool, LLM usage). Read from ``extra`` (written by the agent's ``report_extra``), except
# failed actions, which the runner counts the same way for every planner (an oracle's 0 is a
# measurement, not missing data). None (Markdown "-") where an episode has no such number.
AGENT_KEYS = ("failed_actions", "critic_interventions", "experience_reused",
              "llm_calls", "llm_prompt_tokens", "llm_completion_tokens", "llm_cost_usd",
              "llm_decisions", "llm_model_decisions")
LLM_KEYS = ("llm_calls", "llm_prompt_tokens", "llm_completion_tokens", "llm_cost_usd",
            "llm_decisions", "llm_model_decisions")
# extra["llm"] key (planner.llm.client.LLMClient.usage()) for each LLM_KEYS entry.
_LLM_USAGE = {"llm_calls": "calls", "llm_prompt_tokens": "prompt_tokens",
              "llm_completion_tokens": "completion_tokens", "llm_cost_usd": "cost_usd"}


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
    ir_per_step: float
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
            steps_total=steps.total, ir=improvement_rate_paper(timeline.gc, timeline.steps, ir_segments),
            ir_per_step=improvement_rate(timeline.gc, timeline.steps, ir_segments),
            checklist=checklist, timeline=timeline, agent_path=[(float(x), float(z)) for x, z in agent_path],
            num_actions=steps.actions, failed_actions=steps.failed_actions, wall_time_s=wall_time_s,
            extra=dict(extra or {}),
        )

    def metrics(self) -> dict[str, float]:
        return {key: float(getattr(self, key)) for key in METRIC_KEYS}

    def agent_stats(self) -> dict[str, float | None]:
        """AGENT_KEYS for this episode; None where the planner recorded nothing (the oracle has
        no critic, no experience pool and no model). A cost litellm could not price (an
        unknown or mocked model: ``cost_status`` "unknown") is None too, not a misleading 0."""
        extra = self.extra or {}
        llm = extra.get("llm") if isinstance(extra.get("llm"), dict) else None
        out: dict[str, float | None] = {
            "failed_actions": float(self.failed_actions),
            "critic_interventions": _number(extra.get("critic_interventions")),
            "experience_reused": _number(extra.get("experience_reused")),
        }
        for key, usage_key in _LLM_USAGE.items():
            out[key] = _number(llm.get(usage_key)) if llm is not None else None
        decisions = llm.get("decisions") if llm is not None and isinstance(llm.get("decisions"), dict) else {}
        out["llm_decisions"] = _number(decisions.get("decisions"))
        out["llm_model_decisions"] = _number(decisions.get("by_model"))
        if llm is not None and llm.get("cost_status") == "unknown":
            out["llm_cost_usd"] = None
        return out

    def attribution(self) -> Attribution | None:
        """Who took the planner's decisions (model or fallback, per role); None without a model."""
        extra = self.extra or {}
        return Attribution.from_usage(extra.get("llm") if isinstance(extra.get("llm"), dict) else None)

    def to_dict(self) -> dict[str, Any]:
        attribution = self.attribution()
        return {
            "episode_id": self.episode_id, "scenario": self.scenario, "instruction_kind": self.instruction_kind,
            "planner": self.planner, **self.metrics(),
            **({"model_decisions": {**attribution.to_dict(), "warning": share_warning(attribution)}}
               if attribution is not None else {}),
            "num_actions": self.num_actions, "failed_actions": self.failed_actions, "wall_time_s": self.wall_time_s,
            "checklist": self.checklist.to_list(), "timeline": self.timeline.to_dict(),
            "agent_path": [[x, z] for x, z in self.agent_path], "extra": scrub(self.extra),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EpisodeResult":
        """Read a report.json back (e.g. to rebuild a summary without rerunning). Reports written
        before the agent statistics existed read the same: those live in ``extra``, which may be
        missing or empty. Reports from before ``ir_per_step`` existed stored the per-step value as
        ``ir``: it is read as ``ir_per_step`` and ``ir`` rescaled (100 x the timeline's span)."""
        metrics = {key: _finite(data, key) for key in METRIC_KEYS if key != "ir_per_step"}
        if "ir_per_step" in data:
            metrics["ir_per_step"] = _finite(data, "ir_per_step")
        else:
            steps = (data.get("timeline") or {}).get("steps") or [0]
            metrics["ir_per_step"] = metrics["ir"]
            metrics["ir"] = metrics["ir"] * 100.0 * float(steps[-1] - steps[0])
        return cls(
            episode_id=str(data["episode_id"]), scenario=str(data["scenario"]),
            instruction_kind=str(data["instruction_kind"]), planner=str(data["planner"]),
            **metrics,
            checklist=ChecklistResult.from_list(data["checklist"]), timeline=ScoreTimeline.from_dict(data["timeline"]),
            agent_path=[(float(x), float(z)) for x, z in data["agent_path"]], num_actions=int(data["num_actions"]),
            failed_actions=int(data["failed_actions"]), wall_time_s=float(data["wall_time_s"]),
            extra=dict(data.get("extra") or {}),
        )


def _finite(data: dict[str, Any], key: str) -> float:
    """A stored metric: a finite number, or ValueError naming the field (a NaN in one report must
    not turn every mean into NaN)."""
    value = float(data[key])
    if not math.isfinite(value):
        raise ValueError(f"field {key!r} is {value}, not a finite number")
    return value


def _json_text(data: Any) -> str:
    # allow_nan=False: a NaN metric is a bug to surface, not a token that breaks JSON readers.
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


# --- Markdown ----------------------------------------------------------------------------------

def _cell(value: Any) -> str:
    """A Markdown table cell: pipes escaped, newlines flattened."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def _fmt(value: float | None, digits: int = 3, sign: str = "") -> str:
    return "n/a" if value is None else f"{value:{sign}.{digits}f}"


def _episode_markdown(result: EpisodeResult, data: dict[str, Any]) -> str:
    """report.md; ``data`` is ``result.to_dict()`` (computed once for report.json too)."""
    mark = {True: "✅", False: "❌"}
    lines = [
        f"# Episode `{result.episode_id}`",
        "",
        f"Scenario **{_cell(result.scenario)}**, {_cell(result.instruction_kind)} instruction, "
        f"planner **{_cell(result.planner)}**.",
        "",
        "| GC | SR | Steps (nav) | Steps (manip) | Steps (total) | IR (GC %, t/T) | IR per step | Actions | "
        "Failed actions | Wall time (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {result.gc:.3f} | {result.sr:.0f} | {result.steps_nav:.2f} | {result.steps_manip:.0f} | "
        f"{result.steps_total:.2f} | {result.ir:+.3f} | {result.ir_per_step:+.6f} | {result.num_actions} | {result.failed_actions} | "
        f"{result.wall_time_s:.1f} |",
        "",
        *_attribution_block(result.attribution()),
        f"## Checklist ({result.checklist.satisfied_units}/{result.checklist.units} units)",
        "",
    ]
    for item in result.checklist.items:
        ids = f" — {', '.join(f'`{i}`' for i in item.object_ids)}" if item.object_ids else ""
        lines.append(f"- {mark[item.satisfied]} {_cell(item.description)} ({item.satisfied_units}/{item.units}){ids}")
    lines += ["", "![GC over steps and top-down map](report.png)", ""]
    lines += _why_unmet(result, data)
    extra = scrub(result.extra)
    if extra:
        lines += ["## Extra", "", "```json", json.dumps(extra, indent=2), "```", ""]
    return "\n".join(lines)


def _attribution_block(attribution: Attribution | None, threshold: float = MODEL_SHARE_THRESHOLD) -> list[str]:
    """The "Model decisions" section (nothing for planners without a model)."""
    return [] if attribution is None else attribution_lines(attribution, threshold)


def write_episode_report(out_dir: str | os.PathLike[str], result: EpisodeResult, layout: HouseLayout,
                         world: WorldState) -> dict[str, Path]:
    """Write report.json, report.md and report.png for one episode into out_dir (created if
    missing); returns their paths by kind ("json", "md", "png")."""
    out = Path(out_dir)
    data = result.to_dict()
    return {
        "json": atomic_write_text(out / "report.json", _json_text(data)),
        "md": atomic_write_text(out / "report.md", printable(_episode_markdown(result, data))),  # ids from files
        "png": atomic_write_bytes(out / "report.png", _png(result, layout, world)),
    }


# --- summary -----------------------------------------------------------------------------------

def _number(value: Any) -> float | None:
    """A finite number from ``extra`` as float, else None (a bool is not a count)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _agent_totals(results: list[EpisodeResult]) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """Per-episode means and totals of AGENT_KEYS over the episodes that have each number (so a
    group mixing oracle and HoloMind runs is not diluted by the oracle's missing values); None
    where no episode has it."""
    means: dict[str, float | None] = {}
    totals: dict[str, float | None] = {}
    stats = [r.agent_stats() for r in results]
    for key in AGENT_KEYS:
        values = [v for v in (s[key] for s in stats) if v is not None]
        totals[key] = sum(values) if values else None
        means[key] = sum(values) / len(values) if values else None
    return means, totals


def _means(results: list[EpisodeResult]) -> dict[str, float | None]:
    agent_means = _agent_totals(results)[0]
    if not results:
        return {**{key: None for key in METRIC_KEYS}, **agent_means}
    return {**{key: sum(float(getattr(r, key)) for r in results) / len(results) for key in METRIC_KEYS},
            **agent_means}


def summarize(results: list[EpisodeResult]) -> dict[str, Any]:
    """Per-episode rows, overall means, and means per (planner, instruction kind) group, since
    a run usually compares planners or instruction kinds and an overall mean would blend them."""
    groups: dict[tuple[str, str], list[EpisodeResult]] = {}
    for r in results:
        groups.setdefault((r.planner, r.instruction_kind), []).append(r)
    attributions = [a for a in (r.attribution() for r in results) if a is not None]
    overall: Attribution | None = None
    if attributions:
        overall = Attribution()
        for a in attributions:
            overall.add(a)
    return {
        "count": len(results),
        **({"model_decisions": {**overall.to_dict(), "warning": share_warning(overall),
                                "episodes_with_model": len(attributions)}} if overall is not None else {}),
        "goals_vs_world": _goals_vs_world(results),
        "means": _means(results),
        "totals": _agent_totals(results)[1],
        "groups": [{"planner": p, "instruction_kind": k, "count": len(rs), "means": _means(rs),
                    "totals": _agent_totals(rs)[1]}
                   for (p, k), rs in sorted(groups.items())],
        "episodes": [{"episode_id": r.episode_id, "scenario": r.scenario, "instruction_kind": r.instruction_kind,
                      "planner": r.planner, **r.metrics(), **r.agent_stats()} for r in results],
    }


def _goals_vs_world(results: list[EpisodeResult]) -> dict[str, Any]:
    """Checklist units unmet although the goal serving them was reported done, by what the agent's
    own check of that goal said (planner.goal_check). 'verified' or no check beside an unmet unit
    is a disagreement without a stated reason; 'unverified' and 'contradicted' state one."""
    from evaluation.failure_taxonomy import DONE_CAUSES, classify_report
    by_check: dict[str, int] = {}
    for r in results:
        for u in classify_report(r.to_dict()):
            if u.cause in DONE_CAUSES:
                key = u.agent_check or "no check"
                by_check[key] = by_check.get(key, 0) + u.units
    return {"done_but_unmet_units": sum(by_check.values()), "by_agent_check": dict(sorted(by_check.items())),
            "without_stated_reason": by_check.get("verified", 0) + by_check.get("no check", 0)}


def _stat(value: float | None, digits: int = 0) -> str:
    """An agent-statistics cell: "-" where the planner recorded nothing (not "n/a", which the
    metric columns use for an empty summary), integers for counts, more digits for means."""
    return "-" if value is None else f"{value:.{digits}f}"


# (key, header, digits in per-episode cells and totals, digits in means)
_AGENT_COLUMNS = (("failed_actions", "Failed actions", 0, 2), ("critic_interventions", "Critic interventions", 0, 2),
                  ("experience_reused", "Experience reused", 0, 2), ("llm_calls", "LLM calls", 0, 2),
                  ("llm_prompt_tokens", "Prompt tokens", 0, 1), ("llm_completion_tokens", "Completion tokens", 0, 1),
                  ("llm_cost_usd", "Cost (USD)", 4, 4), ("llm_decisions", "LLM decisions", 0, 1),
                  ("llm_model_decisions", "By the model", 0, 1))


def _agent_columns(summary: dict[str, Any]) -> tuple[tuple[str, str, int, int], ...]:
    """LLM columns appear only when some episode used a model, so oracle and deterministic
    summaries stay narrow; the critic and experience columns are always there ("-" for the oracle)."""
    rows = summary["episodes"]
    has_llm = any(row.get(key) is not None for row in rows for key in LLM_KEYS)
    return tuple(c for c in _AGENT_COLUMNS if has_llm or c[0] not in LLM_KEYS)


def _summary_markdown(summary: dict[str, Any]) -> str:
    cols = _agent_columns(summary)
    agent_head = "".join(f" {title} |" for _, title, _, _ in cols)
    agent_rule = "---:|" * len(cols)
    head = ("| Episode | Planner | Instruction | GC | SR | Steps (nav) | Steps (manip) | Steps (total) | IR (GC %, t/T) |"
            " IR per step |" + agent_head)
    rule = "|---|---|---|---:|---:|---:|---:|---:|---:|---:|" + agent_rule
    count = summary["count"]
    lines = [f"# LongAct summary ({count} episode{'' if count == 1 else 's'})", ""]
    decisions = summary.get("model_decisions")
    if decisions and decisions.get("warning"):
        lines += [f"**{decisions['warning']}**", ""]  # beside the figures it qualifies
    lines += [head, rule]
    for row in summary["episodes"]:
        stats = "".join(f" {_stat(row.get(key), d)} |" for key, _, d, _ in cols)
        lines.append(f"| {_cell(row['episode_id'])} | {_cell(row['planner'])} | {_cell(row['instruction_kind'])} | "
                     f"{row['gc']:.3f} | {row['sr']:.0f} | {row['steps_nav']:.2f} | {row['steps_manip']:.0f} | "
                     f"{row['steps_total']:.2f} | {row['ir']:+.3f} | {row['ir_per_step']:+.6f} |" + stats)
    m, t = summary["means"], summary["totals"]
    lines.append(f"| **mean** | | | {_fmt(m['gc'])} | {_fmt(m['sr'])} | {_fmt(m['steps_nav'], 2)} | "
                 f"{_fmt(m['steps_manip'], 2)} | {_fmt(m['steps_total'], 2)} | {_fmt(m['ir'], 3, '+')} | "
                 f"{_fmt(m['ir_per_step'], 6, '+')} |"
                 + "".join(f" {_stat(m.get(key), d)} |" for key, _, _, d in cols))
    if cols:
        lines.append("| **total** | | | | | | | | | |" + "".join(f" {_stat(t.get(key), d)} |" for key, _, d, _ in cols))
    if len(summary["groups"]) > 1:
        lines += ["", "## Means by planner and instruction", "",
                  "| Planner | Instruction | Episodes | GC | SR | Steps (nav) | Steps (manip) | Steps (total) | IR (GC %, t/T) |"
                  " IR per step |"
                  + "".join(f" {title} (mean / total) |" for _, title, _, _ in cols),
                  rule]
        for g in summary["groups"]:
            gm, gt = g["means"], g["totals"]
            stats = "".join(f" {_stat(gm.get(key), dm)} / {_stat(gt.get(key), d)} |"
                            if gm.get(key) is not None else " - |" for key, _, d, dm in cols)
            lines.append(f"| {_cell(g['planner'])} | {_cell(g['instruction_kind'])} | {g['count']} | "
                         f"{_fmt(gm['gc'])} | "
                         f"{_fmt(gm['sr'])} | {_fmt(gm['steps_nav'], 2)} | {_fmt(gm['steps_manip'], 2)} | "
                         f"{_fmt(gm['steps_total'], 2)} | {_fmt(gm['ir'], 3, '+')} | "
                         f"{_fmt(gm['ir_per_step'], 6, '+')} |" + stats)
    if decisions:
        attribution = Attribution.from_usage({"decisions_by_role": decisions.get("by_role") or {}})
        if attribution is not None:
            lines += [""] + attribution_lines(attribution, float(decisions.get("threshold", MODEL_SHARE_THRESHOLD)))
    gw = summary.get("goals_vs_world") or {}
    if gw.get("done_but_unmet_units"):
        checks = ", ".join(f"{k} {v}" for k, v in gw["by_agent_check"].items())
        lines += ["", f"Goals reported done whose checklist units are unmet: {gw['done_but_unmet_units']} units "
                      f"(the agent's own check: {checks}); {gw['without_stated_reason']} without a stated reason "
                      "('verified' or no check)."]
    if summary.get("skipped"):
        lines += ["", f"## Skipped ({len(summary['skipped'])})", "", "| Episode | Why |", "|---|---|"]
        lines += [f"| {_cell(eid)} | {_cell(why)} |" for eid, why in summary["skipped"].items()]
    lines.append("")
    return "\n".join(lines)


def write_summary(out_dir: str | os.PathLike[str], results: list[EpisodeResult],
                  skipped: dict[str, str] | None = None) -> dict[str, Path]:
    """Write summary.json and summary.md over the given results (an empty list is a valid,
    empty summary: a run whose episodes all failed still leaves a record). ``skipped`` names the
    episodes left out and why (a bad house, a damaged earlier report), so none vanishes silently."""
    out = Path(out_dir)
    summary = summarize(results)
    summary["skipped"] = dict(sorted((skipped or {}).items()))
    return {
        "json": atomic_write_text(out / "summary.json", _json_text(summary)),
        "md": atomic_write_text(out / "summary.md", printable(_summary_markdown(summary))),
    }


def _png(result: "EpisodeResult", layout: HouseLayout, world: WorldState) -> bytes:
    """The report's picture. matplotlib is imported here, not with this module: every process
    that only scores or reads reports (Ray workers, the CLI) starts without it."""
    from evaluation.report_plot import render_episode_png
    return render_episode_png(result, layout, world)


def _why_unmet(result: EpisodeResult, data: dict[str, Any]) -> list[str]:
    """A sentence per unmet checklist item: why it was missed (``evaluation.failure_taxonomy``),
    from the goal that served it as the planner reported it (``data``: the report's dict)."""
    from evaluation.failure_taxonomy import CAUSE_SENTENCES, classify_report
    unmet = classify_report(data)
    if not unmet:
        return []
    lines = ["## Why unmet", ""]
    for u in unmet:
        text = result.checklist.items[u.item_index].description if u.item_index < len(result.checklist.items) else "?"
        why = CAUSE_SENTENCES.get(u.cause, u.cause)
        goals = f" (goal {', '.join(u.goal_ids)})" if u.goal_ids else ""
        detail = f": {u.detail}" if u.detail else ""
        lines.append(f"- {_cell(text)}: {why}{goals}{_cell(detail)}")
    return lines + [""]
