"""RetrieveStage: runs the plan's queries through the LocalRetriever and writes the articles to state.

A compound question is retrieved per sub-question and the lists are merged round-robin (dedup by article), so
every sub-question keeps its share of the evidence. Articles the evidence points to (依照本法第X条) are added as
follow-ups. A follow-up of a conversation (CONTEXT) adds the articles the previous turn cited as extra candidates
(role `history`; the grader judges them like the rest) and, in a knowledge base of several laws, retrieves with the
previous turn's law as focus when the question names none. An article the user picked from a refusal's list
(`CONTEXT.confirmed`) is looked up and pinned first, like an article the question names. When the contextualise
stage gives a search text (`CONTEXT.search`: a clarification reply's facts, a 「除了X」 follow-up without X), that is
what is searched, in place of the question; a follow-up's own words (`CONTEXT.own_words`) are searched beside the
question and the two rankings fused. The retriever is created lazily and shared by the process, so
importing the app loads no model.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from itertools import zip_longest
from typing import ClassVar

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event

from ..legal.refs import ArticleRef
from ..retrieval.follow_up import follow_ups
from ..retrieval.fusion import RankedList, weighted_rrf
from ..retrieval.retriever import LocalRetriever
from ..retrieval.types import Article
from ..state import ATTEMPT_RETRIEVAL, CONTEXT, PLAN, QUESTION, ROUTE, Plan, Retrieval, Slot
from .answer.conclusion import asks_penalty
from .base import Stage


def merge_per_question(results: list[Retrieval], sub_questions: list[str], top_k: int) -> Retrieval:
    """Round-robin over the sub-questions' rankings: each keeps a quota of top_k // n + 1 at least."""
    cap = top_k + len(results) - 1
    articles, seen = [], set()
    for row in zip_longest(*[r.articles for r in results]):
        for i, article in enumerate(row):
            if article is not None and article.id not in seen and len(articles) < cap:
                seen.add(article.id)
                articles.append(article.model_copy(update={"sub_question": i}))
    scores = [r.max_vector_score for r in results if r.max_vector_score is not None]
    first = results[0]
    return Retrieval(query=" / ".join(sub_questions), query_type=first.query_type, matcher=first.matcher,
                     articles=articles, refs=sorted({n for r in results for n in r.refs}),
                     max_vector_score=max(scores) if scores else None, sub_questions=sub_questions,
                     timings_ms={k: round(sum(r.timings_ms.get(k, 0) for r in results), 1) for k in first.timings_ms})


def fuse_own_words(result: Retrieval, own: Retrieval) -> Retrieval:
    """A follow-up's question and its own words, searched apart, fused by RRF with equal weights (pinned lookups
    stay first). An article keeps the evidence of the question's search where that found it, and the signals stay
    the question's: the gate's weights were fitted on one query text's cosines and ranks (stop 37 searched both
    texts as variants of one search, and the gate's totals fell)."""
    pool = {a.id: a for a in result.articles}
    pool.update({a.id: a for a in own.evidence if a.id not in pool})
    articles = list(pool.values())  # a tie goes to the question's article: weighted_rrf breaks ties by position
    position = {a.id: i for i, a in enumerate(articles)}
    pinned = [a for a in result.evidence if a.pinned]
    ranked = [RankedList(name, 1.0, [(position[a.id], 0.0) for a in r.evidence if not a.pinned])
              for name, r in (("question", result), ("own_words", own))]
    fused = pinned + [articles[hit.doc] for hit in weighted_rrf(ranked)]
    rest = [a for a in result.articles if a.role != "evidence"]
    return result.model_copy(update={"articles": fused[:len(result.evidence)] + rest})


def looked_up(retriever: LocalRetriever, law: str, number: int, **fields) -> Article | None:
    """The article (law, number) of the index, with `fields` (its role, why it is there), or None."""
    docs = retriever.lookup([ArticleRef(article=number)], default_law=law)[:1]
    return retriever.article(docs[0], **fields) if docs else None


def history_articles(retriever: LocalRetriever, ids: list[tuple[str, int]], found: list[Article]) -> list[Article]:
    """The previous turn's articles that retrieval did not find again, looked up by (law, article)."""
    have = {a.key for a in found}
    out = []
    for law, number in ids:
        if (law, number) in have or law not in retriever.laws:
            continue
        article = looked_up(retriever, law, number, role="history", search_type="history",
                            channels={"history": {"turn": "previous"}})
        if article is not None:
            out.append(article)
            have.add((law, number))
    return out


