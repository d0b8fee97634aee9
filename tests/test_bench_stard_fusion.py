"""bench/stard.py's vectorised fusion replay equals weighted_rrf and an independent RRF written here (and hand-worked
numbers), and the cross-validation reports out-of-fold numbers with weights chosen on the other folds, which the
reference reproduces (synthetic rankings: no data, no model)."""
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


def reference_rrf(lists: list[tuple[float, list[int]]], k: int = 60) -> list[int]:
    """Documents by Σ w / (k + rank), rank from 1, a document's first place in a list only; lists of weight 0 add
    nothing (their documents are not ranked); ties by lower document index."""
    score: dict[int, float] = {}
    for weight, ranking in lists:
        if weight <= 0:
            continue
        for rank, doc in enumerate(dict.fromkeys(ranking), start=1):
            score[doc] = score.get(doc, 0.0) + weight / (k + rank)
    return sorted(score, key=lambda d: (-score[d], d))


def reference_metrics(ranked: list[str], gold: set[str]) -> list[float]:
    """recall@10, recall@100, MRR@10."""
    first = next((i for i, d in enumerate(ranked[:10], start=1) if d in gold), None)
    return [len(gold & set(ranked[:10])) / len(gold), len(gold & set(ranked[:100])) / len(gold),
            1 / first if first else 0.0]


def test_replay_on_a_hand_worked_example():
    # documents d0..d5; gold {d1, d3}
    ids = [f"d{i}" for i in range(6)]
    questions = [{"gold": {"d1", "d3"}}]
    rankings = {"dense": [[0, 1, 2]], "bm25": [[3, 1, 1, 4]], "gram": [[5]]}
    got = stard.replay_fusions(rankings, ids, questions, [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (0.0, 0.0, 1.0),
                                                          (1.0, 0.0, 1.0)])[:, 0]
    # dense alone: d0 d1 d2 → d1 at 2, d3 missing
    assert list(got[0]) == pytest.approx([0.5, 0.5, 0.5])
    # dense + bm25: d1 1/62 + 1/62 (its repeat in bm25 ignored) = 0.0323 > d0 = d3 = 1/61 (tie: d0 first) > d2 1/63
    # > d4 1/64 → d1 d0 d3 d2 d4: both gold in the top 10, the first at 1
    assert list(got[1]) == pytest.approx([1.0, 1.0, 1.0])
    assert reference_rrf([(1.0, [0, 1, 2]), (1.0, [3, 1, 1, 4]), (0.0, [5])]) == [1, 0, 3, 2, 4]
    # gram alone: only d5 is ranked (the zero-weight lists' documents are not)
    assert list(got[2]) == pytest.approx([0.0, 0.0, 0.0])
    # dense + gram: d0 = d5 = 1/61 (d0 first), d1 1/62, d2 1/63 → d1 at 3, d3 never ranked (bm25 weighs 0)
    assert list(got[3]) == pytest.approx([0.5, 0.5, 1 / 3])


@pytest.mark.parametrize("w", [(1.0, 0.35, 0.5), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (1.0, 0.02, 1.5), (0.0, 0.0, 1.0)])
def test_replay_equals_weighted_rrf_and_the_reference(w):
    ids, questions, rankings = _synthetic()
    got = stard.replay_fusions(rankings, ids, questions, [w])[0]
    for qi, q in enumerate(questions):
        lists = [(wt, rankings[ch][qi]) for ch, wt in zip(stard.CV_CHANNELS, w)]
        want = reference_metrics([ids[d] for d in reference_rrf(lists)], q["gold"])
        assert list(got[qi]) == pytest.approx(want)
        fused = weighted_rrf([RankedList(ch, wt, [(d, 0.0) for d in ranking])
                              for ch, (wt, ranking) in zip(stard.CV_CHANNELS, lists)], k=60)
        assert [h.doc for h in fused] == reference_rrf(lists)  # the bench replays what the product fuses


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
    # out of fold, recomputed with the reference: fold f holds questions i with i % 5 == f, scored with the weights
    # chosen for it
    weights = [tuple(f["weights"][ch] for ch in stard.CV_CHANNELS) for f in cv["per_fold"]]
    oof = [reference_metrics([ids[d] for d in reference_rrf([(wt, rankings[ch][i]) for ch, wt in
                                                             zip(stard.CV_CHANNELS, weights[i % 5])])], q["gold"])
           for i, q in enumerate(questions)]
    for j, key in enumerate(("recall@10", "recall@100", "mrr@10")):
        assert m[key] == pytest.approx(sum(row[j] for row in oof) / len(oof), abs=1e-4)
    # here dense is clearly best alone and the others add signal: fusion beats it out of fold
    dense_mrr = sum(reference_metrics([ids[d] for d in rankings["dense"][i]], q["gold"])[2]
                    for i, q in enumerate(questions)) / len(questions)
    assert m["mrr@10"] > dense_mrr + 0.01


def test_a_fusion_that_lowers_any_metric_below_dense_is_not_chosen():
    import numpy as np

    means = np.array([[0.50, 0.70, 0.40],    # dense alone
                      [0.52, 0.80, 0.39],    # best objective, but MRR@10 below dense
                      [0.51, 0.72, 0.41]])   # no metric below dense
    assert stard.choose_combo(means, dense=0) == 2
    assert stard.choose_combo(means[:2], dense=0) == 0  # nothing qualifies: dense alone
