"""One JSON-returning LLM call per role invocation, over litellm, with repair, accounting and a cache.

Why this shape:
- litellm fetches its model cost map from the network at import unless
  LITELLM_LOCAL_MODEL_COST_MAP is set, so this module sets it (setdefault, so a user can still
  opt in) before anything imports litellm, and imports litellm lazily inside the client: merely
  importing the planner never touches litellm, and nothing reaches the network unless a remote
  model is chosen.
- Models answer with malformed JSON often enough (empty output, truncation at max_tokens, prose,
  refusals, schema violations, invented object ids) that every call is parsed and validated, and
  a bounded number of repair turns quote the exact error back. After the bound the client raises
  ``LLMRoleError``; the role catches it and uses its deterministic fallback, so a bad model makes
  a run worse, never crash.
- Every raw answer (valid or not) is cached on disk under sha256(model, api_base, messages,
  schema, temperature). Repair turns are calls with longer message lists, so a whole repair
  conversation replays exactly; ``cache_mode="replay_only"`` reproduces a recorded run offline
  and fails loudly (``LLMCacheMissError``, never caught by the roles) when the prompts diverged.
- ``replay_calls`` (a recorded ``calls.jsonl``) answers each request with the recorded answer to
  the same role and goal instead (planner.llm.replay: matched on what was asked, not on the
  prompt's bytes, so it survives prompt changes); each recorded answer is checked and repaired
  like a live one, and a request the recording does not answer fails as ``not_recorded`` (the
  role falls back and says so). The cache is neither read nor written in a replay.
- The API key is read from the environment variable *named* by ``api_key_env`` at call time. It
  is not part of the cache key or the cache entry, not in ``usage()``, and it is scrubbed from
  every exception message this module raises.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import hashlib  # noqa: E402  (the env var above must be set before anything can import litellm)
import json  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Literal, Sequence  # noqa: E402

from household.secrets import (redact, register_secret_env, register_secret_value, url_credentials,  # noqa: E402
                               url_without_credentials)
from planner.llm.attribution import (Attribution, RoleDecisions, is_local_api_base, reason_of,  # noqa: E402
                                     server_label)
from planner.llm.usage import RoleUsage, _usage_dict  # noqa: E402,F401  (RoleUsage: part of this API)
from planner.llm.transport import CappedTransport, ResponseTooLargeError, uses_openai_transport  # noqa: E402
from planner.llm.replay import ReplayBook, ReplayFileError, ReplayMissError  # noqa: E402
from planner.llm.answers import (FailureKind, MAX_ANSWER_CHARS, MAX_ANSWER_DEPTH, _atomic_write_json,  # noqa: E402,F401
                                 _depth_over, _read_cache_entry, _repair_prompt, parse_json_answer, schema_errors)

CacheMode = Literal["off", "read_write", "replay_only"]
# How the role's JSON schema reaches the server: "json_schema" is OpenAI's
# {"type": "json_schema", "json_schema": {...}}; "llama_cpp" is llama-cpp-python's server form
# {"type": "json_object", "schema": {...}} (its OpenAI-style form answers HTTP 500 in 0.3.x);
# "json_object" asks for JSON without a schema; "prompt" sends none (the schema goes in the
# prompt); "auto" asks litellm whether the model supports json_schema.
ResponseFormatMode = Literal["auto", "json_schema", "llama_cpp", "json_object", "prompt"]

LOCAL_PLACEHOLDER_KEY = "no-key-needed"  # sent to loopback servers when no key is configured
CACHE_MODES: tuple[str, ...] = ("off", "read_write", "replay_only")
RESPONSE_FORMATS: tuple[str, ...] = ("auto", "json_schema", "llama_cpp", "json_object", "prompt")
SCHEMA_ENFORCING_FORMATS: tuple[str, ...] = ("json_schema", "llama_cpp")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Validators return human-readable problems (empty list = valid); they run after the JSON schema.
Validator = Callable[[Any], list[str]]


class LLMRoleError(RuntimeError):
    """A role's call failed after the bounded repairs (or on a transport error after the bounded
    retries). ``kind`` says why, for reports and for the fallback record; the message never holds
    the API key."""

    def __init__(self, role: str, kind: FailureKind, message: str, attempts: int) -> None:
        super().__init__(f"LLM role {role!r} failed after {attempts} attempt(s) [{kind}]: {message}")
        self.role = role
        self.kind = kind
        self.detail = message
        self.attempts = attempts


class LLMConfigError(ValueError):
    """A bad LLM configuration (file, environment or override); names the file or field. Never
    echoes a value that could be a key."""


def _shown(value: Any) -> str:
    """A bad config value for an error message: numbers as they are, text never (it may be a key
    pasted into the wrong field), unless it is one short word such as a misspelt mode."""
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, str) and len(value) <= 12 and value.isalpha():
        return repr(value)
    return f"a {type(value).__name__}" + (f" of {len(value)} characters" if isinstance(value, str) else "")


class LLMCacheMissError(RuntimeError):
    """``cache_mode="replay_only"`` and no cached answer for this call. Deliberately not an
    ``LLMRoleError``: a replay that silently fell back would no longer be a replay."""


class MockResponsesExhaustedError(RuntimeError):
    """A test configured fewer ``mock_responses`` than the run needed (a test bug, so it is
    raised through, never retried or turned into a fallback)."""


@dataclass
class LLMConfig:
    """How to reach a model and how hard to try.

    ``model`` is any litellm model string ("openai/gpt-4o-mini", "ollama/llama3",
    "hosted_vllm/Qwen2.5-7B-Instruct", or a provider registered in-process). ``api_key_env`` is
    the NAME of the environment variable holding the key, never the key. ``mock_responses`` is for
    tests: each real (non-cached) call consumes the next entry and passes it to litellm as
    ``mock_response=``, which keeps litellm's real code path (message handling, usage) offline.
    """

    model: str
    api_base: str | None = None
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout: float = 60.0
    max_repairs: int = 2
    cache_dir: str | Path | None = None
    cache_mode: CacheMode = "read_write"
    response_format: ResponseFormatMode = "auto"
    # Prompt size limits: memory can hold hundreds of objects; the schema still admits every id.
    max_objects_in_prompt: int = 80
    max_history_in_prompt: int = 12
    # Roles working on one goal list at most this many objects of each of its types (planner.llm.roles).
    max_objects_per_type: int = 8
    # A reply body over this many bytes is cut off and counted as a "too_large" failure (a model
    # answer is a few kB; a server streaming gigabytes must not fill memory). OpenAI-style providers.
    max_response_bytes: int = 1 << 20
    # A recorded calls.jsonl[.gz] to answer from instead of a model (planner.llm.replay); None: ask the model.
    replay_calls: str | Path | None = None
    mock_responses: Sequence[Any] | None = field(default=None, repr=False)  # test data, kept out of logs

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise LLMConfigError("LLMConfig.model must be a non-empty litellm model string, e.g. 'openai/gpt-4o-mini'")
        if self.api_key_env is not None and not (isinstance(self.api_key_env, str)
                                                 and _ENV_NAME.fullmatch(self.api_key_env)):
            # Never echo the value: a user may have pasted the key itself here.
            raise LLMConfigError("LLMConfig.api_key_env must be the NAME of an environment variable "
                                 "(e.g. OPENAI_API_KEY), not the key itself; the given value is not shown")
        register_secret_env(self.api_key_env)  # every writer redacts its value from now on
        if self.api_base is not None and not isinstance(self.api_base, str):
            raise LLMConfigError(f"LLMConfig.api_base must be a URL string, got {type(self.api_base).__name__}")
        for credential in url_credentials(self.api_base):  # user:password@ in the URL: redacted everywhere
            register_secret_value(credential)
        if self.cache_mode not in CACHE_MODES:
            raise LLMConfigError(f"LLMConfig.cache_mode must be one of {CACHE_MODES}, got {_shown(self.cache_mode)}")
        if self.replay_calls is not None and not (isinstance(self.replay_calls, (str, Path)) and str(self.replay_calls)):
            raise LLMConfigError(f"LLMConfig.replay_calls must be a path string, got {type(self.replay_calls).__name__}")
        if self.cache_dir is not None and not isinstance(self.cache_dir, (str, Path)):
            raise LLMConfigError(f"LLMConfig.cache_dir must be a path string, got {type(self.cache_dir).__name__}")
        if self.cache_mode == "replay_only" and self.cache_dir is None:
            raise LLMConfigError("LLMConfig.cache_mode='replay_only' needs a cache_dir to replay from")
        if self.response_format not in RESPONSE_FORMATS:
            raise LLMConfigError(f"LLMConfig.response_format must be one of {RESPONSE_FORMATS}, "
                                 f"got {_shown(self.response_format)}")
        lo: float
        hi: float
        for name, lo, hi in (("max_repairs", 0, 20), ("max_tokens", 1, 1_000_000),
                             ("max_objects_in_prompt", 0, 100_000), ("max_history_in_prompt", 0, 100_000),
                             ("max_objects_per_type", 1, 100_000), ("max_response_bytes", 1024, 1 << 30)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise LLMConfigError(f"LLMConfig.{name} must be an integer in [{lo}, {hi}], got {_shown(value)}")
        for name, lo, hi in (("temperature", 0.0, 2.0), ("timeout", 1e-3, 86_400.0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
                raise LLMConfigError(f"LLMConfig.{name} must be a finite number in [{lo}, {hi}], got {_shown(value)}")
        if self.mock_responses is not None and not isinstance(self.mock_responses, (list, tuple)):
            raise LLMConfigError("LLMConfig.mock_responses must be a list")
        if self.cache_dir is not None:
            self.cache_dir = Path(self.cache_dir)
        if self.replay_calls is not None:
            self.replay_calls = Path(self.replay_calls)
        if self.mock_responses is not None:
            self.mock_responses = list(self.mock_responses)


@dataclass(frozen=True)
class _Answer:
    text: str
    finish_reason: str | None
    refusal: str | None
    from_cache: bool


class LLMClient:
    """Sends one role's messages, returns its validated JSON value (see the module docstring)."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._litellm_mod: Any = None
        self._mock_index = 0
        self._by_role: dict[str, RoleUsage] = {}
        self._fallback_events: list[dict[str, str]] = []
        self._decisions: dict[str, RoleDecisions] = {}
        self._schema_support: bool | None = None
        self._transport: CappedTransport | None = None
        self.replay: ReplayBook | None = None
        if config.replay_calls is not None:
            try:
                self.replay = ReplayBook.load(config.replay_calls)
            except ReplayFileError as exc:
                raise LLMConfigError(f"LLMConfig.replay_calls: {exc}") from None

    # ----------------------------------------------------------------- public API

    def call_json(self, role: str, messages: list[dict[str, str]], schema: dict[str, Any],
                  validate: Validator | None = None) -> Any:
        """Ask, parse, validate; on failure send up to ``max_repairs`` repair prompts quoting the
        error, then raise ``LLMRoleError``. Returns the parsed JSON object."""
        messages = self._with_format_instruction(messages, schema)
        conversation = list(messages)
        usage = self._role(role)
        attempts = 0
        kind: FailureKind = "empty"
        detail = ""
        refused: str | None = None  # the text of the last answer sent back for repair
        for attempt in range(self.config.max_repairs + 1):
            attempts = attempt + 1
            try:
                answer = self._complete(role, conversation, schema)
            except (LLMCacheMissError, MockResponsesExhaustedError):
                raise
            except ReplayMissError as exc:
                if attempt == 0:  # nothing recorded answers this request: a fallback of its own kind
                    kind, detail = "not_recorded", self._redact(str(exc))[:500]
                else:  # the run used an answer that is refused today: the refusal stands
                    detail = f"{detail} (the recording has no answer to the repair)"
                break
            except Exception as exc:  # transport / provider errors: retry the same conversation
                kind = ("too_large" if isinstance(exc, ResponseTooLargeError)
                        else "timeout" if _is_timeout(exc) else "api_error")
                # The server is named (without credentials) so a reader knows which one to check.
                detail = self._redact(f"{type(exc).__name__} from {server_label(self.config.api_base)}: "
                                      f"{str(exc)[:400]}")[:500]
                if attempt < self.config.max_repairs:
                    usage.retries += 1
                continue
            value, problem = self._check(answer, schema, validate)
            usage.answers += 1
            if problem is None or problem[0] == "semantic":
                usage.schema_valid += 1
            if problem is None:
                usage.accepted += 1
                return value
            kind, detail = problem
            if refused is not None and answer.text.strip() == refused:
                # A small model asked to fix an answer often sends it back unchanged (27 of 29 repairs
                # in the recorded Qwen2.5-Coder-0.5B run): another repair would cost a call for nothing.
                usage.repeats += 1
                detail = f"{detail} (the model repeated the refused answer; no further repair)"
                break
            refused = answer.text.strip()
            if attempt < self.config.max_repairs:
                usage.repairs += 1
                conversation = conversation + [
                    {"role": "assistant", "content": answer.text if answer.text.strip() else "(empty answer)"},
                    {"role": "user", "content": _repair_prompt(kind, detail)},
                ]
        usage.failures += 1
        raise LLMRoleError(role, kind, detail, attempts) from None

    def record_decision(self, role: str) -> None:
        """Called by a role that used the model's answer: one decision taken by the model."""
        d = self._decisions.setdefault(role, RoleDecisions())
        d.decisions += 1
        d.by_model += 1

    def record_fallback(self, role: str, reason: str, kind: str = "api_error") -> None:
        """Called by a role that gave up on the model (``kind``: the LLMRoleError's); the decision is
        counted as the fallback's under ``planner.llm.attribution.reason_of(kind)``, and the
        reason text goes to ``usage()["fallback_events"]``."""
        self._role(role).fallbacks += 1
        d = self._decisions.setdefault(role, RoleDecisions())
        d.decisions += 1
        category = reason_of(kind)
        d.fallbacks[category] = d.fallbacks.get(category, 0) + 1
        self._fallback_events.append({"role": role, "category": category, "reason": self._redact(reason)[:500]})

    def usage(self) -> dict[str, Any]:
        """Per-episode counters for reports (no secrets: the key's env-var name at most)."""
        total = RoleUsage()
        for u in self._by_role.values():
            total.add(u)
        out: dict[str, Any] = {
            "model": self.config.model,
            "api_base": url_without_credentials(self.config.api_base),
            "cache_mode": self.config.cache_mode if self.config.cache_dir is not None and self.replay is None else "off",
            **_usage_dict(total),
            "by_role": {name: _usage_dict(u) for name, u in sorted(self._by_role.items())},
            "fallback_events": list(self._fallback_events),
        }
        attribution = Attribution({k: v for k, v in self._decisions.items()})
        summary = attribution.to_dict()
        out["decisions_by_role"] = summary["by_role"]
        out["decisions"] = {k: summary[k] for k in ("decisions", "by_model", "fell_back", "fallback_reasons",
                                                     "model_share")}
        if self.replay is not None:  # over the client's life (a recording may span episodes), not per episode
            out["replay"] = self.replay.summary()
        return out

    def call_latencies(self, role: str) -> list[float]:
        """Seconds of each real call of ``role`` since the last reset (for medians and tails)."""
        return list(self._role(role).call_latencies)

    def reset_usage(self) -> None:
        """Start a new episode's counters (the cache and mock position are kept)."""
        self._by_role = {}
        self._fallback_events = []
        self._decisions = {}

    def cache_key(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> str:
        """sha256 over exactly what determines the answer at temperature 0 (no key, no role)."""
        payload = {
            "model": self.config.model,
            "api_base": self.config.api_base,
            "messages": messages,
            "schema": schema,
            "temperature": self.config.temperature,
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    # ----------------------------------------------------------------- internals

    def _role(self, role: str) -> RoleUsage:
        return self._by_role.setdefault(role, RoleUsage())

    def _litellm(self) -> Any:
        if self._litellm_mod is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm  # lazy: see the module docstring

            litellm.suppress_debug_info = True  # no "Give Feedback" banner on stdout per failed call
            self._litellm_mod = litellm
        return self._litellm_mod

    def _api_key(self) -> str | None:
        if self.config.api_key_env is None:
            return None
        value = os.environ.get(self.config.api_key_env)
        return value or None

    def _redact(self, text: str) -> str:
        return redact(text)

    def _supports_schema(self) -> bool:
        mode = self.config.response_format
        if self.replay is not None and mode == "auto":
            return self.replay.schema_enforced  # as the recorded requests sent it; no model to ask
        if mode != "auto":
            return mode in SCHEMA_ENFORCING_FORMATS
        if self._schema_support is None:
            try:
                self._schema_support = bool(self._litellm().supports_response_schema(model=self.config.model))
            except Exception:
                self._schema_support = False
        return self._schema_support

    def _with_format_instruction(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> list[dict[str, str]]:
        """Where the provider cannot enforce the schema, state it in the prompt (last user turn)."""
        if self._supports_schema():
            note = "Answer with one JSON object only."
        else:
            note = ("Answer with one JSON object only, no prose and no code fences, matching this JSON schema:\n"
                    + json.dumps(schema, separators=(",", ":"), sort_keys=True))
        out = [dict(m) for m in messages]
        for m in reversed(out):
            if m.get("role") == "user":
                m["content"] = f"{m['content']}\n\n{note}"
                break
        else:
            out.append({"role": "user", "content": note})
        return out

    def _response_format(self, role: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        if self.config.response_format == "llama_cpp":
            return {"type": "json_object", "schema": schema}
        if self._supports_schema():
            # strict=False: OpenAI's strict mode forbids optional properties, which the records have.
            return {"type": "json_schema", "json_schema": {"name": f"worldmind_{role}", "schema": schema,
                                                           "strict": False}}
        if self.config.response_format == "json_object":
            return {"type": "json_object"}
        return None

    def _cache_path(self, key: str) -> Path | None:
        if self.config.cache_dir is None or self.config.cache_mode == "off":
            return None
        return Path(self.config.cache_dir) / key[:2] / f"{key}.json"

    def _complete(self, role: str, messages: list[dict[str, str]], schema: dict[str, Any]) -> _Answer:
        usage = self._role(role)
        if self.replay is not None:
            recorded = self.replay.answer(role, messages)  # ReplayMissError: see call_json
            usage.replayed += 1
            return _Answer(redact(recorded.text), recorded.finish_reason, None, True)
        key = self.cache_key(messages, schema)
        path = self._cache_path(key)
        entry, problem = _read_cache_entry(path) if path is not None and path.is_file() else (None, "")
        if entry is not None:
            usage.cache_hits += 1
            return _Answer(redact(entry["text"]), entry.get("finish_reason"), entry.get("refusal"), True)
        if problem and self.config.cache_mode == "replay_only":
            raise LLMCacheMissError(f"replay_only: the cached answer for role {role!r} is damaged: {problem}")
        if self.config.cache_mode == "replay_only":
            raise LLMCacheMissError(
                f"replay_only: no cached answer for role {role!r} (key {key}) under {self.config.cache_dir}. "
                "Either the run was never recorded there (record it with cache_mode='read_write'), or the "
                "prompt differs from the recorded one (model, api_base, messages, schema or temperature changed).")

        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "timeout": self.config.timeout,
            "drop_params": True,  # providers without response_format etc. ignore it instead of failing
        }
        if self.config.api_base:
            kwargs["api_base"] = self.config.api_base
        key_value = self._api_key()
        if key_value:
            kwargs["api_key"] = key_value
        elif is_local_api_base(self.config.api_base):
            # A local server needs no key, but the OpenAI client refuses to send a request without one.
            kwargs["api_key"] = LOCAL_PLACEHOLDER_KEY
        response_format = self._response_format(role, schema)
        if response_format is not None:
            kwargs["response_format"] = response_format
        if self.config.response_format == "llama_cpp":
            # llama.cpp's servers keep a slot's evaluated prompt and reuse its longest common prefix;
            # each role's system prompt (vocabulary, rules, example) is the same call after call, so
            # only the memory summary and the goal are evaluated again. Said explicitly: the
            # default differs between server versions.
            kwargs["extra_body"] = {"cache_prompt": True}
        mocked = self.config.mock_responses is not None
        if mocked:
            kwargs["mock_response"] = self._next_mock()
        elif uses_openai_transport(self.config.model):
            if self._transport is None:
                self._transport = CappedTransport(self.config.max_response_bytes, self.config.timeout)
            kwargs["client"] = self._transport.openai_client(self.config.api_base, kwargs.get("api_key"),
                                                             self.config.timeout)
            kwargs["max_retries"] = 0  # call_json retries; the SDK's retries would triple each timeout

        litellm = self._litellm()
        start = time.perf_counter()
        try:
            response = litellm.completion(**kwargs)
        except Exception:
            if self._transport is not None and self._transport.take_tripped():
                raise ResponseTooLargeError(f"the reply from {server_label(self.config.api_base)} is over the "
                                            f"{self.config.max_response_bytes}-byte cap "
                                            "(LLMConfig.max_response_bytes)") from None
            raise
        finally:
            elapsed = time.perf_counter() - start
            usage.latency_s += elapsed
            usage.call_latencies.append(elapsed)
            usage.calls += 1
        choice = response.choices[0]
        message = choice.message
        # A model may echo the key: it is removed before anything (goals, reports, bags) sees the answer.
        text = redact(getattr(message, "content", None) or "")
        refusal = redact(getattr(message, "refusal", None) or "") or None
        finish = getattr(choice, "finish_reason", None)
        tokens = getattr(response, "usage", None)
        if tokens is not None:
            usage.prompt_tokens += int(getattr(tokens, "prompt_tokens", 0) or 0)
            usage.completion_tokens += int(getattr(tokens, "completion_tokens", 0) or 0)
        cost: float | None = None
        if is_local_api_base(self.config.api_base) and not mocked:
            cost = 0.0  # served on this machine: no bill (litellm cannot price an unknown local model)
        elif not mocked:  # a mocked answer cost nothing; litellm would price its fake token counts
            try:
                cost = float(litellm.completion_cost(completion_response=response))
            except Exception:
                cost = None
        if cost is None:
            usage.cost_unknown_calls += 1
        else:
            usage.cost_known_calls += 1
            usage.cost_usd += cost
        if path is not None and self.config.cache_mode == "read_write":
            # An answer over MAX_ANSWER_CHARS is refused whatever follows, so only its first
            # MAX_ANSWER_CHARS + 1 characters are kept: the replay gives the same verdict, and the
            # entry stays under the reader's MAX_CACHE_ENTRY_BYTES (a cut-down entry, not a refused one).
            stored = redact(text)[:MAX_ANSWER_CHARS + 1]
            _atomic_write_json(path, {"key": key, "role": role, "model": self.config.model, "text": stored,
                                      "text_sha256": hashlib.sha256(stored.encode("utf-8", "surrogatepass")).hexdigest(),
                                      "finish_reason": finish, "refusal": refusal})
        return _Answer(text, finish, refusal, False)

    def _next_mock(self) -> Any:
        mocks = list(self.config.mock_responses or ())
        if self._mock_index >= len(mocks):
            raise MockResponsesExhaustedError(f"LLMConfig.mock_responses exhausted after {len(mocks)} call(s)")
        value = mocks[self._mock_index]
        self._mock_index += 1
        if isinstance(value, str) and value == "":
            # litellm treats a falsy mock_response as "no mock" and would call the provider; an
            # explicit empty message keeps the mock path.
            return {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ""}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 0, "total_tokens": 10}}
        return value

    def _check(self, answer: _Answer, schema: dict[str, Any],
               validate: Validator | None) -> tuple[Any, tuple[FailureKind, str] | None]:
        value, problem = parse_json_answer(answer.text, answer.finish_reason, answer.refusal)
        if problem is not None:
            return None, problem
        if _depth_over(value, MAX_ANSWER_DEPTH):
            return None, ("schema", f"the JSON is nested deeper than {MAX_ANSWER_DEPTH} levels")
        errors = schema_errors(value, schema)
        if errors:
            return None, ("schema", "; ".join(errors))
        if validate is not None:
            try:
                errors = validate(value)
            except Exception as exc:  # a validator must not crash the run on odd input
                errors = [f"{type(exc).__name__}: {exc}"]
            if errors:
                return None, ("semantic", "; ".join(errors[:5]))
        return value, None


def _is_timeout(exc: BaseException) -> bool:
    """litellm.Timeout, openai.APITimeoutError, httpx timeouts, socket.timeout: all name themselves so
    (checked by name and MRO, so no provider SDK has to be imported here)."""
    return isinstance(exc, TimeoutError) or any("Timeout" in cls.__name__ for cls in type(exc).__mro__)
