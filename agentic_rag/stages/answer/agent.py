"""AnswerStage: every final answer the user reads, chosen by the path the workflow took.

* pass — the conclusion first, decided in code from the deciding clause (`conclusion`), then that clause verbatim,
  the article's conditions and exceptions, and what the user can do where an article says so (`form`); the model
  writes one sentence per ask, which is shown only after its citations and its support are checked (`support`);
* hedged — the gate was unsure (CRAG's ambiguous action): the most likely rule, verbatim, and what would decide it;
* web — the model answers from the local articles and the fenced web results; every sentence checked;
* degraded — the model failed (or the time is up): the retrieved articles verbatim, with the cause said plainly;
* none — the grader judged the articles insufficient and the web gave nothing: the standard reply;
* chitchat / out_of_kb — what the assistant covers, with no retrieval; error — what failed and what was found;
* clarify — the question was too vague to retrieve for: one targeted question back, with numbered options from
  the knowledge base (ClarifyStage).

Every path answers QUESTION, the standalone question of the contextualise stage (a follow-up understood with the
conversation); the form and the checks are the same on every turn.
"""
from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import ClassVar

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from pydantic import PrivateAttr

from ...conversation import offered_articles
from ...legal.modality import clauses, imposes_penalty
from ...legal.numerals import article_cn
from ...legal.refs import find_article_refs
from ...legal.vocabulary import DRAFTING
from ...llm.call import CAUSE_TEXT, ModelFailure, score
from ...llm.models import LOCAL_PREFIX, embedded, model_name
from ...llm.scoring import ScoringUnsupported
from ...retrieval.types import Article
from ...safety.fence import RULE, web_block
from ...state import (
    ANSWER,
    BRANCH,
    CITATIONS,
    CLARIFY,
    CONTEXT,
    FINAL_ANSWER,
    KB_LAW,
    KB_LAWS,
    NOTICE,
    PATH,
    QUALITY,
    QUESTION,
    RETRIEVAL,
    ROUTE,
    WEB,
    Answer,
    Ask,
    Citations,
    Sentence,
    Slot,
    kb_label,
    merge,
)
from ..base import SYSTEM, LlmStage
from ..evidence import label, prompt_articles, shared_prefix
from . import form, polarity, prompt
from .citations import Evidence, check, note
from .conclusion import (AGE_OVER, CONSENT_UNANSWERED, age_limit, asks_penalty, decide, fact_unstated, only_defines,
                         rule_marker)
from .deciding import Embed, deciding_clause, embedder_similarity, governing_order, is_remedy, rank_clauses
from .stream import VerifiedStream
from .support import (NOTHING, REPEATED, RESTATED, judge_sentence, repeats_quote, restates_question, says_nothing,
                      support_model)

SENTENCE_TOKENS = 120  # one sentence of ≤ 60 characters per ask, with room to spare
# A second governing article is quoted when judged about as relevant as the first: P(relevant) at least this, and
# within SECOND_ARTICLE_MARGIN of the first's.
SECOND_ARTICLE_P = 0.5
SECOND_ARTICLE_MARGIN = 0.15
SUPPORT_TAIL = "【任务】核对：下面这句话能否由上面的法条直接得出？只回答“是”或“否”。\n句子：{sentence}"
_LINE_NUMBER = re.compile(r"^\s*\d+[.、．)]\s*")
# A task's 「以“{label}”开头」 copied at the sentence's start (the polar task's, SENTENCES_MULTI's 以给定的结论开头):
# alone, the whole instruction written back (9 of 56 held-out answers at stop 36), or before the model's own words
_ECHOED_TASK = re.compile(r"^以[“\"]?[^”\"，。]{0,8}[”\"]?开头[，,。；;：:\s]*")
_COPIED_TASK = re.compile("|".join(map(re.escape, prompt.TASK_WORDS)))
# What a model used to a report form puts around its sentence: headings, list and quote marks, a bold label.
_HEADING_LINE = re.compile(r"^\s*#")
_LINE_MARKUP = re.compile(r"^\s*(?:[-*>]\s+)?(?:\*\*[^*\n]{1,12}\*\*[：:]?\s*)?")


