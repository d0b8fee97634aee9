"""RouterStage: before any retrieval, decide the question's path — kb, multi (several asks), out_of_kb, chitchat.

Cheap signals decide first (`signals`: chit-chat words, legal topics and named laws outside the knowledge base;
the knowledge base's best dense similarity to the question). The LLM is asked only when they disagree (a topic
outside the knowledge base, yet a high similarity). A compound question is multi-intent when its clauses retrieve
different articles (their top-3 dense hits share at most one). Opening the knowledge base here also means a
missing index or model is reported before any LLM call is spent.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from itertools import combinations
from typing import ClassVar

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event

from ...legal.laws import short
from ...llm.call import ModelFailure
from ...llm.parsing import parse_json_object
from ...retrieval.retriever import LocalRetriever
from ...state import CONTEXT, KB_LAW, KB_LAWS, QUESTION, RAW_ROUTE, ROUTE, Route, Slot, merge
from ..base import LlmStage
from . import prompt, signals

SIMILARITY_HIGH = 0.45  # above this, a question naming an outside topic may still be about the knowledge base
MAX_SHARED_TOP3 = 1  # clauses whose top-3 articles share at most this many are different asks …
SAME_ASK_COSINE = 0.85  # … unless the clauses themselves say the same thing

LABEL = {"kb": "知识库问题", "multi": "多意图问题", "out_of_kb": "知识库之外的法律问题", "chitchat": "闲聊"}


def decide(question: str, best: float | None, kb_laws: list[str], floor: float,
           laws: dict | None = None, law_margin: float | None = None) -> Route | None:
    """The route the cheap signals agree on, or None when they disagree (the LLM decides then)."""
    laws = laws or {}
    sig = {"best_similarity": None if best is None else round(best, 4),
           **{k: round(v, 4) if isinstance(v, float) else v for k, v in laws.items()}}
    others = signals.other_laws_named(question, kb_laws)
    if others:
        return Route(kind="out_of_kb", reason=f"问题指向知识库之外的法律：{'、'.join(others)}", topic=others[0],
                     signals={**sig, "named_laws": others})
    if signals.is_chitchat(question):
        return Route(kind="chitchat", reason="问候或闲聊", signals=sig)
    topics = signals.topics(question, kb_laws)
    sig.update(topics_in_kb=topics.in_kb, topics_outside=topics.outside)
    if best is not None and best < floor:
        legal = topics.outside or signals.has_legal_words(question)
        return Route(kind="out_of_kb" if legal else "chitchat", topic="、".join(topics.outside),
                     reason=f"与知识库的相似度过低（{best:.2f} < {floor:.2f}）", signals=sig)
    # another law's title + first articles vs the knowledge base's best article (law-level entries of the
    # knowledge base's own laws are too coarse: on the PIPL set they put in-scope questions nearer other laws)
    # …unless the question names a topic of the knowledge base's own laws (身份证号 in 「街道办人口登记要填身份证号、
    # 宗教信仰」 is the PIPL's, however near 户口登记条例 is): the gate still judges the articles
    margin = laws.get("other_cosine", 0.0) - (best if best is not None else 1.0)
    if law_margin is not None and margin > law_margin and not topics.in_kb:
        other = short(laws["other_law"])
        return Route(kind="out_of_kb", reason=f"问题更接近《{other}》（相似度差 {margin:.2f}）", topic=other,
                     signals=sig)
    if topics.outside and not topics.in_kb:
        if best is None or best < SIMILARITY_HIGH:
            topic = "、".join(topics.outside)
            return Route(kind="out_of_kb", reason=f"问题涉及{topic}", topic=topic, signals=sig)
        return None
    return Route(kind="kb", reason="与知识库相关", signals=sig)


class RouterStage(LlmStage):
    key: ClassVar[str] = "route"
    agent_name: ClassVar[str] = "RouterAgent"
    writes: ClassVar[tuple[Slot, ...]] = (KB_LAW, KB_LAWS, ROUTE, RAW_ROUTE,)
    role: str = "router"

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        question = QUESTION.get(state, "")
        async for event in self.opening(ctx):
            yield event
        retriever = self._factory()
        kb = merge(KB_LAW.delta(self.settings.kb_law or retriever.law), KB_LAWS.delta(retriever.laws))
        route, raw = await self._route(ctx, question, retriever)
        text = f"问题路由：{LABEL[route.kind]}（{route.reason}）"
        if route.kind == "multi":
            text += "：" + " | ".join(route.sub_questions)
        yield self.emit(ctx, merge(kb, ROUTE.delta(route), RAW_ROUTE.delta(raw)),
                        text)

    async def _route(self, ctx: InvocationContext, question: str, retriever: LocalRetriever) -> tuple[Route, str]:
        if not self.settings.agentic_enabled:
            return Route(kind="kb", source="off", reason="路由已关闭（AGENTIC_ENABLED=false）"), ""
        best, _ = await asyncio.to_thread(retriever.similarity, question)
        laws = await asyncio.to_thread(retriever.nearest_laws, question)
        route = decide(question, best, retriever.laws, self.settings.min_vector_score, laws,
                       self.settings.router_law_margin)
        raw = ""
        if route is None:
            route, raw = await self._ask(ctx, question, retriever.laws, best)
        context = CONTEXT.get(ctx.session.state)
        # the rule forms 上一问题：…；追问：… / 原问题：…；补充：… are one ask, not two
        if route.kind == "kb" and not (context is not None and context.uses_history and context.source != "llm"):
            route = await asyncio.to_thread(self._split, question, retriever, route)
        return route, raw

    async def _ask(self, ctx: InvocationContext, question: str, laws: list[str],
                   best: float | None) -> tuple[Route, str]:
        sig = {"best_similarity": None if best is None else round(best, 4)}
        text = prompt.ROUTE.format(question=question, laws="、".join(f"《{law}》" for law in laws))
        try:
            raw = await self.ask(ctx, text, json=True, max_tokens=60)
        except ModelFailure as e:  # cannot ask: keep the question (the grader still judges the articles)
            self.run_of(ctx).errors.append(f"路由：{e.user_text}")
            return Route(kind="kb", source="fallback", reason=f"路由模型不可用（{e.user_text}），按知识库问题处理",
                         signals=sig), ""
        data = parse_json_object(raw) or {}
        kind = str(data.get("route") or "").strip()
        if kind not in ("kb", "out_of_kb", "chitchat"):
            return Route(kind="kb", source="fallback", reason="路由输出无法解析，按知识库问题处理", signals=sig), raw
        return Route(kind=kind, source="llm", reason="信号不一致，由模型判断", topic=str(data.get("topic") or "")[:30],
                     signals=sig), raw

    def _split(self, question: str, retriever: LocalRetriever, route: Route) -> Route:
        parts = signals.clauses(question)
        limit = self.settings.max_sub_questions
        if len(parts) < 2:
            return route
        parts = parts[: limit - 1] + ["".join(parts[limit - 1:])] if len(parts) > limit else parts
        tops = [set(retriever.similarity(p)[1][:3]) for p in parts]
        pairs = list(combinations(range(len(parts)), 2))
        if all(len(tops[i] & tops[j]) > MAX_SHARED_TOP3 or retriever.cosine(parts[i], parts[j]) >= SAME_ASK_COSINE
               for i, j in pairs):
            return route
        return route.model_copy(update={"kind": "multi", "sub_questions": parts,
                                        "reason": f"包含 {len(parts)} 个不同的问题"})
