"""AnswerStage: every final answer the user reads, chosen by the path the workflow took.

* pass / web — the LLM answers from the articles (and, on the web path, the fenced web results); its citations
  are checked in code sentence by sentence, and with streaming on only checked sentences are shown;
* degraded — the model failed (or the time is up): the retrieved articles verbatim, with the cause said plainly;
* none — the grader judged the articles insufficient and the web gave nothing: the standard reply;
* chitchat / out_of_kb — what the assistant covers, with no retrieval; error — what failed and what was found.
"""
from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import ClassVar

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event

from ...llm.call import CAUSE_TEXT, ModelFailure
from ...safety.fence import RULE, web_block
from ...state import (
    CITATIONS,
    FINAL_ANSWER,
    KB_LAW,
    KB_LAWS,
    PATH,
    QUALITY,
    RETRIEVAL,
    ROUTE,
    USER_QUERY,
    WEB,
    Citations,
    kb_label,
    merge,
)
from ..base import LlmStage
from ..evidence import prompt_articles, shared_prefix
from . import prompt
from .citations import Evidence, check, note
from .stream import VerifiedStream, drop_heading, tidy


def evidence_of(state) -> Evidence:
    """What the answer is given: the articles the grader judged relevant (all of them when it judged none, e.g.
    a failed grade), the looked-up ones alone for a pure lookup, and the web text on the web path. The rest are
    withheld: a small model cites whatever it is shown, whatever it is told."""
    retrieval = RETRIEVAL.get(state)
    articles = prompt_articles(retrieval.articles) if retrieval else []
    quality = QUALITY.get(state)
    if quality is not None and quality.source == "rule:exact_lookup":
        given = [a for a in articles if a.pinned] or articles
    else:
        relevant = set(quality.relevant) if quality else set()
        given = [a for a in articles if a.id in relevant] or articles
    web = WEB.get(state)
    web_text = "\n".join(f"{r.title} {r.snippet}" for r in web.results) if web and web.ok else ""
    laws = KB_LAWS.get(state) or sorted({a.law for a in articles})
    return Evidence(articles=given, kb_laws=laws, web_text=web_text,
                    withheld=[a for a in articles if a not in given])


def sub_questions_text(state) -> str:
    route = ROUTE.get(state)
    subs = route.sub_questions if route else []
    return prompt.SUB_QUESTIONS.format(items="\n".join(f"{i}. {q}" for i, q in enumerate(subs, 1))) \
        if len(subs) > 1 else ""


def answer_prompt(state, ev: Evidence) -> str:
    """The question and the given articles, in the grader's order (so the grader's evaluated prompt is reused up
    to the first withheld article), then web results, then the task."""
    prefix = shared_prefix(USER_QUERY.get(state, ""), ev.articles, KB_LAW.get(state) is not None)
    task = dict(sub_questions=sub_questions_text(state))
    web = WEB.get(state)
    if PATH.get(state) == "web" and web is not None:
        return prefix + prompt.WEB.format(**task, web=web_block(web.results, 10_000), rule=RULE)
    return prefix + prompt.LOCAL.format(**task, law=kb_label(state))


def disclaimer(state) -> str:
    text = prompt.DISCLAIMER_WEB if PATH.get(state) == "web" else prompt.DISCLAIMER_LOCAL
    return prompt.DISCLAIMER.format(text=text)


def articles_text(ev: Evidence) -> str:
    """The given articles' own text, as the index holds it."""
    return "\n\n".join(f"**{a.title}**{'（被引用的条文）' if a.role == 'follow_up' else ''}：{a.text}"
                       for a in ev.articles)


def articles_verbatim(ev: Evidence, cause: str) -> str:
    return (prompt.DEGRADED.format(cause=cause) + "\n\n" + articles_text(ev) +
            prompt.DISCLAIMER.format(text=prompt.DISCLAIMER_LOCAL))


