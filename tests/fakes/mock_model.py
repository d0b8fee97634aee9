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
