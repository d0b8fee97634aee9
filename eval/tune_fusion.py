#!/usr/bin/env python3
"""How the per-query-type fusion weights in `agentic_rag/fusion.py` were chosen.

Runs each channel once per question (original question only), then replays weighted RRF for a grid of
(bm25, gram) weights with the vector weight fixed at 1, and prints recall@5 / MRR@10 per question type. The
chosen weights must not make any type worse than the best single channel. Usage:
    python eval/tune_fusion.py --dataset eval/pipl_eval.jsonl
"""
from __future__ import annotations

import argparse
import itertools
import json
from collections import defaultdict
from pathlib import Path

from agentic_rag.eval.metrics import mean_metrics, score_ranking
from agentic_rag.eval.retrieval import load_dataset
from agentic_rag.retrieval.fusion import RankedList, weighted_rrf
from agentic_rag.retrieval.analysis import analyze_query
from agentic_rag.retrieval.retriever import LocalRetriever

GRID = [0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 1.0]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", type=Path, default=Path("eval/pipl_eval.jsonl"))
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


if __name__ == "__main__":
    main()