def evidence_of(state) -> Evidence:
    """What the answer is given: the articles the grader judged relevant, best first (all of them when it judged
    none, e.g. a failed grade), the looked-up ones alone for a pure lookup, and the web text on the web path. The
    rest are withheld: a small model cites whatever it is shown, whatever it is told."""
    retrieval = RETRIEVAL.get(state)
    articles = prompt_articles(retrieval.articles) if retrieval else []
    quality = QUALITY.get(state)
    if quality is not None and quality.source in ("rule:exact_lookup", "rule:confirmed"):
        # every article looked up, even past the prompt's five: 「第5条是什么」 lists each law's
        given = [a for a in retrieval.articles if a.pinned and a.role == "evidence"] or articles
    else:
        p = quality.article_relevance if quality else {}
        relevant = set(quality.relevant) if quality else set()
        given = sorted((a for a in articles if a.id in relevant), key=lambda a: -p.get(a.id, 0.0)) or articles
        given = [a.model_copy(update={"relevance": p.get(a.id)}) for a in given + sanctions(state, articles, given)]
    web = WEB.get(state)
    web_text = "\n".join(f"{r.title} {r.snippet}" for r in web.results) if web and web.ok else ""
    laws = KB_LAWS.get(state) or sorted({a.law for a in articles})
    return Evidence(articles=given, kb_laws=laws, web_text=web_text,
                    withheld=[a for a in articles if a.id not in {g.id for g in given}])


def fixed_sentence(plan: form.AskPlan) -> str | None:
    """What the code says after the label where a model's sentence could only guess: the clause is silent on the
    consent asked about or only defines a term, the child's age the rule turns on is not given, or the age given is
    past the rule's bracket (「不属于。」 alone would hide that the rule's other cases — the kind of information — still
    apply)."""
    if plan.rule == CONSENT_UNANSWERED:
        return prompt.SILENT_ON_CONSENT
    limit = age_limit(plan.clause.full) if plan.clause else None
    if limit and fact_unstated(plan.rule):
        return prompt.AGE_DECIDES.format(limit=limit)
    if limit and rule_marker(plan.rule) == AGE_OVER:
        return prompt.AGE_OVER.format(limit=limit)
    if plan.label == "视情况" and plan.clause and only_defines(plan.clause):
        return prompt.ONLY_DEFINES  # 「App能随便收集我的通讯录吗？」 from 第四条: a model's 「取决于…」 would be invented
    return None


def sanctions(state, articles: list[Article], given: list[Article]) -> list[Article]:
    """For a question about the sanction, the retrieved articles that set one, though not judged relevant: the gate
    judges articles against the whole question (with a follow-up, mostly its previous question), and 第六十六条 is
    what 「这种会被罚吗？」 is answered from."""
    if not any(asks_penalty(q) for q in asks_of(state)):
        return []
    have = {a.id for a in given}
    return [a for a in articles if a.id not in have and imposes_penalty(a.text)]


def asks_of(state) -> list[str]:
    route = ROUTE.get(state)
    subs = route.sub_questions if route else []
    return subs if len(subs) > 1 else [QUESTION.get(state, "")]


def articles_text(ev: Evidence) -> str:
    return "\n\n".join(f"**{a.title}**{'（被引用的条文）' if a.role == 'follow_up' else ''}：{a.text}"
                       for a in ev.articles)


def articles_verbatim(ev: Evidence, cause: str) -> str:
    return prompt.DEGRADED.format(cause=cause) + "\n\n" + articles_text(ev) + prompt.DISCLAIMER


def no_such_article(state) -> str:
    """「第七十五条是什么」 of a 74-article law, or 「民法典第5000条」: said plainly, in the law the question named."""
    retrieval = RETRIEVAL.get(state)
    law = retrieval.focus_laws[0] if len(retrieval.focus_laws) == 1 else KB_LAW.get(state)
    where = f"知识库中的《{law}》" if law else "知识库中的法律都"
    return prompt.NO_SUCH_ARTICLE.format(where=where, articles="、".join(article_cn(n) for n in retrieval.absent))


