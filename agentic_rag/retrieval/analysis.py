"""What kind of question is this? Exact article lookup, keyword query, or a semantic (colloquial) question.

The type decides the fusion weights (`fusion.CHANNEL_WEIGHTS`, chosen by cross-validation: docs/evaluation.md,
"Retrieval"): exact references are looked up directly and pinned first; the other types lean on the dense arm,
the keyword arms breaking its ties, because the keyword arms rank wrong articles high on colloquial questions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..legal.refs import ArticleRef, english_refs, find_article_refs, strip_english_refs, strip_refs
from .types import QueryType


# What may surround a bare reference without it being more than a lookup ("第28条是什么内容？").
_LOOKUP_FILLER = re.compile(
    r"[\s，,。.？?！!：:、《》“”\"'（）()]|中华人民共和国|规定|内容|原文|全文|条文|是什么|说了什么|讲了什么|讲的是|说的是|"
    r"怎么|如何|什么|啥|意思|哪些|具体|请问|请|查询|查|看看|一下|帮我|告诉我|关于|的|了|吗|呢|是|说|讲|写|法条|法律|"
    r"和|与|及|分别|各|都|"  # 「第十条和第十三条分别说了什么」: two lookups
    r"(?i:\b(?:what|what's|whats|does|do|is|are|the|say|says|said|show|me|text|content|contents|of|please|tell|"
    r"about|and)\b)"  # 「What does article 47 say?」
)
_QUESTION_MARKERS = re.compile(r"[？?吗呢]|怎么|如何|什么|能不能|可不可以|是否|为什么|哪些|我|你|他|她|被|给|把")


@dataclass
class QueryAnalysis:
    query: str
    type: QueryType
    refs: list[ArticleRef] = field(default_factory=list)

    @property
    def articles(self) -> list[int]:
        return [r.article for r in self.refs]


def analyze_query(query: str, legal_terms: frozenset[str] = frozenset()) -> QueryAnalysis:
    """Classify a question. `legal_terms` (the legal dictionary) helps spot keyword queries."""
    q = query.strip()
    refs = find_article_refs(q) or (english_refs(q) if is_pure_lookup(q) else [])
    if refs:
        return QueryAnalysis(q, "exact", refs)
    if _is_keyword_query(q, legal_terms):
        return QueryAnalysis(q, "keyword")
    return QueryAnalysis(q, "semantic")


def is_pure_lookup(query: str) -> bool:
    """True when the question is nothing but an article reference ("第28条是什么内容", "What does article 47 say?")."""
    rest = strip_english_refs(strip_refs(query))
    return rest != query and not _LOOKUP_FILLER.sub("", rest)


def _is_keyword_query(q: str, legal_terms: frozenset[str]) -> bool:
    """Short, no question words, made of terms: "敏感个人信息 单独同意", "自动化决策 拒绝", "匿名化定义"."""
    if _QUESTION_MARKERS.search(q) or len(q) > 24:
        return False
    parts = [p for p in re.split(r"[\s,，、;；/+]+", q) if p]
    if len(parts) >= 2:
        return True
    return len(q) <= 12 and any(term in q for term in legal_terms if len(term) >= 3)
