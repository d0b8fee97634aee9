"""ClarifyStage: one clarifying question for a question too vague to retrieve for (渐进式追问, from the design's
quality self-check).

Runs only when the contextualise stage marked a first message `vague` (a generic form such as 怎么办 / 合法吗 with no
content noun: `contextualise.signals.vague`). Retrieval signals are not part of that decision: on the eval set's PIPL
openers the best dense cosine of vague and clear ones overlaps completely (0.26–0.60 vs 0.27–0.60, measured when
this stage was built). No model call: the question asked back is chosen by the message's form (what happened? /
which practice?), and its numbered options come from the knowledge base itself — the chapters and sections of the
articles the vague question retrieves (a one-law knowledge base), or its laws, those the question retrieves first
(several laws). Nothing is invented: an index without structure gets no options.

A separate stage rather than part of the contextualise stage because it needs the knowledge base (a retrieval for
the options) and writes its own typed output (CLARIFY); the answer stage writes the final text from it, like its
other fixed replies, and the workflow records the pending question in the conversation.
"""
from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator
from typing import ClassVar

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event

from ..legal.laws import short
from ..retrieval.types import Article
from ..state import CLARIFY, CONTEXT, QUESTION, Clarification, Slot
from .base import Stage

CANDIDATES = 10  # articles the vague question retrieves, whose chapters / laws become the options
MAX_CHAPTERS = 4
MAX_LAWS = 6
SKIPPED_CHAPTERS = ("总则", "附则")

ASK_WHAT_HAPPENED = ("为了找到对应的法条，请具体说说发生了什么：是谁（哪家公司、机构或个人）做了什么，"
                     "涉及您的哪些信息或权益，您想达到什么目的（例如删除、赔偿、投诉）？")
ASK_WHICH_PRACTICE = "您说的是哪种做法？请具体说说：是谁（哪家公司、机构或个人），在什么情况下，做了什么？"
ASK_DEFAULT = "请具体说说您遇到的情况：是谁（哪家公司、机构或个人）做了什么，您想了解什么？"
_WHAT_HAPPENED = re.compile(r"怎么办|咋办|维权|坑了|侵权了|出了点事")
_WHICH_PRACTICE = re.compile(r"合法|违法|对吗|对不对|可以吗|行吗|凭什么|这样|这么做|这么干|这么搞")
_HEADING = re.compile(r"^第[一二三四五六七八九十百零〇]+[编章节]\s*")


def targeted_question(message: str) -> str:
    if _WHAT_HAPPENED.search(message):
        return ASK_WHAT_HAPPENED
    if _WHICH_PRACTICE.search(message):
        return ASK_WHICH_PRACTICE
    return ASK_DEFAULT


def heading(text: str | None) -> str:
    """第二章 个人信息处理规则 → 个人信息处理规则; 第八章 附 则 → 附则."""
    return re.sub(r"\s+", "", _HEADING.sub("", (text or "").strip()))


def aspect(article: Article) -> str:
    """What part of the law an article belongs to: its section when the section says more than 一般规定."""
    section = heading(article.section)
    return section if section and section != "一般规定" else heading(article.chapter)


def options_from(articles: list[Article], kb_laws: list[str]) -> list[str]:
    """Numbered options from the knowledge base: several laws → its laws, those retrieved first; one law → the
    chapters / sections of the retrieved articles, in retrieval order. Fewer than two: no options."""
    if len(kb_laws) > 1:
        ranked = list(dict.fromkeys([a.law for a in articles if a.law in kb_laws] + sorted(kb_laws)))
        return [f"《{short(law)}》" for law in ranked[:MAX_LAWS]]
    found = [aspect(a) for a in articles]
    options = list(dict.fromkeys(o for o in found if o and o not in SKIPPED_CHAPTERS))[:MAX_CHAPTERS]
    return options if len(options) >= 2 else []


class ClarifyStage(Stage):
    key: ClassVar[str] = "clarify"
    agent_name: ClassVar[str] = "ClarifyAgent"
    writes: ClassVar[tuple[Slot, ...]] = (CLARIFY,)

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        question = QUESTION.get(state, "")
        context = CONTEXT.get(state)
        options = await asyncio.to_thread(self._options, question)
        clarification = Clarification(question=question, ask=targeted_question(question), options=options,
                                      reason=context.reason if context else "")
        yield self.emit(ctx, CLARIFY.delta(clarification), f"问题不够具体：{clarification.reason}，先请您补充情况。")

    def _options(self, question: str) -> list[str]:
        retriever = self._factory()
        result = retriever.retrieve(question, top_k_=CANDIDATES, rerank=False)
        return options_from(result.articles, retriever.laws)
