"""Verdicts without a model, where the case is clear: nothing retrieved, an off-topic similarity, a pure lookup
found or of articles the law does not have, the sanction for breaching the article the conversation is about."""
from __future__ import annotations

import re

from ...legal.modality import imposes_penalty
from ...legal.numerals import article_cn
from ...legal.refs import find_article_refs
from ...retrieval.analysis import is_pure_lookup
from ...state import DIMENSIONS, GradeSource, Quality, Retrieval, Verdict
from ..answer.conclusion import asks_penalty

# A sanction of breaching the law at large, whatever its article: 「违反本法规定处理个人信息，或者处理个人信息未履行本法
# 规定的个人信息保护义务的，…」 (not 「违反本法规定，未经许可，擅自经营劳务派遣业务的」, whose case is one conduct).
_AT_LARGE = re.compile(r"^违反本法规定[^，。；]*(，或者[^，。；]*本法规定[^，。；]*)?的，")


def passed(threshold: int, source: GradeSource, reason: str, relevant: list[str]) -> Quality:
    """A PASS a rule is sure of: full marks, `reason` for every dimension."""
    return Quality(scores=dict.fromkeys(DIMENSIONS, 10.0), reasons=dict.fromkeys(DIMENSIONS, reason), total=40.0,
                   threshold=threshold, passed=True, verdict="pass", source=source, relevant=relevant,
                   action="correct")


def failed(threshold: int, verdict: Verdict, source: GradeSource, error: str) -> Quality:
    return Quality(scores={d: 0.0 for d in DIMENSIONS}, total=0.0, threshold=threshold, passed=False,
                   verdict=verdict, source=source, error=error, action="incorrect")


def rule_verdict(question: str, retrieval: Retrieval, threshold: int, min_vector_score: float,
                 question_cosine: float | None = None) -> Quality | None:
    """A verdict without the LLM when the case is clear, else None. `question_cosine` is the router's cosine of the
    question when retrieval searched other words in its place (a clarification reply's facts): the floor judges the
    question, which the router let through, not the reply alone (stop 40: three replies with a gold article first
    were refused at cosine 0.18-0.21 while their merged question stood at ≥ 0.29)."""
    if not retrieval.articles:
        return failed(threshold, "fail", "rule:no_results", "未检索到任何条文")
    best = retrieval.max_vector_score
    if best is not None and question_cosine is not None:
        best = max(best, question_cosine)
    if retrieval.query_type != "exact" and best is not None and best < min_vector_score:
        return failed(threshold, "fail", "rule:low_relevance",
                      f"检索到的条文与问题相关度过低（最高相似度 {best:.2f} < {min_vector_score:.2f}），"
                      "问题可能不在知识库范围内")
    pure = retrieval.query_type == "exact" and is_pure_lookup(question)
    if pure and retrieval.refs and set(retrieval.refs) <= set(retrieval.absent):
        # 「第七十五条是什么」 of a 74-article law: said so at once (no grader, no retry, no web search for it)
        return failed(threshold, "fail", "rule:no_such_article",
                      "知识库中没有" + "、".join(article_cn(n) for n in retrieval.absent))
    looked_up = {a.article for a in retrieval.articles if a.pinned}
    if pure and set(retrieval.refs) <= looked_up:
        return passed(threshold, "rule:exact_lookup", "问题即为查询该条文，已直接命中",
                      [a.id for a in retrieval.articles if a.pinned])
    return None


def confirmed_verdict(retrieval: Retrieval, threshold: int) -> Quality | None:
    """PASS without the LLM on the article the user picked from a refusal's list: the user says it is the case
    (the question is the one refused; the answer is decided from that article's own clauses)."""
    chosen = [a.id for a in retrieval.articles if a.search_type == "confirmed"]
    if not chosen:
        return None
    return passed(threshold, "rule:confirmed", "用户确认了适用的条文", chosen)


def sanction_verdict(question: str, retrieval: Retrieval, previous: list[tuple[str, int]],
                     threshold: int) -> Quality | None:
    """PASS without the model on a follow-up asking the sanction (「违反了会怎么样？」 after 「第十条是什么？」) where
    retrieval found an article of the previous turn's law that sanctions breaching that article by number (「违反本法第
    二十一条规定…的，由…责令限期改正」) or, failing one, breaching the law at large. The gate judges articles against
    the whole rule-form question, mostly its previous ask, and refused these with the sanction retrieved."""
    if not previous or not asks_penalty(question):
        return None
    laws = {law for law, _ in previous}
    sanctions = [a for a in retrieval.articles if a.law in laws and imposes_penalty(a.text)]
    named = [a for a in sanctions if any((a.law, r.article) in previous for r in find_article_refs(a.text))]
    chosen = named or [a for a in sanctions if _AT_LARGE.match(a.text)]
    if not chosen:
        return None
    breached = [a for a in retrieval.articles if a.key in previous]
    return passed(threshold, "rule:sanction_follow_up", "追问上一轮条文的法律责任", [a.id for a in chosen + breached])
