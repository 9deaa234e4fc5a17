"""Spatial memory behaviour on exact synthetic scenes: the voxel index, area-weighted embedding
merges, association (new views, neighbours, fragments), moved/removed objects, queries, views,
and bad frames that must leave the memory unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from spatial_scene import Box, render, turn

from memory.pipeline import MemoryPipeline
from memory.spatial import MemoryInputError, Region, SpatialMemory
from memory.spatial.index import SemanticIndex, blend
from memory.spatial.memory import MemoryConfig
from memory.spatial.object_table import ObjectTable
from memory.spatial.voxels import VoxelIndex
from perception.encoders import Encoders, HashTextEncoder
from perception.perceive import Perception

TABLE = Box("table", "DiningTable", (2.0, 0.0, 0.375), (1.0, 1.6, 0.75))
APPLE = Box("apple", "Apple", (2.0, 0.3, 0.8), (0.1, 0.1, 0.1))
MUG = Box("mug", "Mug", (1.8, -0.4, 0.8), (0.12, 0.12, 0.1))
CHAIR_A = Box("c1", "Chair", (3.2, 0.0, 0.45), (0.45, 0.45, 0.9))
CHAIR_B = Box("c2", "Chair", (3.2, 0.5, 0.45), (0.45, 0.45, 0.9))
ROOM = [TABLE, APPLE, MUG, CHAIR_A, CHAIR_B]
SPOTS = [(0.0, 0.0, 1.5), (0.0, 2.0, 1.5), (4.5, 0.0, 1.5), (2.0, -2.5, 1.5)]


def explore(memory: SpatialMemory, boxes: list[Box], spots=SPOTS, start: int = 0) -> int:
    perception = Perception()
    step = start
    for spot in spots:
        for obs in turn(boxes, spot, start_step=step, n=8):
            report = memory.integrate(perception.process(obs))
            assert not report.skipped
            step += 1
    return step


def labels(memory: SpatialMemory) -> list[str]:
    return sorted(r.label for r in memory.objects())


def snapshot(memory: SpatialMemory) -> dict[str, np.ndarray]:
    out = {f"t/{k}": v for k, v in memory.table.export().items()}
    out.update({f"i/{k}": v for k, v in memory.index.export().items()})
    for name in ("by_object", "by_voxel", "hits"):
        out[name] = getattr(memory.voxels, name).copy()
    return out


def test_voxel_index_keeps_both_orders_and_saturating_hits() -> None:
    vi = VoxelIndex(max_hits=2)
    vi.observe(np.array([0, 0, 1]), np.array([10, 11, 11]))
    vi.observe(np.array([0, 0]), np.array([10, 10]))  # duplicates in one call count once
    vi.observe(np.array([0]), np.array([10]))
    assert list(vi.voxels_of(0)) == [10, 11] and list(vi.voxels_of(1)) == [11]
    assert list(vi.hits_of(np.array([0, 0, 1]), np.array([10, 11, 11]))) == [2, 1, 1]
    q, obj = vi.objects_at(np.array([11, 12, 10]))
    assert sorted(zip(q.tolist(), obj.tolist())) == [(0, 0), (0, 1), (2, 0)]
    assert list(vi.weaken(np.array([0, 1]), np.array([11, 11]))) == [0, 1]  # both pairs at 1 -> gone
    assert list(vi.voxels_of(0)) == [10] and len(vi.voxels_of(1)) == 0
    vi.observe(np.array([2, 2]), np.array([10, 30]))
    vi.merge_object(2, 0)
    assert list(vi.voxels_of(0)) == [10, 30] and len(vi.voxels_of(2)) == 0
    assert list(vi.hits_of(np.array([0]), np.array([10]))) == [2]  # the larger count survives a merge
    assert len(vi.by_voxel) == len(vi.by_object) == 2
    vi.remove_objects(np.array([0]))
    assert len(vi) == 0 and len(vi.by_voxel) == 0


def test_blend_weights_come_from_the_areas_before_the_update() -> None:
    old, new = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    assert np.allclose(blend(old, new, 1.0, 3.0), np.array([0.25, 0.75]) / np.hypot(0.25, 0.75))
    index = SemanticIndex(text_dim=2)
    index.set(0, old)
    index.merge(0, new, None, area_old=1.0, area_new=3.0)
    assert np.allclose(index.text[0], blend(old, new, 1.0, 3.0))


def test_memory_merge_uses_the_area_accumulated_before_each_observation() -> None:
    class Scripted(HashTextEncoder):
        """Returns unit vectors e0, e1, ... in order, so each observation's vector is known."""

        def __init__(self) -> None:
            super().__init__(16)
            self.calls = 0

        def encode_texts(self, texts):  # type: ignore[override]
            out = np.zeros((len(texts), 16), np.float32)
            for i in range(len(texts)):
                out[i, min(self.calls, 15)] = 1.0
                self.calls += 1
            return out

    mem = SpatialMemory(Encoders(Scripted()))
    perception = Perception()
    box = Box("b", "Cabinet", (2.0, 0.0, 1.5), (0.4, 0.6, 0.5))
    areas, vecs = [], []
    for step, x in enumerate((0.0, -1.0)):  # the second view from farther: same object, other area
        frame = perception.process(render([box], (x, 0.0, 1.5), 0.0, 0.0, step=step, floor=False))
        frame.objects[0].text_embedding = np.eye(16, dtype=np.float32)[step + 1]
        areas.append(frame.objects[0].surface_area)
        vecs.append(frame.objects[0].text_embedding)
        mem.integrate(frame)
    assert len(mem) == 1
    a = areas[0] / (areas[0] + areas[1])
    expected = a * vecs[0] + (1 - a) * vecs[1]
    assert np.allclose(mem.index.text[0], expected / np.linalg.norm(expected), atol=1e-6)
    assert mem.table.area[0] == pytest.approx(sum(areas))


