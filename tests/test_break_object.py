"""THOR's isBroken end to end ("break the vase"), the proof that a predicate is one registration:
its rows in household.interactions (BreakObject) and household.checklist (isBroken), the
simulator's executor, the robot skill constant and the parser's words; nothing else was written
for it. The simulator breaks what the asset database calls breakable; the parser reads it; the
goal DAG orders it before a move; the deterministic planner and the oracle do it; the report
says it; the robot contract and THOR carry it (tests/test_interaction_table.py, per row)."""

from __future__ import annotations

from typing import Any

import pytest

from evaluation.episodes import Episode
from evaluation.runner import run_episode
from household.checklist import PREDICATES
from household.house_data import load_house
from household.types import Action
from planner.goal_dag import build_goal_dag, single_item_goals
from planner.holomind import HoloMindAgent
from planner.instruction_parser import InstructionParser
from privileged.oracle import OraclePlanner
from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
from test_embedded_env import find_interaction_pose as interaction_pose

VASE = "small|7|40"  # house 0 of the dev houses (its other vase, small|6|37, no pose reaches)
FRIDGE = "6|1"


def _episode(instruction: str) -> Episode:
    return Episode.from_dict({"id": "break-vase", "house": {"file": "houses_dev.jsonl.gz", "index": 0},
                              "scenario": "Living Room", "instructions": {"detailed": instruction,
                                                                          "concise": instruction},
                              "max_steps": 900,
                              "checklist": [{"object": {"type": "Vase"}, "predicate": "isBroken", "value": True}]})


@pytest.fixture(scope="module")
def house0() -> dict[str, Any]:
    return load_house("houses_dev.jsonl.gz", 0)


def test_the_simulator_breaks_breakables_once(house0: dict[str, Any]) -> None:
    env = EmbeddedEnvironment(EmbeddedConfig(width=160, height=120))
    env.reset(house0)
    env.pose = interaction_pose(env, VASE)
    first = env.step(Action("BreakObject", VASE))
    assert first.success, first.error
    assert {o["objectId"]: o for o in env.ground_truth().objects}[VASE]["isBroken"] is True
    again = env.step(Action("BreakObject", VASE))
    assert not again.success and again.failure == "already_state" and "already broken" in again.error
    env.pose = interaction_pose(env, FRIDGE)
    fridge = env.step(Action("BreakObject", FRIDGE))
    assert not fridge.success and fridge.failure == "not_capable"


def test_the_parser_reads_break_words_and_the_dag_breaks_before_moving() -> None:
    parser = InstructionParser()
    goals = parser.decompose("Smash the plate in the kitchen, then throw it in the bin.")
    assert [(i.object.type, i.predicate) for g in goals for i in g.items] == \
        [("Plate", "isBroken"), ("Plate", "inReceptacle")]
    assert goals[0].items[0].object.room == "Kitchen"  # in place: the room narrows the object
    dag = build_goal_dag(single_item_goals(goals))
    (a, b), = dag.edges
    assert dag.nodes[a]["goal"].items[0].predicate == "isBroken" and dag.edges[a, b]["kind"] == "causal"
    assert parser.decompose("Make sure the vase is broken.")[0].items[0].predicate == "isBroken"
    assert PREDICATES["isBroken"].phrase[0] == "is broken"


@pytest.mark.timeout(180)
def test_holomind_and_the_oracle_break_the_vase() -> None:
    episode = _episode("Break the vase.")
    result, _ = run_episode(EmbeddedEnvironment(EmbeddedConfig(width=160, height=120)), HoloMindAgent(), episode)
    assert result.gc == 1.0 and result.sr == 1
    assert result.checklist.items[0].description == "Vase is broken"
    ref = EmbeddedEnvironment(EmbeddedConfig(width=160, height=120, render=False))
    oracle_result, world = run_episode(ref, OraclePlanner(ref), episode)
    assert oracle_result.gc == 1.0
    assert len([o for o in world.objects if o.get("isBroken")]) == 1
