#!/usr/bin/env python3
"""How the per-query-type fusion weights in `agentic_rag/retrieval/fusion.py` were chosen.

Runs each channel once per question (original question only), then replays weighted RRF for a grid of
(bm25, gram) weights with the vector weight fixed at 1, and prints recall@5 / MRR@10 per question type. The
chosen weights must not make any type worse than the best single channel. Usage:
    python eval/tune_fusion.py --dataset eval/pipl_eval.jsonl [--folds 5]

With --folds K the weights are also chosen by K-fold cross-validation: per query type of the analyser (the key
of CHANNEL_WEIGHTS), each fold's weights are chosen on the other folds — the highest recall@5 (then MRR@10) among
the grid points that keep every metric of that type at or above the vector channel alone on those folds — and
scored on the held-out fold. Out-of-fold numbers per dataset type, next to the vector channel alone and the
weights in CHANNEL_WEIGHTS, go to eval/results/fusion_cv.json.
"""
from __future__ import annotations

import argparse
import itertools
import json
from collections import defaultdict
from pathlib import Path

from agentic_rag.eval.metrics import mean_metrics, score_ranking
from agentic_rag.eval.retrieval import load_dataset
from agentic_rag.retrieval.analysis import analyze_query
from agentic_rag.retrieval.fusion import CHANNEL_WEIGHTS, RankedList, weighted_rrf
from agentic_rag.retrieval.retriever import LocalRetriever

GRID = [0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 1.0]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", type=Path, default=Path("eval/pipl_eval.jsonl"))
    p.add_argument("--folds", type=int, default=0, help="also choose the weights by K-fold cross-validation")
    args = p.parse_args()
    r = LocalRetriever.from_settings()
    rows = [x for x in load_dataset(args.dataset) if x["gold"]]
    cached = []
    for row in rows:
        lists = {}
        for ch in ("vector", "bm25", "gram"):
            res = r.retrieve(row["query"], matcher=ch, top_k_=30, rerank=False)
            lists[ch] = [(a.article, a.channels[ch]["score"]) for a in res.articles if ch in a.channels]
        qtype = analyze_query(row["query"], r.tokenizer.legal_terms).type
        cached.append((row, qtype, lists))
    by_type: dict[str, dict] = defaultdict(dict)
    for wb, wg in itertools.product(GRID, GRID):
        per_type = defaultdict(list)
        for row, qtype, lists in cached:
            fused = weighted_rrf([RankedList("vector", 1.0, lists["vector"]), RankedList("bm25", wb, lists["bm25"]),
                                  RankedList("gram", wg, lists["gram"])])
            per_type[row["type"]].append(score_ranking([h.doc for h in fused], set(row["gold"])))
        for t, ms in per_type.items():
            by_type[t][(wb, wg)] = mean_metrics(ms)
    for t, grid in sorted(by_type.items()):
        print(f"== {t} (n={sum(1 for c in cached if c[0]['type'] == t)})")
        single = {"vector": grid[(0.0, 0.0)]}
        print(f"   vector alone: r@5 {single['vector']['recall@5']:.3f} mrr {single['vector']['mrr@10']:.3f}")
        best = sorted(grid.items(), key=lambda kv: (-kv[1]["recall@5"], -kv[1]["mrr@10"]))[:8]
        for (wb, wg), m in best:
            print(f"   bm25 {wb:<4} gram {wg:<4} r@1 {m['recall@1']:.3f} r@5 {m['recall@5']:.3f} "
                  f"r@10 {m['recall@10']:.3f} mrr {m['mrr@10']:.3f}")
    out = {t: {f"{wb},{wg}": m for (wb, wg), m in g.items()} for t, g in by_type.items()}
    Path("eval/results").mkdir(parents=True, exist_ok=True)
    Path("eval/results/fusion_grid.json").write_text(json.dumps(out, indent=1))
    if args.folds:
        cv = cross_validate(cached, args.folds)
        Path("eval/results/fusion_cv.json").write_text(json.dumps(cv, indent=1, ensure_ascii=False))
        print(f"\n== {args.folds}-fold CV (out-of-fold), per dataset type: vector alone / CHANNEL_WEIGHTS / CV weights")
        for t, row in cv["out_of_fold_by_type"].items():
            print(f"   {t:10} n={row['n']:3}  " + "  ".join(
                f"{name}: r@5 {row[name]['recall@5']:.3f} mrr {row[name]['mrr@10']:.3f}"
                for name in ("vector", "channel_weights", "cv")))
        print(f"   margin chosen: {cv['margin']}; weights per fold: {cv['weights_per_fold']}")
        for m, by_t in cv["margins_tried"].items():
            print(f"   margin {m}: " + ", ".join(f"{t} r@5 {r['cv']['recall@5']:.3f} mrr {r['cv']['mrr@10']:.3f}"
                                              f"{'' if r['cv_not_below_vector'] else ' (BELOW vector)'}"
                                              for t, r in by_t.items()))
        print(f"   weights chosen on all questions at that margin: {cv['weights_on_all_questions']}")


def _fuse_score(row, lists, w: dict[str, float]) -> dict:
    fused = weighted_rrf([RankedList(ch, w.get(ch, 0.0), lists[ch]) for ch in ("vector", "bm25", "gram")])
    return score_ranking([h.doc for h in fused], set(row["gold"]))


