"""ContextualiseStage: the message → the question the pipeline answers (LangChain's condense step, LlamaIndex's
CondenseQuestionChatEngine), before routing, so that 「那如果…呢」 is not routed as chit-chat.

* no earlier legal turn, or a self-contained message (`signals.reading`): the message itself, no model call —
  a first question is answered exactly as before; a topic switch (换个问题，…) starts clean;
* a vague first message (`vagueness.vague`: a model over the knowledge base's embedder, the lexical
  `signals.vague` with another embedder): marked `vague`, the workflow asks one clarifying question instead of
  retrieving;
* the reply to that clarifying question (the conversation's pending question): merged with the vague question;
* after a refusal that listed the nearest articles, a reply that picks one (「1」, 「第二十三条」): the refused
  question again, with that article confirmed (`confirmed`: looked up, pinned first, passed by the gate's rule);
  any other reply is read as usual (a follow-up, a new question);
* a follow-up: one model call (the `contextualiser` role, counted in the question's budget) on the fenced history
  — the last two standalone questions and the titles of the articles the previous answer cited, never an answer's
  text — and the follow-up; its one line is checked in code (`check`), else the rule form
  「上一问题：…；追问：…」 is used. With the embedded model the rule form is used without a call
  (`contextualise_with`): on the dev follow-ups it retrieved a gold article in the first five 0.81 of the time,
  the 1.5B's checked rewrites 0.76 at 8.7 s p50, the 0.5B's 0.68 at 2.2 s (bench/results/contextualise.json).
  The previous turn's articles become extra candidates (still graded) and, in a knowledge base of several laws,
  its law the focus when the follow-up names none.
* a follow-up whose reading with the history the gate refuses (or the router sends out of the knowledge base) is
  read once more on its own (`alone`, called by the workflow) when it states its own ask (`readable_alone`: not
  「…呢？」 or 「除了X，还…」); it stands only if the gate passes it. A follow-up with its own nouns
  (「那他们录进去的人脸，我能要求删掉吗？」) was pulled back by the first question's facts to that question's article;
  read alone it finds its own;
* what retrieval searches (`search`) when it is not the question: a clarification reply's own facts, a
  「除了X，还…」 follow-up without 「除了X，」 (X's words pulled retrieval back to X); the question keeps every word.

The history is rebuilt from the workflow's own stored events (`conversation.history`), never read from session
state. Writes QUESTION (what every later stage reads) and CONTEXT; USER_QUERY keeps the literal message.
"""
from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import ClassVar

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event

from ...conversation import clip, history
from ...knowledge.errors import IndexError_
from ...legal.laws import short
from ...legal.numerals import article_cn
from ...llm.call import ModelFailure
from ...llm.models import embedded
from ...safety.fence import history_block
from ...state import CONTEXT, QUESTION, RAW_CONTEXTUALISE, USER_QUERY, Contextualised, Conversation, Slot, Turn, merge
from ..base import LlmStage
from . import prompt, signals, vagueness
from .check import check

HISTORY_QUESTIONS = 2  # earlier standalone questions given to the model (each already condenses its own past)
MAX_TOKENS = 64


def rule_form(rule: str, previous: str, follow_up: str) -> str:
    """「上一问题：…；追问：…」. A previous rule form gives its root (the question that stated the facts, with a
    clarification's reply) and only this follow-up is added: earlier follow-ups pulled retrieval toward their own
    asks (dev follow-ups, gold in the first five: 0.84 with every follow-up chained, 0.94 root + last)."""
    if previous.startswith(prompt.RULE_PREFIXES):
        root = previous.split(prompt.FOLLOW_UP_MARK)[0]
        return f"{root}{prompt.MORE.format(follow_up=follow_up)}"
    return rule.format(previous=previous, follow_up=follow_up)


def titles(turn: Turn) -> list[str]:
    return [f"{short(law)}{article_cn(n)}" for law, n in turn.cited]