def not_found(state) -> str:
    web = WEB.get(state)
    web_note = prompt.WEB_UNAVAILABLE.format(reason=web.message) if web and not web.ok and web.message else ""
    text = prompt.NOT_FOUND.format(law=kb_label(state), web_note=web_note)
    retrieval = RETRIEVAL.get(state)
    nearest = retrieval.evidence[:3] if retrieval else []
    if nearest:
        one_law = KB_LAW.get(state) is not None
        text += prompt.NEAREST.format(titles="、".join(a.article_cn if one_law else a.title for a in nearest))
    return text


def fixed_reply(state, path: str) -> str:
    if path == "chitchat":
        law = kb_label(state)
        return prompt.CHITCHAT.format(law=law)
    if path == "out_of_kb":
        route = ROUTE.get(state)
        web = WEB.get(state)
        web_note = prompt.WEB_UNAVAILABLE.format(reason=web.message) if web and web.message else ""
        laws = "、".join(f"《{law}》" for law in (KB_LAWS.get(state) or [])) or kb_label(state)
        return prompt.OUT_OF_KB.format(topic=(route.topic if route else "") or "其他法律领域", laws=laws,
                                       web_note=web_note)
    return not_found(state)


class AnswerStage(LlmStage):
    key: ClassVar[str] = "answer"
    role: str = "answer"

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        path = PATH.get(state)
        ev = evidence_of(state)
        if path in ("pass", "web"):
            async for event in self._generate(ctx, ev, path):
                yield event
            return
        if path == "degraded":
            quality = QUALITY.get(state)
            text = articles_verbatim(ev, (quality.error if quality else None) or CAUSE_TEXT["unavailable"])
            yield self._final(ctx, text, check(text, ev)[1], path)
        else:  # fixed texts make no legal claim (the nearest articles they name are pointers): nothing to check
            yield self._final(ctx, fixed_reply(state, path), Citations(), path)

    async def _generate(self, ctx: InvocationContext, ev: Evidence, path: str) -> AsyncGenerator[Event, None]:
        """The heading and the articles' text at once (verbatim, nothing to generate), then the model's analysis,
        streamed sentence by sentence once its citations are checked."""
        request = self.request(answer_prompt(ctx.session.state, ev), json=False,
                               max_tokens=self.settings.answer_max_tokens, temperature=0.1)
        listing = prompt.HEADING + articles_text(ev) + "\n\n"
        stream, streaming, raw = VerifiedStream(ev), self.streaming(ctx), []
        if streaming:  # the index's own text: its cross-references are the law's, not claims to check
            yield self.partial(ctx, listing)
        try:
            async for piece in self.stream_text(ctx, request, stream=streaming):
                raw.append(piece)
                shown = stream.feed(piece) if streaming else ""
                if shown:
                    yield self.partial(ctx, shown)
        except ModelFailure as e:
            self.run_of(ctx).errors.append(f"答案生成：{e.user_text}")
            text = articles_verbatim(ev, f"答案生成{e.user_text}")
            yield self._final(ctx, text, check(text, ev)[1], "degraded")
            return
        if streaming and (rest := stream.flush()):
            yield self.partial(ctx, rest)
        analysis = drop_heading("".join(raw).strip())
        if not analysis:
            text = articles_verbatim(ev, "答案生成模型没有返回内容")
            yield self._final(ctx, text, check(text, ev)[1], "degraded")
            return
        checked, record = check(analysis, ev)
        record.listed = [[a.law, a.article] for a in ev.articles]
        body = listing + tidy(checked)
        if "免责声明" not in body:
            body += disclaimer(ctx.session.state)
        yield self._final(ctx, body + note(record), record, path)

    def _final(self, ctx: InvocationContext, text: str, record: Citations, path: str) -> Event:
        delta = merge(FINAL_ANSWER.delta(text), CITATIONS.delta(record), PATH.delta(path))
        return self.emit(ctx, delta, text)
