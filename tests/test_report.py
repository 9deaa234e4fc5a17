"""Episode reports (JSON, Markdown, PNG) and run summaries."""

from __future__ import annotations

import json
import os
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest
from matplotlib.figure import Figure

from evaluation import report as report_module
from household.checklist import ChecklistItem, evaluate_checklist
from evaluation.episodes import Episode
from evaluation.metrics import ScoreTimeline, StepCounter, improvement_rate
from evaluation.report import EpisodeResult, atomic_write_text, write_episode_report, write_summary
from evaluation.report_plot import _plot_map
from household.house_data import load_asset_database, load_house
from sim_bridge.embedded.house_geometry import HouseLayout, parse_layout
from household.types import RoomInfo, WorldState


def wall(room: int, x0: float, z0: float, x1: float, z1: float) -> dict:
    return {"id": f"wall|{room}|{x0:.2f}|{z0:.2f}|{x1:.2f}|{z1:.2f}", "roomId": f"room|{room}",
            "polygon": [{"x": x0, "y": 0.0, "z": z0}, {"x": x1, "y": 0.0, "z": z1},
                        {"x": x1, "y": 2.5, "z": z1}, {"x": x0, "y": 2.5, "z": z0}]}


def square(x0: float, x1: float) -> list[dict]:
    return [{"x": x, "y": 0.0, "z": z} for x, z in ((x0, 0.0), (x1, 0.0), (x1, 4.0), (x0, 4.0))]


@pytest.fixture
def layout() -> HouseLayout:
    shared = (4.0, 0.0, 4.0, 4.0)
    house = {
        "id": "two-rooms",
        "rooms": [{"id": "room|1", "roomType": "Kitchen", "floorPolygon": square(0, 4)},
                  {"id": "room|2", "roomType": "LivingRoom", "floorPolygon": square(4, 8)}],
        "walls": [wall(1, 0, 0, 4, 0), wall(1, 0, 4, 4, 4), wall(1, 0, 0, 0, 4), wall(1, *shared),
                  wall(2, 4, 0, 8, 0), wall(2, 4, 4, 8, 4), wall(2, 8, 0, 8, 4), wall(2, *shared)],
        "doors": [{"id": "door|1|2", "wall0": "wall|1|4.00|0.00|4.00|4.00", "wall1": "wall|2|4.00|0.00|4.00|4.00",
                   "holePolygon": [{"x": 1.5, "y": 0.0, "z": 0.0}, {"x": 2.5, "y": 2.1, "z": 0.0}]}],
        "windows": [{"id": "window|1", "wall0": "wall|1|0.00|0.00|4.00|0.00",
                     "holePolygon": [{"x": 1.0, "y": 0.8, "z": 0.0}, {"x": 2.0, "y": 2.0, "z": 0.0}]}],
        "objects": [],
    }
    return parse_layout(house)


@pytest.fixture
def world() -> WorldState:
    rooms = [RoomInfo("room|1", "Kitchen", [(0, 0), (4, 0), (4, 4), (0, 4)]),
             RoomInfo("room|2", "LivingRoom", [(4, 0), (8, 0), (8, 4), (4, 4)])]
    objects = [
        {"objectId": "fridge", "objectType": "Fridge", "position": {"x": 0.5, "y": 0.9, "z": 0.5}, "isOpen": False,
         "axisAlignedBoundingBox": {"center": {"x": 0.5, "y": 0.9, "z": 0.5}, "size": {"x": 0.8, "y": 1.8, "z": 0.7}}},
        {"objectId": "apple", "objectType": "Apple", "position": {"x": 0.5, "y": 1.0, "z": 0.5},
         "parentReceptacles": ["fridge"]},
        {"objectId": "mug1", "objectType": "Mug", "position": {"x": 6.0, "y": 0.8, "z": 2.0},
         "isFilledWithLiquid": False},
    ]
    return WorldState(objects=objects, agent={}, rooms=rooms, house_id="two-rooms")


