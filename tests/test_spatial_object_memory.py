"""The planner's object memory backed by the spatial semantic memory (issue 31, item 3):
``planner.spatial_object_memory.SpatialObjectMemory`` hands the planner the memory's object rows,
keyed by the segmenter's ids, in THOR coordinates; the agent runs on it end to end."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from spatial_scene import Box, render, turn

from household.errors import InputError
from household.frames import ros_to_thor_points
from household.types import Observation
from memory.pipeline import MemoryPipeline
from perception.perceive import UNKNOWN, Perception
from planner.agent_config import AgentConfig
from planner.factory import make_agent
from planner.holomind import HoloMindAgent
from planner.object_tracker import ObjectTracker
from planner.spatial_object_memory import SpatialObjectMemory, sensor_errors_for, spatial_memory
from tests.test_holomind_agent import cup_in_fridge, run_guarded
from tests.test_object_memory import assert_is_object_memory

TABLE = Box("Table|1", "DiningTable", (2.0, 0.0, 0.375), (1.0, 1.6, 0.75))
APPLE = Box("Apple|1", "Apple", (2.0, 0.3, 0.8), (0.1, 0.1, 0.1))
MUG = Box("Mug|1", "Mug", (1.8, -0.4, 0.8), (0.12, 0.12, 0.1))
CHAIR = Box("Chair|1", "Chair", (3.2, 0.0, 0.45), (0.45, 0.45, 0.9))
ROOM = [TABLE, APPLE, MUG, CHAIR]
SPOTS = [(0.0, 0.0, 1.5), (0.0, 2.0, 1.5), (4.5, 0.0, 1.5), (2.0, -2.5, 1.5)]


def look_around(memory: SpatialObjectMemory | ObjectTracker, boxes: list[Box], start: int = 0,
                width: int = 160, height: int = 120) -> int:
    step = start
    for spot in SPOTS:
        for obs in turn(boxes, spot, start_step=step, n=8, width=width, height=height):
            memory.integrate(obs)
            step += 1
    return step


def fresh(config: AgentConfig | None = None) -> SpatialObjectMemory:
    made = spatial_memory(config or AgentConfig())
    assert isinstance(made, SpatialObjectMemory)
    return made


def thor_box(box: Box) -> tuple[np.ndarray, np.ndarray]:
    corners = ros_to_thor_points(np.stack([box.lo, box.hi]))
    return corners.min(axis=0), corners.max(axis=0)


def test_it_is_an_object_memory_member_by_member() -> None:
    memory = fresh(AgentConfig(depth_noise_k=0.01))
    assert memory.depth_noise_k == 0.01
    assert_is_object_memory(memory)


def test_records_are_the_memory_rows_keyed_by_segmenter_id_in_thor() -> None:
    """Every object the frames showed is a record under the segmenter's id, its box the memory
    row's box converted to THOR (within a voxel of the true box), its type the row's label; and
    the tracker, fed the same frames, knows the same ids at the same places."""
    memory, tracker = fresh(), ObjectTracker()
    look_around(memory, ROOM)
    look_around(tracker, ROOM)
    assert sorted(memory.objects) == sorted(b.object_id for b in ROOM) == sorted(tracker.objects)
    for box in ROOM:
        rec = memory.get(box.object_id)
        assert rec is not None and rec.object_type == box.label and not rec.moved
        row = memory.row_of[box.object_id]
        assert memory.memory.table.label_of(row) == box.label
        lo, hi = thor_box(box)
        assert np.allclose(rec.box_min, lo, atol=0.051) and np.allclose(rec.box_max, hi, atol=0.051), box.object_id
        assert np.linalg.norm(rec.centroid - tracker.objects[box.object_id].centroid) < 0.06
        assert rec.seen_count > 1 and rec.first_seen <= rec.last_seen
        assert rec.type_votes == {box.label: rec.seen_count}  # views that named it, as the tracker counts
    assert [o.object_id for o in memory.of_type("Mug")] == ["Mug|1"]


def test_visible_now_is_the_latest_frame() -> None:
    memory = fresh()
    obs = render(ROOM, (0.0, 0.0, 1.5), 0.0, 20.0)
    memory.integrate(obs)
    counts = np.bincount(obs.instance_ids.ravel())
    expected = {lab.object_id: int(counts[k]) for k, lab in obs.id_to_label.items() if counts[k] >= 3}
    assert memory.visible_now == expected and "Apple|1" in expected
    memory.integrate(render(ROOM, (0.0, 0.0, 1.5), 180.0, 20.0))  # facing away
    assert memory.visible_now == {}


def test_a_held_object_is_not_mapped_and_hides_what_is_behind_it() -> None:
    """The mug in the gripper is visible (the skills look for it) but not integrated: no row
    grows along the path, and nothing behind its pixels counts as seen empty."""
    memory = fresh()
    look_around(memory, ROOM)
    row = memory.row_of["Mug|1"]
    voxels_before = int(memory.memory.table.n_voxels[row])
    # the mug now rides in front of the camera at every spot
    for i, spot in enumerate(SPOTS):
        in_hand = Box("Mug|1", "Mug", (spot[0] + 0.4, spot[1], spot[2] - 0.3), (0.12, 0.12, 0.1))
        obs = render([TABLE, APPLE, CHAIR, in_hand], spot, 0.0, 20.0, step=100 + i)
        obs = dataclasses.replace(obs, agent=dataclasses.replace(obs.agent, held_object_id="Mug|1"))
        memory.integrate(obs)
        assert "Mug|1" in memory.visible_now
        assert memory.last_frame is not None and memory.last_frame.frame is not None
        assert "Mug|1" not in memory.last_frame.seen
    assert memory.row_of["Mug|1"] == row and int(memory.memory.table.n_voxels[row]) <= voxels_before
    assert len(memory.memory.objects_of_type("Mug")) <= 1


def test_a_moved_object_gets_a_new_row_and_the_old_place_retires() -> None:
    """The agent puts the apple on the chair: the record says so at once (``note_moved``), the
    next views of it refresh the record from a new row, and the old row is retired once its
    place is seen empty: one apple, where it now is (a 320 x 240 camera: at 160 x 120 a 10 cm
    apple's empty place shows too few pixels from these spots for the memory to judge it gone)."""
    memory = fresh()
    step = look_around(memory, ROOM, width=320, height=240)
    old_row = memory.row_of["Apple|1"]
    rec = memory.get("Apple|1")
    assert rec is not None
    moved = Box("Apple|1", "Apple", (3.2, 0.0, 0.95), (0.1, 0.1, 0.1))  # onto the chair's seat
    target = ros_to_thor_points(np.asarray(moved.center))
    memory.note_moved("Apple|1", target)
    assert rec.moved and np.allclose(rec.centroid, target)
    look_around(memory, [TABLE, moved, MUG, CHAIR], start=step, width=320, height=240)
    assert memory.get("Apple|1") is rec and not rec.moved  # the same record, refreshed
    assert memory.row_of["Apple|1"] != old_row
    assert memory.memory.record(old_row).status == "retired"
    assert np.linalg.norm(rec.centroid - target) < 0.06
    assert len(memory.memory.objects_of_type("Apple")) == 1


def test_a_look_alikes_name_now_and_then_does_not_rename_the_record() -> None:
    """A detector calls the mug a cup in one view of four: the record stays a Mug on the Mug row
    (the cup views make a row of their own, which is not the record's); once most views say Cup
    it is a Cup, on the Cup row."""
    memory = fresh()

    def view(step: int, label: str) -> None:
        obs = render(ROOM, (0.0, 0.0, 1.5), 0.0, 20.0, step=step)
        k = next(k for k, lab in obs.id_to_label.items() if lab.object_id == "Mug|1")
        obs.id_to_label[k] = dataclasses.replace(obs.id_to_label[k], object_type=label)
        memory.integrate(obs)

    for step, label in enumerate(["Mug", "Mug", "Cup", "Mug"]):
        view(step, label)
    rec = memory.get("Mug|1")
    assert rec is not None and rec.object_type == "Mug" and rec.type_votes == {"Mug": 3, "Cup": 1}
    assert memory.memory.table.label_of(memory.row_of["Mug|1"]) == "Mug"
    assert [o.object_id for o in memory.of_type("Cup")] == []
    for step in range(4, 7):
        view(step, "Cup")
    assert rec.object_type == "Cup" and memory.memory.table.label_of(memory.row_of["Mug|1"]) == "Cup"


def test_states_and_the_agents_effects_are_kept_per_record() -> None:
    memory = fresh()
    obs = render(ROOM, (0.0, 0.0, 1.5), 0.0, 20.0, step=5)
    k = next(k for k, lab in obs.id_to_label.items() if lab.object_id == "Mug|1")
    obs.id_to_label[k] = dataclasses.replace(obs.id_to_label[k], states=(("isDirty", True),))
    memory.integrate(obs)
    assert memory.seen_state("Mug|1", "isDirty", 5) == (True, True)
    assert memory.seen_state("Mug|1", "isDirty", 6) == (False, None)
    memory.note_state("Mug|1", "isDirty", False)
    assert memory.objects["Mug|1"].state["isDirty"] is False
    memory.note_gone("Apple|1")
    assert memory.get("Apple|1") is not None and memory.of_type("Apple") == []
    memory.note_state("Nothing|9", "isDirty", True)  # never seen: nothing to mark, no error
    memory.note_moved("Nothing|9")
    assert memory.get("Nothing|9") is None


def test_a_description_finds_records_the_planner_can_act_on() -> None:
    memory = fresh()
    look_around(memory, ROOM)
    hits = memory.find("apple on the dining table")
    assert hits and hits[0][0].object_id == "Apple|1"
    assert memory.find("mug")[0][0].object_id == "Mug|1"
    memory.note_gone("Mug|1")
    assert all(rec.object_id != "Mug|1" for rec, _ in memory.find("mug"))


def test_a_detector_needs_several_views_before_the_planner_sees_an_object() -> None:
    """Behind a detector with false detections (``confirm_views`` 2) the memory counts an object
    after the agent's ``confirm_views`` sightings (not the scene map's 3), and so does the
    planner's record."""
    config = AgentConfig(confirm_views=2, depth_noise_k=0.0)
    errors = sensor_errors_for(config)
    assert errors.false_detections and not errors.label_confusion and not errors.imperfect_masks
    memory = fresh(config)
    assert memory.memory.config.min_observations == 2
    memory.integrate(render(ROOM, (0.0, 0.0, 1.5), 0.0, 20.0, step=0))
    assert memory.objects == {} and len(memory.memory.objects("tentative")) > 0
    # seen once: a glimpse where the apple is, which a search looks at again
    assert set(memory.glimpses("Apple")) == {"Apple|1"} and memory.glimpses("Laptop") == {}
    glimpse = memory.glimpses("Apple")["Apple|1"]
    memory.integrate(render(ROOM, (0.0, 0.0, 1.5), 0.0, 20.0, step=1))
    assert "Apple|1" in memory.objects and memory.glimpses("Apple") == {}
    assert np.linalg.norm(memory.objects["Apple|1"].centroid - glimpse) < 0.05  # where it was glimpsed


def test_an_id_seen_once_gets_no_record_on_a_row_that_counts() -> None:
    """A detector's false detection has a name of its own each frame; one that falls where the
    apple is goes to the apple's row, which counts. The planner acts on ids, so that id gets no
    record (it names nothing the robot can take); the apple's own id keeps its record."""
    memory = fresh(AgentConfig(confirm_views=2, depth_noise_k=0.0))
    for step in range(2):
        memory.integrate(render(ROOM, (0.0, 0.0, 1.5), 0.0, 20.0, step=step))
    assert "Apple|1" in memory.objects

    def apple_named_spurious(step: int) -> Observation:
        obs = render(ROOM, (0.0, 0.0, 1.5), 0.0, 20.0, step=step)
        k = next(k for k, lab in obs.id_to_label.items() if lab.object_id == "Apple|1")
        obs.id_to_label[k] = dataclasses.replace(obs.id_to_label[k], object_id="spurious|2.0")
        return obs

    memory.integrate(apple_named_spurious(2))
    assert memory.row_of["spurious|2.0"] == memory.row_of["Apple|1"]  # the same place: the same row
    assert "spurious|2.0" not in memory.objects
    assert [o.object_id for o in memory.of_type("Apple")] == ["Apple|1"]
    # seen again under that id, it is an object the agent can name
    memory.integrate(apple_named_spurious(3))
    assert "spurious|2.0" in memory.objects


def test_perception_leaves_ignored_ids_unknown_without_a_warning() -> None:
    obs = render(ROOM, (0.0, 0.0, 1.5), 0.0, 20.0)
    k = next(k for k, lab in obs.id_to_label.items() if lab.object_id == "Mug|1")
    frame = Perception().process(obs, ignore_ids=("Mug|1",))
    assert all(o.source_id != "Mug|1" for o in frame.objects)
    assert np.all(frame.instance_of_pixel[obs.instance_ids == k] == UNKNOWN)
    assert frame.warnings == []


def test_every_pipeline_leaves_the_held_object_out() -> None:
    """Bag replay, memory-eval and the memory node feed the same pipeline: the object in the
    gripper (``agent.held_object_id``) is not mapped there either."""
    pipeline = MemoryPipeline.build(min_pixels=3)
    obs = render(ROOM, (0.0, 0.0, 1.5), 0.0, 20.0)
    held = dataclasses.replace(obs, agent=dataclasses.replace(obs.agent, held_object_id="Mug|1"))
    result = pipeline.process(held)
    assert "Mug|1" not in result.seen and "Table|1" in result.seen
    assert pipeline.memory.objects_of_type("Mug") == []
    assert "Mug|1" in MemoryPipeline.build(min_pixels=3).process(obs).seen  # not held: mapped


def test_the_integration_report_names_each_observations_row() -> None:
    pipeline = MemoryPipeline.build()
    result = pipeline.process(render(ROOM, (0.0, 0.0, 1.5), 0.0, 20.0))
    assert result.frame is not None and len(result.report.rows) == len(result.frame.objects) == len(result.seen) > 0
    for obs_, row in zip(result.frame.objects, result.report.rows):
        assert pipeline.memory.table.label_of(row) == obs_.label


def test_the_agent_does_a_task_grounding_through_the_spatial_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """"Put a cup in the fridge" in dev house 0 with ``object_memory="spatial"``: the agent's
    object memory is the spatial one, fed every frame, and the cup it put away is a row of it."""
    agent = HoloMindAgent(AgentConfig(object_memory="spatial"))
    result, guard, inner = run_guarded(cup_in_fridge(80), monkeypatch, agent)
    assert guard.violations == []
    assert result.gc == 1.0, result.extra.get("agent_notes")
    memory = inner.tracker
    assert isinstance(memory, SpatialObjectMemory) and memory.memory.frames > 1
    cups = [o for o in memory.objects.values() if o.object_type == "Cup"]
    assert cups and all(o.object_id in memory.row_of for o in cups)
    assert any(h.startswith("pick") for h in inner.history)
    report = result.extra["object_memory"]
    assert report["kind"] == "spatial" and report["frames"] == memory.memory.frames + report["frames_skipped"]
    assert report["objects"] == len(memory.memory) > 0 and report["records"] == len(memory.objects)
    assert report["integration_ms"] > 0


def test_an_unknown_object_memory_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="object_memory: 'voxels'"):
        AgentConfig(object_memory="voxels")
    with pytest.raises(InputError, match="object_memory: 'voxels'"):
        make_agent("deterministic", None, object_memory="voxels")
    assert isinstance(HoloMindAgent(AgentConfig(object_memory="spatial")).object_memory(AgentConfig()),
                      SpatialObjectMemory)


