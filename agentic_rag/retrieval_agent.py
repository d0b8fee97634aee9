"""RetrievalAgent: runs the LocalRetriever for the rewritten queries and writes the articles to state."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable

from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from pydantic import ConfigDict

from .retriever import LocalRetriever, RetrievalResult
from .state import RETRIEVAL, RETRIEVAL_PLAN, state_event

log = logging.getLogger(__name__)


def retrieval_to_state(result: RetrievalResult) -> dict:
    return {"query": result.query, "query_type": result.query_type, "matcher": result.matcher,
            "refs": result.refs, "max_vector_score": result.max_vector_score,
            "timings_ms": {k: round(v, 1) for k, v in result.timings_ms.items()},
            "articles": [a.to_dict() for a in result.articles]}


def summarize(result: RetrievalResult) -> str:
    if not result.articles:
        return "本地检索：未找到相关条文。"
    titles = "、".join(a.article_cn for a in result.articles)
    return f"本地检索（{result.query_type}，{result.matcher}）：找到 {len(result.articles)} 条 —— {titles}"


class RetrievalAgent(BaseAgent):
    """Multi-query retrieval (original question + main query + variants + keywords) over the local index.

    The workflow writes the request (queries, matcher) to state under RETRIEVAL_PLAN first — per session, so
    concurrent sessions never share it. The retriever is created lazily and shared by the process, so importing
    the app never loads models.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    retriever_factory: Callable[[], LocalRetriever]

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        plan = ctx.session.state[RETRIEVAL_PLAN]
        retriever = await asyncio.to_thread(self.retriever_factory)
        result = await asyncio.to_thread(
            retriever.retrieve, plan["question"], variants=plan.get("variants", ()),
            main_query=plan.get("main_query"), keywords=plan.get("keywords", ()),
            matcher=plan.get("matcher", "ensemble"))
        yield state_event(ctx, self.name, {RETRIEVAL: retrieval_to_state(result)}, summarize(result))
