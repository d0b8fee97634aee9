"""The articles block that the grader and the answer both read, written once so both prompts share it.

Identical blocks after an identical question make the grader's and the answer's prompts share their prefix, so an
in-process model evaluates the articles once per question (llama.cpp prefix matching).
"""
from __future__ import annotations

from ..retrieval.types import Article

# Every prompt after retrieval starts exactly like this (after the shared system message).
PREFIX = """用户问题：{question}

检索到的法条：
{articles}

"""
ARTICLES_IN_PROMPT = 5
ARTICLE_CHARS = 500


def label(article: Article, one_law: bool) -> str:
    """How prompts and answers name an article: 第十条 in a one-law knowledge base, else 《law》第十条."""
    return article.article_cn if one_law else article.title


def articles_block(articles: list[Article], one_law: bool, chars: int = ARTICLE_CHARS) -> str:
    lines = []
    for a in articles:
        text = a.text if len(a.text) <= chars else a.text[:chars] + "…"
        note = "（补充：被引用的条文）" if a.role == "follow_up" else ""
        lines.append(f"【{label(a, one_law)}】{note}{text}")
    return "\n".join(lines) or "（无）"


FOLLOW_UPS_IN_PROMPT = 2
HISTORY_IN_PROMPT = 3


def prompt_articles(articles: list[Article], limit: int = ARTICLES_IN_PROMPT) -> list[Article]:
    """The articles the grader and the answer see: the evidence, then at most three articles the previous turn of
    the conversation cited (judged like the rest), then at most two articles the evidence refers to."""
    evidence = [a for a in articles if a.role == "evidence"][:limit]
    history = [a for a in articles if a.role == "history"][:HISTORY_IN_PROMPT]
    return evidence + history + [a for a in articles if a.role == "follow_up"][:FOLLOW_UPS_IN_PROMPT]


def shared_prefix(question: str, articles: list[Article], one_law: bool) -> str:
    return PREFIX.format(question=question, articles=articles_block(articles, one_law))
