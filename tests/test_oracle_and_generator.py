"""The oracle planner, the lattice search it navigates with, the episode runner and the generator."""

from __future__ import annotations

import math

import pytest

from evaluation.episodes import Episode, load_episodes, validate_episode
from evaluation.generator import GeneratorOptions, generate_for_house
from evaluation.goal_templates import SCENARIOS, words
from evaluation.runner import run_episode
from household.errors import InputError
from planner.lattice_nav import LatticeState, plan_lattice
from privileged.oracle import OraclePlanner
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
from household.house_data import load_asset_database, load_house
from household.types import Action


def _episode(items: list[dict], eid: str = "t") -> Episode:
    return Episode.from_dict({"id": eid, "house": {"file": "houses_dev.jsonl.gz", "index": 0}, "scenario": "Dining & Kitchen",
                              "instructions": {"detailed": "d", "concise": "c"}, "max_steps": 3000, "checklist": items})


def _replay(start: LatticeState, actions: list[str], step: float, rot: float) -> LatticeState:
    x, z, yaw = start.x, start.z, start.yaw
    offsets = {"MoveAhead": 0.0, "MoveRight": 90.0, "MoveBack": 180.0, "MoveLeft": 270.0}
    for a in actions:
        if a in offsets:
            h = math.radians(yaw + offsets[a])
            x, z = x + math.sin(h) * step, z + math.cos(h) * step
        else:
            yaw = (yaw + (rot if a == "RotateRight" else -rot)) % 360.0
    return LatticeState(x, z, yaw)


def test_lattice_plan_is_straight_in_open_space_and_replays_exactly():
    start = LatticeState(0.0, 0.0, 0.0)
    plan = plan_lattice(start, lambda x, z: True, lambda s: s.z >= 0.99 and abs(s.x) < 0.01,
                        lambda s: max(0.0, 1.0 - s.z) / 0.25)
    assert plan is not None and plan.actions == ["MoveAhead"] * 4
    assert plan.cost == pytest.approx(4.0)


def test_lattice_plan_goes_around_a_wall_and_never_enters_it():
    def free(x: float, z: float) -> bool:
        return not (-1.0 < x < 1.0 and 0.9 < z < 1.1)  # a wall across the way

    start = LatticeState(0.0, 0.0, 0.0)
    plan = plan_lattice(start, free, lambda s: s.z >= 2.0, lambda s: max(0.0, 2.0 - s.z) / 0.25)
    assert plan is not None
    assert all(free(s.x, s.z) for s in plan.states)
    end = _replay(start, plan.actions, 0.25, 30.0)
    assert end.z >= 2.0 - 1e-9 and math.isclose(end.x, plan.states[-1].x, abs_tol=1e-9)


def test_lattice_plan_returns_none_when_goal_is_walled_off():
    plan = plan_lattice(LatticeState(0.0, 0.0, 0.0), lambda x, z: abs(x) < 1 and abs(z) < 1, lambda s: s.z > 5,
                        lambda s: 0.0, max_expansions=50_000)
    assert plan is None


def test_oracle_solves_open_container_knife_and_placement_items():
    episode = _episode([
        {"object": {"type": "FloorLamp"}, "predicate": "isToggled"},
        {"object": {"type": "Tomato"}, "predicate": "isSliced"},  # tomatoes are in the closed fridge
        {"object": {"type": "Laptop"}, "predicate": "inReceptacle", "target": {"type": "Dresser"}},
    ])
    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    result, world = run_episode(env, OraclePlanner(env), episode)
    assert result.extra["stop_reason"] == "stop"
    assert result.gc == 1.0 and result.sr == 1.0
    assert result.steps_manip >= 5  # lamp, fridge, knife pickup, slice, laptop pickup + put
    assert result.timeline.gc[0] < 1.0 and result.timeline.gc[-1] == 1.0
    assert any(o["objectType"] == "TomatoSliced" for o in world.objects)


def test_runner_keeps_partial_results_when_the_agent_crashes():
    class Crashing:
        name = "crashing"

        def reset(self, episode, observation):
            self.n = 0

        def act(self, observation):
            self.n += 1
            if self.n > 3:
                raise RuntimeError("planner bug")
            return Action("RotateRight")

    env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    laptop_in_dresser = {"object": {"type": "Laptop"}, "predicate": "inReceptacle", "target": {"type": "Dresser"}}
    result, _ = run_episode(env, Crashing(), _episode([laptop_in_dresser]))
    assert result.extra["stop_reason"].startswith("agent error: RuntimeError: planner bug")
    assert result.num_actions == 3 and result.steps_nav == pytest.approx(3.0)
    assert result.gc == 0.0


