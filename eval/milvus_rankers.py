#!/usr/bin/env python
"""Milvus's own fusion rankers on the PIPL eval, one request per question (the user's words only, no query variants,
no article lookup): RRFRanker(60) vs WeightedRanker(1.0, w). Why MILVUS_HYBRID defaults to the client-side fusion.

  .venv/bin/python init_index.py --store milvus --data-dir /tmp/pipl-milvus     # EmbeddingGemma, Milvus Lite
  .venv/bin/python eval/milvus_rankers.py --data-dir /tmp/pipl-milvus
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from agentic_rag.config import Settings
from agentic_rag.eval.metrics import mrr_at, recall_at
from agentic_rag.eval.retrieval import load_dataset
from agentic_rag.retrieval.retriever import LocalRetriever


def run(retriever, rows, vecs, ranker) -> list[float]:
    from pymilvus import AnnSearchRequest

    store, out = retriever.index.store, []
    for row, vec in zip(rows, vecs):
        text = " ".join(retriever.tokenizer.expand_query(row["query"]))
        reqs = [AnnSearchRequest(data=[vec.tolist()], anns_field="dense", param={"metric_type": "IP"}, limit=30,
                                 expr=store._live()),
                AnnSearchRequest(data=[text], anns_field="sparse", param={"metric_type": "BM25"}, limit=30,
                                 expr=store._live())]
        hits = store._hits(store.client.hybrid_search(store.collection, reqs, ranker, limit=10)[0])
        ranked, gold = [retriever.documents[d].article for d, _ in hits], set(row["gold"])
        out.append((recall_at(ranked, gold, 1), recall_at(ranked, gold, 5), mrr_at(ranked, gold, 10)))
    return [round(float(np.mean([t[i] for t in out])), 3) for i in range(3)]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, required=True, help="a Milvus index of the PIPL")
    p.add_argument("--dataset", type=Path, default=Path(__file__).resolve().parent / "pipl_eval.jsonl")
    args = p.parse_args()
    warnings.filterwarnings("ignore")
    from pymilvus import RRFRanker, WeightedRanker

    retriever = LocalRetriever.from_settings(Settings(data_dir=args.data_dir, reranker="none"))
    rows = [r for r in load_dataset(args.dataset) if r["gold"]]
    vecs = retriever.embedder.encode_queries([r["query"] for r in rows])
    print("ranker                 R@1    R@5  MRR@10")
    print(f"RRFRanker(60)       {run(retriever, rows, vecs, RRFRanker(60))}")
    for w in (0.05, 0.1, 0.2, 0.3):
        print(f"WeightedRanker(1,{w}) {run(retriever, rows, vecs, WeightedRanker(1.0, w))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
