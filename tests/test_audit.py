"""``worldmind audit houses`` (issue 18): rooms and pickupable objects reachable from the start."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from evaluation.audit import main_audit, run_audit
from household.house_data import resolve_data_file


def _house0_line() -> str:
    with gzip.open(resolve_data_file("houses_dev.jsonl.gz"), "rt", encoding="utf-8") as fh:
        return fh.readline()


def _open_plan(house: dict) -> dict:
    """House 0 with one open doorway turned into an empty (open-plan) wall: the only link."""
    door = next(d for d in house["doors"] if d.get("openness") == 1)
    for w in house["walls"]:
        if w["id"] in (door["wall0"], door["wall1"]):
            w["empty"] = True
    house["doors"] = [d for d in house["doors"] if d["id"] != door["id"]]
    return house


def test_audit_counts_reports_and_survives_a_malformed_line(tmp_path: Path, capsys) -> None:
    line = _house0_line()
    houses = tmp_path / "houses.jsonl"
    houses.write_text(line + '{"id": "broken", "rooms": \n' + json.dumps(_open_plan(json.loads(line))) + "\n")
    data = run_audit(str(houses), None, tmp_path / "out", progress=False)
    on_disk = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert on_disk == json.loads(json.dumps(data))
    rows = on_disk["houses"]
    assert [r["index"] for r in rows] == [0, 2]
    assert any(":2:" in p for p in on_disk["summary"]["problems"])  # the malformed line, named, skipped
    for r in rows:
        assert all(isinstance(r[k], int) for k in ("index", "rooms", "rooms_reachable", "pickupable",
                                                     "pickupable_reachable"))
        assert r["rooms_reachable"] == r["rooms"] == 4  # the empty wall does not wall a room off
        assert r["pickupable_reachable"] == r["pickupable"] - len(r["unreachable"])
        # House 0's C-shaped counter (issue 30): every pickupable object on its three runs is reachable.
        assert r["on_shaped_counters"] >= 10 and r["on_shaped_counters_reachable"] == r["on_shaped_counters"]
        for u in r["unreachable"]:
            assert u["object_id"] and u["reason"]


def test_audit_cli_summary_line_and_bad_input(tmp_path: Path, capsys) -> None:
    houses = tmp_path / "h.jsonl"
    houses.write_text(_house0_line())
    assert main_audit(["houses", "--houses", str(houses), "--indices", "0,3", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Audit of 1 house(s): every room reachable in 1;") and "1 problem(s)" in out
    assert "no house at index 3" in json.loads((tmp_path / "o" / "audit.json").read_text())["summary"]["problems"][0]
    assert main_audit(["houses", "--houses", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")]) == 2
    assert main_audit(["houses", "--houses", str(houses), "--indices", "x", "--out", str(tmp_path / "o")]) == 2


def test_a_start_just_inside_the_grid_margin_joins_the_nearest_free_component() -> None:
    """Dev house 97 starts 2.5 cm inside the conservative grid's margin: before, every room and
    every object there counted unreachable (rooms 0/7)."""
    from types import SimpleNamespace

    import numpy as np
    from scipy import ndimage

    from evaluation.audit import START_SNAP_M, _start_component

    mask = np.zeros((40, 40), bool)
    mask[10:30, 21:30] = True  # one free area; the start cell (20, 20) is just outside it
    mask[0:3, 0:3] = True  # another, far away
    labels, _ = ndimage.label(mask)
    grid = SimpleNamespace(x0=0.0, z0=0.0, resolution=0.025)
    assert _start_component(labels, grid, 20 * 0.025, 20 * 0.025) == labels[20, 21]
    assert _start_component(labels, grid, 20 * 0.025, 25 * 0.025) == labels[20, 25]  # on a free cell
    far = 21 * 0.025 - START_SNAP_M - 0.05  # farther than the snap distance from any free cell
    assert _start_component(labels, grid, 20 * 0.025, far) == 0


def test_audit_act_picks_up_and_puts_back_or_names_why_not(tmp_path: Path, capsys) -> None:
    """--act (evaluation/audit_act.py) on house 0 cut down to two pickupable objects: the potato
    on the C counter's back run (picked up from inside the bend and put back) and the vase on a
    shelf inside shelving unit 6|2, which the floor-distance count calls reachable."""
    from household.assets import default_catalog

    catalog = default_catalog()
    keep = {"small|6|20", "small|6|37", "small|7|40", "small|7|44"}

    def prune(objects: list) -> list:
        out = []
        for o in objects:
            asset = catalog.get(o["assetId"])
            if asset is not None and asset.pickupable and o["id"] not in keep:
                continue
            o["children"] = prune(o.get("children") or [])
            out.append(o)
        return out

    house = json.loads(_house0_line())
    house["objects"] = prune(house["objects"])
    houses = tmp_path / "two.jsonl"
    houses.write_text(json.dumps(house) + "\n")
    assert main_audit(["houses", "--houses", str(houses), "--act", "--out", str(tmp_path / "o")]) == 0
    data = json.loads((tmp_path / "o" / "audit.json").read_text())
    acted = {r["object_id"]: r for r in data["houses"][0]["act"]}
    assert set(acted) == keep
    potato, vase, watch = acted["small|6|20"], acted["small|6|37"], acted["small|7|44"]
    assert potato["picked"] and potato["put_back"] and potato["receptacle"] == "6|0" and potato["steps"] > 0
    # on the shelving unit's lower shelf (sealed inside it before furniture levels): taken and put back
    assert vase["picked"] and vase["put_back"] and vase["receptacle"] == "6|2"
    # on a side table's low shelf, under the vase's level: no standing pose within reach sees it;
    # crouched (THOR's Crouch: the camera at 0.9 m) the oracle sees it, takes it and puts it back
    assert watch["picked"] and watch["put_back"] and watch["reason"] == ""
    assert acted["small|7|40"]["picked"]
    assert data["summary"]["act"] == {"objects": 4, "picked": 4, "put_back": 4, "counted_reachable_not_picked": 0}
    tsv = (tmp_path / "o" / "act.tsv").read_text().splitlines()
    assert tsv[0].startswith("house\tobject_id") and len(tsv) == 5
    assert "picked up 4/4, put back 4" in capsys.readouterr().out
