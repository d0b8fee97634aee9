"""`llm.call.generate` — the one bounded way to call a model — over the real LiteLLM path against a fake provider.

What a user feels when a provider misbehaves: a 429 is retried after the Retry-After it asked for (up to the cap),
a 5xx or a dropped connection is retried once, a hung provider costs at most the per-call timeout × attempts and
never more than the question's deadline, and every failure comes out as a ModelFailure with a cause.
"""
from __future__ import annotations

import asyncio
import time

import pytest
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from agentic_rag.config import Settings
from agentic_rag.llm import call as call_module
from agentic_rag.llm.call import Budget, ModelFailure, classify, generate, retry_after
from agentic_rag.llm.models import make_model
from tests.fakes.openai_server import Delay, FakeError, FakeOpenAIServer


def request() -> LlmRequest:
    return LlmRequest(model="deepseek/deepseek-chat", config=types.GenerateContentConfig(max_output_tokens=20),
                      contents=[types.Content(role="user", parts=[types.Part(text="你好")])])


def call(base_url: str, *, deadline_s: float = 60, timeout_s: float = 10, retries: int = 1,
         cap_s: float = 10, budget: Budget | None = None) -> tuple[str, Budget]:
    settings = Settings(_env_file=None, deepseek_api_key="sk-test-000000", agentic_rag_model="deepseek/deepseek-chat",
                        llm_timeout_s=timeout_s)
    model = make_model("answer", settings)
    model._additional_args["api_base"] = base_url
    budget = budget or Budget.starting_now(deadline_s)

    async def go():
        return "".join([r.content.parts[0].text async for r in generate(
            model, request(), role="answer", budget=budget, timeout_s=timeout_s, max_retries=retries,
            retry_after_cap_s=cap_s) if r.content])

    return asyncio.run(go()), budget


class Clock:
    """What `generate` asked for: every sleep between attempts and every attempt's time limit. The sleeps are
    really taken (the provider sees the wait), so wall-clock gaps can be checked against them too."""

    def __init__(self, monkeypatch):
        self.sleeps: list[float] = []
        self.limits: list[float] = []
        real_sleep, real_once = asyncio.sleep, call_module._stream_once

        class Asyncio:  # asyncio as call.py sees it, with a recording sleep (no other code is affected)
            def __getattr__(self, name):
                return getattr(asyncio, name)

            @staticmethod
            async def sleep(seconds):
                self.sleeps.append(seconds)
                await real_sleep(seconds)

        def stream_once(model, request, stream, timeout):
            self.limits.append(timeout)
            return real_once(model, request, stream, timeout)

        monkeypatch.setattr(call_module, "asyncio", Asyncio())
        monkeypatch.setattr(call_module, "_stream_once", stream_once)


@pytest.fixture
def clock(monkeypatch) -> Clock:
    return Clock(monkeypatch)


class Sequence:
    """Reply with each item once, in order, recording when each request arrived."""

    def __init__(self, *replies):
        self.replies, self.times = list(replies), []

    def __call__(self, body):
        self.times.append(time.monotonic())
        return self.replies.pop(0)


def test_retry_after_of_a_429_is_honoured(clock):
    seq = Sequence(FakeError(429, "slow down", "rate_limit", headers={"Retry-After": "2"}), "好的")
    with FakeOpenAIServer(seq) as srv:
        text, budget = call(srv.base_url)
    assert text == "好的" and len(srv.requests) == 2 and budget.retries == 1
    assert clock.sleeps == [2.0]  # what the provider asked, not the 1 s backoff
    assert seq.times[1] - seq.times[0] >= 2.0  # and the provider saw the wait


def test_retry_after_beyond_the_cap_waits_only_the_cap(clock):
    seq = Sequence(FakeError(429, "slow down", "rate_limit", headers={"Retry-After": "120"}), "好的")
    with FakeOpenAIServer(seq) as srv:
        text, _ = call(srv.base_url, cap_s=0.5)
    assert text == "好的" and clock.sleeps == [0.5]
    assert 0.5 <= seq.times[1] - seq.times[0] < 0.5 + 5  # the rest is one local LiteLLM call, not the 120 s asked


