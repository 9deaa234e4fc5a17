"""Top-down picture of a spatial memory against ground truth (one PNG per evaluation phase).

Drawn in REP 103 seen from above: x to the right, y up (z towards the viewer), so the picture is
the true top view. Grey: ground-truth footprints (solid edge: visible in some frame; dotted: never
visible). Memory objects as their box footprints: green matched (with a line to the ground
truth centre), orange duplicates, red other unmatched objects; small grey crosses: retired
objects. Bare ``Figure`` + Agg canvas, no pyplot state.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Polygon, Rectangle

from household.atomic_io import atomic_write_bytes
from household.frames import thor_to_ros_points

if TYPE_CHECKING:
    from evaluation.memory_metrics import GTObject, Matching
    from memory.spatial.memory import SpatialMemory
    from sim_bridge.embedded.env import EmbeddedEnvironment
    from sim_bridge.embedded.house_geometry import HouseLayout


def render_memory_png(path: str | Path, memory: "SpatialMemory", gt: list["GTObject"], m: "Matching",
                      visible: set[str], env: "EmbeddedEnvironment", title: str = "") -> Path:
    import io

    fig = Figure(figsize=(10, 10), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for room in cast("HouseLayout", env.layout).rooms:  # the env was reset (it rendered the frames)
        pts = thor_to_ros_points(np.array([[x, 0.0, z] for x, z in room.polygon]))[:, :2]
        ax.add_patch(Polygon(pts, closed=True, facecolor="#f4f6f8", edgecolor="#263238", linewidth=1.5, zorder=0))
        c = pts.mean(axis=0)
        ax.text(c[0], c[1], room.room_type, ha="center", va="center", fontsize=9, color="#78909c", zorder=1)
    for g in gt:
        seen = g.object_id in visible
        ax.add_patch(Polygon(g.footprint, closed=True, facecolor="#bdbdbd", alpha=0.35 if seen else 0.12,
                             edgecolor="#616161", linestyle="-" if seen else ":", linewidth=0.6, zorder=2))
    for rec in memory.objects("retired"):
        ax.plot(rec.center[0], rec.center[1], "x", color="#9e9e9e", markersize=4, zorder=3)
    colours = {"matched": "#2e7d32", "duplicate": "#ef6c00", "unmatched": "#c62828"}
    for i, row in enumerate(m.mem_rows):
        rec = memory.record(int(row))
        kind = "matched" if m.gt_of_mem[i] >= 0 else ("duplicate" if m.duplicate[i] else "unmatched")
        lo, hi = rec.aabb_min, rec.aabb_max
        ax.add_patch(Rectangle((lo[0], lo[1]), hi[0] - lo[0], hi[1] - lo[1], fill=False, edgecolor=colours[kind],
                               linewidth=1.0, zorder=4))
        if kind == "matched":
            c = gt[m.gt_of_mem[i]].center
            ax.plot([rec.center[0], c[0]], [rec.center[1], c[1]], color=colours[kind], linewidth=0.8, zorder=5)
        else:
            ax.text(rec.center[0], rec.center[1], rec.label, fontsize=6, color=colours[kind], zorder=6)
    handles = [Line2D([], [], color=c, label=k) for k, c in colours.items()]
    handles.append(Line2D([], [], color="#9e9e9e", marker="x", linestyle="", label="retired"))
    ax.legend(handles=handles, loc="upper right", fontsize=8)
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.set_xlabel("x (m, REP 103 forward)")
    ax.set_ylabel("y (m, REP 103 left)")
    ax.set_title(title, fontsize=10)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return atomic_write_bytes(path, buf.getvalue())
