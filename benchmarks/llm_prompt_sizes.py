"""Prompt size per LLM role on the recorded real-model run (tests/data/llm/README.md).

For each role conversation of the recording it prints the server's own prompt-token count (what
the run sent, Qwen2.5 tokenizer), the recorded prompt in characters / 4, and the prompt today's
role builds from the same context (rebuilt from the recorded prompt by tests/llm_transcript.py)
in characters / 4, and today's prompt in estimated Qwen tokens (its characters times the recorded
tokens per character of that role). characters / 4 is an estimate (labelled so) and a low one
here: the recorded prompts ran about 2.5 characters per Qwen token (ids such as "small|6|23" and
distances tokenize densely).

    python benchmarks/llm_prompt_sizes.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.llm.client import LLMClient, LLMConfig  # noqa: E402
from planner.llm.roles import LLMGrounder, LLMRefiner, LLMTranslator  # noqa: E402
from tests.llm_transcript import context_of, conversations, goal_of, grounding_of  # noqa: E402

FORMAT_NOTE_CHARS = len("\n\nAnswer with one JSON object only.")


def _chars(messages: list[dict[str, str]]) -> int:
    return sum(len(m["content"]) for m in messages)


def rebuilt(role: str, messages: list[dict[str, str]], client: LLMClient) -> list[dict[str, str]]:
    context, goal = context_of(messages), goal_of(messages)
    if role == "ground":
        return LLMGrounder(client).messages(goal, context)
    if role == "refine":
        return LLMRefiner(client).messages(goal, context)
    return LLMTranslator(client).messages(goal, grounding_of(messages, goal.id), context)


def measure() -> dict[str, dict[str, float]]:
    client = LLMClient(LLMConfig(model="openai/local", api_base="http://127.0.0.1:8080/v1"))
    rows: dict[str, list[tuple[int, int, int]]] = {}
    for conv in conversations():
        if len(conv.first.messages) != 2:
            continue  # the recording began inside this repair conversation
        first = conv.first
        now = _chars(rebuilt(conv.role, first.messages, client)) + FORMAT_NOTE_CHARS
        rows.setdefault(conv.role, []).append((first.prompt_tokens, _chars(first.messages), now))
    ratio = {role: sum(x[0] for x in r) / sum(x[1] for x in r) for role, r in rows.items()}  # tokens per char
    out = {}
    for role, r in sorted(rows.items()):
        out[role] = {"calls": len(r), "recorded_tokens": statistics.median(x[0] for x in r),
                     "recorded_chars_4": statistics.median(x[1] for x in r) / 4,
                     "now_chars_4": statistics.median(x[2] for x in r) / 4,
                     "now_max_chars_4": max(x[2] for x in r) / 4,
                     "now_tokens_est": statistics.median(x[2] for x in r) * ratio[role]}
    return out


def main() -> None:
    print("medians per role    calls  recorded tokens (server)  recorded chars/4  today chars/4 (max)  "
          "today est. tokens")
    for role, m in measure().items():
        print(f"{role:<18} {m['calls']:>5}  {m['recorded_tokens']:>24.0f}  {m['recorded_chars_4']:>16.0f}  "
              f"{m['now_chars_4']:>7.0f} ({m['now_max_chars_4']:>4.0f})  {m['now_tokens_est']:>17.0f}")


if __name__ == "__main__":
    main()
