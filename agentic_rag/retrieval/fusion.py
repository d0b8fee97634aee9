"""Weighted Reciprocal Rank Fusion over channels and query variants.

score(d) = Σ_lists  w_list / (k + rank_list(d))   with w_list = w_channel(query type) × w_query(variant)

RRF uses ranks, not raw scores, so BM25 scores and cosines never need to be put on one scale. Equal weights
lose to the dense channel alone on colloquial questions (the keyword arm pushes wrong articles up), hence the
per-query-type channel weights below, chosen by cross-validation (see the comment there).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Per query type, the weight of each retrieval channel in the fusion. Chosen by 5-fold cross-validation on the PIPL
# eval set (eval/tune_fusion.py --folds 5, eval/results/fusion_cv.json): per analyser query type, each fold's
# weights were picked on the other folds among vector 1 × bm25/gram in {0, .02, .05, .1, .2, .35, .5, 1}, keeping
# every metric >= the vector channel alone. Out of fold no weight beat the vector channel: the weights chosen
# in-sample before (bm25 0.05 on semantic questions, 0.1 + gram 0.05 on keyword ones; R@5 0.884 vs 0.881, one
# question) came out at R@5 0.870 / MRR@10 0.822 held out vs 0.881 / 0.825 for vector alone. So the default is
# the vector order: the lexical channels get DENSE_FIRST, a weight too small to reorder anything the dense list
# ranked (for one query text, eps / 61 per lexical list < the smallest RRF gap between two dense ranks within
# CHANNEL_CANDIDATES; tests/test_fusion.py checks it) — they only order the documents the dense list did not
# return, after it. Exact references are looked up and pinned first in any case. A corpus where the lexical
# channels do help (the national LawRefBook index: bench/stard.py's cross-validated fused_cv) sets its own
# weights with FUSION_WEIGHTS.
DENSE_FIRST = 0.001
CHANNEL_WEIGHTS: dict[str, dict[str, float]] = {
    "semantic": {"vector": 1.0, "bm25": DENSE_FIRST, "gram": DENSE_FIRST},
    "keyword": {"vector": 1.0, "bm25": DENSE_FIRST, "gram": DENSE_FIRST},
    "exact": {"vector": 1.0, "bm25": DENSE_FIRST, "gram": DENSE_FIRST},
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
