"""bench/stard.py's vectorised fusion replay equals weighted_rrf, and the cross-validation reports out-of-fold
numbers with weights chosen on the other folds (synthetic rankings: no data, no model)."""
from __future__ import annotations

import random
import sys

import pytest

from agentic_rag.config import PROJECT_ROOT
from agentic_rag.retrieval.fusion import RankedList, weighted_rrf

sys.path.insert(0, str(PROJECT_ROOT / "bench"))
import stard


def _synthetic(n_docs=300, n_q=60, seed=0):
    rng = random.Random(seed)
    ids = [f"d{i}" for i in range(n_docs)]
    questions = [{"gold": {f"d{rng.randrange(n_docs)}", f"d{rng.randrange(n_docs)}"}} for _ in range(n_q)]

    def rank(q, noise):
        g = int(min(q["gold"])[1:])
        r = [x for x in rng.sample(range(n_docs), 120) if x != g]
        r.insert(min(int(rng.expovariate(1 / noise)), 99), g)
        return r[:100]

    rankings = {ch: [rank(q, n) for q in questions] for ch, n in (("dense", 5), ("bm25", 15), ("gram", 30))}
    return ids, questions, rankings


@pytest.mark.parametrize("w", [(1.0, 0.35, 0.5), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (1.0, 0.02, 1.5), (0.0, 0.0, 1.0)])
def test_replay_equals_weighted_rrf(w):
    ids, questions, rankings = _synthetic()
    got = stard.replay_fusions(rankings, ids, questions, [w])[0]
    for qi, q in enumerate(questions):
        fused = weighted_rrf([RankedList(ch, wt, [(d, 0.0) for d in rankings[ch][qi]])
                              for ch, wt in zip(stard.CV_CHANNELS, w)], k=60)
        want = stard._metrics([ids[h.doc] for h in fused[:stard.DEPTH]], q["gold"])
        assert list(got[qi]) == pytest.approx([want["recall@10"], want["recall@100"], want["mrr@10"]])


def test_cv_fusion_reports_out_of_fold_numbers_and_per_fold_checks():
    ids, questions, rankings = _synthetic()
    info = {"matchers": {}}
    stard.cv_fusion(info, rankings, ids, questions, folds=5)
    m, cv = info["matchers"]["fused_cv"], info["cv"]
    assert set(m) >= {"recall@10", "recall@100", "mrr@10"} and "out-of-fold" in m["note"]
    assert len(cv["per_fold"]) == 5 and sum(f["n_test"] for f in cv["per_fold"]) == len(questions)
    for fold in cv["per_fold"]:
        assert set(fold["weights"]) == set(stard.CV_CHANNELS)
        assert set(fold["held_out_singles"]) == set(stard.CV_CHANNELS)
    # here dense is clearly best alone and the others add signal: fusion beats it out of fold
    dense_mrr = sum(f["held_out_singles"]["dense"]["mrr@10"] * f["n_test"] for f in cv["per_fold"]) / len(questions)
    assert m["mrr@10"] > dense_mrr


def test_a_fusion_that_lowers_any_metric_below_dense_is_not_chosen():
    import numpy as np

    means = np.array([[0.50, 0.70, 0.40],    # dense alone
                      [0.52, 0.80, 0.39],    # best objective, but MRR@10 below dense
                      [0.51, 0.72, 0.41]])   # no metric below dense
    assert stard.choose_combo(means, dense=0) == 2
    assert stard.choose_combo(means[:2], dense=0) == 0  # nothing qualifies: dense alone
