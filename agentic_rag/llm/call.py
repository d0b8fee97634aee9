"""Every LLM call of a question goes through `generate`: the one place for timeouts, retries, the question's
deadline, and the count and time of calls.

* a call waits at most `LLM_TIMEOUT_S`, and never past the question's deadline (`Budget`);
* a 429 or 5xx, a dropped connection or a timeout is retried up to `LLM_MAX_RETRIES` times; the provider's
  `Retry-After` is honoured up to `LLM_RETRY_AFTER_CAP_S`, and a wait that would cross the deadline is not
  started;
* a failure leaves as `ModelFailure`, whose `cause` and `user_text` say what went wrong in words a user can act
  on (a model outage is never reported as "the law does not cover this").

Providers' own retry loops are switched off (`llm.models` builds LiteLLM with ``num_retries=0``) so that this is
the only one and its waits are bounded.
"""
from __future__ import annotations

import asyncio
import email.utils
import logging
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Literal

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse

from .scoring import ScoringUnsupported

log = logging.getLogger(__name__)

Cause = Literal["timeout", "deadline", "rate_limited", "unavailable", "auth", "rejected", "missing", "error"]
RETRYABLE: frozenset[str] = frozenset({"timeout", "rate_limited", "unavailable"})
CAUSE_TEXT: dict[str, str] = {
    "timeout": "模型服务响应超时",
    "deadline": "本次回答已到时间上限",
    "rate_limited": "模型服务繁忙（请求被限流）",
    "unavailable": "模型服务暂不可用",
    "auth": "模型服务鉴权失败（请检查 API key 配置）",
    "rejected": "模型服务拒绝了请求",
    "missing": "本地模型不可用",
    "error": "模型调用失败",
}
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 8.0)
DEADLINE_SLACK_S = 0.5  # a timeout this close to the deadline was the deadline


class ModelFailure(Exception):
    """An LLM call that did not give a usable answer; `user_text` is shown to users as is."""

    def __init__(self, cause: Cause, detail: str = ""):
        self.cause, self.detail = cause, detail
        super().__init__(f"{cause}: {detail}" if detail else cause)

    @property
    def user_text(self) -> str:
        return CAUSE_TEXT[self.cause]


@dataclass
class Budget:
    """What one question may still spend, and what it has spent on LLM calls."""

    deadline: float  # time.monotonic() value
    calls: int = 0
    retries: int = 0
    seconds: dict[str, float] = field(default_factory=dict)  # per role
    # prompt / completion / cached (prefix reused by llama.cpp) tokens over the question's calls
    usage: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0, "cached": 0})

    def count(self, prompt: int | None, completion: int | None, cached: int | None) -> None:
        for key, value in (("prompt", prompt), ("completion", completion), ("cached", cached)):
            self.usage[key] += value or 0

    @classmethod
    def starting_now(cls, seconds: float) -> Budget:
        return cls(deadline=time.monotonic() + seconds)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()