def test_generator_is_deterministic_feasible_and_spread_over_rooms():
    house = load_house("houses_dev.jsonl.gz", 0)
    opts = GeneratorOptions(goals=4, min_goals=4, min_rooms=2)
    ref = {"file": "houses_dev.jsonl.gz", "index": 0}
    a = generate_for_house(house, ref, "Work & Study Preparation", 11, "g-0", opts)
    b = generate_for_house(house, ref, "Work & Study Preparation", 11, "g-0", opts)
    assert a is not None and b is not None
    assert [i.to_dict() for i in a.checklist] == [i.to_dict() for i in b.checklist]
    assert a.instructions == b.instructions
    assert len(a.goals) == 4 and a.oracle["sr"] == 1.0 and a.max_steps >= a.oracle["actions"]
    assert len({r for g in a.goals for r in g["rooms"]}) >= 2
    validate_episode(a, house, load_asset_database())


def test_words_splits_type_names_for_instructions():
    assert words("RemoteControl") == "remote control"
    assert words("TVStand") == "TV stand"
    assert words("Mug") == "mug"


def test_committed_dev_episodes_are_valid_and_oracle_verified():
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev"
    episodes, errors = load_episodes(folder)
    assert errors == []
    assert len(episodes) >= 60
    assert {e.scenario for e in episodes} == set(SCENARIOS)
    db = load_asset_database()
    houses: dict[int, dict] = {}
    for ep in episodes:
        house = houses.setdefault(ep.house.index, ep.resolve_house())
        validate_episode(ep, house, db)
        assert ep.oracle["sr"] == 1.0 and ep.oracle["gc"] == 1.0
        assert 7 <= len(ep.goals) <= 9
        assert ep.instructions["detailed"] and ep.instructions["concise"]


def test_twin_oracle_matches_the_direct_oracle_and_stops_when_worlds_diverge():
    from privileged.twin_oracle import TwinOracle

    episode = _episode([{"object": {"type": "Laptop"}, "predicate": "inReceptacle", "target": {"type": "Dresser"}}])
    direct_env = EmbeddedEnvironment(EmbeddedConfig(render=False))
    direct, _ = run_episode(direct_env, OraclePlanner(direct_env), episode)
    backend = EmbeddedEnvironment(EmbeddedConfig(render=False))  # stands in for THOR or Habitat
    twin_run, _ = run_episode(backend, TwinOracle(), episode)
    assert twin_run.sr == direct.sr == 1.0 and twin_run.num_actions == direct.num_actions

    refusing = EmbeddedEnvironment(EmbeddedConfig(render=False))
    real_step = refusing.step
    refusing.step = lambda a: real_step(Action(a.name, "no-such-object") if a.is_interaction else a)
    diverged, _ = run_episode(refusing, TwinOracle(), episode)
    assert "diverged" in diverged.extra["stop_reason"] and "PickupObject" in diverged.extra["stop_reason"]
    assert diverged.sr == 0.0


def test_generate_set_resumes_without_redoing_written_or_infeasible_pairs(tmp_path, monkeypatch):
    import evaluation.generator as generator

    calls: list[tuple[str, str]] = []

    def fake(house, ref, scenario, seed, eid, opts=None, asset_db=None, notes=None):
        calls.append((eid, scenario))
        if eid.endswith("-1"):
            return None  # (house, 1) is infeasible
        return _episode([{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}], eid=eid)

    monkeypatch.setattr(generator, "generate_for_house", fake)
    written, failed = generator.generate_set("houses_dev.jsonl.gz", [0, 1], tmp_path, per_house=2, seed=3)
    assert [p.name for p in written] == ["dev-000-0.json", "dev-001-0.json"]
    assert len(failed) == 2 and len(calls) == 4
    # Scenarios depend on (house index + j) only, so split and whole runs agree.
    assert [s for _, s in calls] == [SCENARIOS[0], SCENARIOS[1], SCENARIOS[1], SCENARIOS[2]]
    calls.clear()
    written, failed = generator.generate_set("houses_dev.jsonl.gz", [0, 1], tmp_path, per_house=2, seed=3)
    assert calls == [] and len(written) == 2 and all("(manifest)" in f for f in failed)
    # Another seed into the same folder would keep seed 3's episodes as its own: refused (issue 32).
    with pytest.raises(InputError, match="--seed 3 there, 4 now"):
        generator.generate_set("houses_dev.jsonl.gz", [0], tmp_path, per_house=2, seed=4)
    assert calls == []
    # ... while the infeasible record is per seed: another prefix (fresh episodes) with seed 4 retries.
    generator.generate_set("houses_dev.jsonl.gz", [0], tmp_path / "s4", per_house=2, seed=4)
    assert calls == [("dev-000-0", SCENARIOS[0]), ("dev-000-1", SCENARIOS[1])]


