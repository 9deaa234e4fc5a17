"""The LLM client on the wire, against a loopback OpenAI-compatible stub (tests/llm_stub_server.py):
which response_format each mode sends, and what a server that is down, slow, answers garbage or
answers far too much does to a role (bounded wait, size cap, a line naming the server, the
fallback recorded under its reason, and no cache entry the cache reader would refuse)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from planner.llm.answers import MAX_ANSWER_CHARS, _read_cache_entry
from planner.llm.client import LLMClient, LLMConfig, LLMRoleError
from planner.llm.roles import LLMGrounder
from planner.roles import Goal, Grounding, KnownObject, PlannerContext
from household.checklist import ChecklistItem
from tests.llm_stub_server import Reply, StubServer, chat_reply, closed_port_url

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False}
MESSAGES = [{"role": "system", "content": "You answer JSON."}, {"role": "user", "content": "Give a."}]


def client(base_url: str, **kw: Any) -> LLMClient:
    cfg: dict[str, Any] = {"model": "openai/stub", "api_base": base_url, "max_repairs": 0, "timeout": 5.0, **kw}
    return LLMClient(LLMConfig(**cfg))


@pytest.mark.parametrize("mode, expected", [
    ("json_schema", {"type": "json_schema", "json_schema": {"name": "worldmind_ground", "schema": SCHEMA,
                                                            "strict": False}}),
    ("llama_cpp", {"type": "json_object", "schema": SCHEMA}),
    ("json_object", {"type": "json_object"}),
    ("prompt", None),
])
def test_request_carries_the_schema_in_the_configured_form(mode: str, expected: dict | None) -> None:
    with StubServer(lambda body: chat_reply('{"a": 3}')) as server:
        value = client(server.base_url, response_format=mode).call_json("ground", MESSAGES, SCHEMA)
    assert value == {"a": 3}
    sent = server.requests[0]
    assert sent.get("response_format") == expected
    last_user = sent["messages"][-1]["content"]
    # Without server-side enforcement the schema goes into the prompt instead (validation still runs).
    assert (json.dumps(SCHEMA, separators=(",", ":"), sort_keys=True) in last_user) == (expected is None or mode == "json_object")


def test_schema_is_still_validated_when_the_server_enforces_it() -> None:
    """A server that claims enforcement but answers off-schema is repaired, then refused."""
    with StubServer(lambda body: chat_reply('{"a": "three"}')) as server:
        c = client(server.base_url, response_format="llama_cpp", max_repairs=1)
        with pytest.raises(LLMRoleError) as err:
            c.call_json("ground", MESSAGES, SCHEMA)
    assert err.value.kind == "schema" and len(server.requests) == 2
    assert "does not match the required schema" in server.requests[1]["messages"][-1]["content"]


def test_local_server_costs_zero_and_needs_no_key() -> None:
    with StubServer(lambda body: chat_reply('{"a": 1}', prompt_tokens=321, completion_tokens=7)) as server:
        c = client(server.base_url)
        c.call_json("ground", MESSAGES, SCHEMA)
    usage = c.usage()
    assert usage["cost_status"] == "known" and usage["cost_usd"] == 0.0
    assert usage["prompt_tokens"] == 321 and usage["completion_tokens"] == 7
    assert server.headers[0]["authorization"].startswith("Bearer ")


def _context() -> PlannerContext:
    return PlannerContext(step=5, held_object_id=None, held_object_type=None,
                          known_objects=[KnownObject("Mug|1", "Mug", "Kitchen", (1.0, 0.0, 0.0), last_seen_step=4),
                                         KnownObject("Sink|1", "Sink", "Kitchen", (2.0, 0.0, 0.0), last_seen_step=4)],
                          rooms_seen=["Kitchen"], history=[], experience=[], object_types=["Mug", "Sink"])


GOAL = Goal(id="g1", text="put a mug in the sink",
            items=(ChecklistItem.from_dict({"object": {"type": "Mug"}, "predicate": "inReceptacle",
                                            "target": {"type": "Sink"}}),))


class Fallback:
    def ground(self, goal: Goal, context: PlannerContext) -> Grounding:
        return Grounding(goal_id=goal.id, bindings={"object": None})


def _ground_once(base_url: str, **kw: Any) -> tuple[LLMGrounder, Grounding, float]:
    role = LLMGrounder(client(base_url, **kw), Fallback())
    start = time.monotonic()
    grounding = role.ground(GOAL, _context())
    return role, grounding, time.monotonic() - start


def test_server_down_falls_back_fast_naming_the_server() -> None:
    url = closed_port_url()
    role, grounding, took = _ground_once(url, max_repairs=1)
    assert grounding.bindings == {"object": None}  # the fallback's answer
    assert took < 5.0
    usage = role.client.usage()
    assert usage["decisions_by_role"]["ground"] == {"decisions": 1, "by_model": 0, "fell_back": 1,
                                                    "fallback_reasons": {"transport_error": 1}}
    event = usage["fallback_events"][0]
    assert event["category"] == "transport_error" and url in event["reason"]


def test_slow_server_is_bounded_by_the_timeout() -> None:
    with StubServer(lambda body: Reply(delay_s=3.0, body=b"{}")) as server:
        role, grounding, took = _ground_once(server.base_url, timeout=0.5)
    assert took < 2.5, f"a 0.5 s timeout took {took:.1f} s (SDK retries not switched off?)"
    assert len(server.requests) == 1
    assert role.client.usage()["decisions_by_role"]["ground"]["fallback_reasons"] == {"timeout": 1}
    assert server.base_url in role.client.usage()["fallback_events"][0]["reason"]


@pytest.mark.parametrize("reply, reason", [
    (Reply(body=b"<html>502 Bad Gateway</html>", content_type="text/html"), "transport_error"),
    (Reply(status=500, body=b'{"error": "boom"}'), "transport_error"),
    (chat_reply("Sure! The mug is in the kitchen."), "invalid_json"),
    (chat_reply('{"bindings": {"object": "Sink|1"}}'), "schema_invalid"),  # a Sink for a Mug: not in the enum
    (chat_reply('{"bindings": {"object": "Ghost|9"}}'), "schema_invalid"),
])
def test_garbage_answers_are_filed_under_their_reason(reply: Reply, reason: str) -> None:
    with StubServer(lambda body: reply) as server:
        role, grounding, _ = _ground_once(server.base_url)
    assert grounding.bindings == {"object": None}
    assert role.client.usage()["decisions_by_role"]["ground"]["fallback_reasons"] == {reason: 1}


def test_a_valid_answer_is_counted_as_the_models_decision() -> None:
    with StubServer(lambda body: chat_reply('{"bindings": {"object": "Mug|1", "target": "Sink|1"}}')) as server:
        role, grounding, _ = _ground_once(server.base_url)
    assert grounding.bindings == {"object": "Mug|1", "target": "Sink|1"}
    decisions = role.client.usage()["decisions"]
    assert decisions["decisions"] == 1 and decisions["by_model"] == 1 and decisions["model_share"] == 1.0


def test_huge_reply_is_cut_off_at_the_cap() -> None:
    huge = chat_reply("x" * (3 << 20))  # 3 MiB against a 64 kiB cap
    with StubServer(lambda body: huge) as server:
        role, grounding, _ = _ground_once(server.base_url, max_response_bytes=64 << 10)
    usage = role.client.usage()
    assert usage["decisions_by_role"]["ground"]["fallback_reasons"] == {"too_large": 1}
    assert "65536-byte cap" in usage["fallback_events"][0]["reason"]
    assert server.base_url in usage["fallback_events"][0]["reason"]


def test_an_over_long_answer_leaves_a_cache_entry_the_reader_accepts(tmp_path: Path) -> None:
    """Under the byte cap but over MAX_ANSWER_CHARS (escaped characters): the stored entry is cut
    to a size the reader accepts, and the replay gives the same verdict."""
    text = "\u0001" * (MAX_ANSWER_CHARS * 2)  # 6 bytes each once JSON-escaped: ~2.4 MB uncut
    with StubServer(lambda body: chat_reply(text)) as server:
        c = client(server.base_url, cache_dir=tmp_path, max_response_bytes=8 << 20)
        with pytest.raises(LLMRoleError) as first:
            c.call_json("ground", MESSAGES, SCHEMA)
        entries = list(tmp_path.rglob("*.json"))
        assert len(entries) == 1
        entry, problem = _read_cache_entry(entries[0])
        assert problem == "" and entry is not None
        replay = client(server.base_url, cache_dir=tmp_path, cache_mode="replay_only")
        with pytest.raises(LLMRoleError) as again:
            replay.call_json("ground", MESSAGES, SCHEMA)
    assert len(server.requests) == 1
    assert first.value.kind == again.value.kind == "not_json"


def test_a_lone_surrogate_answer_is_cached_and_read_back(tmp_path: Path) -> None:
    body = ('{"id":"x","object":"chat.completion","created":0,"model":"stub","choices":[{"index":0,'
            '"finish_reason":"stop","message":{"role":"assistant","content":"{\\"a\\": 1} \\ud800"}}]}').encode()
    with StubServer(lambda b: Reply(body=body)) as server:
        c = client(server.base_url, cache_dir=tmp_path)
        assert c.call_json("ground", MESSAGES, SCHEMA) == {"a": 1}
    entries = list(tmp_path.rglob("*.json"))
    entry, problem = _read_cache_entry(entries[0])
    assert problem == "" and entry is not None and entry["text"].endswith("\ud800")
