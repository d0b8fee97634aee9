"""ConditionalWorkflowAgent — the ADK app's `root_agent`.

    question → QueryRewriterAgent → [ RetrievalAgent → QualityEvaluatorAgent ] × attempts → branch
        PASS (total ≥ threshold)  → AnswerGeneratorAgent on the local articles
        FAIL → WebSearchAgent → results?  yes → AnswerGeneratorAgent fusing local articles (first) and web results
                                          no  → the standard "not enough provisions" reply (no LLM)

Retrieval and evaluation run as a loop of attempts that keeps the best one (one attempt by default; each further
attempt switches matcher), so adaptive retries slot in without a rewrite. Every stage reports through state
deltas (persisted by every session service) and a short progress event. Any stage failure degrades to a clear
message for the user; nothing is raised to the server.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Callable

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from pydantic import ConfigDict

from .answer_generator import articles_only_answer, make_answer_generator, not_found_answer, verify_answer
from .config import Settings, get_settings
from .index import IndexError_
from .models import ModelNotAvailableError
from .quality_evaluator import Quality, failed, make_quality_evaluator, parse_quality, rule_verdict
from .query_rewriter import Rewrite, make_query_rewriter, parse_rewrite
from .retrieval_agent import RetrievalAgent
from .retriever import LocalRetriever, QueryError, get_retriever, validate_query
from .state import (ANSWER_RAW, ATTEMPTS, CITATIONS, ERRORS, FINAL_ANSWER, KB_LAW, LLM_CALLS, PATH, QUALITY,
                    QUALITY_PASSED, QUALITY_RAW, QUALITY_SCORE, RETRIEVAL, RETRIEVAL_PLAN, REWRITE, REWRITE_RAW,
                    TIMINGS, USER_QUERY, WEB, state_event)
from .web_search_agent import WebSearchAgent

log = logging.getLogger(__name__)

# Matcher of each attempt: the first uses every channel; later ones (MAX_ATTEMPTS > 1) try other mixes.
MATCHER_SEQUENCE = ("ensemble", "hybrid", "vector", "bm25")
PER_QUESTION_KEYS = (REWRITE, RETRIEVAL, QUALITY, QUALITY_SCORE, QUALITY_PASSED, WEB, PATH, CITATIONS, FINAL_ANSWER,
                     ATTEMPTS, ERRORS, REWRITE_RAW, QUALITY_RAW, ANSWER_RAW)


def _retrieval_failure(e: Exception) -> str:
    """What the user reads when the knowledge base cannot be searched (missing index, model, bad query, bug)."""
    if isinstance(e, (IndexError_, ModelNotAvailableError, QueryError)):
        return f"知识库检索不可用：{e}"
    log.error("retrieval failed", exc_info=e)
    return f"知识库检索出错（{type(e).__name__}），请稍后再试。"


def _user_text(ctx: InvocationContext) -> str:
    content = ctx.user_content
    if not content or not content.parts:
        return ""
    return "".join(p.text or "" for p in content.parts)


class ConditionalWorkflowAgent(BaseAgent):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    query_rewriter: LlmAgent
    retrieval_agent: RetrievalAgent
    quality_evaluator: LlmAgent
    web_search_agent: WebSearchAgent
    answer_generator: LlmAgent
    settings: Settings

    def __init__(self, settings: Settings | None = None,
                 retriever_factory: Callable[[], LocalRetriever] | None = None,
                 name: str = "ConditionalWorkflowAgent",
                 description: str = "个人信息保护法智能法律咨询：查询改写 → 混合检索 → 质量评估 → 条件分支（直接作答 / 网络补充）"):
        settings = settings or get_settings()
        query_rewriter = make_query_rewriter(settings)
        retrieval_agent = RetrievalAgent(name="RetrievalAgent", description="本地法条混合检索（向量 + BM25 + RRF）",
                                         retriever_factory=retriever_factory or (lambda: get_retriever(settings)))
        quality_evaluator = make_quality_evaluator(settings)
        web_search_agent = WebSearchAgent(name="WebSearchAgent", description="SerpAPI 网络检索补充",
                                          settings=settings)
        answer_generator = make_answer_generator(settings)
        super().__init__(name=name, description=description, settings=settings, query_rewriter=query_rewriter,
                         retrieval_agent=retrieval_agent, quality_evaluator=quality_evaluator,
                         web_search_agent=web_search_agent, answer_generator=answer_generator,
                         sub_agents=[query_rewriter, retrieval_agent, quality_evaluator, web_search_agent,
                                     answer_generator])

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        timings: dict[str, float] = {}
        errors: list[str] = []
        llm_calls = 0
        started = time.perf_counter()

        try:
            question = validate_query(_user_text(ctx), self.settings.max_query_chars)
        except QueryError as e:
            yield state_event(ctx, self.name, {PATH: "rejected", FINAL_ANSWER: str(e)}, str(e))
            return
        # The knowledge base is opened first: a missing index or model is reported before any LLM call, and the
        # prompts and the citation check name the index's law.
        try:
            retriever = await asyncio.to_thread(self.retrieval_agent.retriever_factory)
        except Exception as e:
            message = _retrieval_failure(e)
            yield state_event(ctx, self.name, {**{k: None for k in PER_QUESTION_KEYS}, USER_QUERY: question,
                                               PATH: "error", FINAL_ANSWER: message, ERRORS: [message]}, message)
            return
        yield state_event(ctx, self.name, {**{k: None for k in PER_QUESTION_KEYS}, USER_QUERY: question,
                                           KB_LAW: self.settings.kb_law or retriever.law})

        # 1. rewrite
        t0 = time.perf_counter()
        try:
            async for ev in self.query_rewriter.run_async(ctx):
                yield ev
            llm_calls += 1
            rewrite = parse_rewrite(state.get(REWRITE_RAW), question)
        except Exception as e:  # the model is unreachable, timed out, or failed: retrieve with the question
            log.warning("query rewrite failed: %r", e)
            rewrite = Rewrite(main_query=question, fallback=True, error=f"查询改写模型调用失败（{type(e).__name__}），已使用原问题检索")
        if rewrite.error:
            errors.append(rewrite.error)
        timings["rewrite"] = time.perf_counter() - t0
        progress = rewrite.error or f"查询改写：{rewrite.main_query}（变体 {len(rewrite.variants)} 个，关键词：{'、'.join(rewrite.keywords)}）"
        yield state_event(ctx, self.name, {REWRITE: rewrite.to_dict()}, progress)

        # 2-3. attempts of retrieve + evaluate; keep the best
        best: tuple[Quality, dict] | None = None
        attempts: list[dict] = []
        for attempt in range(self.settings.max_attempts):
            matcher = MATCHER_SEQUENCE[attempt % len(MATCHER_SEQUENCE)]
            plan = {"question": question, "main_query": rewrite.main_query, "variants": rewrite.variants,
                    "keywords": rewrite.keywords, "matcher": matcher}
            yield state_event(ctx, self.name, {RETRIEVAL_PLAN: plan})
            t0 = time.perf_counter()
            try:
                async for ev in self.retrieval_agent.run_async(ctx):
                    yield ev
            except Exception as e:
                message = _retrieval_failure(e)
                yield state_event(ctx, self.name, {PATH: "error", FINAL_ANSWER: message, ERRORS: errors + [message]},
                                  message)
                return
            timings["retrieve"] = timings.get("retrieve", 0.0) + time.perf_counter() - t0
            retrieval = state[RETRIEVAL]

            t0 = time.perf_counter()
            quality = rule_verdict(question, retrieval, self.settings.quality_threshold,
                                   self.settings.min_vector_score)
            if quality is None:
                try:
                    async for ev in self.quality_evaluator.run_async(ctx):
                        yield ev
                    llm_calls += 1
                    quality = parse_quality(state.get(QUALITY_RAW), self.settings.quality_threshold)
                except Exception as e:
                    log.warning("quality evaluation failed: %r", e)
                    quality = failed(self.settings.quality_threshold, "error", f"质量评估模型调用失败（{type(e).__name__}）")
            if quality.error:
                errors.append(quality.error)
            timings["evaluate"] = timings.get("evaluate", 0.0) + time.perf_counter() - t0
            attempts.append({"attempt": attempt + 1, "matcher": matcher, "total": quality.total,
                             "passed": quality.passed, "source": quality.source,
                             "articles": [a["article"] for a in retrieval["articles"]]})
            yield state_event(ctx, self.name, {QUALITY: quality.to_dict(), QUALITY_SCORE: quality.total,
                                               QUALITY_PASSED: quality.passed, ATTEMPTS: attempts}, quality.summary())
            if best is None or quality.total > best[0].total:
                best = (quality, retrieval)
            if quality.passed:
                break
        quality, retrieval = best
        if retrieval is not state[RETRIEVAL]:  # a later attempt was worse: answer from the best one
            yield state_event(ctx, self.name, {RETRIEVAL: retrieval, QUALITY: quality.to_dict(),
                                               QUALITY_SCORE: quality.total, QUALITY_PASSED: quality.passed})

        # 4. branch
        web_reason = None
        if quality.passed:
            path = "pass"
        else:
            t0 = time.perf_counter()
            async for ev in self.web_search_agent.run_async(ctx):
                yield ev
            timings["web"] = time.perf_counter() - t0
            web = state.get(WEB) or {}
            path = "web" if web.get("status") == "ok" else "none"
            web_reason = None if path == "web" else web.get("message") or "网络检索未返回结果"
        yield state_event(ctx, self.name, {PATH: path})

        t0 = time.perf_counter()
        if path == "none":
            answer = not_found_answer(state, web_reason)
            yield state_event(ctx, self.answer_generator.name, {FINAL_ANSWER: answer, CITATIONS: verify_answer(answer, state)[1]},
                              answer)
        else:
            answer = ""
            try:
                async for ev in self.answer_generator.run_async(ctx):
                    yield ev
                llm_calls += 1
                answer = (state.get(ANSWER_RAW) or "").strip()
            except Exception as e:
                log.warning("answer generation failed: %r", e)
                errors.append(f"答案生成模型调用失败（{type(e).__name__}）")
            if not answer:
                answer, record = verify_answer(articles_only_answer(state, "答案生成模型暂时不可用"), state)
                yield state_event(ctx, self.answer_generator.name, {CITATIONS: record}, answer)
        timings["answer"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - started
        yield state_event(ctx, self.name, {FINAL_ANSWER: answer, ERRORS: errors, LLM_CALLS: llm_calls,
                                           TIMINGS: {k: round(v, 3) for k, v in timings.items()}})


root_agent = ConditionalWorkflowAgent()
