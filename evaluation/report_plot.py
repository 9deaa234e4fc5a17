"""The episode report figure: GC over steps (left) and a top-down map of the house (right).

Drawn on a bare ``Figure`` with an Agg canvas, never through pyplot, so rendering touches no
global backend state and works headless and from worker threads.

Map frame: THOR's floor coordinates (x, z). THOR is left-handed with y up, so seen from above
+x points right and +z points up; plotting x to the right and z up is the true top view, not a
mirror image, and the axis labels say so.
"""

from __future__ import annotations

import io
from typing import Any, Protocol

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Polygon, Rectangle
from matplotlib.ticker import MaxNLocator

from sim_bridge.embedded.house_geometry import HouseLayout
from evaluation.metrics import ScoreTimeline
from household.checklist import ChecklistResult
from household.types import WorldState



class EpisodeResult(Protocol):
    """What the plot reads of evaluation.report.EpisodeResult (named here so this module does not
    import the report writer that calls it)."""

    episode_id: str
    scenario: str
    instruction_kind: str
    planner: str
    gc: float
    sr: float
    ir: float
    timeline: ScoreTimeline
    agent_path: list[tuple[float, float]]
    checklist: ChecklistResult

# Walls are drawn where solid at this height: doors (holes from the floor) show as gaps, windows
# (sills at 0.6 m or more in ProcTHOR) do not, and are drawn over the wall in light blue instead.
_WALL_SAMPLE_HEIGHT = 0.3
_ROOM_COLOURS = ("#dbe9f6", "#fde9d4", "#e2f0d9", "#f3e1f0", "#fff5cc", "#e0e0f0", "#d9f2f2", "#f2dede")


def _centroid(polygon: tuple[tuple[float, float], ...]) -> tuple[float, float]:
    """Area centroid (the vertex mean drifts towards densely sampled edges)."""
    a = cx = cz = 0.0
    for (x1, z1), (x2, z2) in zip(polygon, polygon[1:] + polygon[:1]):
        cross = x1 * z2 - x2 * z1
        a += cross
        cx += (x1 + x2) * cross
        cz += (z1 + z2) * cross
    if abs(a) < 1e-12:
        return sum(p[0] for p in polygon) / len(polygon), sum(p[1] for p in polygon) / len(polygon)
    return cx / (3.0 * a), cz / (3.0 * a)


