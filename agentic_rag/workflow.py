"""ConditionalWorkflowAgent — the composition of the stages, and nothing else.

    message → ContextualiseAgent ─ vague first message → ClarifyAgent ─────────────── (path clarify) ──┐
    (follow-up → standalone question, with the conversation rebuilt from stored events)                │
    question → RouterAgent ─ chitchat / out_of_kb ──────────────────────────────────────────┐
                  └ kb / multi → QueryRewriterAgent → [ RetrievalAgent → QualityEvaluatorAgent ] × attempts
                                   (retry policy: switch matcher, rewrite from what is missing; best kept)
             → a follow-up found nothing for with the history: read again on its own; kept only if it passes
             → branch (CRAG): correct → answer · ambiguous → hedged answer · incorrect → WebSearchAgent → answer
               or "not in the knowledge base" · model failure → degraded
             → AnswerGeneratorAgent (every final text; citations checked before they are shown)
             → the turn recorded in the conversation (`conversation.next_conversation`)

Each stage owns its prompt, parsing, fallback and typed output (`state`); the time and LLM calls of a question are
counted in one place (`stages.base.QuestionRun`) and bounded by its deadline. Nothing is raised to the server: a
failure becomes a message that names its cause.
"""
from __future__ import annotations

import copy
import logging
import time
from collections.abc import AsyncGenerator, Callable
from typing import ClassVar

from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.adk.models.base_llm import BaseLlm
from pydantic import ConfigDict, PrivateAttr

from . import conversation
from .config import Settings, get_settings
from .knowledge.index import IndexError_
from .legal.refs import spell_out_refs
from .retrieval.retriever import LocalRetriever, QueryError, get_retriever, validate_query
from .retry_policy import attempt_budget, first_plan, next_plan, stop_reason
from .safety.guard import parse_marker
from .stages.accounting import Accounts
from .stages.answer.agent import AnswerStage
from .stages.base import Stage, check_writes, state_event, user_text
from .stages.clarify import ClarifyStage
from .stages.contextualise.agent import ContextualiseStage
from .stages.grade.agent import GradeStage
from .stages.retrieve import RetrieveStage
from .stages.rewrite.agent import RewriteStage
from .stages.router.agent import RouterStage
from .stages.web import WebStage
from .state import (
    ATTEMPT_QUALITY,
    ATTEMPT_RETRIEVAL,
    ATTEMPTS,
    BRANCH,
    CONTEXT,
    CONVERSATION,
    ERRORS,
    LLM_CALLS,
    LLM_USAGE,
    NOTICE,
    PER_QUESTION,
    PLAN,
    QUALITY,
    QUESTION,
    RETRIEVAL,
    REWRITE,
    ROUTE,
    TIMINGS,
    USER_QUERY,
    WEB,
    Attempt,
    Plan,
    Quality,
    Retrieval,
    Slot,
    merge,
)
from .web import make_provider
from .weights import ModelNotAvailableError

log = logging.getLogger(__name__)

DESCRIPTION = "法律咨询：问题路由 → 查询改写 → 混合检索 → 质量评估（自适应重试）→ 直接作答 / 网络补充"
MIN_SECONDS_FOR_RETRY = 20.0  # a further attempt (rewrite + grade) needs at least this much of the deadline
RESETTABLE = {slot.key for slot in PER_QUESTION}
IN_KB_ROUTES = ("kb", "multi")  # routes answered from the knowledge base
READING = (PLAN, ATTEMPTS, RETRIEVAL, QUALITY)  # the workflow's slots of one reading of the question
ALONE_FAILED = "按追问本身也未找到足够依据：仍按结合上文的理解答复"


def failure_text(e: Exception) -> str:
    """What the user reads when a stage breaks; details stay in the server log (no paths or traces to users)."""
    if isinstance(e, QueryError):
        return str(e)
    if isinstance(e, (IndexError_, ModelNotAvailableError)):
        log.error("knowledge base unavailable: %s", e)
        return "知识库暂不可用：索引或检索模型缺失或不完整，请管理员运行 python init_index.py（或 make demo）后再试。"
    log.error("workflow failed", exc_info=e)
    return f"系统内部错误（{type(e).__name__}），本次未能回答，请稍后再试。"