MARGINS = [0.0, 0.01, 0.02, 0.05, float("inf")]  # inf: never fuse (the vector channel alone)


def cross_validate(cached, folds: int) -> dict:
    """`cv_at_margin` for every margin; the smallest margin whose out-of-fold numbers are never below the vector
    channel alone (every dataset type, every metric) gives the default weights, chosen on all questions."""
    runs = {str(m): cv_at_margin(cached, folds, m) for m in MARGINS}
    ok = [m for m in MARGINS if all(t["cv_not_below_vector"] for t in runs[str(m)]["out_of_fold_by_type"].values())]
    chosen = ok[0]
    final = choose_weights(cached, list(range(len(cached))), chosen)
    return {**runs[str(chosen)], "margin": runs[str(chosen)]["margin"], "margins_tried": {m: {t: {"cv": r["cv"],
            "cv_not_below_vector": r["cv_not_below_vector"]} for t, r in runs[m]["out_of_fold_by_type"].items()}
            for m in runs}, "weights_on_all_questions": final}


def _grid() -> list[dict[str, float]]:
    return [{"vector": 1.0, "bm25": wb, "gram": wg} for wb, wg in itertools.product(GRID, GRID)]


_SCORES: dict[int, list[list[dict]]] = {}


def _scores(cached) -> list[list[dict]]:
    if id(cached) not in _SCORES:
        _SCORES[id(cached)] = [[_fuse_score(row, lists, w) for w in _grid()] for row, _, lists in cached]
    return _SCORES[id(cached)]


CV_KEYS = ("recall@1", "recall@3", "recall@5", "recall@10", "mrr@10", "ndcg@10")


def choose_weights(cached, train_idx: list[int], margin: float) -> dict[str, dict[str, float]]:
    """Per analyser query type: the grid point with the best recall@5 (then MRR@10) among those whose every metric
    is >= the vector channel alone on `train_idx`, if it beats the vector channel by > margin (recall@5 + MRR@10);
    otherwise the vector channel alone."""
    grid, scores = _grid(), _scores(cached)
    vector_only = grid.index({"vector": 1.0, "bm25": 0.0, "gram": 0.0})
    chosen = {}
    for qtype in sorted({c[1] for c in cached} | set(CHANNEL_WEIGHTS)):
        train = [i for i in train_idx if cached[i][1] == qtype]
        if not train:
            chosen[qtype] = grid[vector_only]
            continue
        means = [mean_metrics([scores[i][g] for i in train]) for g in range(len(grid))]
        base = means[vector_only]
        ok = [g for g in range(len(grid)) if all(means[g][k] >= base[k] - 1e-9 for k in CV_KEYS)]
        best = max(ok, key=lambda g: (means[g]["recall@5"], means[g]["mrr@10"], -grid[g]["bm25"] - grid[g]["gram"]))
        gain = means[best]["recall@5"] + means[best]["mrr@10"] - base["recall@5"] - base["mrr@10"]
        chosen[qtype] = grid[best] if gain > margin else grid[vector_only]
    return chosen


def cv_at_margin(cached, folds: int, margin: float) -> dict:
    """Per analyser query type, weights chosen on k-1 folds under the no-worse-than-vector rule; out-of-fold scores."""
    keys = CV_KEYS
    grid, scores = _grid(), _scores(cached)
    vector_only = grid.index({"vector": 1.0, "bm25": 0.0, "gram": 0.0})
    fold_of = [i % folds for i in range(len(cached))]
    oof: list[dict | None] = [None] * len(cached)
    weights_per_fold = []
    for f in range(folds):
        chosen = choose_weights(cached, [i for i in range(len(cached)) if fold_of[i] != f], margin)
        weights_per_fold.append(chosen)
        for i, (row, qtype, lists) in enumerate(cached):
            if fold_of[i] == f:
                oof[i] = scores[i][grid.index(chosen[qtype])]
    by_type: dict[str, dict] = {}
    for t in sorted({c[0]["type"] for c in cached}) + ["all"]:
        idx = [i for i, c in enumerate(cached) if t == "all" or c[0]["type"] == t]
        by_type[t] = {"n": len(idx), "vector": mean_metrics([scores[i][vector_only] for i in idx]),
                      "channel_weights": mean_metrics([_fuse_score(cached[i][0], cached[i][2], CHANNEL_WEIGHTS[cached[i][1]])
                                                       for i in idx]),
                      "cv": mean_metrics([oof[i] for i in idx])}
        by_type[t]["cv_not_below_vector"] = all(by_type[t]["cv"][k] >= by_type[t]["vector"][k] - 1e-9 for k in keys)
    return {"folds": folds, "grid": GRID, "margin": margin if margin != float("inf") else "inf (never fuse)",
            "rule": "every metric of the query type >= vector alone on the training folds, and recall@5 + MRR@10 "
                    "better than vector alone by more than the margin; else vector alone",
            "weights_per_fold": weights_per_fold, "channel_weights": CHANNEL_WEIGHTS, "out_of_fold_by_type": by_type}


if __name__ == "__main__":
    main()
