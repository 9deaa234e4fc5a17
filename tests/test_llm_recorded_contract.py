"""Contract tests on the recorded real-model run (tests/data/llm/README.md): Qwen2.5-Coder-0.5B
behind llama-cpp-python's server, every request and answer of one demo episode.

A loopback stub serves the recorded answers back, turn by turn, to the real client and the real
role plumbing (``_LLMRole._run``) with today's project checks, given the context each prompt was
built from (tests/llm_transcript.py). The contract: the request carries the schema in the form
that server accepted; every answer the run refused is refused today for the same reason, every
answer it used is used today; and the attribution (model decisions vs fallbacks, by reason) that
reports print adds up to the transcript.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from evaluation.report import summarize
from planner.llm import schemas
from planner.llm.attribution import Attribution, share_warning
from planner.llm.client import LLMClient, LLMConfig
from planner.llm.roles import LLMGrounder, LLMRefiner, LLMTranslator
from tests.llm_stub_server import Reply, StubServer, chat_reply
from tests.llm_transcript import (FIXTURE, Conversation, context_of, conversations, goal_of, grounding_of,
                                  load_calls, without_note)

ROLE_CLASS = {"ground": LLMGrounder, "refine": LLMRefiner, "translate": LLMTranslator}
MAX_REPAIRS = 2  # what the recorded run used (LLMConfig default): at most three answers per decision


def complete_conversations() -> list[Conversation]:
    """The recording started during one repair conversation; that one is left out (its first
    answer is not in the file)."""
    return [c for c in conversations() if len(c.first.messages) == 2]


def validator(conv: Conversation) -> Any:
    msgs = conv.first.messages
    context, goal = context_of(msgs), goal_of(msgs)
    if conv.role == "ground":
        return lambda v: schemas.validate_ground(v, goal, context)
    if conv.role == "refine":
        return lambda v: schemas.validate_refine(v, goal, context)
    grounding = grounding_of(msgs, goal.id)
    return lambda v: schemas.validate_translate(v, goal, grounding, context)


def replay(conv: Conversation) -> tuple[LLMClient, StubServer, Any]:
    """Run one recorded decision through the client and role plumbing; the stub answers turn n
    with the run's n-th answer (whatever repair prompt today's client sends)."""
    answers = [c.answer for c in conv.calls]
    tokens = [c.prompt_tokens for c in conv.calls]

    def answer(body: dict[str, Any]) -> Reply:
        turn = (len(body["messages"]) - 2) // 2
        if turn >= len(answers):
            return Reply(status=500, body=b'{"error": "the run made no such call"}')
        return chat_reply(answers[turn], prompt_tokens=tokens[turn])

    server = StubServer(answer).start()
    client = LLMClient(LLMConfig(model="openai/qwen2.5-coder-0.5b", api_base=server.base_url,
                                 response_format="llama_cpp", max_repairs=MAX_REPAIRS, timeout=10.0))
    role = ROLE_CLASS[conv.role](client, fallback=object())
    schema = conv.first.response_format["schema"]
    try:
        out = role._run(context_of(conv.first.messages), without_note(conv.first.messages), schema,
                        validator(conv), lambda v: v, lambda fallback: "FALLBACK")
    finally:
        server.stop()
    return client, server, out


@pytest.fixture(scope="module")
def replays() -> list[tuple[Conversation, LLMClient, StubServer, Any]]:
    return [(conv, *replay(conv)) for conv in complete_conversations()]


def test_contract_fixture_is_the_recorded_run() -> None:
    calls = load_calls(FIXTURE)
    assert len(calls) == 57 and all(c.response_format and c.response_format["type"] == "json_object" for c in calls)
    roles = Counter(c.role for c in complete_conversations())
    assert set(roles) == {"ground", "refine", "translate"}


def test_contract_requests_carry_the_schema_in_the_form_the_server_accepted(replays: list) -> None:
    for conv, _client, server, _out in replays:
        for sent, recorded in zip(server.requests, conv.calls):
            assert sent["response_format"] == recorded.response_format  # llama.cpp's {"type":"json_object","schema"}
            assert sent["messages"][:2] == recorded.messages[:2]  # the same prompt, format note included


def calls_today(conv: Conversation) -> int:
    """How many of the run's calls today's client makes: it stops repairing at the first answer
    that repeats the refused one before it (planner.llm.client)."""
    texts = [c.answer.strip() for c in conv.calls]
    return next((i + 1 for i in range(1, len(texts)) if texts[i] == texts[i - 1]), len(texts))


def test_contract_every_refusal_and_acceptance_is_reproduced(replays: list) -> None:
    for conv, _client, server, out in replays:
        cut = calls_today(conv)
        recorded = conv.recorded_refusals()[:cut - 1]
        sent_repairs = [r["messages"][-1]["content"] for r in server.requests[1:]]
        # Each answer the run refused (it sent a repair) is refused today, for the same reason,
        # up to a repeated answer, after which today's client asks no more.
        assert len(server.requests) >= cut if cut == len(conv.calls) else len(server.requests) == cut
        for i, reason in enumerate(recorded):
            assert i < len(sent_repairs), f"{conv.role}: the run refused answer {i + 1} ({reason}); today it is used"
            assert conv.calls[i + 1].messages[-1]["content"].split(" Problem:")[0] == \
                sent_repairs[i].split(" Problem:")[0], (conv.role, i, reason)
        used_by_run = len(conv.calls) < MAX_REPAIRS + 1  # the run stopped asking: it used the last answer
        if used_by_run and not goal_check_refusal(conv):
            assert out != "FALLBACK" and len(server.requests) == len(conv.calls)
            assert out == json.loads(conv.calls[-1].answer)


def test_contract_repeated_answers_end_the_repairs_early() -> None:
    """In the recorded run most repair answers repeated the answer they were to fix; today's client
    stops at the first repeat, so those decisions fall back a model call earlier: 12 of the 26
    repair calls of the 55 in the fixture are not made (at about 5 to 60 s a call there)."""
    convs = complete_conversations()
    assert sum(len(c.calls) for c in convs) == 55 and sum(len(c.calls) - 1 for c in convs) == 26
    assert sum(len(c.calls) - calls_today(c) for c in convs) == 12


def goal_check_refusal(conv: Conversation) -> str | None:
    """Why today's goal checks (planner.plan_checks, issue 34) refuse the answer the run used, if
    they do: a plan without the interaction its goal needs, an object pinned of another type."""
    problems = validator(conv)(json.loads(conv.calls[-1].answer))
    return problems[0] if problems else None


def test_contract_goal_checks_refuse_the_runs_wrong_answers() -> None:
    """The recorded run used 9 translator plans that never placed anything ("put X in Y" as a
    single pick or navigate_to) and 3 refinements that pinned an object of another type (the
    vase goal got the credit card); all passed the schema then. Today each is refused, with the
    reason, and the deterministic role answers instead."""
    used = [c for c in complete_conversations() if len(c.calls) < MAX_REPAIRS + 1]
    refused = [(c.role, why) for c in used if (why := goal_check_refusal(c))]
    assert Counter(role for role, _ in refused) == {"translate": 9, "refine": 3}
    reasons = [why for _, why in refused]
    assert sum("needs place" in r for r in reasons) == 9
    assert sum("is a CreditCard, but the goal's object must be one of ['Vase']" in r for r in reasons) == 1
    assert all(", but the goal's object must be one of" in r for r in reasons if "needs place" not in r)
    for conv, _client, _server, out in [(c, *replay(c)) for c in used if goal_check_refusal(c)]:
        assert out == "FALLBACK", conv.role


def test_contract_attribution_adds_up_to_the_transcript(replays: list) -> None:
    total = Attribution()
    for conv, client, _server, out in replays:
        a = Attribution.from_usage(client.usage())
        assert a is not None and a.total.decisions == 1
        assert a.total.by_model == (0 if out == "FALLBACK" else 1)
        for reason in a.total.fallbacks:  # a fallback is filed under the reason of its last refusal
            assert reason == (conv.recorded_refusals() or [reason])[-1]
        total.add(a)
    convs = complete_conversations()
    assert total.total.decisions == len(convs)
    by_role = total.to_dict()["by_role"]
    for role in ("ground", "refine", "translate"):
        n = sum(1 for c in convs if c.role == role)
        used = sum(1 for c, _, _, out in replays if c.role == role and out != "FALLBACK")
        assert by_role[role]["decisions"] == n and by_role[role]["by_model"] == used
    # The 0.5B grounder never bound a fitting object: every grounding decision fell back, refused by
    # the project's type checks (the README's "grounder 0/22" for the whole run).
    assert by_role["ground"]["by_model"] == 0
    assert by_role["ground"]["fallback_reasons"] == {"refused_by_checks": by_role["ground"]["decisions"]}
    # What a summary of this run prints: the warning appears exactly when the share is under 50%.
    share = total.model_share()
    assert (share_warning(total) is not None) == (share < 0.5)


def test_contract_grounder_alone_is_flagged_under_the_threshold(replays: list) -> None:
    """A run whose decisions were only the recorded groundings says so beside its figures."""
    total = Attribution()
    for conv, client, _server, _out in replays:
        if conv.role == "ground":
            total.add(Attribution.from_usage(client.usage()))
    warning = share_warning(total)
    assert warning is not None and f"took only 0 of {total.total.decisions}" in warning


def test_contract_local_server_is_priced_at_zero(replays: list) -> None:
    conv, client, _server, _out = replays[0]
    usage = client.usage()
    assert usage["cost_status"] == "known" and usage["cost_usd"] == 0.0
    assert usage["prompt_tokens"] == sum(c.prompt_tokens for c in conv.calls[: usage["calls"]])
    assert summarize([]) is not None  # the report layer imports cleanly next to the client