def test_exploration_builds_one_object_per_box() -> None:
    mem = SpatialMemory()
    explore(mem, ROOM)
    assert labels(mem) == ["Apple", "Chair", "Chair", "DiningTable", "Mug"]
    for box in ROOM:
        rec = min(mem.objects_of_type(box.label), key=lambda r: np.linalg.norm(r.center - box.center))
        assert np.linalg.norm(rec.center - np.asarray(box.center)) < 0.06, box.object_id
        assert np.all(rec.aabb_min <= box.lo + 0.05) and np.all(rec.aabb_max >= box.hi - 0.1)
    assert (min(r.object_id for r in mem.objects_of_type("Chair")), max(r.object_id for r in mem.objects_of_type("Chair"))) \
        in mem.distinct  # side by side in one frame: never to be merged


def test_partial_views_of_one_object_become_one_object() -> None:
    wardrobe = Box("w", "Wardrobe", (3.0, 0.0, 1.0), (0.6, 1.2, 2.0))
    mem = SpatialMemory()
    perception = Perception()
    mem.integrate(perception.process(render([wardrobe], (0.5, 0.0, 1.5), 0.0, 0.0, step=0)))  # front face only
    mem.integrate(perception.process(render([wardrobe], (3.0, -2.5, 1.5), 90.0, 0.0, step=1)))  # side face only
    # The two faces share only an edge: two fragments, until one view spans both.
    mem.integrate(perception.process(render([wardrobe], (1.0, -2.0, 1.5), 45.0, 0.0, step=2)))
    assert labels(mem) == ["Wardrobe"] and len(mem.objects("merged")) <= 1
    rec = mem.objects()[0]
    assert np.all(rec.aabb_min <= wardrobe.lo + 0.05) and rec.aabb_max[0] >= wardrobe.hi[0] - 0.05


def test_moved_object_is_retired_at_its_old_place_not_duplicated() -> None:
    mem = SpatialMemory()
    step = explore(mem, ROOM)
    old = mem.objects_of_type("Apple")[0]
    moved_apple = Box("apple", "Apple", (3.2, 0.0, 0.95), (0.1, 0.1, 0.1))  # onto chair A's seat
    report_steps = explore(mem, [TABLE, moved_apple, MUG, CHAIR_A, CHAIR_B], start=step)
    assert report_steps > step
    apples = mem.objects_of_type("Apple")
    assert len(apples) == 1 and np.linalg.norm(apples[0].center - np.asarray(moved_apple.center)) < 0.06
    assert mem.record(old.object_id).status == "retired"
    assert labels(mem) == ["Apple", "Chair", "Chair", "DiningTable", "Mug"]


def test_removed_object_is_retired_and_occluded_one_is_kept() -> None:
    mem = SpatialMemory()
    step = explore(mem, ROOM)
    mug = mem.objects_of_type("Mug")[0]
    explore(mem, [TABLE, APPLE, CHAIR_A, CHAIR_B], start=step)
    assert mem.record(mug.object_id).status == "retired"
    # A crate hidden behind a wall from the only place the camera looks from stays remembered.
    crate = Box("crate", "Box", (4.0, 0.0, 0.2), (0.4, 0.4, 0.4))
    wall = Box("wall", "Wall", (3.0, 0.0, 1.0), (0.05, 3.0, 2.0))
    mem2 = SpatialMemory()
    perception = Perception()
    mem2.integrate(perception.process(render([crate], (2.0, 0.0, 1.5), 0.0, 30.0, step=0)))
    for s in range(1, 4):
        frame = perception.process(render([crate, wall], (0.0, 0.0, 1.5), 0.0, 10.0, step=s))
        frame.objects = [o for o in frame.objects if o.label != "Wall"]
        mem2.integrate(frame)
    assert labels(mem2) == ["Box"]