def classify(exc: BaseException) -> ModelFailure:
    if isinstance(exc, ModelFailure):
        return exc
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)) or "Timeout" in name:
        cause: Cause = "timeout"
    elif status == 429 or "RateLimit" in name:
        cause = "rate_limited"
    elif status in (401, 403) or "Authentication" in name or "PermissionDenied" in name:
        cause = "auth"
    elif (isinstance(status, int) and status >= 500) or isinstance(exc, ConnectionError) or \
            any(k in name for k in ("Connection", "ServiceUnavailable", "InternalServer", "APIError")):
        cause = "unavailable"
    elif isinstance(status, int) and 400 <= status < 500:
        cause = "rejected"
    elif name == "ModelNotAvailableError":
        cause = "missing"
    else:
        cause = "error"
    return ModelFailure(cause, f"{name}: {str(exc)[:200]}")


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait (Retry-After as seconds or an HTTP date), when it said so."""
    response = getattr(exc, "response", None)  # LiteLLM keeps the provider's headers apart from its own response
    headers = getattr(exc, "litellm_response_headers", None) or getattr(response, "headers", None) or \
        getattr(exc, "headers", None)
    if not hasattr(headers, "get"):
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


async def _stream_once(model: BaseLlm, request: LlmRequest, stream: bool,
                       timeout: float) -> AsyncGenerator[LlmResponse, None]:
    """One provider call; the timeout bounds the wait for each response, not the caller's work between them."""
    loop = asyncio.get_running_loop()
    until = loop.time() + timeout
    responses = model.generate_content_async(request, stream=stream)
    try:
        while True:
            try:
                response = await asyncio.wait_for(anext(responses), max(0.0, until - loop.time()))
            except StopAsyncIteration:
                return
            if response.error_code:
                raise ModelFailure("error", f"{response.error_code}: {response.error_message or ''}"[:200])
            yield response
    finally:
        await responses.aclose()


async def generate(model: BaseLlm, request: LlmRequest, *, role: str, budget: Budget, timeout_s: float,
                   max_retries: int, retry_after_cap_s: float, stream: bool = False
                   ) -> AsyncGenerator[LlmResponse, None]:
    """The model's responses for `request`, within the budget; raises ModelFailure."""
    started = time.monotonic()
    budget.calls += 1
    try:
        for attempt in range(max_retries + 1):
            timeout = min(timeout_s, budget.remaining())
            if timeout <= 0:
                raise ModelFailure("deadline")
            yielded = False
            try:
                async for response in _stream_once(model, request, stream, timeout):
                    yielded = True
                    if not response.partial and (u := response.usage_metadata):
                        budget.count(u.prompt_token_count, u.candidates_token_count, u.cached_content_token_count)
                    yield response
                return
            except Exception as e:
                failure = classify(e)
                if failure.cause == "timeout" and budget.remaining() <= DEADLINE_SLACK_S:
                    failure = ModelFailure("deadline", failure.detail)
                wait = min(retry_after(e) or BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)], retry_after_cap_s)
                if yielded or attempt == max_retries or failure.cause not in RETRYABLE or \
                        wait >= budget.remaining():
                    log.warning("%s model call failed (%s)", role, failure)
                    raise failure from e
                log.info("%s model call failed (%s); retry %d in %.1f s", role, failure.cause, attempt + 1, wait)
                budget.retries += 1
                await asyncio.sleep(wait)
    finally:
        budget.seconds[role] = budget.seconds.get(role, 0.0) + time.monotonic() - started


async def score(model: BaseLlm, system: str, prefix: str, tails: list[str], *, role: str, budget: Budget,
                timeout_s: float):
    """Yes/no logit scores from a model that can give them (the embedded one; an API model whose provider returns
    logprobs, `llm.api_scoring`), within the budget; one LLM call.

    Raises ModelFailure; AttributeError (a model without `score_tails`) or ScoringUnsupported (no ChatML template, no
    logprobs from the provider) when it cannot score: the caller then asks in JSON instead.
    """
    scorer = model.score_tails  # AttributeError for a model that has no scoring
    timeout = min(timeout_s, budget.remaining())
    if timeout <= 0:
        raise ModelFailure("deadline")
    started = time.monotonic()
    budget.calls += 1
    try:
        scored = await asyncio.wait_for(scorer(system, prefix, tails), timeout)
        budget.count(scored.prefix_tokens, 0, scored.reused_tokens)
        return scored
    except ScoringUnsupported:  # not a failure: the caller grades in JSON instead
        raise
    except Exception as e:
        failure = classify(e)
        raise (ModelFailure("deadline") if failure.cause == "timeout" and budget.remaining() <= DEADLINE_SLACK_S
               else failure) from e
    finally:
        budget.seconds[role] = budget.seconds.get(role, 0.0) + time.monotonic() - started
