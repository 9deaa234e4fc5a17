"""Grounding a noun phrase the lexicon does not know to one asset type, or reporting it.

Why: people name things the asset database does not ("notebook computer", "sneakers", "bedside
light"). The order is fixed and every step says what it did, so nothing is silently guessed:
1. vocabulary: the exact phrase is a type name, an everyday name (``planner.vocabulary``) or a
   generated form of one (the chunker already matched these; ``ground`` repeats the check so the
   grounder is usable on its own). No head-noun shortcut: "dish rack" is not a "towel rack";
2. embedding: a text encoder (all-MiniLM-L6-v2 through the optional ``text`` extra, see
   ``perception.encoders.SentenceTextEncoder``) compares the phrase with every type name and
   everyday name; the best type is taken only when its cosine similarity reaches ``threshold``
   and beats the runner-up type by ``margin``. Best and runner-up are recorded either way.
A phrase none of these grounds stays an unknown word, and its clause is reported unparsed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

# Cosine thresholds for all-MiniLM-L6-v2 (unit rows). Chosen so that household paraphrases of a
# type name ("notebook computer" / Laptop) pass and unrelated words ("song", "happiness") do not;
# a caller with another encoder passes its own.
EMBED_THRESHOLD = 0.60
EMBED_MARGIN = 0.05


@dataclass(frozen=True)
class Grounding:
    """How one phrase was grounded: ``type`` is None when it was not. For the embedding step,
    ``best``/``score`` and ``runner_up``/``runner_up_score`` are the two most similar types,
    recorded whether or not the best one was accepted."""

    phrase: str
    type: str | None
    method: str  # vocabulary | embedding | none
    score: float | None = None
    best: str | None = None
    runner_up: str | None = None
    runner_up_score: float | None = None

    def describe(self) -> str:
        runner = f"; runner-up {self.runner_up} {self.runner_up_score:.2f}" if self.runner_up else ""
        if self.type is not None and self.method == "embedding":
            return f"'{self.phrase}' -> {self.type} (embedding {self.score:.2f}{runner})"
        if self.type is not None:
            return f"'{self.phrase}' -> {self.type} ({self.method})"
        if self.score is not None:
            return f"'{self.phrase}' not grounded (embedding best {self.best} {self.score:.2f}, below the bar{runner})"
        return f"'{self.phrase}' not grounded (no type name or everyday name; no text encoder)"

    def to_dict(self) -> dict[str, Any]:
        return {"phrase": self.phrase, "type": self.type, "method": self.method, "score": self.score,
                "best": self.best, "runner_up": self.runner_up, "runner_up_score": self.runner_up_score}


class NounGrounder:
    """Grounds phrases against ``names`` (phrase -> candidate types: the parser's lexicon nouns).

    ``encoder``: anything with ``encode_texts(list[str]) -> (N, d) unit rows`` (the
    ``perception.encoders.TextEncoder`` protocol), or None for no embedding step."""

    def __init__(self, names: Mapping[str, tuple[str, ...]], encoder: Any = None,
                 threshold: float = EMBED_THRESHOLD, margin: float = EMBED_MARGIN) -> None:
        self.names = {k: v for k, v in names.items() if v}
        self.encoder = encoder
        self.threshold = float(threshold)
        self.margin = float(margin)
        self._phrases: list[str] = sorted(p for p, t in self.names.items() if len(t) == 1)
        self._matrix: np.ndarray | None = None
        self._cache: dict[str, Grounding] = {}

    def ground(self, phrase: str) -> Grounding:
        """The grounding of one phrase (cached: the same phrase always grounds the same way)."""
        if phrase not in self._cache:
            self._cache[phrase] = self._ground(phrase)
        return self._cache[phrase]

    def _ground(self, phrase: str) -> Grounding:
        key = " ".join(phrase.lower().replace("-", " ").split())
        types = self.names.get(key)
        if types and len(types) == 1:
            return Grounding(phrase, types[0], "vocabulary")
        if self.encoder is None or not key:
            return Grounding(phrase, None, "none")
        return self._embed(phrase, key)

    def _embed(self, phrase: str, key: str) -> Grounding:
        if self._matrix is None:
            self._matrix = np.asarray(self.encoder.encode_texts(self._phrases), dtype=np.float32)
        q = np.asarray(self.encoder.encode_texts([key]), dtype=np.float32)[0]
        sims = self._matrix @ q
        best: dict[str, float] = {}
        for p, s in zip(self._phrases, sims):
            t = self.names[p][0]
            if s > best.get(t, -2.0):
                best[t] = float(s)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        (top, top_s) = ranked[0]
        runner, runner_s = ranked[1] if len(ranked) > 1 else (None, None)
        accepted = top_s >= self.threshold and (runner_s is None or top_s - runner_s >= self.margin)
        return Grounding(phrase, top if accepted else None, "embedding" if accepted else "none", top_s, top, runner,
                         runner_s)


def default_encoder() -> Any:
    """all-MiniLM-L6-v2 when the ``text`` extra is installed, else None (the reason is not an
    error: the parser then grounds by vocabulary and head noun only, and says so)."""
    try:
        from perception.encoders import EncoderUnavailable, SentenceTextEncoder

        return SentenceTextEncoder()
    except (ImportError, EncoderUnavailable, OSError):
        return None


def noun_phrases(lexicon: Mapping[tuple[str, ...], tuple[str, tuple[str, ...], bool]]) -> dict[str, tuple[str, ...]]:
    """The parser lexicon's noun entries as phrase -> types."""
    return {" ".join(k): v[1] for k, v in lexicon.items() if v[0] == "type"}

