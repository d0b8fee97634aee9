#!/usr/bin/env python3
"""Does the embedded model's query rewrite help retrieval? The same questions retrieved with the user's words only
and with the rewriter's main query, variants and keywords added (what the workflow's first attempt does), side by
side: recall of the articles the gate sees (top 5), MRR@10, and what the rewrite call costs.

Only question types the workflow rewrites are measured (semantic: pure lookups, keyword queries and compound
questions are never rewritten). Nothing is tuned here. Resumable (one JSONL line per question); run it alone.

    .venv/bin/python eval/rewrite_effect.py [--dataset eval/pipl_eval.jsonl] [--limit N]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_rag.config import get_settings
from agentic_rag.eval.metrics import mrr_at, recall_at
from agentic_rag.eval.retrieval import gold_keys, load_dataset
from agentic_rag.oneshot import ask_stage
from agentic_rag.stages.evidence import prompt_articles
from agentic_rag.stages.rewrite.agent import RewriteStage
from agentic_rag.state import REWRITE

OUT = ROOT / "eval" / "results" / "rewrite_effect"


def ranking(retrieval) -> list:
    return [a.article for a in prompt_articles(retrieval.articles, limit=10)]


def measure(row: dict, stage: RewriteStage, retriever) -> dict:
    gold = gold_keys(row["gold"])
    t0 = time.perf_counter()
    rewrite = REWRITE.get(asyncio.run(ask_stage(stage, row["query"])))
    seconds = time.perf_counter() - t0
    plain = ranking(retriever.retrieve(row["query"]))
    rewritten = ranking(retriever.retrieve(row["query"], variants=rewrite.variants, main_query=rewrite.main_query,
                                           keywords=rewrite.keywords))
    return {"id": row["id"], "rewrite_s": round(seconds, 2), "fallback": rewrite.fallback,
            "plain": {"recall@5": recall_at(plain, gold, 5), "mrr@10": mrr_at(plain, gold)},
            "rewrite": {"recall@5": recall_at(rewritten, gold, 5), "mrr@10": mrr_at(rewritten, gold)}}


def summarize(rows: list[dict]) -> dict:
    def mean(side, metric):
        return round(sum(r[side][metric] for r in rows) / len(rows), 4)
    times = sorted(r["rewrite_s"] for r in rows)
    return {"n": len(rows), "p50_rewrite_s": times[len(times) // 2],
            "fallbacks": sum(r["fallback"] for r in rows),
            **{f"{side}_{m}": mean(side, m) for side in ("plain", "rewrite") for m in ("recall@5", "mrr@10")},
            "rewrite_better": sum(r["rewrite"]["mrr@10"] > r["plain"]["mrr@10"] for r in rows),
            "rewrite_worse": sum(r["rewrite"]["mrr@10"] < r["plain"]["mrr@10"] for r in rows)}


def main() -> int:
    from agentic_rag.retrieval.retriever import get_retriever

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", type=Path, default=ROOT / "eval" / "pipl_eval.jsonl")
    p.add_argument("--limit", type=int)
    args = p.parse_args()
    settings = get_settings().model_copy(update={"reranker": "none"})
    retriever = get_retriever(settings)
    stage = RewriteStage(name="QueryRewriterAgent", settings=settings)
    rows = [r for r in load_dataset(args.dataset) if r["type"] == "semantic"][:args.limit]
    checkpoint = OUT.with_suffix(".jsonl")
    done = {r["id"]: r for r in map(json.loads, checkpoint.read_text("utf-8").splitlines())} \
        if checkpoint.exists() else {}
    for row in rows:
        if row["id"] not in done:
            done[row["id"]] = measure(row, stage, retriever)
            with open(checkpoint, "a", encoding="utf-8") as f:
                f.write(json.dumps(done[row["id"]], ensure_ascii=False) + "\n")
            print(json.dumps(done[row["id"]], ensure_ascii=False), flush=True)
    result = summarize([done[r["id"]] for r in rows])
    OUT.with_suffix(".json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