def make_result(world: WorldState, *, eid: str = "ep-1", planner: str = "deterministic", kind: str = "detailed",
                extra: dict | None = None) -> EpisodeResult:
    episode = Episode.from_dict({
        "id": eid, "house": {"file": "houses_dev.jsonl.gz", "index": 0}, "scenario": "tidy",
        "instructions": {"detailed": "Apple in the fridge, fill the mug.", "concise": "Apple, mug."},
        "checklist": [{"object": {"type": "Apple"}, "predicate": "inReceptacle", "target": {"type": "Fridge"}},
                      {"object": {"type": "Mug"}, "predicate": "isFilledWithLiquid", "value": "water"}],
        "max_steps": 100,
    })
    steps, timeline, path = StepCounter(), ScoreTimeline(), [(2.0, 2.0)]
    timeline.append(0, 0.0)
    for i, (dx, gc) in enumerate([(0.25, 0.0), (0.25, 0.0), (0.0, 0.5), (0.25, 0.5)], start=1):
        x0, z0 = path[-1]
        name = "MoveAhead" if dx else "PutObject"
        steps.record(name, True, (x0, z0), (x0 + dx, z0), 90, 90, 0, 0)
        path.append((x0 + dx, z0))
        timeline.append(i, gc)
    checklist = evaluate_checklist(episode.checklist, world)
    return EpisodeResult.from_run(episode, instruction_kind=kind, planner=planner, checklist=checklist, steps=steps,
                                  timeline=timeline, agent_path=path, wall_time_s=1.5, extra=extra)


def test_result_from_run_computes_metrics(world: WorldState) -> None:
    r = make_result(world)
    assert (r.gc, r.sr) == (0.5, 0.0)
    assert (r.steps_nav, r.steps_manip, r.steps_total) == (pytest.approx(3.0), 1.0, pytest.approx(4.0))
    assert (r.num_actions, r.failed_actions) == (4, 0)
    assert r.ir_per_step == improvement_rate([0.0, 0.0, 0.0, 0.5, 0.5], [0, 1, 2, 3, 4])
    # The reported IR is on the paper's scale: GC in percent, time t/T over 4 steps.
    assert r.ir == pytest.approx(improvement_rate([0, 0, 0, 50, 50], [0, 0.25, 0.5, 0.75, 1.0]))
    assert r.ir == pytest.approx(100 * 4 * r.ir_per_step)
    assert EpisodeResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_episode_report_files(tmp_path: Path, layout: HouseLayout, world: WorldState) -> None:
    r = make_result(world, eid="ep|pipe")
    paths = write_episode_report(tmp_path / "ep", r, layout, world)
    assert sorted(p.name for p in (tmp_path / "ep").iterdir()) == ["report.json", "report.md", "report.png"]
    assert all(p.stat().st_mode & 0o777 == 0o644 for p in paths.values())

    data = json.loads(paths["json"].read_text())
    for key in ("gc", "sr", "steps_nav", "steps_manip", "steps_total", "ir", "ir_per_step", "checklist", "timeline",
                "agent_path"):
        assert key in data
    assert data["gc"] == 0.5 and data["steps_manip"] == 1.0
    first, second = data["checklist"]
    assert first["description"] == "Apple in Fridge" and first["satisfied"] is True
    assert (first["units"], first["satisfied_units"], first["object_ids"]) == (1, 1, ["apple"])
    assert second["satisfied"] is False and second["object_ids"] == [] and second["candidate_ids"] == ["mug1"]

    md = paths["md"].read_text()
    assert md.startswith("# Episode `ep|pipe`")
    assert "| 0.500 | 0 | 3.00 | 1 | 4.00 |" in md
    assert "- ✅ Apple in Fridge (1/1) — `apple`" in md
    assert "- ❌ Mug is filled with water (0/1)" in md
    assert "![GC over steps and top-down map](report.png)" in md

    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = mpimg.imread(paths["png"])
    assert image.shape[1] > image.shape[0] > 400 and np.ptp(image[..., :3]) > 0.5


def test_map_shows_rooms_walls_objects_path_and_targets(layout: HouseLayout, world: WorldState) -> None:
    r = make_result(world)
    ax = Figure().subplots()
    _plot_map(ax, r, layout, world)
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["checklist target (receptacle)", "checklist object, not satisfied",
                      "checklist object, satisfied", "agent path", "start", "end"]
    assert {t.get_text() for t in ax.texts} == {"Kitchen", "LivingRoom"}
    assert "THOR" in ax.get_xlabel() and "right" in ax.get_xlabel() and "up" in ax.get_ylabel()
    assert "left-handed" in ax.get_title()
    path_line = next(line for line in ax.get_lines() if line.get_label() == "agent path")
    assert list(path_line.get_xdata()) == [p[0] for p in r.agent_path]
    # the shared wall (x = 4) is cut by the door between z = 1.5 and 2.5
    shared = [line for line in ax.get_lines() if list(line.get_xdata()) == [4.0, 4.0]]
    spans = sorted(tuple(line.get_ydata()) for line in shared)
    assert (0.0, 1.5) in spans and (2.5, 4.0) in spans and not any(a < 2.0 < b for a, b in spans)
    # a window does not cut the wall at floor level; it is drawn over it
    south = {(tuple(line.get_xdata()), line.get_color()) for line in ax.get_lines() if list(line.get_ydata()) == [0, 0]}
    assert ((0.0, 4.0), "#263238") in south and ((1.0, 2.0), "#4fc3f7") in south


