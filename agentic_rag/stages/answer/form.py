"""The answer form, written by code around the one sentence per ask that the model writes.

    **结论**：不可以。<the model's sentence, checked>
    **依据**：第十条规定：“<the deciding clause, verbatim>”
    **条件与例外**：<the article's own conditions and exceptions, verbatim>
    **您可以**：<what a given article lets the user do, verbatim>
    > 以上依据……作答

`segments` lays the text out as code text and placeholders for the model's sentences, so the answer can stream:
everything before the first placeholder is shown at once, each sentence once it is checked.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ...legal.modality import Clause, clauses, holds_a_list
from ...legal.numerals import int_to_cn
from ...legal.vocabulary import DRAFTING
from ...retrieval.types import Article
from ..evidence import label
from . import prompt
from .conclusion import shown_label
from .deciding import conditions, remedies

QUOTE_CHARS = 160  # a longer clause is cut (with …): the full article is one click away in the retrieval table
LIST_QUOTE_CHARS = 360  # a list is the answer to 「哪些…」: cut at 160, 消保法第二十五条 lost its last items


@dataclass
class AskPlan:
    """One ask as the answer will treat it: its label, the clause that decides it and the model's sentence."""

    question: str
    label: str
    rule: str
    article: Article | None = None
    clause: Clause | None = None
    sentence: str = ""  # filled once the model's sentence has passed the check
    extra: list[tuple[Article, Clause]] = field(default_factory=list)  # a second governing article's clause
    common: frozenset[str] = DRAFTING  # the words every article of the article's law has (`legal.vocabulary`)


def clip(text: str, limit: int | None = None) -> str:
    limit = limit or (LIST_QUOTE_CHARS if holds_a_list(text) else QUOTE_CHARS)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(article: Article, clause: Clause, one_law: bool) -> str:
    return prompt.QUOTE.format(title=label(article, one_law), text=clip(clause.quote.rstrip("。；;")))


def reason(plan: AskPlan, one_law: bool) -> str:
    pairs = ([(plan.article, plan.clause)] if plan.article and plan.clause else []) + plan.extra
    return prompt.REASON.format(quotes="；".join(quote(a, c, one_law) for a, c in pairs) + "。") if pairs else ""


def segments(plans: list[AskPlan], one_law: bool, articles: list[Article]) -> list[str | int]:
    """The answer as text pieces and, where the model's sentence for ask i goes, the int i."""
    out: list[str | int] = []
    for i, plan in enumerate(plans):
        head = prompt.ASK.format(n=i + 1, question=plan.question) if len(plans) > 1 else ""
        shown = shown_label(plan.question, plan.label)
        opening = prompt.EXPLAIN if plan.label == "说明" else prompt.CONCLUSION.format(label=shown)
        out += [("\n\n" if i else "") + head + opening, i]
        if text := reason(plan, one_law):
            out.append("\n\n" + text)
    out.append(tail(plans, one_law, articles))
    return out


def tail(plans: list[AskPlan], one_law: bool, articles: list[Article]) -> str:
    """Conditions and exceptions, then what the user can do, each quoted once."""
    used = {c.quote for p in plans if p.clause for c in [p.clause]} | {c.quote for p in plans for _, c in p.extra}
    conds = []
    for p in plans:
        if p.article and p.clause:
            # a clause whose words are already quoted (its own quote, or a list quoted whole) is shown already
            listed = [c for c in conditions(p.article, p.clause, p.question, p.common)
                      if not any(c.text in q for q in used)][:2]
            conds += [(p.article, c) for c in listed]
            used |= {c.quote for _, c in conds}
    text = ""
    if conds:
        text += "\n\n" + prompt.CONDITIONS.format(quotes="；".join(quote(a, c, one_law) for a, c in conds[:3]) + "。")
    actions = remedies(articles, used)[:2]
    if actions:
        text += "\n\n" + prompt.ACTIONS.format(quotes="；".join(quote(a, c, one_law) for a, c in actions) + "。")
    return text


def basis(plans: list[AskPlan], one_law: bool, kb: str) -> str:
    titles = list(dict.fromkeys(label(a, one_law) for p in plans for a in [p.article, *[x for x, _ in p.extra]] if a))
    return (kb if one_law else "") + "、".join(titles) if titles else kb


def quoted_articles(plans: list[AskPlan]) -> list[Article]:
    return list({a.id: a for p in plans for a in [p.article, *[x for x, _ in p.extra]] if a}.values())


def lookup(articles: list[Article], one_law: bool, items: Mapping[int, int] | None = None) -> str:
    """The articles verbatim; an item the question names (第十三条第一款第二项) is shown first, with its list's
    introduction, when the article has exactly one item of that number."""
    return "\n\n".join(_looked_up(a, one_law, (items or {}).get(a.article)) for a in articles)


def _looked_up(article: Article, one_law: bool, item: int | None) -> str:
    whole = prompt.LOOKUP.format(title=label(article, one_law), text=article.text)
    asked = [c for c in clauses(article.text) if item and c.item == f"（{int_to_cn(item)}）"]
    return prompt.LOOKUP_ITEM.format(item=int_to_cn(item), clause=asked[0].full) + "\n\n" + whole \
        if len(asked) == 1 else whole
