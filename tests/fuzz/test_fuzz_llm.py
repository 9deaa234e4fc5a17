"""Fuzz: LLM config files, model answers and cache entries. A config ends as an ``LLMConfig`` with
well-typed fields or an ``LLMConfigError`` naming the file (never echoing a key); an answer ends as
a valid role result or the role's fallback; a damaged cache entry is a miss (read_write: asked
again) or ``LLMCacheMissError`` (replay_only). Never another exception, never a hang."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from fuzz_mutations import HOSTILE_VALUES, bit_flips, deep, json_mutations, splices, truncations

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_llm_roles import FAKE_KEY, VALID, FakeFallback, client, run_role  # noqa: E402

from planner.llm import LLMCacheMissError, LLMConfig, LLMConfigError, load_llm_config  # noqa: E402

pytestmark = pytest.mark.timeout(120)
SEED = 16
MODEL = "openai/worldmind-mock"
BASE = {"api_base": "http://127.0.0.1:8080/v1", "api_key_env": "MY_KEY", "temperature": 0.0, "max_tokens": 512,
        "timeout": 30.0, "max_repairs": 1, "cache_dir": "/tmp/wm-cache", "cache_mode": "read_write",
        "response_format": "auto", "max_objects_in_prompt": 80, "max_history_in_prompt": 12}


def _load(path: Path, text: bytes, name: str) -> str:
    path.write_bytes(text)
    try:
        cfg = load_llm_config(MODEL, path, environ={})
    except LLMConfigError as exc:
        assert str(path) in str(exc) or "LLMConfig." in str(exc), f"{name}: {exc}"
        assert FAKE_KEY not in str(exc), f"{name}: the error echoes a key"
        return "error"
    assert isinstance(cfg, LLMConfig)
    assert isinstance(cfg.max_tokens, int) and isinstance(cfg.max_repairs, int), name
    assert 0.0 <= cfg.temperature <= 2.0 and cfg.timeout > 0, name
    return "loaded"


def test_config_files(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    outcomes = {"loaded": 0, "error": 0}
    good_json = json.dumps(BASE).encode()
    good_yaml = "llm:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in BASE.items())
    for suffix, good in ((".json", good_json), (".yaml", good_yaml.encode())):
        path = tmp_path / f"llm{suffix}"
        cases = list(truncations(good, 7)) + list(bit_flips(good, rng, 60)) + list(splices(good, rng, 30))
        for name, data in cases:
            outcomes[_load(path, data, name)] += 1
    path = tmp_path / "llm.json"
    for name, value in json_mutations(BASE, rng, 250):
        outcomes[_load(path, json.dumps(value, allow_nan=True).encode(), name)] += 1
    hostile = [deep(100_000).encode(), deep(100_000, "dict").encode(), b"\xff\xfe", b"x" * (2 << 20),
               json.dumps({"api_key_env": FAKE_KEY}).encode(), json.dumps({"api_key": FAKE_KEY}).encode(),
               json.dumps({"Token": FAKE_KEY}).encode(), json.dumps({"temperature": FAKE_KEY}).encode()]
    for i, data in enumerate(hostile):
        assert _load(path, data, f"hostile#{i}") == "error"
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    assert _load(tmp_path / "laughs.yaml", laughs.encode(), "billion laughs") == "error"  # unknown fields, fast
    for value in HOSTILE_VALUES:
        outcomes[_load(path, json.dumps(value, allow_nan=True).encode(), repr(value)[:20])] += 1
    assert outcomes["error"] > 200 and outcomes["loaded"] > 20


def _answers(rng: random.Random) -> list[tuple[str, str, str]]:
    """(role, case name, answer text)."""
    out = []
    for role, text in VALID.items():
        value = json.loads(text)
        out += [(role, n, json.dumps(v, allow_nan=True)) for n, v in json_mutations(value, rng, 25)]
        out += [(role, n, d.decode("utf-8", "replace")) for n, d in truncations(text.encode(), max(1, len(text) // 6))]
        out += [(role, n, d.decode("utf-8", "replace")) for n, d in bit_flips(text.encode(), rng, 4)]
        out += [(role, "deep", deep(50_000)), (role, "deep-in-object", '{"goals": ' + deep(50_000) + "}"),
                (role, "huge", '{"goals": [' + '"x",' * 100_000 + '"x"]}'), (role, "fenced", f"```json\n{text}\n```"),
                (role, "prose", f"Sure! Here it is: {text} Hope that helps."), (role, "nan", text.replace("1", "NaN"))]
    return out


def test_model_answers_end_in_a_result_or_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every answer goes through the real parse, schema, validator and role code; litellm's
    transport is stubbed here (its mock path is exercised by tests/test_llm_roles.py and by the
    cache test below), so the suite stays within its time budget."""
    from planner.llm import client as client_module

    rng = random.Random(SEED)
    outcomes = {"valid": 0, "fallback": 0}
    for role, name, answer in _answers(rng):
        fb = FakeFallback()
        c = client([answer], max_repairs=0)
        c._schema_support = True  # as litellm would say for a schema-capable model, without importing it
        monkeypatch.setattr(c, "_complete", lambda *a, _t=answer, **k: client_module._Answer(_t, "stop", None, False))
        try:
            run_role(role, c, fb)
        except Exception as exc:  # noqa: BLE001 - the point: nothing but a result or the fallback
            pytest.fail(f"{role} {name}: {type(exc).__name__}: {exc}")
        outcomes["fallback" if fb.calls else "valid"] += 1
    assert outcomes["fallback"] > 50 and outcomes["valid"] > 10


class _FakeLitellm:
    """Stands in for the litellm module (importing it costs seconds): answers the mock_response
    the client passes, so the client's own cache write and read code runs unchanged."""

    @staticmethod
    def supports_response_schema(model: str) -> bool:
        return True

    @staticmethod
    def completion(**kw):
        from types import SimpleNamespace as NS

        message = NS(content=kw.get("mock_response"), refusal=None)
        return NS(choices=[NS(message=message, finish_reason="stop")], usage=None)


def _client(mocks, **kw):
    c = client(mocks, **kw)
    c._litellm_mod = _FakeLitellm
    return c


def test_damaged_cache_entries_are_misses_or_clean_errors(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    cache = tmp_path / "cache"
    first = _client([VALID["ground"]], cache_dir=cache)
    want = run_role("ground", first, FakeFallback())
    (entry,) = [p for p in cache.rglob("*.json")]
    good = entry.read_bytes()
    cases = list(truncations(good, 11)) + list(bit_flips(good, rng, 40)) + [
        (n, json.dumps(v, allow_nan=True).encode()) for n, v in json_mutations(json.loads(good), rng, 60)] + [
        ("deep", deep(100_000).encode()), ("huge", b" " * (5 << 20))]
    outcomes = {"hit": 0, "miss": 0}
    for name, data in cases:
        entry.write_bytes(data)
        replay = _client(None, cache_dir=cache, cache_mode="replay_only", max_repairs=0)
        fb = FakeFallback()
        try:
            got = run_role("ground", replay, fb)
        except LLMCacheMissError as exc:
            assert "damaged" in str(exc) and str(entry) in str(exc), f"{name}: {exc}"
            outcomes["miss"] += 1
            rerun = _client([VALID["ground"]], cache_dir=cache)  # read_write: asked again, entry rewritten
            assert run_role("ground", rerun, FakeFallback()) == want, name
            entry.write_bytes(data)
            continue
        outcomes["hit"] += 1
        assert fb.calls or got == want, f"{name}: a damaged entry replayed as a different answer"
    assert outcomes["miss"] > 30
