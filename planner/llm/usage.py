"""Per-role counters of the LLM client (calls, tokens, cost, latency, repairs, fallbacks) and
their report form. Kept apart from the client so the transport code stays short."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class RoleUsage:
    """Counters for one role (and, summed, for the episode)."""

    calls: int = 0  # real litellm calls (cache hits excluded)
    cache_hits: int = 0
    replayed: int = 0  # answers taken from a recorded run (planner.llm.replay)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_known_calls: int = 0
    cost_unknown_calls: int = 0
    latency_s: float = 0.0
    repairs: int = 0  # repair prompts sent after an invalid answer
    retries: int = 0  # re-sends after a transport error
    failures: int = 0  # LLMRoleError raised (bound reached)
    fallbacks: int = 0  # the role then used its deterministic fallback
    repeats: int = 0  # repairs stopped because the model repeated the answer it was asked to fix
    # Every answer checked (model, cache or recording; transport errors are no answer): how many
    # parsed and met the role's JSON schema, and how many also passed the role's own checks. With
    # the schema enforced by the server (constrained decoding) schema_valid should equal answers.
    answers: int = 0
    schema_valid: int = 0
    accepted: int = 0
    # Seconds of each real call, for the median and p95 a robot's decision latency is judged by.
    call_latencies: list[float] = field(default_factory=list)

    def add(self, other: "RoleUsage") -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


def latency_quantile(latencies: list[float], q: float) -> float | None:
    """The q-quantile (nearest rank) of the calls' latencies; None without calls."""
    if not latencies:
        return None
    ordered = sorted(latencies)
    rank = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[rank]



def _cost_status(u: RoleUsage) -> str:
    if u.cost_known_calls == 0 and u.cost_unknown_calls == 0:
        return "none"
    if u.cost_unknown_calls == 0:
        return "known"
    return "unknown" if u.cost_known_calls == 0 else "partial"


def _usage_dict(u: RoleUsage) -> dict[str, Any]:
    return {
        "calls": u.calls,
        "cache_hits": u.cache_hits,
        "replayed": u.replayed,
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "total_tokens": u.prompt_tokens + u.completion_tokens,
        "cost_usd": round(u.cost_usd, 8),
        "cost_status": _cost_status(u),
        "latency_s": round(u.latency_s, 4),
        "repairs": u.repairs,
        "retries": u.retries,
        "failures": u.failures,
        "fallbacks": u.fallbacks,
        "repeats": u.repeats,
        "answers": u.answers,
        "schema_valid": u.schema_valid,
        "accepted": u.accepted,
        "latency_p50_s": _rounded(latency_quantile(u.call_latencies, 0.5)),
        "latency_p95_s": _rounded(latency_quantile(u.call_latencies, 0.95)),
        # Each call's seconds, so that medians and tails can be pooled over episodes (a median of
        # per-episode medians is not the median of the calls).
        "call_latencies_s": [round(x, 3) for x in u.call_latencies],
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