def test_every_object_memory_name_resolves_to_a_factory_of_the_memory_protocol() -> None:
    """``OBJECT_MEMORIES`` is the one table of names (the CLI's choices, AgentConfig's check);
    each entry imports and builds an object memory, so a name cannot be offered without one."""
    from planner.agent_config import OBJECT_MEMORIES
    from planner.holomind import object_memory_factory
    from planner.object_memory import ObjectMemory

    assert set(OBJECT_MEMORIES) == {"tracker", "spatial"}
    for name in OBJECT_MEMORIES:
        memory = object_memory_factory(name)(AgentConfig(object_memory=name))
        assert isinstance(memory, ObjectMemory), name


def test_with_noisy_depth_the_box_is_the_rows_cut_to_the_best_looks() -> None:
    """Under noisy depth and pose the row's voxels come from every view, far ones too, and its
    box grows towards where the agent stood (dev-098-0 under ``--sensors realistic``: the agent
    stopped where the box was in reach and the object was 1.54 to 2.29 m away, 7 times). The box
    the planner gets is the row's, cut to the best looks' box grown by three of their sigma."""
    memory = fresh(AgentConfig(depth_noise_k=0.004))
    a = np.array
    row = (a([0.0, 0.0, 0.0]), a([1.0, 1.0, 1.0]))  # smeared: the object is 0.4..0.6 on x
    close = (a([0.4, 0.2, 0.3]), a([0.6, 0.5, 0.7]))
    lo, hi, sigma = memory._bounded("Mug|1", *row, close, 0.01, moved=False)
    assert sigma == 0.01
    assert np.allclose(lo, [0.37, 0.17, 0.27]) and np.allclose(hi, [0.63, 0.53, 0.73])  # the look +- 3 sigma
    # a far look (four times the noise) neither widens nor replaces the best look
    far = (a([0.1, 0.0, 0.0]), a([0.9, 0.6, 0.9]))
    lo2, hi2, sigma2 = memory._bounded("Mug|1", *row, far, 0.04, moved=False)
    assert np.allclose(lo2, lo) and np.allclose(hi2, hi) and sigma2 == 0.01
    # a look as good from another side widens it (a partial view adds what the first missed)
    side = (a([0.45, 0.2, 0.2]), a([0.62, 0.5, 0.6]))
    lo3, hi3, _ = memory._bounded("Mug|1", *row, side, 0.012, moved=False)
    assert np.isclose(lo3[2], 0.17) and np.isclose(hi3[0], 0.65)
    # seen clear of the best look (moved by someone): the new look replaces it; the row, still
    # holding the old place only, does not meet it: the look's own box
    moved_to = (a([3.0, 0.2, 3.0]), a([3.2, 0.5, 3.3]))
    lo4, hi4, _ = memory._bounded("Mug|1", *row, moved_to, 0.02, moved=False)
    assert np.allclose(lo4, moved_to[0]) and np.allclose(hi4, moved_to[1])
    # the agent moved it: the next look replaces the best one whatever its noise
    lo5, hi5, sigma5 = memory._bounded("Mug|1", *row, far, 0.04, moved=True)
    assert sigma5 == 0.04 and np.allclose(lo5, [0.0, 0.0, 0.0]) and np.allclose(hi5, [1.0, 0.72, 1.0])


