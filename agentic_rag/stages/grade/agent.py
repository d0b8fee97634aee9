"""GradeStage: relevance, completeness, accuracy, coverage (0-10 each); PASS iff the total reaches the threshold.

Rules come before the LLM: no retrieved article → FAIL without a call; a question that is only an article
reference which was found (第五十七条是什么) → PASS without a call; the best dense similarity below the calibrated
floor → FAIL without a call. An LLM grade is validated, never repaired: a missing dimension, a score outside 0-10
or not a number makes it unreadable, and an unreadable grade FAILs with the reason. A model failure is its own
verdict (`model_error`): the workflow then neither searches the web nor says the law does not cover the question.
"""
from __future__ import annotations

from typing import ClassVar

from collections.abc import AsyncGenerator

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event

from ...llm.call import ModelFailure
from ...llm.parsing import as_score, parse_json_object
from ...retrieval.analysis import is_pure_lookup
from ...state import (DIMENSION_CN, DIMENSIONS, KB_LAW, QUALITY, QUALITY_PASSED, QUALITY_SCORE, RAW, RETRIEVAL, ROUTE,
                      USER_QUERY, Quality, Retrieval, Verdict, merge)
from ..base import LlmStage
from ..evidence import articles_block, prompt_articles
from . import prompt


def failed(threshold: int, verdict: Verdict, source: str, error: str) -> Quality:
    return Quality(scores={d: 0.0 for d in DIMENSIONS}, total=0.0, threshold=threshold, passed=False,
                   verdict=verdict, source=source, error=error)


def rule_verdict(question: str, retrieval: Retrieval, threshold: int, min_vector_score: float) -> Quality | None:
    """A verdict without the LLM when the case is clear, else None."""
    if not retrieval.articles:
        return failed(threshold, "fail", "rule:no_results", "未检索到任何条文")
    best = retrieval.max_vector_score
    if retrieval.query_type != "exact" and best is not None and best < min_vector_score:
        return failed(threshold, "fail", "rule:low_relevance",
                      f"检索到的条文与问题相关度过低（最高相似度 {best:.2f} < {min_vector_score:.2f}），问题可能不在知识库范围内")
    looked_up = {a.article for a in retrieval.articles if a.pinned}
    if retrieval.query_type == "exact" and is_pure_lookup(question) and set(retrieval.refs) <= looked_up:
        return Quality(scores={d: 10.0 for d in DIMENSIONS}, reasons={d: "问题即为查询该条文，已直接命中" for d in DIMENSIONS},
                       total=40.0, threshold=threshold, passed=True, verdict="pass", source="rule:exact_lookup",
                       relevant=[a.id for a in retrieval.articles if a.pinned])
    return None


def parse_quality(text: str | None, threshold: int) -> Quality:
    data = parse_json_object(text)
    if data is None:
        return failed(threshold, "unreadable", "error", "质量评估输出无法解析")
    scores, reasons = {}, {}
    for dim in DIMENSIONS:
        value = data.get(dim)
        if isinstance(value, dict):  # {"relevance": {"score": 8, "reason": "..."}}
            reasons[dim] = str(value.get("reason") or "")[:200]
            value = value.get("score")
        score = as_score(value)
        if score is None:
            why = "缺少" if value is None else f"无效（{str(value)[:20]}，应为 0-10）"
            return failed(threshold, "unreadable", "error", f"质量评估的{DIMENSION_CN[dim]}分数{why}")
        scores[dim] = score
        reasons.setdefault(dim, str(data.get(f"{dim}_reason") or "")[:200])
    total = round(sum(scores.values()), 1)
    passed = total >= threshold
    return Quality(scores=scores, reasons=reasons, total=total, threshold=threshold, passed=passed,
                   verdict="pass" if passed else "fail", source="llm",
                   missing="" if passed else str(data.get("missing") or "")[:200])


class GradeStage(LlmStage):
    key: ClassVar[str] = "grade"
    role: str = "evaluator"

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        retrieval = RETRIEVAL.get(state)
        threshold = self.settings.quality_threshold
        quality = rule_verdict(USER_QUERY.get(state, ""), retrieval, threshold, self.settings.min_vector_score)
        raw = ""
        if quality is None:
            quality, raw = await self._grade(ctx, retrieval)
        delta = merge(QUALITY.delta(quality), QUALITY_SCORE.delta(quality.total),
                      QUALITY_PASSED.delta(quality.passed), RAW.delta({**(RAW.get(state) or {}), "grade": raw}))
        yield self.emit(ctx, delta, quality.summary())

    async def _grade(self, ctx: InvocationContext, retrieval: Retrieval) -> tuple[Quality, str]:
        state = ctx.session.state
        route = ROUTE.get(state)
        subs = route.sub_questions if route else []
        text = prompt.GRADE.format(
            question=USER_QUERY.get(state, ""),
            articles=articles_block(prompt_articles(retrieval.articles), one_law=KB_LAW.get(state) is not None),
            sub_questions=prompt.SUB_QUESTIONS.format(items="\n".join(f"{i}. {q}" for i, q in enumerate(subs, 1)))
            if len(subs) > 1 else "",
            coverage_note=prompt.COVERAGE_NOTE if len(subs) > 1 else "")
        try:
            raw = await self.ask(ctx, text, json=True, max_tokens=400)
        except ModelFailure as e:
            self.run_of(ctx).errors.append(f"质量评估：{e.user_text}")
            return failed(self.settings.quality_threshold, "model_error", "error", f"质量评估{e.user_text}"), ""
        quality = parse_quality(raw, self.settings.quality_threshold)
        if quality.error:
            self.run_of(ctx).errors.append(quality.error)
        return quality, raw
