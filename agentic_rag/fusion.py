"""Weighted Reciprocal Rank Fusion over channels and query variants.

score(d) = Σ_lists  w_list / (k + rank_list(d))   with w_list = w_channel(query type) × w_query(variant)

RRF uses ranks, not raw scores, so BM25 scores and cosines never need to be put on one scale. Equal weights
lose to the dense channel alone on colloquial questions (the keyword arm pushes wrong articles up), hence the
per-query-type channel weights below; they were chosen on the PIPL eval set (numbers in README).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Per query type, the weight of each retrieval channel in the fusion (eval/tune_fusion.py, PIPL eval set):
# on colloquial questions any BM25 weight above ~0.1 lowers MRR@10 (0.740 → 0.666 at 0.35), while 0.1 lifts
# recall@10 (0.869 → 0.910) at equal recall@5; on keyword queries the keyword arms may weigh more at no cost.
# Exact references are looked up and pinned first, so their fusion only orders the remaining slots.
CHANNEL_WEIGHTS: dict[str, dict[str, float]] = {
    "semantic": {"vector": 1.0, "bm25": 0.1, "gram": 0.0},
    "keyword": {"vector": 1.0, "bm25": 0.35, "gram": 0.1},
    "exact": {"vector": 1.0, "bm25": 0.1, "gram": 0.0},
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
