"""Build the five LLM roles for ``--planner llm:<model>``.

Configuration is layered so that a run is reproducible from files and the key never has to be
typed on a command line: LLMConfig defaults < config file (YAML or JSON; path given explicitly
or in WORLDMIND_LLM_CONFIG) < environment (WORLDMIND_LLM_API_BASE, WORLDMIND_LLM_API_KEY_ENV,
WORLDMIND_LLM_CACHE_DIR, WORLDMIND_LLM_CACHE_MODE) < explicit overrides < the model from the
planner spec. A config file may name the key's environment variable, never the key itself.

``llm:local`` is the short form for a model served on this machine by an OpenAI-compatible server
(``worldmind llm serve``, llama-cpp-python): model ``openai/<WORLDMIND_LLM_LOCAL_MODEL or local>``,
api_base ``$WORLDMIND_LLM_LOCAL_BASE`` or http://127.0.0.1:8080/v1, the schema sent in llama.cpp's
form, a generous timeout (a 0.5B model on one CPU thread took up to 2 minutes a call). These are
the bottom layer: a config file, the environment and overrides still win. No key is needed.

``llm:replay:<path>`` answers from a recorded run instead of a model: ``replay_calls`` is set to
``<path>`` (a ``calls.jsonl``, optionally gzipped; planner.llm.replay says how requests are matched
to recorded answers), and the model is named ``replay/<the recorded model>``. The rest of the
layers apply as usual (``max_repairs``, ``response_format``); nothing is sent anywhere.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Mapping

from household.input_files import DuplicateKeyError, load_yaml_unique_keys, unique_keys
from planner.llm.client import LLMClient, LLMConfig, LLMConfigError
from planner.llm.replay import ReplayBook, ReplayFileError
from planner.llm.roles import LLMCritic, LLMDecomposer, LLMGrounder, LLMRefiner, LLMTranslator

ROLE_NAMES: tuple[str, ...] = ("decomposer", "refiner", "grounder", "translator", "critic")
_ROLE_CLASSES = {"decomposer": LLMDecomposer, "refiner": LLMRefiner, "grounder": LLMGrounder,
                 "translator": LLMTranslator, "critic": LLMCritic}
_ENV = {"WORLDMIND_LLM_API_BASE": "api_base", "WORLDMIND_LLM_API_KEY_ENV": "api_key_env",
        "WORLDMIND_LLM_CACHE_DIR": "cache_dir", "WORLDMIND_LLM_CACHE_MODE": "cache_mode"}
_FORBIDDEN_KEYS = ("api_key", "key", "token", "secret")
LOCAL_SPEC = "local"
LOCAL_DEFAULT_BASE = "http://127.0.0.1:8080/v1"
LOCAL_BASE_ENV = "WORLDMIND_LLM_LOCAL_BASE"
LOCAL_MODEL_ENV = "WORLDMIND_LLM_LOCAL_MODEL"  # the name sent to the server (llama-cpp-python ignores it)
REPLAY_PREFIX = "replay:"


def local_defaults(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The LLMConfig fields ``llm:local`` starts from (see the module docstring)."""
    env = os.environ if environ is None else environ
    return {"model": f"openai/{env.get(LOCAL_MODEL_ENV) or 'local'}",
            "api_base": env.get(LOCAL_BASE_ENV) or LOCAL_DEFAULT_BASE,
            "response_format": "llama_cpp", "timeout": 300.0}


def model_spec_from_planner(planner: str) -> str | None:
    """"llm:openai/gpt-4o-mini" -> "openai/gpt-4o-mini"; any other planner name -> None."""
    if not planner.startswith("llm:"):
        return None
    spec = planner[len("llm:"):].strip()
    if not spec:
        raise ValueError("--planner llm:<model> needs a litellm model string, e.g. llm:openai/gpt-4o-mini")
    return spec


MAX_CONFIG_BYTES = 1 << 20  # a config file is a few lines; a bigger one is a wrong path


