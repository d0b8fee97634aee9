"""Retrieval metrics in the sense of sentence-transformers' InformationRetrievalEvaluator (binary relevance).

recall@k = share of the gold items found in the top k; MRR@10 = 1 / rank of the first gold item within 10;
nDCG@10 = DCG / ideal DCG with gains 1/log2(rank + 1).
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

KS = (1, 3, 5, 10)


def recall_at(ranked: Sequence[Hashable], gold: set, k: int) -> float:
    return len(gold.intersection(ranked[:k])) / len(gold) if gold else 0.0


def mrr_at(ranked: Sequence[Hashable], gold: set, k: int = 10) -> float:
    for rank, item in enumerate(ranked[:k], start=1):
        if item in gold:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[Hashable], gold: set, k: int = 10) -> float:
    dcg = sum(1.0 / math.log2(rank + 1) for rank, item in enumerate(ranked[:k], start=1) if item in gold)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold), k) + 1))
    return dcg / ideal if ideal else 0.0


def score_ranking(ranked: Sequence[Hashable], gold: set, ks: Sequence[int] = KS) -> dict[str, float]:
    out = {f"recall@{k}": recall_at(ranked, gold, k) for k in ks}
    out["mrr@10"] = mrr_at(ranked, gold, 10)
    out["ndcg@10"] = ndcg_at(ranked, gold, 10)
    return out


def mean_metrics(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]}