def option_excerpt(question: str, article: Article, embed: Embed | None) -> str:
    """What a refusal shows of a listed article: its opening, or the clause nearest the question where that is a
    later one (第四十二条's 「（五）在本单位连续工作满十五年…」, not 「劳动者有下列情形之一的，…」): the user picks the article
    that is their case from what it says about it."""
    ranked = rank_clauses(question, [article], embed)
    if not ranked or ranked[0].clause == next(iter(clauses(article.text)), None):
        return form.clip(article.text, prompt.EXCERPT_CHARS)
    clause = ranked[0].clause
    shown = form.clip(clause.text, prompt.CLAUSE_EXCERPT_CHARS)
    if not clause.lead:
        return "…" + shown
    # an item says little without what its list is of (「合同中的下列免责条款无效：」 before 「（一）造成对方人身损害的」)
    lead = form.clip(clause.lead, prompt.EXCERPT_CHARS // 2)
    return ("" if article.text.startswith(clause.lead) else "…") + lead + clause.item + shown


def not_found(state, embedder: Callable[[], Embed | None] = lambda: None) -> str:
    quality = QUALITY.get(state)
    if quality is not None and quality.source == "rule:no_such_article":
        return no_such_article(state)
    web = WEB.get(state)
    web_note = prompt.WEB_UNAVAILABLE.format(reason=web.message) if web and not web.ok and web.message else ""
    nearest = offered_articles(state)
    if not nearest:
        return prompt.NOT_FOUND.format(law=kb_label(state), web_note=web_note)
    one_law = KB_LAW.get(state) is not None
    question, embed = QUESTION.get(state, ""), embedder()
    options = "\n".join(f"{i}. {label(a, one_law)}：{option_excerpt(question, a, embed)}"
                         for i, a in enumerate(nearest, start=1))
    return prompt.NOT_FOUND_NEAREST.format(law=kb_label(state), web_note=web_note) + prompt.NEAREST.format(options=options)


def clarify_text(state) -> str:
    """The clarifying question (ClarifyStage chose the question and the options from the knowledge base)."""
    clarification = CLARIFY.get(state)
    if clarification is None:
        return prompt.CLARIFY.format(ask="请具体说说您遇到的情况。")
    options = "\n".join(f"{i}. {o}" for i, o in enumerate(clarification.options, start=1))
    return prompt.CLARIFY.format(ask=clarification.ask) + \
        (prompt.CLARIFY_OPTIONS.format(options=options) if options else "")


def fixed_reply(state, path: str, embedder: Callable[[], Embed | None] = lambda: None) -> str:
    if path in ("rejected", "error"):
        return NOTICE.get(state, "")
    if path == "clarify":
        return clarify_text(state)
    if path == "chitchat":
        return prompt.CHITCHAT.format(law=kb_label(state))
    if path == "out_of_kb":
        route, web = ROUTE.get(state), WEB.get(state)
        web_note = prompt.WEB_UNAVAILABLE.format(reason=web.message) if web and web.message else ""
        laws = "、".join(f"《{law}》" for law in (KB_LAWS.get(state) or [])) or kb_label(state)
        return prompt.OUT_OF_KB.format(topic=(route.topic if route else "") or "其他法律领域", laws=laws,
                                       web_note=web_note)
    return not_found(state, embedder)


def sentence_task(plans: list[form.AskPlan], one_law: bool) -> str:
    if len(plans) == 1:
        p = plans[0]
        kind = "polar" if p.label in ("可以", "不可以", "需要", "不需要") else \
            {"视情况": "depends"}.get(p.label) or ("howto" if p.rule == "howto" else "info")
        return prompt.SENTENCE[kind].format(label=p.label, clause=form.clip(p.clause.full if p.clause else ""))
    items = "\n".join(prompt.MULTI_ITEM.format(n=i + 1, question=p.question, label=p.label,
                                               clause=form.clip(p.clause.full if p.clause else ""))
                      for i, p in enumerate(plans))
    return prompt.SENTENCES_MULTI.format(items=items)


def split_lines(text: str, n: int) -> list[str]:
    """The model's sentence per ask: one per line (numbering removed), the first sentence of each line."""
    lines = [_LINE_MARKUP.sub("", _LINE_NUMBER.sub("", line)).strip() for line in text.strip().splitlines()
             if line.strip() and not _HEADING_LINE.match(line)]
    if n == 1:
        lines = [" ".join(lines)]
    firsts = [re.split(r"(?<=[。！？!?])", line, maxsplit=1)[0].strip() for line in lines]
    return (firsts + [""] * n)[:n]


class AnswerStage(LlmStage):
    key: ClassVar[str] = "answer"
    agent_name: ClassVar[str] = "AnswerGeneratorAgent"
    writes: ClassVar[tuple[Slot, ...]] = (FINAL_ANSWER, CITATIONS, PATH, ANSWER,)
    role: str = "answer"
    _clause_vectors: dict = PrivateAttr(default_factory=dict)

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        path, ev = BRANCH.get(state), evidence_of(state)
        quality = QUALITY.get(state)
        if path == "pass" and quality is not None and quality.source == "rule:exact_lookup":
            items = {r.article: r.item for r in find_article_refs(QUESTION.get(state, "")) if r.item}
            text = form.lookup(ev.articles, KB_LAW.get(state) is not None, items) + prompt.DISCLAIMER
            yield self._final(ctx, text, self._listed(check(text, ev)[1], ev.articles), path,
                              Answer(action="correct", asks=[Ask(question=QUESTION.get(state, ""), label="说明",
                                                                 rule="lookup")]))
        elif path in ("pass", "hedged"):
            async for event in self._consult(ctx, ev, path):
                yield event
        elif path == "web":
            async for event in self._web(ctx, ev):
                yield event
        elif path == "degraded":
            text = articles_verbatim(ev, (quality.error if quality else None) or CAUSE_TEXT["unavailable"])
            yield self._final(ctx, text, check(text, ev)[1], path)
        else:  # fixed texts make no legal claim (the nearest articles they name are pointers): nothing to check
            yield self._final(ctx, fixed_reply(state, path, self._embedder), Citations(), path)

    # ------------------------------------------------------------------ pass / hedged
    async def _consult(self, ctx: InvocationContext, ev: Evidence, path: str) -> AsyncGenerator[Event, None]:
        state = ctx.session.state
        one_law = KB_LAW.get(state) is not None
        plans = await asyncio.to_thread(self._plans, state, ev)
        if path == "pass":
            await self._polarity(ctx, plans, one_law)
        if path == "hedged":
            yield self._final(ctx, self._hedged_text(plans, one_law, kb_label(state)),
                              self._listed(Citations(), form.quoted_articles(plans)), path, self._answer("ambiguous",
                                                                                                          plans, []))
            return
        pieces = form.segments(plans, one_law, ev.articles)
        streaming, shown = self.streaming(ctx), []
        if streaming:
            shown.append(self._text_before_sentences(pieces))
            yield self.partial(ctx, shown[0])
        failure, rejected = None, []
        try:
            sentences, rejected = await self._sentences(ctx, ev, plans, one_law)
        except ModelFailure as e:  # the code's conclusion and clause stand; the outage is said, not hidden
            self.run_of(ctx).errors.append(f"答案生成：{e.user_text}")
            sentences, failure = [Sentence(text="", kept=False, why=e.user_text)], e.user_text
        text, record = self._compose(pieces, plans, sentences, rejected, ev, one_law, kb_label(state))
        if failure:
            text += prompt.MODEL_DOWN.format(cause=f"答案生成{failure}")
        if streaming and text.startswith(shown[0]) and len(text) > len(shown[0]):
            yield self.partial(ctx, text[len(shown[0]):])
        yield self._final(ctx, text, record, "degraded" if failure else path,
                          self._answer("correct", plans, sentences))

    def _plans(self, state, ev: Evidence) -> list[form.AskPlan]:
        """Each ask's governing article (the one judged most relevant) and, within it, the clause that decides the
        question, which gives the label; a second article judged nearly as relevant adds its deciding clause."""
        embed, asks = self._embedder(), asks_of(state)
        plans = []
        for i, question in enumerate(asks):
            own = governing_order(question, [a for a in ev.articles if a.sub_question in (None, i)] or ev.articles)
            best = deciding_clause(question, own, embed)
            common = self._common_words(best.article.law if best else None)
            decision = decide(question, best.clause if best else None, common)
            plan = form.AskPlan(question=question, label=decision.label, rule=decision.rule,
                                article=best.article if best else None, clause=best.clause if best else None,
                                common=common)
            other = [a for a in own[:2] if best is None or a.id != best.article.id][:1]  # the pair's other article
            if len(asks) == 1 and len(own) > 1 and (own[1].relevance or 0) >= max(
                    SECOND_ARTICLE_P, (own[0].relevance or 0) - SECOND_ARTICLE_MARGIN):
                second = next((r for r in rank_clauses(question, other, embed) if not is_remedy(r.clause)), None)
                plan.extra = [(second.article, second.clause)] if second else []
            plans.append(plan)
        return plans

    async def _polarity(self, ctx: InvocationContext, plans: list[form.AskPlan], one_law: bool) -> None:
        """A single yes/no ask the rules left at 视情况, decided by the embedded model where its 是/否 logit is far from
        the middle (`polarity`); on the prefix the sentence's call reuses, so it costs the tail."""
        state = ctx.session.state
        question, context = QUESTION.get(state, ""), CONTEXT.get(state)
        one = plans[0]
        task = polarity.tail(one.question, one.label, one.rule) if len(plans) == 1 and one.clause else None
        # calibrated on questions in the user's own words (a refused question whose article the user then picked is
        # one): not on a follow-up merged with the history
        own_words = context is None or not context.uses_history or bool(context.confirmed)
        if task is None or not own_words or self._settings.polarity_llm == "off" or not self._polarity_calibrated():
            return
        prefix = shared_prefix(question, form.quoted_articles(plans), one_law)
        try:
            scored = await score(self._model, SYSTEM, prefix, [task], role=self.role, budget=self.run_of(ctx).budget,
                                 timeout_s=self._settings.llm_timeout_s)
        except (AttributeError, ScoringUnsupported, ModelFailure):  # the rules' 视情况 stands; an outage shows later
            return
        label = polarity.decided(plans[0].question, scored.diffs[0], polarity.polarity_model()) if scored.diffs else None
        if label:
            plans[0].label, plans[0].rule = label, f"{plans[0].rule}/model"

    def _polarity_calibrated(self) -> bool:
        """The thresholds are the embedded model's they were chosen for; another model's logits are on another scale."""
        return embedded(self.role, self._settings) and Path(model_name(self.role, self._settings).removeprefix(
            LOCAL_PREFIX)).name == polarity.polarity_model().model

    def _common_words(self, law: str | None) -> frozenset[str]:
        """The words every article of `law` in the knowledge base has (only drafting words without one)."""
        return self._factory().common_words(law) if self._factory is not None and law else DRAFTING

    def _embedder(self) -> Embed | None:
        """Cosine of the question to each clause with the knowledge base's embedder (clause vectors cached)."""
        if self._factory is None:
            return None
        return embedder_similarity(self._factory().embedder, self._clause_vectors)

    async def _sentences(self, ctx: InvocationContext, ev: Evidence, plans: list[form.AskPlan],
                         one_law: bool) -> tuple[list[Sentence], list[list]]:
        """The model's sentence per ask, each checked (a dropped one leaves the code's conclusion alone), and the
        (law, article) keys the dropped sentences cited. Returned, not kept on the stage: one stage object serves
        every session of a server, and another question's answer runs while this one waits for the model."""
        if all(fixed_sentence(plan) for plan in plans):  # the code says what it depends on: no model sentence
            return [Sentence(text="", kept=False, why=NOTHING) for _ in plans], []
        prefix = shared_prefix(QUESTION.get(ctx.session.state, ""), form.quoted_articles(plans) or ev.articles,
                               one_law)
        raw = await self.ask(ctx, prefix + sentence_task(plans, one_law), json=False, max_tokens=SENTENCE_TOKENS * len(
            plans), temperature=0.1)
        texts = split_lines(raw, len(plans))
        logits = await self._support_logits(ctx, prefix, [t for t in texts if t])
        articles = "".join(a.text for a in ev.articles)
        sources = QUESTION.get(ctx.session.state, "") + articles
        out, rejected = [], []
        for text, plan in zip(texts, plans):
            checked, record = check(text, ev)
            rejected.extend(record.invalid_keys)
            if not text or record.invalid or record.external_invalid:
                out.append(Sentence(text=text, kept=False, why=NOTHING if not text else "引用了未提供的条文"))
                continue
            # Judged as shown, after the code's label: 「可以，取得个人单独同意的除外。」 would read 「可以。取得个人单独同意的
            # 除外。」, the article's exception copied as if it limited the answer (the question was that very case);
            # and the label's own words are no claim to find in the articles (the check was fitted without them).
            shown = self._strip_label(checked, plan.label)
            if says_nothing(shown) or _COPIED_TASK.search(shown):  # the label or the task's own words, no claim
                out.append(Sentence(text=checked, kept=False, why=NOTHING))
                continue
            if repeats_quote(shown, plan):  # quoted under 依据 already
                out.append(Sentence(text=checked, kept=False, why=REPEATED))
                continue
            if restates_question(shown, plan.question, articles):  # the user knows what they said
                out.append(Sentence(text=checked, kept=False, why=RESTATED))
                continue
            # What a 视情况 depends on is the article's condition: the question's own facts written after 取决于
            # (「取决于境外一家云服务商报价便宜」, fresh-pipl-102) are no condition the law states.
            verdict = judge_sentence(shown, articles if plan.label == "视情况" else sources, plan.label,
                                     logits.get(text), question=plan.question, common=plan.common)
            out.append(Sentence(text=checked, support=verdict.p, kept=verdict.kept, why=verdict.why))
        return out, rejected

    async def _support_logits(self, ctx: InvocationContext, prefix: str, texts: list[str]) -> dict[str, float]:
        """logit(是) − logit(否) per sentence, from a model that can give it (on the prefix it just evaluated)."""
        # A logit the fitted weights ignore (llm weight 0: it did not help on the labelled sentences) is not worth a call.
        if not texts or self._settings.support_llm == "off" or not support_model().llm:
            return {}
        try:
            scored = await score(self._model, SYSTEM, prefix, [SUPPORT_TAIL.format(sentence=t) for t in texts],
                                 role=self.role, budget=self.run_of(ctx).budget, timeout_s=self._settings.llm_timeout_s)
        except (AttributeError, ScoringUnsupported, ModelFailure):
            return {}
        return dict(zip(texts, scored.diffs))

    def _compose(self, pieces: list[str | int], plans: list[form.AskPlan], sentences: list[Sentence],
                 rejected: list[list], ev: Evidence, one_law: bool, kb: str) -> tuple[str, Citations]:
        kept = {i: s.text for i, s in enumerate(sentences) if s.kept}
        text = "".join(p if isinstance(p, str) else self._shown_sentence(kept.get(p, ""), plans[p]) for p in pieces)
        text += prompt.FOOTER.format(basis=form.basis(plans, one_law, kb))
        dropped = sum(1 for s in sentences if not s.kept and s.why not in (REPEATED, RESTATED, NOTHING))
        if dropped:
            text += prompt.DROPPED.format(n=dropped)
        _, record = check(text, ev)
        for law, number in rejected:  # what the dropped sentences cited: recorded, never shown
            record.invalid_keys.append([law, number])
            if number not in record.invalid:
                record.invalid.append(number)
        return text, self._listed(record, form.quoted_articles(plans))

    @classmethod
    def _shown_sentence(cls, sentence: str, plan: form.AskPlan) -> str:
        """What follows the ask's heading: the kept sentence without the label already shown, or, with no sentence
        under 答复 or after 视情况, a line that points to the quoted clause (a bare 「**答复**：」 reads as a broken answer,
        a bare 「视情况。」 as no answer: it must say what it depends on)."""
        if fixed := fixed_sentence(plan):
            return fixed
        shown = cls._strip_label(sentence, plan.label)
        return shown or (prompt.BY_QUOTE.get(plan.label, "") if plan.clause else "")

    @staticmethod
    def _strip_label(sentence: str, label: str) -> str:
        """The sentence after 「结论：不可以。」: its own leading 不可以 is not said twice, nor the task's 「以“视情况”开头」
        that a small model copies before or after it (fresh-ml-013)."""
        lead = rf"^{label}[，,。；;：:\s]*"
        return re.sub(lead, "", _ECHOED_TASK.sub("", re.sub(lead, "", sentence)))

    @staticmethod
    def _text_before_sentences(pieces: list[str | int]) -> str:
        first = next(i for i, p in enumerate(pieces) if isinstance(p, int))
        return "".join(p for p in pieces[:first] if isinstance(p, str))

    def _hedged_text(self, plans: list[form.AskPlan], one_law: bool, kb: str) -> str:
        best = next((p for p in plans if p.article and p.clause), None)
        if best is None:
            return prompt.HEDGED_HEAD.rstrip() + prompt.FOOTER.format(basis=kb)
        listed = form.conditions(best.article, best.clause, best.question, best.common)[:2]
        decides = "；".join(form.clip(c.full) for c in listed)
        return (prompt.HEDGED_HEAD + form.reason(best, one_law) + "\n\n" +
                prompt.HEDGED_DECIDES.format(what=decides or prompt.HEDGED_DEFAULT) +
                prompt.FOOTER.format(basis=form.basis([best], one_law, kb)))

    # ------------------------------------------------------------------ web
    async def _web(self, ctx: InvocationContext, ev: Evidence) -> AsyncGenerator[Event, None]:
        """The model's few sentences from local articles and fenced web results; each sentence checked (citations,
        support by the articles and the web text) before it is shown, and the final text is what was shown."""
        state = ctx.session.state
        web = WEB.get(state)
        request = self.request(shared_prefix(QUESTION.get(state, ""), ev.articles, KB_LAW.get(state) is not None)
                               + prompt.WEB.format(web=web_block(web.results, 10_000), rule=RULE),
                               json=False, max_tokens=self.settings.answer_max_tokens, temperature=0.1)
        stream, streaming, shown = VerifiedStream(ev), self.streaming(ctx), []
        try:
            async for piece in self.stream_text(ctx, request, stream=streaming):
                if ready := stream.feed(piece):
                    shown.append(ready)
                    if streaming:
                        yield self.partial(ctx, ready)
        except ModelFailure as e:
            self.run_of(ctx).errors.append(f"答案生成：{e.user_text}")
            text = articles_verbatim(ev, f"答案生成{e.user_text}")
            yield self._final(ctx, text, check(text, ev)[1], "degraded")
            return
        if rest := stream.flush():
            shown.append(rest)
            if streaming:
                yield self.partial(ctx, rest)
        body = "".join(shown).strip()
        _, record = check(body, ev)
        text = body + prompt.FOOTER_WEB.format(basis=kb_label(state))
        if stream.dropped:
            text += prompt.DROPPED.format(n=len(stream.dropped))
        sentences = [Sentence(text=s) for s in stream.kept] + \
            [Sentence(text=s, kept=False, why="无法由条文或网络资料核实") for s in stream.dropped]
        yield self._final(ctx, text + note(record), record, "web", Answer(action="incorrect", sentences=sentences))

    # ------------------------------------------------------------------ plumbing
    @staticmethod
    def _listed(record: Citations, articles) -> Citations:
        record.listed = [[a.law, a.article] for a in articles]
        return record

    @staticmethod
    def _answer(action: str, plans: list[form.AskPlan], sentences: list[Sentence]) -> Answer:
        asks = [Ask(question=p.question, label=p.label, rule=p.rule, article=p.article.id if p.article else "",
                    clause=p.clause.full if p.clause else "") for p in plans]
        return Answer(action=action, asks=asks, sentences=sentences)

    def notice(self, ctx: InvocationContext, path: str, text: str) -> Event:
        """The final event for a question rejected at intake or a failure the workflow caught: the message as is
        (no model call, nothing to check). The workflow yields it itself when the answer stage cannot run."""
        return self._final(ctx, text, Citations(), path)

    def _final(self, ctx: InvocationContext, text: str, record: Citations, path: str,
               answer: Answer | None = None) -> Event:
        delta = merge(FINAL_ANSWER.delta(text), CITATIONS.delta(record), PATH.delta(path), ANSWER.delta(answer))
        return self.emit(ctx, delta, text)