def test_without_retry_after_the_backoff_is_used_up_to_the_cap(clock):
    with FakeOpenAIServer(lambda body: FakeError(500, "boom")) as srv, pytest.raises(ModelFailure):
        call(srv.base_url, retries=2, cap_s=1.5)
    assert clock.sleeps == [1.0, 1.5] and len(srv.requests) == 3  # BACKOFF_S 1, 2 (capped), no sleep after the last


def test_a_wait_that_would_cross_the_deadline_is_not_started(clock):
    seq = Sequence(FakeError(429, "slow down", "rate_limit", headers={"Retry-After": "5"}), "好的")
    with FakeOpenAIServer(seq) as srv, pytest.raises(ModelFailure) as failure:
        call(srv.base_url, deadline_s=3)
    assert failure.value.cause == "rate_limited" and len(srv.requests) == 1 and clock.sleeps == []


def test_server_error_is_retried_once_then_told_as_unavailable():
    with FakeOpenAIServer(lambda body: FakeError(500, "boom")) as srv, pytest.raises(ModelFailure) as failure:
        call(srv.base_url, cap_s=0.1)
    assert failure.value.cause == "unavailable" and "暂不可用" in failure.value.user_text
    assert len(srv.requests) == 2  # one retry, and LiteLLM's own retries are off


def test_a_bad_key_is_not_retried():
    with FakeOpenAIServer(lambda body: FakeError(401, "invalid key", "authentication_error")) as srv, \
            pytest.raises(ModelFailure) as failure:
        call(srv.base_url)
    assert failure.value.cause == "auth" and len(srv.requests) == 1


# A local call that is not held takes well under this; it bounds what a busy machine adds to a measured time.
SLACK_S = 2.0


def test_a_hung_provider_costs_at_most_timeout_times_attempts(clock):
    budget = Budget.starting_now(60)
    with FakeOpenAIServer(lambda body: Delay(30, "too late")) as srv, pytest.raises(ModelFailure) as failure:
        call(srv.base_url, timeout_s=1, retries=1, cap_s=0.1, budget=budget)
    assert failure.value.cause == "timeout" and len(srv.requests) == 2
    assert clock.limits == [1, 1] and clock.sleeps == [0.1]  # each attempt waited at most the timeout
    spent = budget.seconds["answer"]
    assert 2 * 1 + 0.1 - 0.05 <= spent < 2 * 1 + 0.1 + SLACK_S  # ~2.1 s, not the provider's 30 s


def test_the_question_deadline_cuts_a_hung_call(clock):
    budget = Budget.starting_now(1.5)
    with FakeOpenAIServer(lambda body: Delay(30, "too late")) as srv, pytest.raises(ModelFailure) as failure:
        call(srv.base_url, timeout_s=60, budget=budget)
    assert failure.value.cause == "deadline" and "时间上限" in failure.value.user_text
    assert len(clock.limits) == 1 and clock.limits[0] <= 1.5 and clock.sleeps == []  # not the 60 s timeout
    assert budget.seconds["answer"] < 1.5 + SLACK_S and budget.remaining() <= 0.5


def test_a_spent_budget_makes_no_call():
    with FakeOpenAIServer(lambda body: "好的") as srv, pytest.raises(ModelFailure) as failure:
        call(srv.base_url, deadline_s=-1)
    assert failure.value.cause == "deadline" and srv.requests == []


@pytest.mark.parametrize("exc, cause", [(TimeoutError(), "timeout"), (ConnectionError(), "unavailable"),
                                        (ValueError("x"), "error")])
def test_classify_plain_exceptions(exc, cause):
    assert classify(exc).cause == cause


def test_retry_after_parses_seconds_and_http_dates():
    class E(Exception):
        def __init__(self, value):
            self.headers = {"retry-after": value}

    assert retry_after(E("3")) == 3.0 and retry_after(E("soon")) is None
    later = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 60))
    assert 55 <= retry_after(E(later)) <= 61
    assert retry_after(ValueError()) is None


def test_the_most_retries_settings_allow_end_in_a_model_failure(clock):
    # LLM_MAX_RETRIES goes up to 5 and the backoff table has five waits: the last failure is told as a failure, not
    # an IndexError shown as an internal error.
    from agentic_rag.config import Settings as S

    retries = S.model_fields["llm_max_retries"].metadata[-1].le
    with FakeOpenAIServer(lambda body: FakeError(500, "boom")) as srv, pytest.raises(ModelFailure):
        call(srv.base_url, retries=retries, cap_s=0.01)
    assert len(srv.requests) == retries + 1