def _plot_timeline(ax: Axes, result: EpisodeResult) -> None:
    timeline = result.timeline
    if len(timeline):
        # markers keep a one-entry timeline (an episode that stopped at once) visible
        ax.step(timeline.steps, timeline.gc, where="post", color="tab:blue", linewidth=2, marker=".", markersize=4)
        ax.fill_between(timeline.steps, timeline.gc, step="post", color="tab:blue", alpha=0.15)
        ax.set_xlim(timeline.steps[0], max(timeline.steps[-1], timeline.steps[0] + 1))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        ax.text(0.5, 0.5, "no GC timeline recorded", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("step (actions taken)")
    ax.set_ylabel("GC (share of checklist units satisfied)")
    ax.set_title(f"GC over steps: final GC {result.gc:.2f}, SR {result.sr:.0f}, IR {result.ir:+.2f} (GC %, t/T)")
    ax.grid(True, alpha=0.3)


def _draw_object(ax: Axes, obj: dict[str, Any]) -> tuple[float, float] | None:
    pos = obj.get("position")
    if not isinstance(pos, dict):
        return None
    x, z = float(pos["x"]), float(pos["z"])
    box = obj.get("axisAlignedBoundingBox") or {}
    size, center = box.get("size"), box.get("center")
    if isinstance(size, dict) and isinstance(center, dict):
        w, d = float(size["x"]), float(size["z"])
        ax.add_patch(Rectangle((float(center["x"]) - w / 2, float(center["z"]) - d / 2), w, d, facecolor="#9e9e9e",
                               edgecolor="#616161", alpha=0.35, linewidth=0.5, zorder=2))
    else:
        ax.plot(x, z, "s", color="#757575", markersize=3, zorder=3)
    return x, z


def _plot_map(ax: Axes, result: EpisodeResult, layout: HouseLayout, world: WorldState) -> None:
    for i, room in enumerate(layout.rooms):
        ax.add_patch(Polygon(room.polygon, closed=True, facecolor=_ROOM_COLOURS[i % len(_ROOM_COLOURS)],
                             edgecolor="none", zorder=0))
        cx, cz = _centroid(room.polygon)
        ax.text(cx, cz, room.room_type, ha="center", va="center", fontsize=9, color="#37474f", alpha=0.8, zorder=1)
    for wall in layout.walls:
        (x0, z0), (x1, z1) = wall.p0, wall.p1
        length = wall.length or 1.0
        windows = [(h.s0, h.s1) for h in wall.holes if h.kind == "window"]
        wall_styles: tuple[tuple[list[tuple[float, float]], dict[str, Any]], ...] = (
            (wall.solid_intervals(_WALL_SAMPLE_HEIGHT), dict(color="#263238", linewidth=2)),
            (windows, dict(color="#4fc3f7", linewidth=3)))
        for spans, style in wall_styles:
            for s0, s1 in spans:
                a, b = s0 / length, s1 / length
                ax.plot([x0 + a * (x1 - x0), x0 + b * (x1 - x0)], [z0 + a * (z1 - z0), z0 + b * (z1 - z0)],
                        solid_capstyle="butt", zorder=4, **style)

    where: dict[str, tuple[float, float]] = {}
    for obj in world.objects:
        xz = _draw_object(ax, obj)
        if xz is not None:
            where[str(obj.get("objectId"))] = xz

    items = result.checklist.items
    satisfied = {i for item in items for i in item.object_ids}
    missing = {i for item in items if not item.satisfied for i in item.candidate_ids} - satisfied
    targets = {i for item in items for i in item.target_ids}
    styles: tuple[tuple[set[str], dict[str, Any], str], ...] = (
        (targets, dict(marker="D", markersize=11, markerfacecolor="none", markeredgecolor="tab:blue",
                       markeredgewidth=1.8), "checklist target (receptacle)"),
        (missing, dict(marker="o", markersize=10, markerfacecolor="none", markeredgecolor="tab:red",
                       markeredgewidth=2), "checklist object, not satisfied"),
        (satisfied, dict(marker="o", markersize=10, markerfacecolor="none", markeredgecolor="tab:green",
                         markeredgewidth=2), "checklist object, satisfied"),
    )
    for ids, style, label in styles:
        pts = [where[i] for i in sorted(ids) if i in where]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="none", zorder=6, label=label, **style)

    if result.agent_path:
        xs = [p[0] for p in result.agent_path]
        zs = [p[1] for p in result.agent_path]
        ax.plot(xs, zs, "-", color="tab:purple", linewidth=1.5, alpha=0.8, zorder=5, label="agent path")
        ax.plot(xs[0], zs[0], "^", color="tab:green", markersize=10, markeredgecolor="black", zorder=7, label="start")
        ax.plot(xs[-1], zs[-1], "s", color="tab:red", markersize=9, markeredgecolor="black", zorder=7, label="end")

    min_x, min_z, max_x, max_z = layout.bounds
    ax.set_xlim(min_x - 0.3, max_x + 0.3)
    ax.set_ylim(min_z - 0.3, max_z + 0.3)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m, THOR) → right")
    ax.set_ylabel("z (m, THOR) → up")
    ax.set_title("Top-down map, seen from above (THOR is left-handed: +x right, +z up)", fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def render_episode_png(result: EpisodeResult, layout: HouseLayout, world: WorldState, dpi: int = 110) -> bytes:
    """The report figure as PNG bytes (the caller writes them atomically)."""
    fig = Figure(figsize=(15, 6.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax_gc, ax_map = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.5]})
    _plot_timeline(ax_gc, result)
    _plot_map(ax_map, result, layout, world)
    fig.suptitle(f"Episode {result.episode_id} · {result.planner} · {result.instruction_kind} instruction · "
                 f"{result.scenario}", fontsize=12)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
