"""GradeStage: relevance, completeness, accuracy, coverage (0-10 each); PASS iff the total reaches the threshold.

Rules come first (`rules`): an article the user picked from a refusal's list → PASS; nothing retrieved → FAIL; an
off-topic similarity → FAIL; a pure article lookup that was found → PASS; no model call in these cases. Then, with
the embedded model, the calibrated gate (`judge`): one call scores every article's relevance from logits on the
prompt prefix the answer will reuse. `GATE_MODE=signals` runs the same judge on retrieval evidence alone, with no
model call: it separates answerable from out-of-scope questions as well (AUROC) and answers in a fraction of the
time, but end to end it built more answers on a non-governing article (bench/results/answers_signals_gate*.json), so
it is not the default. The default, auto, with the embedded evaluator takes its verdict only where it decides as
that model's gate would on every dev question (`judge.SkipModel`: about half of all questions) and asks the model
about the rest; an API evaluator is always asked (the bounds were not measured against it). An API
model whose provider returns logprobs gives the same evidence in one call (`llm.api_scoring`) and goes through the
same judge; one that returns none is asked for a JSON grade (`json_grade`), validated and never repaired. A model
failure is its own verdict (`model_error`): the workflow then neither searches the web nor says the law does not
cover the question.
"""
from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import ClassVar

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event

from ...llm.call import ModelFailure, score
from ...llm.models import embedded
from ...llm.scoring import ScoringUnsupported
from ...state import (
    ATTEMPT_QUALITY,
    ATTEMPT_RETRIEVAL,
    CONTEXT,
    KB_LAW,
    QUESTION,
    RAW_GRADE,
    ROUTE,
    Article,
    Quality,
    Retrieval,
    Slot,
    merge,
)
from ..base import SYSTEM, LlmStage
from ..evidence import label, prompt_articles, shared_prefix
from . import prompt
from .json_grade import parse_quality
from .judge import calibration, judge
from .rules import confirmed_verdict, failed, rule_verdict, sanction_verdict


def searched_in_place_cosine(state) -> float | None:
    """The router's cosine of the question, where retrieval searched other words in its place (`CONTEXT.search`)."""
    context, route = CONTEXT.get(state), ROUTE.get(state)
    if context is None or not context.search or route is None:
        return None
    best = route.signals.get("best_similarity")
    return float(best) if isinstance(best, (int, float)) else None


def previous_articles(state) -> list[tuple[str, int]]:
    context = CONTEXT.get(state)
    return [tuple(key) for key in context.history_articles] if context else []


class GradeStage(LlmStage):
    key: ClassVar[str] = "grade"
    agent_name: ClassVar[str] = "QualityEvaluatorAgent"
    writes: ClassVar[tuple[Slot, ...]] = (ATTEMPT_QUALITY, RAW_GRADE,)
    role: str = "evaluator"

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        retrieval = ATTEMPT_RETRIEVAL.get(state)
        threshold = self.settings.quality_threshold
        quality = confirmed_verdict(retrieval, threshold) or \
            rule_verdict(QUESTION.get(state, ""), retrieval, threshold, self.settings.min_vector_score,
                         searched_in_place_cosine(state)) or \
            sanction_verdict(QUESTION.get(state, ""), retrieval, previous_articles(state), threshold)
        raw = ""
        if quality is None:
            try:
                quality, raw = await self._grade(ctx, retrieval)
            except ModelFailure as e:
                self.run_of(ctx).errors.append(f"质量评估：{e.user_text}")
                quality = failed(threshold, "model_error", "error", f"质量评估{e.user_text}")
        if quality.error and quality.verdict == "unreadable":
            self.run_of(ctx).errors.append(quality.error)
        delta = merge(ATTEMPT_QUALITY.delta(quality), RAW_GRADE.delta(raw))
        yield self.emit(ctx, delta, quality.summary())

    def _without_model(self, retrieval: Retrieval, articles: list[Article]) -> tuple[Quality, str] | None:
        """The verdict on retrieval evidence alone: always with `GATE_MODE=signals`; with auto and the embedded
        evaluator, only where it decides as that model's gate would (`judge.SkipModel`: the bounds were measured
        against it, not against an API model's grade); else None (the model is asked)."""
        mode, threshold = self.settings.gate_mode, self.settings.quality_threshold
        if mode != "signals" and not (mode == "auto" and embedded(self.role, self.settings)):
            return None
        quality = judge(retrieval, articles, [0.0] * len(articles), threshold, calibration("signals"))
        if mode == "signals":
            return quality, "检索信号门控（无模型调用）"
        skip = calibration().skip_model
        # A hedged answer (CRAG's ambiguous action) is the model's gate's call: its logit moved the best article's
        # P(relevant) where retrieval evidence did not (ans-ml-054 was hedged from a wrong article without it)
        if skip is None or not skip.decides(quality.total, threshold) or quality.action == "ambiguous":
            return None
        return quality, (f"检索信号已足以判定（信号总分 {quality.total}，不在 {skip.fail_below}–{skip.pass_above} "
                         "之间），未调用模型")

    async def _grade(self, ctx: InvocationContext, retrieval: Retrieval) -> tuple[Quality, str]:
        state = ctx.session.state
        one_law = KB_LAW.get(state) is not None
        articles = prompt_articles(retrieval.articles)
        decided = self._without_model(retrieval, articles)
        if decided is not None:
            return decided
        prefix = shared_prefix(QUESTION.get(state, ""), articles, one_law)
        try:
            if self.settings.gate_mode == "json":
                raise ScoringUnsupported("GATE_MODE=json")
            scored = await score(self._model, SYSTEM,
                                 *prompt.relevance_questions(prefix, [label(a, one_law) for a in articles]),
                                 role=self.role, budget=self.run_of(ctx).budget, timeout_s=self.settings.llm_timeout_s)
        except (AttributeError, ScoringUnsupported):  # a model without logits or logprobs: it grades in JSON
            raw = await self.ask(ctx, prefix + self._json_task(state), json=True, max_tokens=400)
            return parse_quality(raw, self.settings.quality_threshold, articles), raw
        quality = judge(retrieval, articles, scored.diffs, self.settings.quality_threshold)
        raw = f"logit(是)-logit(否): {[round(d, 3) for d in scored.diffs]}; prefix tokens {scored.prefix_tokens}, " \
              f"reused {scored.reused_tokens}, {scored.seconds:.1f} s"
        return quality, raw

    @staticmethod
    def _json_task(state) -> str:
        route = ROUTE.get(state)
        subs = route.sub_questions if route else []
        items = "\n".join(f"{i}. {q}" for i, q in enumerate(subs, 1))
        return prompt.GRADE.format(sub_questions=prompt.SUB_QUESTIONS.format(items=items) if len(subs) > 1 else "",
                                   coverage_note=prompt.COVERAGE_NOTE if len(subs) > 1 else "")
