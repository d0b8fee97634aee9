#!/usr/bin/env python3
"""Which second stage helps on the offline default? Compares, on the same fused top-N candidates per question:

* none — the weighted-RRF order (what the retriever returns without a reranker);
* embedding — the candidates re-sorted by the dense cosine (stored vectors, no re-embedding of articles);
* llm — pointwise yes/no logits of the local Qwen GGUF (llm_reranker).

Prints recall@1/3/5, MRR@10, nDCG@10 and ms/query per variant, and a final JSON line.
    python eval/rerank_compare.py --dataset eval/pipl_eval.jsonl [--limit N] [--gguf NAME]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from llm_reranker import LlmPointwiseReranker

from agentic_rag.config import get_settings
from agentic_rag.eval.e2e import interleave_types
from agentic_rag.eval.metrics import mean_metrics, score_ranking
from agentic_rag.eval.retrieval import load_dataset
from agentic_rag.retrieval.retriever import LocalRetriever


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", type=Path, default=Path("eval/pipl_eval.jsonl"))
    p.add_argument("--top-n", type=int, default=10)
    p.add_argument("--limit", type=int, help="only N questions, stratified by type (the LLM variant costs ~30 s each)")
    p.add_argument("--gguf", default="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    p.add_argument("--json", type=Path)
    p.add_argument("--no-llm", action="store_true", help="skip the LLM variant (minutes per question set)")
    args = p.parse_args()
    settings = get_settings()
    retriever = LocalRetriever.from_settings(settings.model_copy(update={"reranker": "none"}))
    # round-robin over question types: a --limit slice is stratified, not just the first colloquial questions
    rows = interleave_types([r for r in load_dataset(args.dataset) if r["gold"]])[: args.limit or None]
    llm = None if args.no_llm else LlmPointwiseReranker(settings.models_dir / args.gguf, n_threads=settings.local_llm_threads)
    by_doc_id = {d.id: i for i, d in enumerate(retriever.documents)}
    metrics: dict[str, list] = {"none": [], "embedding": []} | ({} if llm is None else {"llm": []})
    times: dict[str, list] = {k: [] for k in metrics}
    for i, row in enumerate(rows, start=1):
        t0 = time.perf_counter()
        res = retriever.retrieve(row["query"], matcher="ensemble", top_k_=args.top_n, rerank=False)
        base_ms = (time.perf_counter() - t0) * 1000
        cands = res.articles
        gold = set(row["gold"])
        metrics["none"].append(score_ranking([a.article for a in cands], gold))
        times["none"].append(base_ms)

        t0 = time.perf_counter()
        qv = retriever.embedder.encode_queries([row["query"]])[0]
        cos = retriever.index.store.vectors([by_doc_id[a.id] for a in cands]) @ qv
        order = sorted(range(len(cands)), key=lambda j: -cos[j])
        metrics["embedding"].append(score_ranking([cands[j].article for j in order], gold))
        times["embedding"].append(base_ms + (time.perf_counter() - t0) * 1000)

        if llm is None:
            continue
        t0 = time.perf_counter()
        s = llm.score(row["query"], [a.text for a in cands])
        order = sorted(range(len(cands)), key=lambda j: -s[j])
        metrics["llm"].append(score_ranking([cands[j].article for j in order], gold))
        times["llm"].append(base_ms + (time.perf_counter() - t0) * 1000)
        print(f"[{i}/{len(rows)}] {row['id']} llm {times['llm'][-1] / 1000:.1f}s", flush=True)
    result = {"n": len(rows), "top_n": args.top_n, "gguf": args.gguf, "variants": {}}
    for name in metrics:
        t = sorted(times[name])
        result["variants"][name] = {**mean_metrics(metrics[name]), "p50_ms": round(t[len(t) // 2], 1)}
    for name, m in result["variants"].items():
        print(f"{name:10} r@1 {m['recall@1']:.3f} r@3 {m['recall@3']:.3f} r@5 {m['recall@5']:.3f} "
              f"mrr {m['mrr@10']:.3f} ndcg {m['ndcg@10']:.3f} p50 {m['p50_ms']:.0f} ms")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