def test_nudged_object_is_updated_in_place() -> None:
    box = Box("b", "Cabinet", (2.0, 0.0, 0.4), (0.4, 0.4, 0.8))
    mem = SpatialMemory()
    step = explore(mem, [box], spots=[(0.0, 0.0, 1.5), (2.0, -2.0, 1.5)])
    nudged = Box("b", "Cabinet", (2.0, 0.3, 0.4), (0.4, 0.4, 0.8))
    explore(mem, [nudged], spots=[(0.0, 0.0, 1.5), (2.0, -2.0, 1.5), (0.0, 0.0, 1.5)], start=step)
    recs = mem.objects()
    assert len(recs) == 1 and recs[0].object_id == 0
    assert abs(recs[0].center[1] - 0.3) < 0.06 and recs[0].aabb_min[1] > 0.0  # the old voxels were shed


def test_queries() -> None:
    kitchen = Region("room|1", "Kitchen", ((0.0, -3.0), (2.6, -3.0), (2.6, 3.0), (0.0, 3.0)))
    hall = Region("room|2", "Hallway", ((2.6, -3.0), (6.0, -3.0), (6.0, 3.0), (2.6, 3.0)))
    mem = SpatialMemory(regions=[kitchen, hall])
    explore(mem, ROOM)
    hits = mem.query_text("apple", k=3)
    assert hits[0].label == "Apple" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].region == "room|1"
    assert [h.label for h in mem.query_text("chair in the hallway", k=5)][:2] == ["Chair", "Chair"]
    assert all(h.label != "Chair" for h in mem.query_text("chair in the kitchen", k=5))
    on_table = mem.query_text("mug on the dining table", k=1)
    assert on_table and on_table[0].label == "Mug"
    assert all(h.label != "Mug" for h in mem.query_text("mug on the chair", k=5))
    assert len(mem.objects_of_type("dining table")) == 1
    assert sorted(r.label for r in mem.objects_in_region("Hallway")) == ["Chair", "Chair"]
    near = mem.nearest((3.2, 0.6, 0.5), label="Chair")[0]
    assert np.linalg.norm(near.center - np.asarray(CHAIR_B.center)) < 0.1
    # The verifier sees the stored views and can veto.
    seen = []

    def verifier(text, record, views):
        seen.append(len(views))
        return 0.0 if record.label == "Chair" and record.center[1] < 0.25 else 1.0

    vetted = mem.query_text("chair", k=5, verifier=verifier)
    assert [h.label for h in vetted][:1] == ["Chair"] and all(h.center[1] > 0.25 for h in vetted if h.label == "Chair")
    assert seen and all(0 < n <= mem.config.max_views for n in seen)


def test_views_are_bounded_and_best_first() -> None:
    mem = SpatialMemory(config=MemoryConfig(max_views=2))
    explore(mem, ROOM)
    for rec in mem.objects():
        views = mem.object_views(rec.object_id)
        assert 1 <= len(views) <= 2
        assert [v.score for v in views] == sorted((v.score for v in views), reverse=True)
        assert max(views[0].crop.shape[:2]) <= mem.config.view_max_side


def test_bad_frames_leave_the_memory_unchanged() -> None:
    mem = SpatialMemory()
    step = explore(mem, ROOM, spots=SPOTS[:1])
    before = snapshot(mem)
    perception = Perception()
    frame = perception.process(render(ROOM, (1.0, 0.0, 1.5), 0.0, 20.0, step=step))
    frame.world_from_camera = frame.world_from_camera.copy()
    frame.world_from_camera[:3, :3] *= 1.1
    with pytest.raises(MemoryInputError, match="rigid"):
        mem.integrate(frame)
    frame = perception.process(render(ROOM, (1.0, 0.0, 1.5), 0.0, 20.0, step=step))
    frame.objects[0].text_embedding = np.ones(7, np.float32)
    with pytest.raises(MemoryInputError, match="text_embedding"):
        mem.integrate(frame)
    frame = Perception(perception.config.__class__(voxel_size=0.1)).process(render(ROOM, (1.0, 0.0, 1.5), 0.0, 20.0))
    with pytest.raises(MemoryInputError, match="voxel size"):
        mem.integrate(frame)
    obs = render(ROOM, (1.0, 0.0, 1.5), 0.0, 20.0, step=step)
    obs.depth = obs.depth[:, :10]
    report = MemoryPipeline(mem, perception).process(obs).report
    assert report.skipped and "depth" in report.warnings[0]
    after = snapshot(mem)
    assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)


