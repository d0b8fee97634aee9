"""What kind of question is this? Exact article lookup, keyword query, or a semantic (colloquial) question.

The type decides the fusion weights (see `fusion.CHANNEL_WEIGHTS`): exact references are looked up directly
and pinned first; keyword queries trust the BM25 arm as much as the dense arm; colloquial questions lean on
the dense arm, because the keyword arm ranks wrong articles high on them (measured, see README).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .numerals import CHINESE_NUMERAL_CHARS, cn_to_int

QueryType = Literal["exact", "keyword", "semantic"]

# 第二十八条 / 第28条 / 第 28 条 / 个人信息保护法第29条 / 二十八条 / 28条
_REF_RE = re.compile(
    rf"(?:《?(?P<law>(?:(?![第条])[\u4e00-\u9fff]){{1,30}}?(?:法|法典|典|条例|规定|办法|解释))》?\s*)?"
    rf"(?P<di>第)?\s*(?P<num>[0-9]{{1,4}}|[{CHINESE_NUMERAL_CHARS}]{{1,8}})\s*条"
)
# What may surround a bare reference without it being more than a lookup ("第28条是什么内容？").
_LOOKUP_FILLER = re.compile(
    r"[\s，,。.？?！!：:、《》“”\"'（）()]|中华人民共和国|规定|内容|原文|全文|条文|是什么|说了什么|讲了什么|讲的是|说的是|"
    r"怎么|如何|什么|哪些|具体|请问|请|查询|查|看看|一下|帮我|告诉我|的|了|吗|呢|是|说|讲|写|法条|法律"
)
_QUESTION_MARKERS = re.compile(r"[？?吗呢]|怎么|如何|什么|能不能|可不可以|是否|为什么|哪些|我|你|他|她|被|给|把")


@dataclass
class ArticleRef:
    article: int
    law: str | None = None  # as written in the question (e.g. 个人信息保护法), None when not named
    text: str = ""  # the matched span, e.g. 《民法典》第一千零三十四条


@dataclass
class QueryAnalysis:
    query: str
    type: QueryType
    refs: list[ArticleRef] = field(default_factory=list)

    @property
    def articles(self) -> list[int]:
        return [r.article for r in self.refs]


def find_article_refs(query: str) -> list[ArticleRef]:
    """Article references in the question, in order, without duplicates.

    A bare Chinese numeral without 第 counts only when it has a unit (二十八条), so 一条短信 is not article 1.
    """
    refs: list[ArticleRef] = []
    for m in _REF_RE.finditer(query):
        num = m["num"]
        if not m["di"] and not num.isdigit() and not re.search("[十百千]", num):
            continue
        try:
            n = cn_to_int(num)
        except ValueError:
            continue
        if n <= 0:
            continue
        law = m["law"] if m["law"] and not m["law"].endswith("本法") else None  # 本法 = the law being read
        ref = ArticleRef(n, law, m.group(0).strip())
        if all(r.article != ref.article or r.law != ref.law for r in refs):
            refs.append(ref)
    return refs


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def law_matches(named: str, law: str) -> bool:
    """Does the law named in a question ("个保法", "请给出个人信息保护法") denote `law`?

    The name as captured may carry leading words of the sentence, so some suffix of it (3+ characters, or the
    whole name) must be an in-order abbreviation of the law's title: 个保法 ⊑ 个人信息保护法, while 刑法 or
    民法典 do not denote the PIPL.
    """
    law = law.removeprefix("中华人民共和国")
    named = named.removeprefix("中华人民共和国")
    for start in range(len(named)):
        suffix = named[start:]
        if (len(suffix) >= 3 or start == 0) and _is_subsequence(suffix, law):
            return True
    return False


def analyze_query(query: str, legal_terms: frozenset[str] = frozenset()) -> QueryAnalysis:
    """Classify a question. `legal_terms` (the legal dictionary) helps spot keyword queries."""
    q = query.strip()
    refs = find_article_refs(q)
    if refs:
        return QueryAnalysis(q, "exact", refs)
    if _is_keyword_query(q, legal_terms):
        return QueryAnalysis(q, "keyword")
    return QueryAnalysis(q, "semantic")


def is_pure_lookup(query: str) -> bool:
    """True when the question is nothing but an article reference ("第28条是什么内容")."""
    rest = _REF_RE.sub("", query)
    return not _LOOKUP_FILLER.sub("", rest)


def _is_keyword_query(q: str, legal_terms: frozenset[str]) -> bool:
    """Short, no question words, made of terms: "敏感个人信息 单独同意", "自动化决策 拒绝", "匿名化定义"."""
    if _QUESTION_MARKERS.search(q) or len(q) > 24:
        return False
    parts = [p for p in re.split(r"[\s,，、;；/+]+", q) if p]
    if len(parts) >= 2:
        return True
    return len(q) <= 12 and any(term in q for term in legal_terms if len(term) >= 3)
