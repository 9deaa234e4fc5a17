"""An in-process litellm provider that answers from a scripted table (tests, demos, replays).

Why: ``mock_response=`` proves one call at a time; a scripted provider goes through litellm's
real custom-provider dispatch (``litellm.custom_provider_map``), so a whole multi-role run
(decompose -> refine -> ground -> translate -> critique, with repairs) can be exercised end to
end offline with a model string like "worldmind-scripted/planner", exactly as a user would
plug in a real model.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402


@dataclass
class ScriptRule:
    """Answer ``answers`` in order (the last one repeats) to prompts containing ``match``."""

    match: str
    answers: list[str]
    used: int = 0

    def next(self) -> str:
        text = self.answers[min(self.used, len(self.answers) - 1)]
        self.used += 1
        return text


@dataclass
class ScriptedTable:
    """First rule whose ``match`` occurs in the prompt (all message texts joined) answers; the
    prompts it saw are kept in ``seen`` for assertions."""

    rules: list[ScriptRule]
    default: str = ""
    seen: list[str] = field(default_factory=list)

    def answer(self, messages: list[dict[str, Any]]) -> str:
        prompt = "\n".join(str(m.get("content") or "") for m in messages)
        self.seen.append(prompt)
        for rule in self.rules:
            if rule.match in prompt:
                return rule.next()
        return self.default


def register_scripted_provider(table: ScriptedTable, provider: str = "worldmind-scripted") -> str:
    """Register (or re-point) ``provider`` to answer from ``table``; returns the provider name,
    to be used as "<provider>/<anything>" in LLMConfig.model."""
    import litellm
    from litellm import CustomLLM, ModelResponse
    from litellm.utils import custom_llm_setup

    class _Scripted(CustomLLM):
        def completion(self, *args: Any, **kwargs: Any) -> ModelResponse:
            messages = kwargs.get("messages") or (args[1] if len(args) > 1 else [])
            text = table.answer(messages)
            return litellm.completion(model=f"openai/{provider}", messages=messages, mock_response=text or {
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ""}}]})

    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p.get("provider") != provider]
    litellm.custom_provider_map.append({"provider": provider, "custom_handler": _Scripted()})
    custom_llm_setup()
    return provider
