"""Cheap routing signals, computed before any LLM call: chit-chat words, legal topics, named laws, clauses.

The knowledge base's own signal (the best dense similarity of the question) comes from the retriever; these are
the lexical ones. The topic lexicon (`resources/law_topics.json`) maps everyday words to the laws that govern
them, so "离婚时财产怎么分" is recognised as a marriage-law question whatever the knowledge base holds.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from ...legal.laws import national_title, resolve
from ...legal.refs import find_article_refs

_CHITCHAT = re.compile(
    r"^(?:你好|您好|嗨|哈喽|hello|hi|在吗|早上好|晚上好|晚安|谢谢|多谢|感谢|再见|拜拜|好的|嗯)|你是谁|你叫什么|你能做什么|"
    r"能帮我做什么|你会什么|天气|笑话|电影|音乐|小说|吃什么|几点了|聊聊天|讲个故事|推荐一", re.IGNORECASE)
_LEGAL = re.compile(r"法|条|律|权|违|赔|罚|诉|合同|责任|规定|合规|同意|投诉|举报|维权")
# A new ask starts after ？ or ；, or at 另外 / 此外 … that open a sentence ("需要员工另外签同意书吗" is one ask).
_CLAUSE_END = re.compile(r"(?<=[？?；;])|(?<=[，,。])(?=另外|此外|而且|还有一个问题)")
MIN_CLAUSE_CHARS = 6
# A clause that only points back ("它能这样吗？", "这样合法吗？") is part of the ask before it.
_POINTS_BACK = re.compile(r"^(它|他们|她们|这样|这|那|那么|对方)")
# What makes a piece an ask rather than a fact told (「我的合同是两年的」).
_ASKS = re.compile(r"[？?]$|[吗呢么嘛]|能|可以|是否|是不是|要不要|怎么|如何|什么|哪|谁|多少|几|有没有|需不需要|行不行|算不算|合法|违法")
_STOPS = ("？", "?", "；", ";", "。")


@dataclass
class Topics:
    in_kb: list[str] = field(default_factory=list)  # topics one of whose laws the knowledge base holds
    outside: list[str] = field(default_factory=list)  # topics none of whose laws it holds


@lru_cache(maxsize=1)
def topic_lexicon() -> dict[str, dict]:
    text = (resources.files("agentic_rag") / "resources" / "law_topics.json").read_text(encoding="utf-8")
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


@lru_cache(maxsize=1)
def _jieba():
    """The router's own segmenter (not the index's), which knows every topic word as a word: jieba cut 快递单上 as
    快递|单上, so 快递单 crossed a word boundary and a PIPL question about a shop selling the waybill's data read as
    an e-commerce one (3 of 785 labelled texts change, all that one case)."""
    from ...retrieval.tokenizer import LegalTokenizer

    tokenizer = LegalTokenizer()._tokenizer()
    for topic in topic_lexicon().values():
        for word in topic["words"]:
            tokenizer.add_word(word)
    return tokenizer


def token_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for token in _jieba().cut(text):
        spans.append((start, start + len(token)))
        start += len(token)
    return spans


def mentions(text: str, word: str, spans: list[tuple[int, int]]) -> bool:
    """`word` occurs as whole tokens or inside one token, not across a word boundary (工资 is not in 员工|资料)."""
    cuts = {s for s, _ in spans} | {e for _, e in spans}
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if (start in cuts and end in cuts) or any(s <= start and end <= e for s, e in spans):
            return True
        start = text.find(word, start + 1)
    return False


def topics(question: str, kb_laws: list[str]) -> Topics:
    found = Topics()
    text = question.lower()
    spans = token_spans(text)
    for name, topic in topic_lexicon().items():
        if any(mentions(text, w.lower(), spans) for w in topic["words"]):
            in_kb = any(law in kb_laws for law in topic["laws"])
            (found.in_kb if in_kb else found.outside).append(name)
    return found


CHITCHAT_MAX_CHARS = 16  # a longer question that mentions 音乐 or 电影 is about something (音乐App的数据 …)


def is_chitchat(question: str) -> bool:
    q = question.strip()
    return len(q) <= CHITCHAT_MAX_CHARS and bool(_CHITCHAT.search(q)) and not _LEGAL.search(q)


def has_legal_words(question: str) -> bool:
    return bool(_LEGAL.search(question))


def other_laws_named(question: str, kb_laws: list[str]) -> list[str]:
    """National laws the question names (in 《》, or with an article number) that the knowledge base does not hold."""
    named = {r.law for r in find_article_refs(question) if r.law}
    named |= set(re.findall(r"《([^《》]{2,40})》", question))
    return sorted(n for n in named if resolve(n, kb_laws) is None and national_title(n) is not None)


def clauses(question: str) -> list[str]:
    """The question split into asks (？ ； 另外 …); clauses too short to stand alone are joined to the previous, and
    a fact told without asking (「…约定试用期6个月？我的合同是两年的」) to the ask it tells about: the one before it,
    else the next."""
    parts: list[str] = []
    told = ""
    for piece in (p.strip(" ，,。") for p in _CLAUSE_END.split(question)):
        if not piece:
            continue
        if not _ASKS.search(piece):  # joined after a comma where the text before it ends without a stop
            if parts:
                parts[-1] += piece if parts[-1].endswith(_STOPS) else "，" + piece
            else:
                told += piece if piece.endswith(_STOPS) else piece + "，"
        elif parts and (len(piece) < MIN_CLAUSE_CHARS or _POINTS_BACK.match(piece)):
            parts[-1] += piece
        else:
            parts.append(told + piece)
            told = ""
    return parts + [told.rstrip("，")] if told else parts
