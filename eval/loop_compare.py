#!/usr/bin/env python3
"""The agentic loop on vs off, with a scripted oracle model: what the router, the retries, multi-intent and
follow-up retrieval do on their own, without a small model's noise.

The oracle grader passes an attempt iff a gold article is among the articles it is shown (it reads the articles
block of the prompt), and says nothing is missing otherwise; the rewriter returns the question; the answer cites
the gold articles it was shown. So the pass rate is "a gold article reached the gate", attempts and stop reasons
are the loop's own behaviour, and the LLM-call count is what the loop costs. Real retrieval (the configured index
and embedder), real routing. Writes eval/results/loop_compare.json.

    .venv/bin/python eval/loop_compare.py [--dataset eval/pipl_eval.jsonl]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_rag.config import get_settings
from agentic_rag.eval.retrieval import load_dataset
from agentic_rag.legal.numerals import article_cn
from agentic_rag.oneshot import ask
from agentic_rag.state import ATTEMPTS, LLM_CALLS, PATH, RETRIEVAL, ROUTE
from tests.fakes.fake_llm import install

DIMS = ("relevance", "completeness", "accuracy", "coverage")
CONFIGS = {"loop_off": {"agentic_enabled": False}, "loop_on": {}}


class Oracle:
    """Scripted replies that know the current question's gold articles."""

    gold: list[int] = []

    def grade(self, prompt: str) -> str:
        shown = [n for n in self.gold if f"【{article_cn(n)}】" in prompt.split("【任务】")[0]]
        score = 9 if shown else 3
        return json.dumps({**dict.fromkeys(DIMS, score), "missing": "" if shown else "缺少直接相关的条文"})

    def answer(self, prompt: str) -> str:
        shown = [article_cn(n) for n in self.gold if f"【{article_cn(n)}】" in prompt.split("【任务】")[0]]
        return "依据" + "、".join(shown) + "。" if shown else "无法回答。"


def run(rows: list[dict], settings, retriever) -> list[dict]:
    from agentic_rag.workflow import ConditionalWorkflowAgent

    oracle = Oracle()
    install({"rewriter": lambda p: json.dumps({"main_query": p.split("用户问题：")[1].split("\n")[0]}),
             "evaluator": oracle.grade, "answer": oracle.answer, "router": json.dumps({"route": "kb"})})
    agent = ConditionalWorkflowAgent(settings=settings, retriever_factory=lambda: retriever)
    out = []
    for row in rows:
        oracle.gold = [g for g in row["gold"] if isinstance(g, int)]
        state = asyncio.run(ask(agent, row["query"]))
        attempts = ATTEMPTS.get(state) or []
        retrieval = RETRIEVAL.get(state)
        out.append({"id": row["id"], "type": row["type"], "in_scope": bool(row["gold"]), "path": PATH.get(state),
                    "route": ROUTE.get(state).kind, "attempts": len(attempts),
                    "stop": attempts[-1].stop if attempts else None, "llm_calls": LLM_CALLS.get(state),
                    "gold_reached": bool(retrieval and set(oracle.gold) & set(retrieval.numbers())),
                    "follow_ups": sum(a.role == "follow_up" for a in retrieval.articles) if retrieval else 0})
    return out


def summarize(results: list[dict]) -> dict:
    in_scope = [r for r in results if r["in_scope"]]
    out_scope = [r for r in results if not r["in_scope"]]
    return {"n": len(results),
            "in_scope_pass": round(sum(r["path"] == "pass" for r in in_scope) / len(in_scope), 4),
            "out_of_scope_not_passed": round(sum(r["path"] != "pass" for r in out_scope) / max(1, len(out_scope)), 4),
            "gold_reached_in_scope": round(sum(r["gold_reached"] for r in in_scope) / len(in_scope), 4),
            "llm_calls_per_question": round(sum(r["llm_calls"] for r in results) / len(results), 3),
            "attempts": dict(Counter(r["attempts"] for r in results)),
            "stops": dict(Counter(str(r["stop"]) for r in results)),
            "routes": dict(Counter(r["route"] for r in results)),
            "questions_with_follow_ups": sum(r["follow_ups"] > 0 for r in results),
            "by_type": {t: {"n": len(g), "pass": round(sum(r["path"] == "pass" for r in g) / len(g), 4),
                            "llm_calls": round(sum(r["llm_calls"] for r in g) / len(g), 2)}
                        for t in sorted({r["type"] for r in results})
                        for g in [[r for r in results if r["type"] == t]]}}


def main() -> int:
    from agentic_rag.retrieval.retriever import get_retriever

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", type=Path, default=ROOT / "eval" / "pipl_eval.jsonl")
    p.add_argument("--json", type=Path, default=ROOT / "eval" / "results" / "loop_compare.json")
    args = p.parse_args()
    base = get_settings().model_copy(update={"agentic_rag_model": "fake/oracle", "reranker": "none",
                                             "serpapi_api_key": None, "web_search_provider": "none"})
    retriever = get_retriever(base)
    rows = load_dataset(args.dataset)
    report = {}
    for name, update in CONFIGS.items():
        results = run(rows, base.model_copy(update=update), retriever)
        report[name] = {"summary": summarize(results), "questions": results}
        print(name, json.dumps(report[name]["summary"], ensure_ascii=False), flush=True)
    on, off = report["loop_on"]["questions"], report["loop_off"]["questions"]
    report["recovered_by_retries"] = [b["id"] for a, b in zip(off, on) if a["path"] != "pass" and b["path"] == "pass"]
    report["lost_by_loop"] = [b["id"] for a, b in zip(off, on) if a["path"] == "pass" and b["path"] != "pass"]
    args.json.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("recovered_by_retries", "lost_by_loop")}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
