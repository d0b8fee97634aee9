"""The words a law says in nearly every article: 个人信息处理者 in the PIPL, 用人单位 and 劳动者 in the labour contract
law, 消费者 and 经营者 in the consumer law. A question and a clause that share only these share nothing about the
case, so the answer's checks (is this condition about the question? does the question meet it? does it tell of this
duty being skipped?) leave them out. They are read from the knowledge base's own articles, so a team's own statute
collection gets its own, and legal drafting's words (应当、不得、可以、规定、条件) are always among them.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..retrieval.tokenizer import hanzi_bigrams

DRAFTING: frozenset[str] = frozenset(("应当", "不得", "可以", "规定", "条件"))
# In at least this share of a law's articles. The subject words of the six laws of the eval sets lie at 0.43-0.97 of
# their law's articles (理个 of 处理个人信息 0.43 in the PIPL), the words that tell a case apart (同意、删除、
# 试用期、退货) below 0.25.
COMMON_SHARE = 0.4
MIN_ARTICLES = 20  # fewer articles tell nothing reliable about what a law says everywhere


def common_words(texts: Sequence[str]) -> frozenset[str]:
    """The 2-grams (`hanzi_bigrams`) in at least COMMON_SHARE of a law's article texts, with DRAFTING."""
    if len(texts) < MIN_ARTICLES:
        return DRAFTING
    counts = Counter(b for text in texts for b in hanzi_bigrams(text))
    return DRAFTING | {b for b, n in counts.items() if n >= COMMON_SHARE * len(texts)}