def sanction_articles(retriever: LocalRetriever, ids: list[tuple[str, int]], found: list[Article]) -> list[Article]:
    """Asked the sanction after a turn about an article, the articles sanctioning its breach by number (「违反本法第三十六条
    规定…的，…罚款」 after 第三十六条): a search finds another article's fine as readily (第四十六条, of 第三十一条)."""
    have = {a.id for a in found}
    out = []
    for law, number in ids:
        for doc in retriever.sanctioning(law, number) if law in retriever.laws else []:
            article = retriever.article(doc, role="follow_up", search_type="sanction",
                                        channels={"sanction": {"of": f"{law}:{number}"}})
            if article.id not in have:
                out.append(article)
                have.add(article.id)
    return out


def confirmed_articles(retriever: LocalRetriever, ids: list[tuple[str, int]]) -> list[Article]:
    """The articles the user confirmed, looked up by (law, article) and pinned (a `lookup` channel)."""
    found = (looked_up(retriever, law, number, search_type="confirmed", channels={"lookup": {"confirmed": 1}})
             for law, number in ids)
    return [a for a in found if a is not None]


def summarize(result: Retrieval) -> str:
    if not result.articles:
        return "本地检索：未找到相关条文。"
    one_law = len({a.law for a in result.articles}) == 1
    names = "、".join(a.article_cn if one_law else a.title for a in result.evidence)
    extra = [a for a in result.articles if a.role == "follow_up"]
    follow = f"；引用补充 {'、'.join(a.article_cn if one_law else a.title for a in extra)}" if extra else ""
    earlier = [a for a in result.articles if a.role == "history"]
    previous = f"；上一轮引用 {'、'.join(a.article_cn if one_law else a.title for a in earlier)}" if earlier else ""
    return (f"本地检索（{result.query_type}，{result.matcher}）：找到 {len(result.evidence)} 条 —— "
            f"{names}{previous}{follow}")


class RetrieveStage(Stage):
    key: ClassVar[str] = "retrieve"
    agent_name: ClassVar[str] = "RetrievalAgent"
    writes: ClassVar[tuple[Slot, ...]] = (ATTEMPT_RETRIEVAL,)

    def retriever(self) -> LocalRetriever:
        return self._factory()

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        plan, route, context = PLAN.get(state), ROUTE.get(state), CONTEXT.get(state)
        subs = route.sub_questions if route and len(route.sub_questions) > 1 else []
        earlier = list(context.history_articles) if context else []
        chosen = list(context.confirmed) if context else []
        focus = {"focus_laws": context.focus_laws} if context and context.focus_laws else {}
        question = QUESTION.get(state, "")
        if context and context.search and not subs:  # the words to search for are not all the question's
            plan = plan.model_copy(update={"main_query": "" if plan.main_query == question else plan.main_query})
            question = context.search
        own = context.own_words if context and not context.search and not subs else None
        result = await asyncio.to_thread(self._retrieve, question, plan, subs, earlier, focus, chosen, own)
        yield self.emit(ctx, ATTEMPT_RETRIEVAL.delta(result), summarize(result))

    def _retrieve(self, question: str, plan: Plan, subs: list[str], earlier: list[tuple[str, int]],
                  focus: dict, chosen: list[tuple[str, int]], own: str | None = None) -> Retrieval:
        retriever = self._factory()
        if subs:
            results = [retriever.retrieve(q, matcher=plan.matcher, top_k_=plan.top_k, exclude=plan.exclude, **focus)
                       for q in subs]
            # the gate's signals (cosine, margin, lexical overlap) were calibrated on whole questions
            whole = retriever.retrieve(question, matcher=plan.matcher, top_k_=plan.top_k, exclude=plan.exclude,
                                       **focus)
            result = merge_per_question(results, subs, plan.top_k).model_copy(update={"signals": whole.signals})
        else:
            result = retriever.retrieve(question, variants=plan.variants, main_query=plan.main_query,
                                        keywords=plan.keywords, matcher=plan.matcher, top_k_=plan.top_k,
                                        exclude=plan.exclude, **focus)
            if own:
                result = fuse_own_words(result, retriever.retrieve(own, matcher=plan.matcher, top_k_=plan.top_k,
                                                                   exclude=plan.exclude, **focus))
        if earlier:
            result.articles += history_articles(retriever, earlier, result.articles)
            if asks_penalty(question):
                result.articles += sanction_articles(retriever, earlier, result.articles)
        depth = self.settings.follow_up_depth if self.settings.agentic_enabled else 0
        if depth and result.articles:
            result.articles += follow_ups(retriever, result.articles, depth)
        if chosen:  # the user's article first: the gate's rule passes it and only pinned articles reach the answer
            pinned = confirmed_articles(retriever, chosen)
            keys = {a.key for a in pinned}
            result.articles = pinned + [a for a in result.articles if a.key not in keys]
        return result
