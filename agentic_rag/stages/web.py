"""WebStage: the FAIL path's web search, through the configured provider; never fails the workflow.

Results are cleaned here (markup, invisible characters, length) before they are stored or shown to any model:
web text is untrusted data (`safety.fence`). The search is bounded by the question's remaining time.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import ClassVar

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event

from ..legal.laws import short
from ..safety.fence import clean, clean_url
from ..state import KB_LAW, QUESTION, REWRITE, WEB, Slot, WebOutcome, WebResult
from ..web import make_provider
from .base import Stage

MIN_SECONDS = 2.0  # less time left than this: do not start a search that cannot finish

NOT_CONFIGURED = "未配置网络检索服务（SERPAPI_API_KEY / TAVILY_API_KEY / BOCHA_API_KEY），未进行网络检索。"


def web_query(state) -> str:
    rewrite = REWRITE.get(state)
    query = rewrite.main_query if rewrite else QUESTION.get(state, "")
    law = short(KB_LAW.get(state) or "")  # the short name people search with
    return f"{query} {law}".strip()


def cleaned(outcome: WebOutcome, snippet_chars: int) -> WebOutcome:
    results = [WebResult(title=clean(r.title, 80), link=clean_url(r.link), snippet=clean(r.snippet, snippet_chars),
                         source=r.source) for r in outcome.results]
    return outcome.model_copy(update={"results": [r for r in results if r.link and r.snippet]})


class WebStage(Stage):
    key: ClassVar[str] = "web"
    agent_name: ClassVar[str] = "WebSearchAgent"
    writes: ClassVar[tuple[Slot, ...]] = (WEB,)
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        outcome = await self._search(ctx)
        text = f"网络检索（{outcome.provider}）：获得 {len(outcome.results)} 条结果。" if outcome.ok \
            else f"网络检索未获得补充：{outcome.message}"
        yield self.emit(ctx, WEB.delta(outcome), text)

    async def _search(self, ctx: InvocationContext) -> WebOutcome:
        provider = make_provider(self.settings)
        query = web_query(ctx.session.state)
        if provider is None:
            status = "disabled" if self.settings.web_search_provider == "none" else "no_key"
            return WebOutcome(status=status, message=NOT_CONFIGURED if status == "no_key" else "网络检索已关闭。",
                              query=query)
        remaining = self.run_of(ctx).budget.remaining()
        if remaining < MIN_SECONDS:
            return WebOutcome(status="skipped", provider=provider.name, query=query,
                              message="本次回答已到时间上限，未进行网络检索。")
        timeout = min(self.settings.web_timeout_s, remaining - 1.0)
        outcome = await asyncio.to_thread(provider.search, query, timeout)
        return cleaned(outcome, self.settings.web_snippet_chars)