def test_with_exact_depth_the_box_is_the_rows() -> None:
    """No noise: the row's box as it is (the cut is for noisy depth only)."""
    memory = fresh()
    look_around(memory, ROOM)
    assert not memory._looks
    rec = memory.get("Table|1")
    row = memory.row_of["Table|1"]
    lo, hi = (memory.memory.table.aabb_min[row], memory.memory.table.aabb_max[row])
    corners = ros_to_thor_points(np.stack([lo, hi]))
    assert rec is not None and np.allclose(rec.box_min, corners.min(axis=0)) and np.allclose(rec.box_max, corners.max(axis=0))


def test_a_rows_box_in_thor_is_the_box_of_its_corners_in_thor() -> None:
    """``_thor_box`` (written out for speed) against the definition: both corners through
    ``ros_to_thor_points``, then the per-axis bounds."""
    from planner.spatial_object_memory import _thor_box

    rng = np.random.default_rng(3)
    for _ in range(200):
        lo = rng.normal(0, 3, 3)
        hi = lo + rng.uniform(0, 2, 3) * (rng.random(3) > 0.1)  # flat boxes too
        for a, b in ((lo, hi), (lo.astype(np.float32), hi.astype(np.float32))):
            corners = ros_to_thor_points(np.stack([a, b]))
            got = _thor_box(a, b)
            assert got[0].tolist() == corners.min(axis=0).tolist()
            assert got[1].tolist() == corners.max(axis=0).tolist()
