"""RewriteStage: the question → main query, variants, keywords, legal domain (JSON, parsed leniently).

Unparseable output or a failed call falls back to the original question, with the reason recorded; retrieval
always also runs the original question, so a bad rewrite can add noise but never lose the user's words. A pure
article lookup (第五十七条是什么) and a keyword query (敏感个人信息 单独同意) are not rewritten before their first
retrieval: nothing a rewriter adds can beat the exact lookup, and the question's own terms already find every gold
article of the keyword questions (retrieval R@5 1.000 on that type, docs/evaluation.md "Retrieval"), so the call
would only cost time. Nor, by default, is any
question before its first retrieval: with the embedded model the rewrite lowered semantic questions' R@5 and MRR
(eval/rewrite_effect.py); `REWRITE_FIRST_ATTEMPT=true` turns it on. On a retry the rewrite is asked to cover what
the grader said was missing.
"""
from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import ClassVar

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event

from ...llm.call import ModelFailure
from ...llm.parsing import as_str_list, parse_json_object
from ...retrieval.analysis import analyze_query, is_pure_lookup
from ...retrieval.tokenizer import default_legal_terms
from ...state import ATTEMPT_QUALITY, QUESTION, RAW_REWRITE, REWRITE, ROUTE, Rewrite, Slot, kb_label, merge
from ..base import LlmStage
from . import prompt

MAX_QUERY_CHARS = 300


def parse_rewrite(text: str | None, question: str) -> Rewrite:
    data = parse_json_object(text)
    main = str((data or {}).get("main_query") or "").strip()
    if not data or not main:
        return Rewrite(main_query=question, fallback=True, source="fallback",
                       error="查询改写输出无法解析，已使用原问题检索")
    variants = [v[:MAX_QUERY_CHARS] for v in dict.fromkeys(as_str_list(data.get("variants"), 8))
                if v not in (main, question)]
    return Rewrite(main_query=main[:MAX_QUERY_CHARS], variants=variants[:4],
                   keywords=as_str_list(data.get("keywords"), 8), domain=str(data.get("domain") or "")[:50],
                   complexity=str(data.get("complexity") or "")[:20])


def progress_line(rewrite: Rewrite) -> str:
    if rewrite.error:
        return rewrite.error
    if rewrite.source == "skipped":
        return "查询改写：首轮按原问题检索（未通过评估时再改写）"
    return (f"查询改写：{rewrite.main_query}（变体 {len(rewrite.variants)} 个，"
            f"关键词：{'、'.join(rewrite.keywords)}）")


class RewriteStage(LlmStage):
    key: ClassVar[str] = "rewrite"
    agent_name: ClassVar[str] = "QueryRewriterAgent"
    writes: ClassVar[tuple[Slot, ...]] = (REWRITE, RAW_REWRITE,)
    role: str = "rewriter"

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        question = QUESTION.get(state, "")
        previous, route = REWRITE.get(state), ROUTE.get(state)
        # Nothing a rewriter adds beats an exact lookup or a keyword query's own terms; a compound question is
        # retrieved per sub-question; and a first attempt uses the user's words unless configured otherwise.
        skip = not self.settings.rewrite_first_attempt or is_pure_lookup(question) or \
            analyze_query(question, default_legal_terms()).type == "keyword" or (route is not None and route.kind == "multi")
        if previous is None and skip:
            rewrite, raw = Rewrite(main_query=question, source="skipped"), ""
        else:
            rewrite, raw = await self._rewrite(ctx, question, previous)
        yield self.emit(ctx, merge(REWRITE.delta(rewrite), RAW_REWRITE.delta(raw)),
                        progress_line(rewrite))

    async def _rewrite(self, ctx: InvocationContext, question: str,
                       previous: Rewrite | None) -> tuple[Rewrite, str]:
        quality = ATTEMPT_QUALITY.get(ctx.session.state)
        retry = prompt.RETRY.format(missing=quality.missing or "相关性不足", previous=previous.main_query) \
            if previous is not None and quality is not None else ""
        text = prompt.REWRITE.format(question=question, law=kb_label(ctx.session.state), retry=retry)
        try:
            raw = await self.ask(ctx, text, json=True, max_tokens=300, temperature=0.1)
        except ModelFailure as e:
            self.run_of(ctx).errors.append(f"查询改写：{e.user_text}")
            return Rewrite(main_query=question, fallback=True, source="fallback",
                           error=f"查询改写失败（{e.user_text}），已使用原问题检索"), ""
        rewrite = parse_rewrite(raw, question)
        if retry and not rewrite.fallback:
            rewrite.source = "retry"
        return rewrite, raw