def _read_config_file(path: str | Path) -> dict[str, Any]:
    """The file's mapping of LLMConfig fields; every problem is an LLMConfigError naming the file."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"LLM config file not found: {p}")
    try:
        with open(p, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise LLMConfigError(f"{p}: over the {MAX_CONFIG_BYTES}-byte limit for an LLM config file")
        text = raw.decode("utf-8")
        if p.suffix.lower() == ".json":
            data = json.loads(text, object_pairs_hook=unique_keys)
        else:
            data = load_yaml_unique_keys(text)
    except LLMConfigError:
        raise
    except DuplicateKeyError as exc:  # names the key, never a value (it may be a secret)
        raise LLMConfigError(f"{p}: {exc}") from None
    except RecursionError:
        raise LLMConfigError(f"{p}: nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise LLMConfigError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    except Exception as exc:  # json.JSONDecodeError, yaml.YAMLError (never echo the text: it may hold a key)
        where = getattr(exc, "problem_mark", None) or getattr(exc, "lineno", None)
        raise LLMConfigError(f"{p}: not valid {'JSON' if p.suffix.lower() == '.json' else 'YAML'}"
                             f"{f' (at {where})' if where is not None else ''}".replace("\n", " ")) from None
    data = data if data is not None else {}
    if not isinstance(data, dict):
        raise LLMConfigError(f"{p}: expected a mapping of LLMConfig fields, got {type(data).__name__}")
    if isinstance(data.get("llm"), dict):  # allow a section inside a larger run config
        data = data["llm"]
    if not all(isinstance(k, str) for k in data):
        raise LLMConfigError(f"{p}: field names must be strings")
    bad = [k for k in data if k.lower() in _FORBIDDEN_KEYS]
    if bad:
        raise LLMConfigError(f"{p}: {bad[0]!r} is not accepted in a config file; put the key in an environment "
                             "variable and name that variable in api_key_env")
    fields = {f.name for f in dataclasses.fields(LLMConfig)} - {"model", "mock_responses"}
    unknown = sorted(set(data) - fields)
    if unknown:
        raise LLMConfigError(f"{p}: unknown LLM config field(s) {unknown} (known: {sorted(fields)})")
    try:
        LLMConfig(model="check", **{**data, "cache_dir": data.get("cache_dir") or "."})  # types and ranges
    except LLMConfigError as exc:
        raise LLMConfigError(f"{p}: {exc}") from None
    return dict(data)


def load_llm_config(model_spec: str, config_path: str | Path | None = None,
                    overrides: Mapping[str, Any] | None = None,
                    environ: Mapping[str, str] | None = None) -> LLMConfig:
    """Resolve the layers described in the module docstring into one LLMConfig."""
    env = os.environ if environ is None else environ
    fields = {f.name for f in dataclasses.fields(LLMConfig)}
    merged: dict[str, Any] = {}
    replay: str | None = None
    if model_spec == LOCAL_SPEC:
        merged.update(local_defaults(env))
        model_spec = merged.pop("model")
    elif model_spec.startswith(REPLAY_PREFIX):
        replay = model_spec[len(REPLAY_PREFIX):].strip()
        if not replay:
            raise LLMConfigError("llm:replay:<path> needs the path of a recorded calls.jsonl after the colon")
        try:
            recorded = ReplayBook.load(replay).model
        except ReplayFileError as exc:
            raise LLMConfigError(f"llm:replay: {exc}") from None
        model_spec = f"replay/{recorded or 'unknown'}"
    path = config_path if config_path is not None else env.get("WORLDMIND_LLM_CONFIG")
    if path:
        merged.update(_read_config_file(path))
    for var, name in _ENV.items():
        if env.get(var):
            merged[name] = env[var]
    merged.update(dict(overrides or {}))
    merged["model"] = model_spec
    if replay is not None:
        merged["replay_calls"] = replay
    unknown = sorted(set(merged) - fields)
    if unknown:
        raise LLMConfigError(f"unknown LLM config field(s) {unknown} (known: {sorted(fields)})")
    return LLMConfig(**merged)


def make_llm_roles(model_spec: str, fallbacks: Mapping[str, object] | None = None,
                   config_path: str | Path | None = None, **overrides: Any) -> dict[str, Any]:
    """The five roles over one shared LLMClient (so ``usage()`` is per episode across roles).

    ``fallbacks`` maps role names (ROLE_NAMES) to objects implementing the same Protocol; a
    missing one means that role raises LLMRoleError instead of falling back. The shared client
    is each role's ``.client`` (call ``.usage()`` / ``.reset_usage()`` on it per episode).
    """
    fallbacks = dict(fallbacks or {})
    unknown = sorted(set(fallbacks) - set(ROLE_NAMES))
    if unknown:
        raise ValueError(f"unknown role name(s) in fallbacks: {unknown} (known: {list(ROLE_NAMES)})")
    client = LLMClient(load_llm_config(model_spec, config_path, overrides))
    return {name: _ROLE_CLASSES[name](client, fallbacks.get(name)) for name in ROLE_NAMES}
