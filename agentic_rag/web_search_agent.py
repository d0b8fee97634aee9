"""WebSearchAgent: the FAIL path's SerpAPI search; any failure is recorded and the workflow goes on."""
from __future__ import annotations

from collections.abc import AsyncGenerator

from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from pydantic import ConfigDict

from .config import Settings
from .state import KB_LAW, REWRITE, USER_QUERY, WEB, state_event
from .web_search import SerpApiSearch


class WebSearchAgent(BaseAgent):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    settings: Settings

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        rewrite = state.get(REWRITE) or {}
        query = rewrite.get("main_query") or state.get(USER_QUERY, "")
        law = (state.get(KB_LAW) or "").removeprefix("中华人民共和国")  # the short name people search with
        outcome = await SerpApiSearch(self.settings).asearch(f"{query} {law}".strip())
        if outcome.status == "ok":
            text = f"网络检索：获得 {len(outcome.results)} 条结果。"
        else:
            text = f"网络检索未获得补充：{outcome.message}"
        yield state_event(ctx, self.name, {WEB: outcome.to_dict()}, text)
