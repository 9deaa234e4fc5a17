"""``worldmind audit houses``: can the agent get everywhere in a house, and reach what it may pick up?

A privileged check of the simulator's fidelity on real ProcTHOR houses (issue 18): per house,
the rooms whose floor is connected to the agent's start on the conservative free grid (what the
oracle and the generator plan on), and the pickupable objects it can reach: standing floor,
connected to the start, within the arm's reach of the object's box in the object's room; or
inside an openable container that is itself reachable. Each unreachable object is named with
the reason. A malformed house line is reported and the audit goes on.

With ``--act`` the oracle also picks every pickupable object up and puts it back
(``audit_act.py``), which is what "reachable" should mean.

    worldmind audit houses --houses houses_dev.jsonl.gz [--indices 0-99] [--act] --out runs/audit
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence, cast

import numpy as np

from household.atomic_io import atomic_write_text, writable_out_dir
from household.errors import InputError
from household.house_data import HouseError, parse_house_line, iter_house_lines, resolve_data_file
from household.selection import parse_indices

if TYPE_CHECKING:  # the simulator is imported where a house is audited
    from sim_bridge.embedded.collision import CollisionMap
    from sim_bridge.embedded.house_geometry import HouseLayout


@dataclass
class HouseAudit:
    index: int
    house_id: str
    rooms: int
    rooms_reachable: int
    pickupable: int
    pickupable_reachable: int
    unreachable: list[dict[str, str]] = field(default_factory=list)  # {"object_id", "type", "room", "reason"}
    unreachable_rooms: list[str] = field(default_factory=list)
    # Pickupable objects resting on an L- or C-shaped counter (sim_bridge/embedded/shapes.py),
    # and how many of them are reachable: the objects the counters' shape decides (issue 30).
    on_shaped_counters: int = 0
    on_shaped_counters_reachable: int = 0
    # Objects the house places where no agent can reach them (sim_bridge/embedded/placement_checks):
    # {"object_id", "type", "kind", "message"}; each is also among ``unreachable``.
    placement_problems: list[dict[str, str]] = field(default_factory=list)
    # --act only (audit_act.py): per pickupable object, did the oracle pick it up and put it back.
    act: list[dict[str, Any]] | None = None


START_SNAP_M = 0.25  # the conservative grid's extra margin around the agent's collision radius


def _start_component(labels: np.ndarray, grid: Any, x: float, z: float) -> int:
    """The free-grid component the agent starts in. A start the simulator accepts can lie a
    few centimetres inside the conservative grid's margin (house 97 of the dev set: 2.5 cm), so the
    nearest free cell within ``START_SNAP_M`` stands for it; 0 when there is none."""
    i = int(round((x - grid.x0) / grid.resolution))
    j = int(round((z - grid.z0) / grid.resolution))
    if 0 <= i < labels.shape[0] and 0 <= j < labels.shape[1] and labels[i, j]:
        return int(labels[i, j])
    r = int(np.ceil(START_SNAP_M / grid.resolution))
    i0, j0 = max(i - r, 0), max(j - r, 0)
    window = labels[i0:i + r + 1, j0:j + r + 1]
    cells = np.argwhere(window > 0)
    if len(cells) == 0:
        return 0
    d = np.hypot(cells[:, 0] + i0 - i, cells[:, 1] + j0 - j)
    k = int(np.argmin(d))
    if d[k] * grid.resolution > START_SNAP_M:
        return 0
    return int(window[tuple(cells[k])])


def audit_house(house: dict[str, Any], index: int) -> HouseAudit:
    from privileged.reach_region import _room_labels, reachable_region
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment

    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    env.reset(house)
    collision = cast("CollisionMap", env.collision)  # reset() set both
    layout = cast("HouseLayout", env.layout)
    grid = collision.free_grid()
    reach = env.config.reach - 0.05  # the oracle's margin (privileged/oracle.py)
    from scipy import ndimage

    labels, _ = ndimage.label(grid.mask)
    start = _start_component(labels, grid, env.pose.x, env.pose.z)
    connected = labels == start if start else np.zeros_like(grid.mask)
    room_of_cell = _room_labels(grid, collision)
    rooms_reached = {str(r) for r in np.unique(room_of_cell[connected]) if r}
    all_rooms = [r.id for r in layout.rooms]
    table = env.table
    assert table is not None

    reached: dict[str, bool] = {}

    def reachable(oid: str) -> bool:
        if oid not in reached:
            obj = table.objects[oid]
            reached[oid] = bool(start) and reachable_region(env, obj, grid, reach) is not None
        return reached[oid]

    audit = HouseAudit(index, layout.house_id, len(all_rooms), len(rooms_reached & set(all_rooms)), 0, 0,
                       unreachable_rooms=sorted(set(all_rooms) - rooms_reached),
                       placement_problems=[p.to_dict() for p in env.placement_problems])
    misplaced = {p.object_id: p.message for p in env.placement_problems}
    for oid, obj in sorted(table.objects.items()):
        if not obj.active or not obj.affords("pickupable"):
            continue
        audit.pickupable += 1
        parent = table.objects.get(obj.parent) if obj.parent else None
        on_shaped = any(a.parts is not None for a in table.ancestors(obj))
        audit.on_shaped_counters += on_shaped
        room = collision.room_at(float(obj.position[0]), float(obj.position[2]))
        if oid in misplaced:  # floor near it proves nothing: nothing can see or take it
            audit.unreachable.append({"object_id": oid, "type": obj.type, "room": room or "",
                                      "reason": misplaced[oid]})
            continue
        if reachable(oid) or (parent is not None and parent.affords("openable") and reachable(parent.id)):
            audit.pickupable_reachable += 1
            audit.on_shaped_counters_reachable += on_shaped
            continue
        if room is None:
            reason = "not inside any room's floor polygon"
        elif room not in rooms_reached:
            reason = f"its room {room} cannot be entered from the start"
        elif parent is not None and parent.affords("openable"):
            reason = f"no free floor within {reach:.2f} m of it or of its container {parent.id}"
        else:
            reason = f"no free floor within {reach:.2f} m of it in its room"
        audit.unreachable.append({"object_id": oid, "type": obj.type, "room": room or "", "reason": reason})
    return audit


def _act_summary(results: list[HouseAudit]) -> dict[str, Any]:
    """Totals of --act: objects acted on, picked up, put back, and those the floor-distance count
    calls reachable that the oracle could not pick up (what that count overstates)."""
    rows = [(a, r) for a in results for r in (a.act or [])]
    unreachable = {(a.index, u["object_id"]) for a in results for u in a.unreachable}
    return {"objects": len(rows), "picked": sum(r["picked"] for _, r in rows),
            "put_back": sum(r["put_back"] for _, r in rows),
            "counted_reachable_not_picked": sum(not r["picked"] and (a.index, r["object_id"]) not in unreachable
                                                for a, r in rows)}


def _write_act_tsv(path: Path, results: list[HouseAudit]) -> None:
    """One line per object acted on: the compact per-object result of --act."""
    lines = ["house\tobject_id\ttype\treceptacle\tpicked\tput_back\tsteps\treason"]
    for a in results:
        for r in a.act or []:
            lines.append("\t".join([str(a.index), r["object_id"], r["type"], r["receptacle"], str(int(r["picked"])),
                                    str(int(r["put_back"])), str(r["steps"]), r["reason"].replace("\t", " ")]))
    atomic_write_text(path, "\n".join(lines) + "\n")


def run_audit(houses_file: str, indices: Sequence[int] | None, out_dir: str | Path,
              data_dir: str | None = None, progress: bool = True, act: bool = False) -> dict[str, Any]:
    path = resolve_data_file(houses_file, data_dir)
    wanted = set(indices) if indices is not None else None
    results: list[HouseAudit] = []
    problems: list[str] = []
    seen: set[int] = set()
    started = time.monotonic()
    try:
        for lineno, line in iter_house_lines(path):
            if wanted is not None and lineno not in wanted:
                continue
            seen.add(lineno)
            if not line.strip():
                continue
            try:
                house = parse_house_line(path, lineno, line)
                audit = audit_house(house, lineno)
                if act:
                    from evaluation.audit_act import act_house

                    audit.act = [asdict(r) for r in act_house(house)]
            except (HouseError, ValueError, KeyError, TypeError) as exc:  # one bad house never stops the audit
                problems.append(f"{path}:{lineno + 1}: {exc}")
                print(f"audit: skipped house {lineno}: {exc}", file=sys.stderr)
                continue
            results.append(audit)
            if progress:
                print(f"[audit {len(results)}{'/' + str(len(wanted)) if wanted else ''}] house {lineno}: rooms "
                      f"{audit.rooms_reachable}/{audit.rooms}, pickupable {audit.pickupable_reachable}/"
                      f"{audit.pickupable}" + (f", picked up and put back {sum(r['put_back'] for r in audit.act)}"
                                               if audit.act is not None else ""), file=sys.stderr, flush=True)
    except HouseError as exc:  # the file is damaged from here on: keep what was audited
        problems.append(str(exc))
        print(f"audit: {exc}", file=sys.stderr)
    if wanted is not None:
        problems += [f"{path}: no house at index {i}" for i in sorted(wanted - seen)]
    total_p = sum(a.pickupable for a in results)
    reach_p = sum(a.pickupable_reachable for a in results)
    summary: dict[str, Any] = {
        "houses": len(results),
        "houses_all_rooms_reachable": sum(a.rooms_reachable == a.rooms for a in results),
        "rooms": sum(a.rooms for a in results), "rooms_reachable": sum(a.rooms_reachable for a in results),
        "pickupable": total_p, "pickupable_reachable": reach_p,
        "pickupable_reachable_share": round(reach_p / total_p, 4) if total_p else None,
        "placement_problems": sum(len(a.placement_problems) for a in results),
        "on_shaped_counters": sum(a.on_shaped_counters for a in results),
        "on_shaped_counters_reachable": sum(a.on_shaped_counters_reachable for a in results),
        "problems": problems, "wall_time_s": round(time.monotonic() - started, 1),
    }
    if act:
        summary["act"] = _act_summary(results)
    data = {"houses_file": str(path), "summary": summary, "houses": [asdict(a) for a in results]}
    out = Path(out_dir)
    atomic_write_text(out / "audit.json", json.dumps(data, indent=1) + "\n")
    if act:
        _write_act_tsv(out / "act.tsv", results)
    return data


def main_audit(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="worldmind audit", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", metavar="WHAT")
    sub.required = True
    h = sub.add_parser("houses", help="rooms and pickupable objects reachable from the start, per house")
    h.add_argument("--houses", required=True, metavar="FILE", help="houses file (.jsonl or .jsonl.gz)")
    h.add_argument("--indices", default=None, help="house indices (0-based lines), e.g. 0-9,12 (default: all)")
    h.add_argument("--out", required=True, metavar="DIR", help="folder for audit.json")
    h.add_argument("--data-dir", default=None, help="folder holding the houses file (also: $WORLDMIND_DATA_DIR)")
    h.add_argument("--act", action="store_true",
                   help="also have the oracle pick up every pickupable object from the start pose and put it back "
                        "(per object: picked, put_back, steps, reason; act.tsv next to audit.json; about "
                        "0.3 s per object: 13 min for the 100 dev houses as two processes of 50)")
    try:
        args = ap.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        writable_out_dir(args.out)  # a file, a device or a full disk as --out: refused before the audit runs
        data = run_audit(args.houses, parse_indices(args.indices) if args.indices else None, args.out, args.data_dir,
                         act=args.act)
    except (InputError, FileNotFoundError) as exc:
        print(f"worldmind audit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nworldmind audit: interrupted", file=sys.stderr)
        return 130
    s = data["summary"]
    share = s["pickupable_reachable_share"]
    print(f"Audit of {s['houses']} house(s): every room reachable in {s['houses_all_rooms_reachable']}; rooms "
          f"{s['rooms_reachable']}/{s['rooms']}; pickupable objects reachable {s['pickupable_reachable']}/"
          f"{s['pickupable']}" + (f" ({100 * share:.1f}%)" if share is not None else "")
          + (f"; {s['placement_problems']} object(s) placed out of reach" if s["placement_problems"] else "")
          + (f"; on L/C counters {s['on_shaped_counters_reachable']}/{s['on_shaped_counters']}"
             if s["on_shaped_counters"] else "")
          + (f"; {len(s['problems'])} problem(s)" if s["problems"] else "") + f" -> {Path(args.out) / 'audit.json'}")
    if "act" in s:
        a = s["act"]
        print(f"Acting (oracle from the start pose): picked up {a['picked']}/{a['objects']}, put back {a['put_back']}; "
              f"{a['counted_reachable_not_picked']} counted reachable above could not be picked up "
              f"-> {Path(args.out) / 'act.tsv'}")
    return 0
