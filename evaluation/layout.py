"""The house drawn under the agent's path in reports (report.png)."""
from __future__ import annotations

from typing import Any


def report_layout(env: Any, world: Any) -> Any:
    """The house drawn under the agent's path: the embedded simulator's parsed layout, or for
    other backends the rooms of the final ground truth (walls are then not drawn)."""
    layout = getattr(env, "layout", None)
    if layout is not None:
        return layout
    from sim_bridge.embedded.house_geometry import HouseLayout, Room

    return HouseLayout(world.house_id, [Room(r.id, r.room_type, tuple(map(tuple, r.polygon))) for r in world.rooms], [])
