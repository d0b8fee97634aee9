"""A scripted ADK model for workflow tests: registered as ``fake/...``, it answers by looking at the prompt.

`FakeLlm.script` maps a role ("contextualiser", "router", "rewriter", "evaluator", "answer") to a reply: a string, an exception instance to
raise (a provider failure), or a callable(prompt) -> str. Every prompt is recorded in `FakeLlm.calls`.
"""
from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import ClassVar

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.models.registry import LLMRegistry
from google.genai import types

Reply = str | BaseException | Callable[[str], str]


def role_of(prompt: str) -> str:
    """Which stage asked: every stage's prompt ends with its 【任务】 line."""
    for marker, role in (("【任务】改写追问", "contextualiser"), ("【任务】路由", "router"), ("【任务】查询改写", "rewriter"), ("【任务】质量评估", "evaluator"),
                         ("【任务】逐条判断", "relevance")):
        if marker in prompt:
            return role
    return "answer"


class FakeLlm(BaseLlm):
    script: ClassVar[dict[str, Reply]] = {}
    calls: ClassVar[list[tuple[str, str]]] = []

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"fake/.*"]

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        prompt = "\n".join(p.text or "" for c in llm_request.contents for p in (c.parts or []))
        role = role_of(prompt)
        FakeLlm.calls.append((role, prompt))
        reply = FakeLlm.script.get(role, "")
        if isinstance(reply, BaseException):
            raise reply
        text = reply(prompt) if callable(reply) else reply
        if stream:
            half = len(text) // 2
            for piece in (text[:half], text[half:]):
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=piece)]), partial=True)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]), turn_complete=True)


def install(script: dict[str, Reply]) -> None:
    LLMRegistry.register(FakeLlm)
    FakeLlm.script = dict(script)
    FakeLlm.calls = []
