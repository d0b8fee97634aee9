"""Weighted Reciprocal Rank Fusion over channels and query variants.

score(d) = Σ_lists  w_list / (k + rank_list(d))   with w_list = w_channel(query type) × w_query(variant)

RRF uses ranks, not raw scores, so BM25 scores and cosines never need to be put on one scale. Equal weights
lose to the dense channel alone on colloquial questions (the keyword arm pushes wrong articles up), hence the
per-query-type channel weights below; they were chosen on the PIPL eval set (numbers in README).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Per query type, the weight of each retrieval channel in the fusion, chosen with eval/tune_fusion.py on the PIPL
# eval set under one rule: no metric (recall@1/3/5/10, MRR@10, nDCG@10) of any question type may fall below the
# dense channel alone. RRF is flat at the top (1/61 vs 1/62), so any BM25 weight above ~0.05 already swaps dense
# top ranks on colloquial questions (weight 0.35: MRR@10 0.740 → 0.666); at 0.05 it lifts recall@1 0.598 → 0.615
# and multi-intent recall@5 0.867 → 0.900. Exact references are looked up and pinned first in any case.
CHANNEL_WEIGHTS: dict[str, dict[str, float]] = {
    "semantic": {"vector": 1.0, "bm25": 0.05, "gram": 0.0},
    "keyword": {"vector": 1.0, "bm25": 0.1, "gram": 0.05},
    "exact": {"vector": 1.0, "bm25": 0.05, "gram": 0.0},
}


@dataclass
class RankedList:
    """One channel's ranking for one query variant: (document index, raw channel score), best first."""

    channel: str
    weight: float
    hits: list[tuple[int, float]]


@dataclass
class FusedHit:
    doc: int
    score: float
    # best rank (1-based) and its raw score per channel, over all query variants
    channels: dict[str, dict[str, float]] = field(default_factory=dict)


def weighted_rrf(lists: list[RankedList], k: int = 60) -> list[FusedHit]:
    """Fuse ranked lists; a document listed twice in one list counts once, at its best rank."""
    fused: dict[int, FusedHit] = {}
    for ranked in lists:
        if ranked.weight <= 0:
            continue
        seen: set[int] = set()
        for rank, (doc, raw) in enumerate(ranked.hits, start=1):
            if doc in seen:
                continue
            seen.add(doc)
            hit = fused.setdefault(doc, FusedHit(doc, 0.0))
            hit.score += ranked.weight / (k + rank)
            best = hit.channels.get(ranked.channel)
            if best is None or rank < best["rank"]:
                hit.channels[ranked.channel] = {"rank": rank, "score": float(raw)}
    return sorted(fused.values(), key=lambda h: (-h.score, h.doc))
