"""Who made each planner decision: the model, or the deterministic fallback, and why.

Why this exists: with a weak model most answers fail a check and the role silently uses its
deterministic fallback, so an ``llm:<model>`` run can score exactly like the deterministic one
while its report says "llm". Every role invocation is therefore counted as one *decision*, taken
either by the model (its validated answer was used) or by the fallback, with the failure sorted
into one of ``REASONS``; reports and summaries print these counts per role and say plainly when
the model's share is under ``MODEL_SHARE_THRESHOLD``.

Also here: whether an ``api_base`` is a local server (loopback), since a model served on this
machine costs 0 USD, not "unknown", and a short form of the server's address for messages (no
credentials, no query string).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Mapping
from urllib.parse import urlsplit

# Failure categories a fallback is filed under (a role's LLMRoleError.kind maps to one of them).
REASONS: tuple[str, ...] = ("transport_error", "timeout", "too_large", "invalid_json", "refusal",
                            "schema_invalid", "refused_by_checks", "not_recorded")
REASON_TEXT: dict[str, str] = {
    "transport_error": "transport error (server down, HTTP error, malformed response)",
    "timeout": "timeout (no answer within the configured bound)",
    "too_large": "answer over the size cap",
    "invalid_json": "not JSON (empty, cut off at max_tokens, or prose)",
    "refusal": "the model refused",
    "schema_invalid": "JSON that violates the role's schema",
    "refused_by_checks": "schema-valid but refused by the project's checks (wrong type, unknown id, ...)",
    "not_recorded": "not recorded (the replayed recording has no answer for this role and goal)",
}
_KIND_TO_REASON: dict[str, str] = {
    "api_error": "transport_error", "timeout": "timeout", "too_large": "too_large",
    "empty": "invalid_json", "truncated": "invalid_json", "not_json": "invalid_json",
    "refusal": "refusal", "schema": "schema_invalid", "semantic": "refused_by_checks",
    "not_recorded": "not_recorded",
}
# Under this share of model decisions an eval's figures mostly measure the fallback.
MODEL_SHARE_THRESHOLD = 0.5


def reason_of(kind: str) -> str:
    """The REASONS category of an ``LLMRoleError.kind`` (unknown kinds count as transport errors,
    the only failures that do not come from an answer we could read)."""
    return _KIND_TO_REASON.get(kind, "transport_error")


def is_local_api_base(api_base: str | None) -> bool:
    """True for a server on this machine (loopback host): it is priced at 0 USD."""
    if not api_base:
        return False
    try:
        host = urlsplit(api_base if "//" in api_base else f"//{api_base}").hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def server_label(api_base: str | None) -> str:
    """``scheme://host:port/path`` of the server, without user:password@ or query (they may hold
    a key), for error lines; "the provider's default endpoint" when none is configured."""
    if not api_base:
        return "the provider's default endpoint"
    try:
        parts = urlsplit(api_base)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(unparseable api_base)"
    if not parts.scheme:
        return "(api_base without scheme)"
    return f"{parts.scheme}://{host}{port}{parts.path}"


@dataclass
class RoleDecisions:
    """Decisions of one role in one episode (or summed over episodes)."""

    decisions: int = 0
    by_model: int = 0
    fallbacks: dict[str, int] = field(default_factory=dict)  # REASONS category -> count

    @property
    def fell_back(self) -> int:
        return sum(self.fallbacks.values())

    def add(self, other: "RoleDecisions") -> None:
        self.decisions += other.decisions
        self.by_model += other.by_model
        for k, v in other.fallbacks.items():
            self.fallbacks[k] = self.fallbacks.get(k, 0) + v

    def to_dict(self) -> dict[str, Any]:
        return {"decisions": self.decisions, "by_model": self.by_model, "fell_back": self.fell_back,
                "fallback_reasons": {k: self.fallbacks[k] for k in REASONS if self.fallbacks.get(k)}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RoleDecisions":
        reasons = data.get("fallback_reasons") or {}
        return cls(decisions=_count(data.get("decisions")), by_model=_count(data.get("by_model")),
                   fallbacks={str(k): _count(v) for k, v in reasons.items() if _count(v)})


def _count(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else 0


@dataclass
class Attribution:
    """Per-role decisions plus the overall share; built from ``LLMClient.usage()["decisions"]``."""

    by_role: dict[str, RoleDecisions] = field(default_factory=dict)

    @property
    def total(self) -> RoleDecisions:
        out = RoleDecisions()
        for r in self.by_role.values():
            out.add(r)
        return out

    def model_share(self) -> float | None:
        t = self.total
        return t.by_model / t.decisions if t.decisions else None

    def add(self, other: "Attribution") -> None:
        for role, r in other.by_role.items():
            self.by_role.setdefault(role, RoleDecisions()).add(r)

    def to_dict(self, threshold: float = MODEL_SHARE_THRESHOLD) -> dict[str, Any]:
        t, share = self.total, self.model_share()
        return {"by_role": {k: v.to_dict() for k, v in sorted(self.by_role.items())}, **t.to_dict(),
                "model_share": None if share is None else round(share, 4), "threshold": threshold,
                "under_threshold": share is not None and share < threshold}

    @classmethod
    def from_usage(cls, usage: Mapping[str, Any] | None) -> "Attribution | None":
        """From an ``extra["llm"]`` dict; None when it has no decision counts (no model, or a
        report written before they existed: unknown, not zero)."""
        if not isinstance(usage, Mapping) or not isinstance(usage.get("decisions_by_role"), Mapping):
            return None
        return cls({str(k): RoleDecisions.from_dict(v) for k, v in usage["decisions_by_role"].items()
                    if isinstance(v, Mapping)})


def share_warning(attribution: Attribution, threshold: float = MODEL_SHARE_THRESHOLD) -> str | None:
    """The line a report prints beside its figures when the model took too few decisions."""
    share = attribution.model_share()
    if share is None or share >= threshold:
        return None
    t = attribution.total
    return (f"WARNING: the model took only {t.by_model} of {t.decisions} planner decisions ({share:.0%}, under the "
            f"{threshold:.0%} threshold); the other {t.fell_back} fell back to the deterministic roles, so these "
            "figures mostly measure the deterministic planner, not the model.")


def attribution_lines(attribution: Attribution, threshold: float = MODEL_SHARE_THRESHOLD) -> list[str]:
    """Markdown: the warning (if any), then one table row per role with the reasons it fell back."""
    t, share = attribution.total, attribution.model_share()
    lines = ["## Model decisions", ""]
    warning = share_warning(attribution, threshold)
    if warning:
        lines += [f"**{warning}**", ""]
    lines.append(f"The model took {t.by_model} of {t.decisions} decisions"
                 + (f" ({share:.0%})." if share is not None else "."))
    lines += ["", "| Role | Decisions | By the model | Fell back | Why it fell back |", "|---|---:|---:|---:|---|"]
    for role, r in sorted(attribution.by_role.items()):
        why = "; ".join(f"{REASON_TEXT.get(k, k)}: {n}" for k, n in sorted(r.fallbacks.items(), key=lambda kv: -kv[1]))
        lines.append(f"| {role} | {r.decisions} | {r.by_model} | {r.fell_back} | {why or '-'} |")
    return lines + [""]


def server_trouble(api_base: str | None, attribution: Attribution) -> str | None:
    """One line naming the server when decisions fell back because it could not be reached or did
    not answer in time (what a person checks first), else None."""
    f = attribution.total.fallbacks
    parts = [f"{f[k]} {label}" for k, label in (("transport_error", "transport error(s)"), ("timeout", "timeout(s)"),
                                                 ("too_large", "over-size answer(s)")) if f.get(k)]
    if not parts:
        return None
    hint = "; is it running? (worldmind llm check)" if is_local_api_base(api_base) else ""
    return f"LLM server {server_label(api_base)}: {', '.join(parts)}{hint}"