def test_secrets_and_environment_never_reach_reports(tmp_path: Path, layout: HouseLayout, world: WorldState,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret-999")
    extra = {"llm": {"model": "gpt-x", "api_key": "sk-inline-123", "prompt_tokens": 42, "Authorization": "Bearer x"},
             "seed": 7, "cost": float("nan"), "scores": np.array([0.5, 1.0]), "n": np.int64(3), "where": tmp_path}
    r = make_result(world, extra=extra)
    write_episode_report(tmp_path, r, layout, world)
    write_summary(tmp_path, [r])
    for path in tmp_path.iterdir():
        if path.suffix in (".json", ".md"):
            text = path.read_text()
            assert "sk-env-secret-999" not in text and "sk-inline-123" not in text and "Bearer" not in text
    saved = json.loads((tmp_path / "report.json").read_text())["extra"]
    assert saved == {"llm": {"model": "gpt-x", "prompt_tokens": 42}, "seed": 7, "cost": None, "scores": [0.5, 1.0],
                     "n": 3, "where": repr(tmp_path)}
    assert r.extra["llm"]["api_key"] == "sk-inline-123"  # the caller's data is not mutated


def test_atomic_write_leaves_old_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "summary.json"
    atomic_write_text(target, "old\n")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(report_module.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["summary.json"]  # no temp file left behind


def test_summary_means_groups_and_markdown(tmp_path: Path, world: WorldState) -> None:
    a = make_result(world, eid="a", planner="deterministic", kind="detailed")
    b = make_result(world, eid="b", planner="deterministic", kind="concise")
    world.object("mug1").update(isFilledWithLiquid=True, fillLiquid="water")
    c = make_result(world, eid="c", planner="llm", kind="detailed")
    assert (c.gc, c.sr) == (1.0, 1.0)

    paths = write_summary(tmp_path, [a, b, c])
    data = json.loads(paths["json"].read_text())
    assert data["count"] == 3
    assert data["means"]["gc"] == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert data["means"]["sr"] == pytest.approx(1 / 3)
    assert data["means"]["steps_nav"] == pytest.approx(3.0)
    assert [(g["planner"], g["instruction_kind"], g["count"]) for g in data["groups"]] == [
        ("deterministic", "concise", 1), ("deterministic", "detailed", 1), ("llm", "detailed", 1)]
    assert [row["episode_id"] for row in data["episodes"]] == ["a", "b", "c"]

    md = paths["md"].read_text()
    assert md.startswith("# LongAct summary (3 episodes)")
    assert "| c | llm | detailed | 1.000 | 1 | 3.00 | 1 | 4.00 |" in md
    assert "| **mean** | | | 0.667 | 0.333 | 3.00 | 1.00 | 4.00 |" in md
    assert "## Means by planner and instruction" in md


def test_summary_counts_goals_done_whose_items_are_unmet(tmp_path: Path, world: WorldState) -> None:
    """A goal reported done beside its unmet checklist item is counted, split by what the agent's
    own check said: 'verified' (or no check) is a disagreement without a stated reason."""
    goal = {"status": "done", "predicate": "isFilledWithLiquid", "object_type": "Mug", "target_type": None,
            "bindings": {"object": "mug1"}, "reason": "done"}
    verified = make_result(world, eid="v", extra={"goals": {"g2": {**goal, "check": {"status": "verified",
                                                                                      "reason": "seen"}}}})
    unverified = make_result(world, eid="u", extra={"goals": {"g2": {**goal, "check": {
        "status": "unverified", "reason": "the agent's sensors do not show what it holds"}}}})
    assert verified.gc == 0.5  # the mug is not filled in this world
    data = json.loads(write_summary(tmp_path, [verified, unverified])["json"].read_text())
    assert data["goals_vs_world"] == {"done_but_unmet_units": 2, "by_agent_check": {"unverified": 1, "verified": 1},
                                      "without_stated_reason": 1}
    md = (tmp_path / "summary.md").read_text()
    assert "Goals reported done whose checklist units are unmet: 2 units" in md and "1 without a stated reason" in md


def test_empty_summary_is_still_written(tmp_path: Path) -> None:
    paths = write_summary(tmp_path, [])
    data = json.loads(paths["json"].read_text())
    assert data["count"] == 0 and data["means"]["gc"] is None and data["episodes"] == []
    assert "| **mean** | | | n/a |" in paths["md"].read_text()


def test_report_for_a_real_house(tmp_path: Path) -> None:
    house = load_house("houses_dev.jsonl.gz", 0)
    layout = parse_layout(house)
    types = {a["assetId"]: t for t, assets in load_asset_database().items() for a in assets}

    def walk(objects: list) -> list:
        return [o for obj in objects for o in [obj, *walk(obj.get("children") or [])]]

    world = WorldState(
        objects=[{"objectId": o["id"], "objectType": types[o["assetId"]], "position": o["position"],
                  "parentReceptacles": None} for o in walk(house["objects"])],
        agent={}, rooms=[RoomInfo(r.id, r.room_type, list(r.polygon)) for r in layout.rooms], house_id=house["id"])
    checklist = evaluate_checklist([ChecklistItem.from_dict({"object": {"type": "Potato"}, "predicate": "inRoom",
                                                             "value": "Kitchen"})], world)
    timeline = ScoreTimeline()
    timeline.append(0, checklist.gc)
    episode = Episode.from_dict({"id": "real-0", "house": {"file": "houses_dev.jsonl.gz", "index": 0},
                                 "scenario": "smoke", "instructions": {"detailed": "d", "concise": "c"},
                                 "checklist": [{"object": {"type": "Potato"}, "predicate": "inRoom",
                                                "value": "Kitchen"}], "max_steps": 10})
    result = EpisodeResult.from_run(episode, instruction_kind="concise", planner="none", checklist=checklist,
                                    steps=StepCounter(), timeline=timeline, agent_path=[(4.25, 10.5)], wall_time_s=0.0)
    assert result.gc == 1.0 and result.checklist.items[0].object_ids == ("small|6|17", "small|6|20")
    paths = write_episode_report(tmp_path, result, layout, world)
    assert mpimg.imread(paths["png"]).shape[0] > 400


def test_old_report_json_reads_its_ir_as_per_step(world: WorldState) -> None:
    """Reports written before ir_per_step existed stored the per-step value as ``ir``."""
    r = make_result(world)
    old = r.to_dict()
    old["ir"] = old.pop("ir_per_step")
    back = EpisodeResult.from_dict(json.loads(json.dumps(old)))
    assert back.ir_per_step == r.ir_per_step
    assert back.ir == pytest.approx(r.ir)


def test_report_says_in_a_sentence_why_each_unmet_item_was_missed(tmp_path: Path, layout: HouseLayout,
                                                                  world: WorldState) -> None:
    """Issue 29: the report gives, per unmet checklist item, the cause traced through the goal
    that served it; items carry their types, so no episode file is needed for it."""
    goals = {"g2": {"text": "fill the mug", "status": "failed", "predicate": "isFilledWithLiquid",
                    "object_type": "Mug", "reason": "not_found", "detail": "could not find Sink", "steps_spent": 80}}
    r = make_result(world, extra={"stop_reason": "stop", "goals": goals})
    data = r.to_dict()
    assert data["checklist"][1]["object_type"] == "Mug" and data["checklist"][0]["target_type"] == "Fridge"
    md = write_episode_report(tmp_path / "ep", r, layout, world)["md"].read_text()
    assert "## Why unmet" in md
    assert "- Mug is filled with water: nothing of the type was found (goal g2): could not find Sink" in md
    assert "Apple in Fridge:" not in md.split("## Why unmet")[1].split("## Extra")[0]  # met: no sentence


def test_report_md_escapes_terminal_control_characters_from_the_episode(tmp_path) -> None:
    """Issue 32: an id or instruction with ESC sequences / bidi overrides is written to report.md and
    summary.md escaped the way the CLI echoes it (household.text.printable), never raw."""
    import json as _json

    from worldmind import cli

    ep = {"id": "ctl\x1b[2J\u202e", "house": {"file": "houses_dev.jsonl.gz", "index": 0}, "scenario": "test",
          "instructions": {"detailed": "Turn on the floor lamp.\x1b]0;pwned\x07", "concise": "Lamp on."},
          "checklist": [{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}], "max_steps": 300}
    src = tmp_path / "eps"
    src.mkdir()
    (src / "e.json").write_text(_json.dumps(ep))
    out = tmp_path / "out"
    assert cli.main(["eval", "longact", "--episodes", str(src), "--out", str(out), "--no-render"]) == 0
    mds = list(out.glob("*/report.md")) + [out / "summary.md"]
    assert len(mds) == 2
    for md in mds:
        text = md.read_text()
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text, md
    assert "\\x1b[2J" in mds[0].read_text()
