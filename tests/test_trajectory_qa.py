"""EMemBench-style trajectory QA from the agent's own (oracle) run on the embedded simulator."""

from __future__ import annotations

import pytest

from evaluation.episodes import Episode
from evaluation.trajectory_qa import (ABILITIES, NOT_ANSWERABLE, TrajectoryLog, generate_trajectory_qa,
                                      record_trajectory, score_trajectory_answers)


@pytest.fixture(scope="module")
def log():
    ep = Episode.from_dict({"id": "tqa", "house": {"file": "houses_dev.jsonl.gz", "index": 0},
                            "scenario": "Dining & Kitchen", "instructions": {"detailed": "d", "concise": "c"},
                            "max_steps": 3000,
                            "checklist": [{"predicate": "inReceptacle", "object": {"type": "Cup"}, "target": {"type": "DiningTable"}},
                                          {"predicate": "inReceptacle", "object": {"type": "Book"}, "target": {"type": "Sofa"}}]})
    return record_trajectory(ep)


def test_recording_wrapper_logs_every_step_with_object_room_and_hand(log):
    picks = [s for s in log.steps if s.action == "PickupObject"]
    assert [s.object_type for s in picks] == ["Cup", "Book"] and all(s.held == s.object_type for s in picks)
    assert [s.step for s in log.steps] == list(range(1, len(log.steps) + 1))
    assert all(s.room for s in log.steps)
    assert log.steps[-1].action == "PutObject" and log.steps[-1].held is None


def test_questions_are_balanced_deterministic_and_answers_come_from_the_log(log, tmp_path):
    qs = generate_trajectory_qa(log, per_ability=2)
    assert {q.ability for q in qs} == set(ABILITIES)
    assert all(sum(q.ability == a for q in qs) == 2 for a in ABILITIES)
    assert [q.__dict__ for q in generate_trajectory_qa(log, per_ability=2)] == [q.__dict__ for q in qs]
    cup = next(q for q in generate_trajectory_qa(log, per_ability=50) if "picked up the Cup" in q.question
               and q.ability == "multi_hop")
    assert cup.answer == next(s.room for s in log.steps if s.action == "PickupObject" and s.object_type == "Cup")
    assert all(q.answer == NOT_ANSWERABLE for q in qs if q.ability == "adversarial")
    log.save(tmp_path / "log.jsonl")
    assert TrajectoryLog.load(tmp_path / "log.jsonl") == log
    score = score_trajectory_answers(qs, [q.answer for q in qs])
    assert score["overall"] == 1.0
    assert score_trajectory_answers(qs, [None] * len(qs))["overall"] == 0.0


def test_query_horizon_restricts_questions_and_answers_to_the_prefix(log):
    book_step = next(s.step for s in log.steps if s.action == "PickupObject" and s.object_type == "Book")
    qs = generate_trajectory_qa(log, horizon=book_step - 1, per_ability=20)
    assert all(q.horizon == book_step - 1 for q in qs)
    assert all(max(q.evidence_steps, default=0) < book_step for q in qs)
    assert not any("Book" in q.question and q.answer != NOT_ANSWERABLE for q in qs)
    # the Book is touched only after the horizon: asking about it is not answerable within it
    assert any("Book" in q.question and q.answer == NOT_ANSWERABLE for q in qs)
    count = next(q for q in qs if q.question == "How many successful PickupObject actions did the agent perform?")
    assert count.answer == "1"
