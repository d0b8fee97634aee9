"""Weighted reciprocal rank fusion."""
from __future__ import annotations

import pytest

from agentic_rag.retrieval.fusion import CHANNEL_WEIGHTS, RankedList, weighted_rrf


def _order(fused) -> list[int]:
    return [h.doc for h in fused]


def test_single_list_scores_are_reciprocal_ranks():
    fused = weighted_rrf([RankedList("vector", 1.0, [(7, 0.9), (3, 0.8), (5, 0.1)])], k=60)
    assert _order(fused) == [7, 3, 5]
    assert [h.score for h in fused] == pytest.approx([1 / 61, 1 / 62, 1 / 63])


def test_weight_two_list_beats_weight_one_list():
    a = [(1, 0.9), (2, 0.5)]
    b = [(2, 12.0), (1, 3.0)]
    equal = weighted_rrf([RankedList("vector", 1.0, a), RankedList("bm25", 1.0, b)])
    assert equal[0].score == pytest.approx(equal[1].score)
    assert _order(equal) == [1, 2]  # exact tie: lower doc index first
    assert _order(weighted_rrf([RankedList("vector", 1.0, a), RankedList("bm25", 2.0, b)])) == [2, 1]
    assert _order(weighted_rrf([RankedList("vector", 2.0, a), RankedList("bm25", 1.0, b)])) == [1, 2]


def test_scores_sum_weights_over_lists():
    fused = weighted_rrf([RankedList("vector", 1.0, [(4, 0.7), (9, 0.6)]),
                          RankedList("bm25", 0.5, [(9, 5.0)])], k=10)
    by_doc = {h.doc: h.score for h in fused}
    assert by_doc[4] == pytest.approx(1 / 11)
    assert by_doc[9] == pytest.approx(1 / 12 + 0.5 / 11)
    assert _order(fused) == [9, 4]


def test_k_parameter_changes_the_fused_order():
    # doc 1: rank 1 in one list only; doc 2: rank 4 in both lists. 1/(k+1) vs 2/(k+4): doc 2 wins iff k > 2.
    lists = [RankedList("vector", 1.0, [(1, 0.9), (11, 0.8), (12, 0.7), (2, 0.6)]),
             RankedList("bm25", 1.0, [(21, 5.0), (22, 4.0), (23, 3.0), (2, 2.0)])]
    small_k = {h.doc: h.score for h in weighted_rrf(lists, k=1)}
    large_k = {h.doc: h.score for h in weighted_rrf(lists, k=60)}
    assert small_k[1] == pytest.approx(1 / 2) and small_k[2] == pytest.approx(2 / 5)
    assert small_k[1] > small_k[2]
    assert large_k[1] == pytest.approx(1 / 61) and large_k[2] == pytest.approx(2 / 64)
    assert large_k[2] > large_k[1]
    assert _order(weighted_rrf(lists, k=60))[0] == 2
    assert weighted_rrf([RankedList("vector", 1.0, [(1, 0.9), (2, 0.8)])])[0].score == pytest.approx(1 / 61)  # default


def test_duplicate_in_one_list_counts_once_at_best_rank():
    fused = weighted_rrf([RankedList("bm25", 1.0, [(5, 9.0), (6, 8.0), (5, 7.0), (5, 1.0)])], k=60)
    by_doc = {h.doc: h for h in fused}
    assert by_doc[5].score == pytest.approx(1 / 61)
    assert by_doc[6].score == pytest.approx(1 / 62)
    assert by_doc[5].channels["bm25"] == {"rank": 1, "score": 9.0}
    assert len(fused) == 2


def test_channels_record_best_rank_and_its_raw_score_across_lists():
    fused = weighted_rrf([
        RankedList("vector", 1.0, [(1, 0.9), (2, 0.8), (3, 0.7)]),  # original question
        RankedList("vector", 0.6, [(3, 0.95), (1, 0.5)]),  # a variant: doc 3 first
        RankedList("bm25", 0.1, [(2, 11.0), (3, 4.0)]),
    ])
    by_doc = {h.doc: h for h in fused}
    assert by_doc[3].channels == {"vector": {"rank": 1, "score": 0.95}, "bm25": {"rank": 2, "score": 4.0}}
    assert by_doc[1].channels == {"vector": {"rank": 1, "score": 0.9}}  # rank 1 kept over the later rank 2
    assert by_doc[2].channels == {"vector": {"rank": 2, "score": 0.8}, "bm25": {"rank": 1, "score": 11.0}}
    assert by_doc[3].score == pytest.approx(1 / 63 + 0.6 / 61 + 0.1 / 62)


def test_zero_weight_lists_are_ignored():
    fused = weighted_rrf([RankedList("vector", 1.0, [(1, 0.9)]),
                          RankedList("gram", 0.0, [(2, 30.0), (1, 20.0)]),
                          RankedList("bm25", -1.0, [(3, 1.0)])])
    assert _order(fused) == [1]
    assert fused[0].channels == {"vector": {"rank": 1, "score": 0.9}}  # no gram channel recorded
    assert weighted_rrf([]) == []
    assert weighted_rrf([RankedList("gram", 0.0, [(2, 30.0)])]) == []


def test_channel_weights_favour_the_dense_channel_on_semantic_questions():
    for qtype in ("semantic", "keyword", "exact"):
        w = CHANNEL_WEIGHTS[qtype]
        assert set(w) == {"vector", "bm25", "gram"}
        assert w["vector"] >= w["bm25"] >= 0 and w["vector"] >= w["gram"] >= 0


@pytest.mark.parametrize("qtype", ["semantic", "keyword", "exact"])
def test_default_weights_keep_the_dense_order_and_append_lexical_only_hits(qtype):
    """The cross-validated default (fusion.py): lexical channels never reorder the dense list of one query text."""
    import random

    w = CHANNEL_WEIGHTS[qtype]
    rng = random.Random(7)
    depth = 30  # CHANNEL_CANDIDATES
    for _ in range(200):
        dense = rng.sample(range(100), depth)
        bm25, gram = rng.sample(range(100), depth), rng.sample(range(100), depth)
        fused = weighted_rrf([RankedList("vector", w["vector"], [(d, 0.0) for d in dense]),
                              RankedList("bm25", w["bm25"], [(d, 0.0) for d in bm25]),
                              RankedList("gram", w["gram"], [(d, 0.0) for d in gram])])
        order = _order(fused)
        assert order[:depth] == dense
        assert set(order[depth:]) == (set(bm25) | set(gram)) - set(dense)