def test_generate_refuses_a_path_prefix_and_another_houses_file(tmp_path, monkeypatch):
    import evaluation.generator as generator

    monkeypatch.setattr(generator, "generate_for_house", lambda house, ref, scenario, seed, eid, *a, **k: _episode(
        [{"object": {"type": "FloorLamp"}, "predicate": "isToggled"}], eid=eid))
    for prefix in (str(tmp_path / "elsewhere"), "../up", "a/b", ".hidden", ""):
        with pytest.raises(InputError, match="--prefix"):
            generator.generate_set("houses_dev.jsonl.gz", [0], tmp_path / "out", prefix=prefix)
    assert not (tmp_path / "elsewhere-000-0.json").exists() and not list(tmp_path.glob("*.json"))
    kept: list = []
    generator.generate_set("houses_dev.jsonl.gz", [0], tmp_path / "out", kept=kept)
    assert kept == []
    generator.generate_set("houses_dev.jsonl.gz", [0], tmp_path / "out", kept=kept)
    assert [p.name for p in kept] == ["dev-000-0.json"]
    (tmp_path / "out" / generator.MANIFEST).unlink()  # a folder from before the params lines
    with pytest.raises(InputError, match="house.file is 'houses_dev.jsonl.gz'"):
        generator.generate_set("houses_other.jsonl.gz", [0], tmp_path / "out")


def test_committed_v2_dev_episodes_are_valid_oracle_verified_and_look_like_longact():
    """The generator-v2 set (evaluation/data/episodes_dev_v2, issue 18): every episode valid
    against its house and oracle-verified, about nine goals, every house index of the dev file
    tried twice (the manifest names each pair that gave no episode), concise at most 35 words."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev_v2"
    episodes, errors = load_episodes(folder)
    assert errors == [] and len(episodes) >= 150
    db = load_asset_database()
    houses: dict[int, dict] = {}
    for ep in episodes:
        house = houses.setdefault(ep.house.index, ep.resolve_house())
        validate_episode(ep, house, db)
        assert ep.oracle["sr"] == 1.0 and ep.oracle["gc"] == 1.0
        assert len(ep.instructions["concise"].split()) <= 35
    assert 8.5 <= sum(len(ep.goals) for ep in episodes) / len(episodes) <= 10
    manifest = (folder / "generation-manifest.tsv").read_text(encoding="utf-8").splitlines()
    infeasible = {line.split("\t")[0] for line in manifest if "\tinfeasible\t" in line}
    assert len({ep.id for ep in episodes} | infeasible) == 200  # 100 houses x 2, none unaccounted for
    predicates = {item.predicate for ep in episodes for item in ep.checklist}
    assert {"isSliced", "isCooked", "isFilledWithLiquid", "isDirty", "isHeld", "isToggled", "isOpen",
            "inReceptacle", "inRoom"} <= predicates


def test_committed_crouch_set_is_valid_and_holds_things_seen_only_crouched():
    """evaluation/data/episodes_dev_crouch (issue 30): the generator over all 100 dev houses after
    Crouch, one episode per house. Every episode valid and oracle-verified, every house accounted
    for, and some episodes need what only a crouched pose sees (a low shelf, a drawer), as their
    generation block records."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "episodes_dev_crouch"
    episodes, errors = load_episodes(folder)
    assert errors == [] and len(episodes) >= 90
    db = load_asset_database()
    for ep in episodes:
        validate_episode(ep, ep.resolve_house(), db)
        assert ep.oracle["sr"] == 1.0 and ep.oracle["gc"] == 1.0
    manifest = (folder / "generation-manifest.tsv").read_text(encoding="utf-8").splitlines()
    infeasible = {line.split("\t")[0] for line in manifest if "\tinfeasible\t" in line}
    assert len({ep.id for ep in episodes} | infeasible) == 100
    crouched = [ep for ep in episodes if ep.extra["generation"].get("crouched_for")]
    assert len(crouched) >= 10
    assert any("Drawer" in oid for ep in crouched for oid in ep.extra["generation"]["crouched_for"])