def test_object_table_votes_and_growth() -> None:
    table = ObjectTable(capacity=1)
    rows = [table.add("Mug", step=i) for i in range(5)]
    assert rows == [0, 1, 2, 3, 4] and table.capacity >= 5
    table.vote(0, table.intern_label("Mug"), 1.0)
    table.vote(0, table.intern_label("Cup"), 0.4)
    table.vote(0, table.intern_label("Cup"), 0.7)
    assert table.label_of(0) == "Cup" and table.record(0).label_votes == {"Mug": 1.0, "Cup": pytest.approx(1.1)}
    for i, name in enumerate(("A", "B", "C", "D")):  # slots are bounded: the weakest is replaced
        table.vote(1, table.intern_label(name), 1.0 + i)
    table.vote(1, table.intern_label("E"), 0.5)
    assert set(table.record(1).label_votes) == {"A", "B", "C", "D"}
    table.vote(1, table.intern_label("E"), 9.0)
    assert table.label_of(1) == "E" and "A" not in table.record(1).label_votes


def test_label_probed_search_scores_only_the_best_labels_and_matches_exact_there() -> None:
    rng = np.random.default_rng(0)
    index = SemanticIndex(text_dim=32)
    protos = np.eye(32, dtype=np.float32)[:4]
    for lab in range(4):
        index.set_label(lab, protos[lab])
    labels_of_row = np.repeat(np.arange(4), 50)
    for row, lab in enumerate(labels_of_row):
        index.set(row, protos[lab] + 0.2 * rng.standard_normal(32).astype(np.float32))
    rows = np.arange(len(labels_of_row))
    query = protos[2] + 0.05 * protos[1]
    probed, p_scores = index.query(rows, labels_of_row, query, None, 10, exact_limit=0, n_probe=1)
    exact, e_scores = index.query(rows, labels_of_row, query, None, 10, exact=True)
    assert set(labels_of_row[probed]) == {2}
    assert np.array_equal(probed, exact) and np.allclose(p_scores, e_scores)
    few, few_scores = index.query(rows[:7], labels_of_row[:7], query, None, 3, exact=True)  # the gather path
    assert np.allclose(few_scores, index.text[few] @ query)


def test_empty_frames_integrate_and_still_clear_space() -> None:
    mem = SpatialMemory()
    crate = Box("crate", "Box", (1.8, -0.4, 0.15), (0.3, 0.3, 0.3))
    step = explore(mem, [crate], spots=SPOTS[:1])
    report = mem.integrate(Perception().process(render([], (0.0, 0.0, 1.5), 180.0, 20.0, step=step)))
    assert report.created == report.updated == report.retired == [] and len(mem) == 1  # crate behind the camera
    frames = [render([], (0.0, 0.0, 1.5), 0.0, 20.0, step=step + 1 + i) for i in range(3)]  # its place, empty
    retired = [r for f in frames for r in mem.integrate(Perception().process(f)).retired]
    assert retired == [0] and len(mem) == 0


def test_min_observations_keeps_a_one_frame_segment_tentative_until_seen_again() -> None:
    """A real segmenter's false positive lives one frame: with min_observations=2 it never counts
    (objects, len, type lookups, text queries), but it is kept and counts on its second sighting."""
    ghost = Box("ghost", "Vase", (1.2, 0.0, 0.1), (0.2, 0.2, 0.2))
    for need, counted_at_once in ((1, True), (2, False)):
        mem = SpatialMemory(config=MemoryConfig(min_observations=need))
        step = explore(mem, ROOM)
        assert labels(mem) == ["Apple", "Chair", "Chair", "DiningTable", "Mug"]
        perception = Perception()
        mem.integrate(perception.process(render(ROOM + [ghost], (0.0, 0.0, 1.5), 0.0, 20.0, step=step)))
        assert ("Vase" in labels(mem)) is counted_at_once
        assert (len(mem) == 6) is counted_at_once
        assert bool(mem.objects_of_type("Vase")) is counted_at_once
        assert any(h.label == "Vase" for h in mem.query_text("vase", k=10)) is counted_at_once
        assert [r.label for r in mem.objects("tentative")] == ([] if counted_at_once else ["Vase"])
        mem.integrate(perception.process(render(ROOM + [ghost], (0.0, 0.0, 1.5), 0.0, 20.0, step=step + 1)))
        assert "Vase" in labels(mem) and len(mem) == 6 and not mem.objects("tentative")