class ContextualiseStage(LlmStage):
    key: ClassVar[str] = "contextualise"
    agent_name: ClassVar[str] = "ContextualiseAgent"
    writes: ClassVar[tuple[Slot, ...]] = (QUESTION, CONTEXT, RAW_CONTEXTUALISE,)
    role: str = "contextualiser"

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        message = USER_QUERY.get(state, "")
        conversation = history(ctx.session.events, self.root_agent.name, ctx.invocation_id)
        embedder = None
        if self._reads_embedder(message, conversation):
            with contextlib.suppress(IndexError_):  # no knowledge base: the word rule decides, the router reports it
                async for event in self.opening(ctx):
                    yield event
                embedder = getattr(self._factory(), "embedder", None)
        context, raw, line = await self._understand(ctx, message, conversation, embedder)
        delta = merge(QUESTION.delta(context.question), CONTEXT.delta(context))
        if context.called:
            delta.update(RAW_CONTEXTUALISE.delta(raw))
        yield self.emit(ctx, delta, line)

    @staticmethod
    def readable_alone(ctx: InvocationContext) -> bool:
        """Can the follow-up be read on its own at all (`signals.asks_on_its_own`)?"""
        return signals.asks_on_its_own(USER_QUERY.get(ctx.session.state, ""))

    def alone(self, ctx: InvocationContext) -> Event:
        """The follow-up read on its own, once the history's reading found nothing to answer from: a follow-up that
        names its own subject (「那他们录进去的人脸，我能要求删掉吗？」) is pulled back by the first question's facts to
        that question's articles (the workflow's second reading; it stands only if the gate passes it)."""
        state = ctx.session.state
        message, understood = USER_QUERY.get(state, ""), CONTEXT.get(state)
        context = Contextualised(question=message, kind="follow_up", source="alone", reason="结合上文未找到依据",
                                 history=understood.history, understood=understood.question)
        return self.emit(ctx, merge(QUESTION.delta(message), CONTEXT.delta(context)),
                         prompt.ALONE.format(question=message))

    async def _understand(self, ctx: InvocationContext, message: str, conversation: Conversation,
                          embedder=None) -> tuple[Contextualised, str, str | None]:
        """(how the message is understood, the model's raw output, the progress line)."""
        pending = conversation.pending
        picked = signals.picked_article(message, pending.options, pending.articles) \
            if pending is not None and pending.articles else None
        if picked is not None:  # the refused question, answered from the article the user says is the case
            context = Contextualised(question=pending.question, kind="clarify_reply", source="rule",
                                     reason="选择了上一轮列出的条文", history=[pending.question],
                                     confirmed=[pending.articles[picked]])
            return context, "", prompt.CONFIRMED.format(option=pending.options[picked], question=pending.question)
        if pending is not None and not pending.articles and signals.is_reply(message) \
                and not signals.is_chitchat(message):
            option = signals.chosen_option(message, pending.options)
            return await self._condense(ctx, option or message, [pending.question], [], kind="clarify_reply",
                                        reason="回答了上一轮的追问", rule=prompt.MERGED,
                                        search=None if option else message)
        if pending is not None and pending.articles and signals.tells_facts(message):
            # the refusal asked for the case's details (「请补充具体情况」): read alone, they ask nothing. Searched as
            # a clarifying question's reply is, by their own words (the refused question's pulled retrieval back)
            return await self._condense(ctx, message, [pending.question], [], kind="clarify_reply",
                                        reason="补充了上一轮所缺的具体情况", rule=prompt.MERGED, search=message)
        turns = conversation.turns
        rest = signals.topic_switch(message) if turns or pending is not None else None
        if rest is not None:  # 换个问题，… : the marker is not part of the question, and nothing is carried
            context = Contextualised(question=rest, kind="self_contained", source="rule", reason="换了话题")
            return context, "", prompt.NEW_TOPIC.format(reason=context.reason)
        if not turns:
            why = await asyncio.to_thread(vagueness.vague, message, embedder)
            if why:
                return Contextualised(question=message, kind="vague", reason=why), "", None
            reason = "新问题，不再等待上一轮的补充" if pending is not None else "首轮问题"
            return Contextualised(question=message, kind="first", reason=reason), "", None
        if (looked_up := signals.lookup(message)) is not None:
            return self._lookup(looked_up, turns[-1].law)
        if (part := signals.bare_part(message)) is not None and len(turns[-1].cited) == 1:
            law, number = turns[-1].cited[0]  # 「第二项是什么意思？」 after 第十三条: its item
            return self._lookup(article_cn(number) + part, law)
        reading = signals.reading(message)
        if not reading.follow_up:
            return Contextualised(question=message, kind="self_contained", reason=reading.reason), "", None
        last = turns[-1]
        context, raw, line = await self._condense(
            ctx, message, [t.question for t in turns[-HISTORY_QUESTIONS:]], titles(last), kind="follow_up",
            reason=reading.reason, rule=prompt.FALLBACK, beyond=signals.beyond(message))
        focus = [last.law] if last.law and not signals.names_law(message) else []
        # searched beside the question, unless a search text stands in for it (「除了X」: X's words are left out)
        own = clip(message, self.settings.max_query_chars) if context.search is None else None
        return context.model_copy(update={"history_articles": list(last.cited), "focus_laws": focus,
                                          "own_words": own}), raw, line

    @staticmethod
    def _lookup(looked_up: str, law: str | None) -> tuple[Contextualised, str, str | None]:
        """An article asked for by number after a turn on a law (「那第四十五条呢？」): of that law unless the message
        names one. Read with the previous question (「上一问题：…第四十四条…；追问：…」) it was answered from the
        previous question's article."""
        if signals.names_law(looked_up) or not law:
            return Contextualised(question=looked_up, kind="self_contained", reason="按条文编号查询"), "", None
        question = short(law) + looked_up
        context = Contextualised(question=question, kind="follow_up", source="rule", reason="按条文编号查询上文所涉法律")
        return context, "", prompt.UNDERSTOOD.format(question=question)

    def _reads_embedder(self, message: str, conversation: Conversation) -> bool:
        """A short first message is judged by the opener model over the knowledge base's embedder, so the knowledge
        base is opened here (the router would open it a moment later anyway)."""
        return self._factory is not None and not conversation.turns and not vagueness.never_vague(message)

    def _rewrites(self) -> bool:
        """Does a model rewrite follow-ups (`contextualise_with`)? auto: not the embedded one."""
        choice = self.settings.contextualise_with
        if choice == "auto":
            return not embedded("contextualiser", self.settings)
        return choice == "model"

    async def _condense(self, ctx: InvocationContext, follow_up: str, questions: list[str], cited: list[str], *,
                        kind: str, reason: str, rule: str, search: str | None = None,
                        beyond: tuple[str, str] | None = None) -> tuple[Contextualised, str, str]:
        """One model call, checked; the rule form when the call fails or its line does not pass the check, or
        without a call when no model rewrites (`_rewrites`). The rule form is searched as `search` when given, or
        without the words of `beyond` (`signals.beyond`: 「除了X，」 and the rest)."""
        fallback = clip(rule_form(rule, questions[-1], follow_up), self.settings.max_query_chars)
        search = clip(search, self.settings.max_query_chars) if search else None
        note = ""
        if beyond:
            search = clip(rule_form(rule, questions[-1], beyond[1]), self.settings.max_query_chars)
            note = prompt.BEYOND.format(covered=beyond[0])
        elif search:
            note = prompt.SEARCH_REPLY
        if not self._rewrites():
            return (Contextualised(question=fallback, kind=kind, reason=reason, source="rule", history=questions,
                                   search=search), "", prompt.UNDERSTOOD.format(question=fallback) + note)
        base = dict(kind=kind, reason=reason, called=True, history=questions)
        text = prompt.CONDENSE.format(history=history_block(questions, cited), follow_up=follow_up)
        try:
            raw = await self.ask(ctx, text, json=False, max_tokens=MAX_TOKENS, temperature=0.0)
        except ModelFailure as e:
            self.run_of(ctx).errors.append(f"结合上文改写：{e.user_text}")
            problem = e.user_text
            return (Contextualised(question=fallback, source="fallback", error=problem, search=search, **base), "",
                    prompt.UNDERSTOOD_FALLBACK.format(question=fallback, problem=problem) + note)
        checked = check(raw, follow_up, questions, cited)
        if checked.question is None:
            return (Contextualised(question=fallback, source="fallback", error=checked.problem, search=search,
                                   **base), raw,
                    prompt.UNDERSTOOD_FALLBACK.format(question=fallback, problem=checked.problem) + note)
        return (Contextualised(question=checked.question, source="llm", **base), raw,
                prompt.UNDERSTOOD.format(question=checked.question))