def attempt_record(plan: Plan, retrieval: Retrieval, quality: Quality) -> Attempt:
    return Attempt(attempt=plan.attempt, matcher=plan.matcher, query=plan.main_query,
                   articles=[a.article for a in retrieval.articles], ids=[a.id for a in retrieval.articles],
                   pinned=[a.id for a in retrieval.articles if a.pinned],
                   total=quality.total, passed=quality.passed, source=quality.source, reason=plan.reason)


def left_the_law(state, focus: list[str]) -> bool:
    """A follow-up that names no law, read on its own, passed on articles of none of the laws the conversation is
    about (「公司一直不跟我签合同」 → 「要赔我多少？」 passed on 民法典第一千一百八十二条, a tort rule): it is not the
    conversation's question any more."""
    if not focus:
        return False
    relevant = set(QUALITY.get(state).relevant)
    laws = {a.law for a in RETRIEVAL.get(state).articles if a.id in relevant}
    return bool(laws) and not laws & set(focus)


class ConditionalWorkflowAgent(BaseAgent):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    contextualiser: ContextualiseStage
    clarifier: ClarifyStage
    router: RouterStage
    rewriter: RewriteStage
    retriever: RetrieveStage
    grader: GradeStage
    web: WebStage
    answerer: AnswerStage
    _settings: Settings = PrivateAttr()
    _accounts: Accounts = PrivateAttr()
    # The slots the workflow itself writes (every other slot has one stage as its writer); it also clears the
    # per-question slots when a question starts.
    writes: ClassVar[tuple[Slot, ...]] = (USER_QUERY, PLAN, ATTEMPTS, RETRIEVAL, QUALITY, BRANCH, NOTICE, TIMINGS,
                                          LLM_CALLS, LLM_USAGE, ERRORS, CONVERSATION)

    def __init__(self, settings: Settings | None = None,
                 retriever_factory: Callable[[], LocalRetriever] | None = None,
                 models: dict[str, BaseLlm] | None = None, name: str = "ConditionalWorkflowAgent",
                 description: str = DESCRIPTION):
        settings = settings or get_settings()
        factory = retriever_factory or (lambda: get_retriever(settings))
        models = models or {}

        def llm(cls, role, description_, **kw):
            return cls(name=cls.agent_name, description=description_, settings=settings, model=models.get(role), **kw)

        stages = dict(
            contextualiser=llm(ContextualiseStage, "contextualiser",
                               "结合对话上文：把追问改写成完整的问题（首轮与完整的问题不调用模型）",
                               retriever_factory=factory),
            clarifier=ClarifyStage(name=ClarifyStage.agent_name, description="问题过于笼统时先追问一次（选项取自知识库的章节 / 法律）",
                                   settings=settings, retriever_factory=factory),
            router=llm(RouterStage, "router", "问题路由：知识库 / 多意图 / 知识库之外 / 闲聊",
                       retriever_factory=factory),
            rewriter=llm(RewriteStage, "rewriter", "查询改写：主查询、变体、关键词"),
            retriever=RetrieveStage(name=RetrieveStage.agent_name, description="本地法条混合检索（向量 + BM25 + RRF）",
                                    settings=settings, retriever_factory=factory),
            grader=llm(GradeStage, "evaluator", "质量评估：相关性 完整性 准确性 覆盖面"),
            web=WebStage(name=WebStage.agent_name, description="网络检索补充（SerpAPI / Tavily / 博查）",
                         settings=settings),
            answerer=llm(AnswerStage, "answer", "生成带条文引用的法律咨询意见",
                         retriever_factory=factory))
        super().__init__(name=name, description=description, sub_agents=list(stages.values()), **stages)
        self._settings = settings
        self._accounts = Accounts(settings)
        for stage in stages.values():
            stage.share_accounts(self._accounts)

    # ------------------------------------------------------------------ the flow
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        run = self._accounts.of(ctx)
        try:
            question, problem = self._intake(ctx)
            yield self._emit(ctx, merge(*(s.delta(None) for s in PER_QUESTION), USER_QUERY.delta(question)))
            if problem:
                yield self._emit(ctx, merge(BRANCH.delta("rejected"), NOTICE.delta(problem)))
                yield self.answerer.notice(ctx, "rejected", problem)
                yield self._emit(ctx, self._turn(ctx))
                return
            try:
                async for event in self._answer(ctx):
                    yield event
            except Exception as e:  # noqa: BLE001 - the user gets a message, the log gets the trace
                message = failure_text(e)
                run.errors.append(message)
                yield self._emit(ctx, merge(BRANCH.delta("error"), NOTICE.delta(message)))
                yield self.answerer.notice(ctx, "error", message)
            yield self._emit(ctx, merge(self._spent(run), self._turn(ctx)))
        finally:
            self._accounts.end(ctx)

    async def _answer(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        async for event in self._stage(self.contextualiser, ctx):
            yield event
        if CONTEXT.get(state).kind == "vague":
            async for event in self._stage(self.clarifier, ctx):
                yield event
            yield self._emit(ctx, BRANCH.delta("clarify"))
            async for event in self._stage(self.answerer, ctx):
                yield event
            return
        async for event in self._read(ctx):
            yield event
        if self._unanswered_follow_up(ctx):
            async for event in self._read_alone(ctx):
                yield event
        path = self._branch(ctx)
        if path == "web":
            async for event in self._stage(self.web, ctx):
                yield event
            path = "web" if WEB.get(state).ok else ("none" if ROUTE.get(state).kind in IN_KB_ROUTES else "out_of_kb")
        yield self._emit(ctx, BRANCH.delta(path))
        async for event in self._stage(self.answerer, ctx):
            yield event

    async def _read(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """Route the question; in the knowledge base, rewrite it, then retrieve and grade (`_attempts`)."""
        async for event in self._stage(self.router, ctx):
            yield event
        if ROUTE.get(ctx.session.state).kind in IN_KB_ROUTES:
            async for event in self._stage(self.rewriter, ctx):
                yield event
            async for event in self._attempts(ctx):
                yield event

    async def _read_alone(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """A second reading of a follow-up the history's reading found nothing for: the follow-up on its own
        (`ContextualiseStage.alone`). It stands only if the gate passes it; else every stage's slots go back to the
        first reading, whose refusal (or web search) follows."""
        state = ctx.session.state
        keys = self._reading_keys()
        saved = copy.deepcopy({key: state.get(key) for key in keys})
        focus = CONTEXT.get(state).focus_laws
        # a new question to every stage (the rewriter would take the first reading's as an attempt to improve on)
        yield self._emit(ctx, {key: None for key in keys & RESETTABLE - {QUESTION.key, CONTEXT.key}})
        yield self.contextualiser.alone(ctx)
        async for event in self._read(ctx):
            yield event
        if ROUTE.get(state).kind in IN_KB_ROUTES and QUALITY.get(state).act == "correct" \
                and not left_the_law(state, focus):
            return
        for stage in self._readers():
            yield stage.restore(ctx, saved)
        yield self._emit(ctx, {slot.key: saved.get(slot.key) for slot in READING}, ALONE_FAILED)

    def _unanswered_follow_up(self, ctx: InvocationContext) -> bool:
        """A follow-up whose reading with the history would not be answered from the knowledge base (the gate's
        incorrect, or routed out of it), with time left for a second reading; not after a model failure."""
        state = ctx.session.state
        context, route, quality = CONTEXT.get(state), ROUTE.get(state), QUALITY.get(state)
        if context.kind != "follow_up" or context.source == "alone" or self._out_of_time(ctx) \
                or not self.contextualiser.readable_alone(ctx):
            return False
        if route.kind in IN_KB_ROUTES:
            return quality is not None and quality.act == "incorrect" and quality.verdict != "model_error"
        return route.kind == "out_of_kb"

    def _readers(self) -> tuple[Stage, ...]:
        """The stages that write one reading of a question."""
        return self.contextualiser, self.router, self.rewriter, self.retriever, self.grader

    def _reading_keys(self) -> set[str]:
        return {slot.key for stage in self._readers() for slot in stage.writes} | {slot.key for slot in READING}

    async def _attempts(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """Retrieve and grade until the grade passes or the policy stops; keep the best attempt."""
        state = ctx.session.state
        plan = first_plan(REWRITE.get(state), self._settings.top_k)
        attempts: list[Attempt] = []
        best: tuple[Quality, Retrieval] | None = None
        while True:
            note = None if plan.attempt == 1 else f"第 {plan.attempt} 次检索：{plan.reason}"
            yield self._emit(ctx, PLAN.delta(plan), note)
            async for event in self._stage(self.retriever, ctx):
                yield event
            async for event in self._stage(self.grader, ctx):
                yield event
            quality, retrieval = ATTEMPT_QUALITY.get(state), ATTEMPT_RETRIEVAL.get(state)
            attempts.append(attempt_record(plan, retrieval, quality))
            best = best if best is not None and best[0].total >= quality.total else (quality, retrieval)
            stop = stop_reason(attempts, quality, attempt_budget(self._settings)) or self._out_of_time(ctx)
            if stop:
                attempts[-1].stop = stop
                break
            async for event in self._stage(self.rewriter, ctx):
                yield event
            plan = next_plan(attempts, REWRITE.get(state), plan)
        quality, retrieval = best
        yield self._emit(ctx, merge(ATTEMPTS.delta(attempts), RETRIEVAL.delta(retrieval), QUALITY.delta(quality)))

    def _branch(self, ctx: InvocationContext) -> str:
        """The path after routing and grading (the web step may still turn `web` into `none` / `out_of_kb`)."""
        state = ctx.session.state
        route = ROUTE.get(state)
        web = make_provider(self._settings) is not None
        if route.kind == "chitchat":
            return "chitchat"
        if route.kind == "out_of_kb":
            return "web" if web else "out_of_kb"
        quality = QUALITY.get(state)
        if quality.verdict == "model_error":
            return "degraded" if RETRIEVAL.get(state).articles else "error"
        if quality.act == "incorrect":  # a lookup of an article these laws do not have: nothing to search for
            return "none" if quality.source == "rule:no_such_article" else "web"
        if self._accounts.of(ctx).budget.remaining() <= 0:
            return "degraded"
        return "pass" if quality.act == "correct" else "hedged"

    # ------------------------------------------------------------------ plumbing
    async def _stage(self, stage: Stage, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """Run one stage and add its time to the question's accounts (the one place stage times are taken)."""
        started = time.monotonic()
        try:
            async for event in stage.run_async(ctx):
                yield event
        finally:
            timings = self._accounts.of(ctx).timings
            timings[stage.key] = timings.get(stage.key, 0.0) + time.monotonic() - started

    def _intake(self, ctx: InvocationContext) -> tuple[str | None, str | None]:
        """(question, None) or (None, the message that rejects it)."""
        text = user_text(ctx.user_content)
        marker = parse_marker(text.strip())
        if marker:
            return None, f"问题过长（{marker[0]} 字，上限 {marker[1]} 字）：请精简后再问。"
        try:
            return spell_out_refs(validate_query(text, self._settings.max_query_chars)), None
        except QueryError as e:
            return None, str(e)

    def _turn(self, ctx: InvocationContext) -> dict:
        """The conversation after this turn, recorded on the workflow's own event (the only place history is read
        back from: a client's `stateDelta` under the same key is overwritten here and never read)."""
        previous = conversation.history(ctx.session.events, self.name, ctx.invocation_id)
        return CONVERSATION.delta(conversation.next_conversation(previous, ctx.session.state))

    def _out_of_time(self, ctx: InvocationContext) -> str | None:
        remaining = self._accounts.of(ctx).budget.remaining()
        return "deadline" if remaining < MIN_SECONDS_FOR_RETRY else None

    @staticmethod
    def _spent(run) -> dict:
        timings = {k: round(v, 3) for k, v in run.timings.items()}
        timings["total"] = round(time.monotonic() - run.started, 3)
        return merge(LLM_CALLS.delta(run.budget.calls), LLM_USAGE.delta(run.budget.usage), TIMINGS.delta(timings),
                     ERRORS.delta(run.errors))

    def _emit(self, ctx: InvocationContext, delta: dict, text: str | None = None) -> Event:
        resetting = all(v is None for k, v in delta.items() if k in RESETTABLE)
        allowed = {s.key for s in self.writes} | (RESETTABLE if resetting else set())
        check_writes(self.name, delta, allowed)
        return state_event(ctx, self.name, delta, text)
