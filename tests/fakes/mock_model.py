"""An ADK-style scripted model (after google/adk-python's tests' MockModel): replies in order, records requests.

A reply is a string, an exception instance to raise (a provider failure), or a callable(prompt) -> str.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field


def prompt_of(request: LlmRequest) -> str:
    return "\n".join(p.text or "" for c in request.contents for p in (c.parts or []))


class MockModel(BaseLlm):
    model: str = "mock"
    responses: list[Any] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)
    delay_s: float = 0.0

    @classmethod
    def create(cls, *responses: Any, delay_s: float = 0.0) -> MockModel:
        return cls(responses=list(responses), delay_s=delay_s)

    @property
    def prompts(self) -> list[str]:
        return [prompt_of(r) for r in self.requests]

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        reply = self.responses.pop(0) if self.responses else ""
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if isinstance(reply, BaseException):
            raise reply
        text = reply(prompt_of(llm_request)) if callable(reply) else reply
        if stream:
            for i in range(0, len(text), 7):
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text[i:i + 7])]),
                                  partial=True)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]), turn_complete=True)


class MockScoringModel(MockModel):
    """A MockModel that can also score yes/no tails like the embedded model (`llm.scoring`): scripted diffs."""

    diffs: list[float] = Field(default_factory=list)
    scored: list[tuple[str, list[str]]] = Field(default_factory=list)

    async def score_tails(self, system: str, prefix: str, tails: list[str]):
        from agentic_rag.llm.scoring import TailScores

        self.scored.append((prefix, list(tails)))
        if isinstance(self.diffs, BaseException):
            raise self.diffs
        return TailScores(diffs=self.diffs[: len(tails)], prefix_tokens=len(prefix), reused_tokens=0, seconds=0.0)
