"""End-to-end evaluation: the whole agent over a labelled question set.

Per question: the path taken (pass / web / none / error / rejected), the four scores, the cited articles and the
latency. Summary:

* pass_rate_in_scope — share of questions with gold articles that were answered on the PASS path;
* fail_rate_out_of_scope — share of questions without gold (other laws, chit-chat) that did NOT pass the gate;
* citation_precision — cited ∩ gold / cited, over in-scope questions whose answer cites something;
* citation_recall — cited ∩ gold / gold, over in-scope questions;
* p50_latency_s, llm_calls_per_question.
"""
from __future__ import annotations

import asyncio
import time

from ..config import Settings
from ..oneshot import ask


async def _run(rows: list[dict], settings: Settings, progress) -> list[dict]:
    from ..agent import ConditionalWorkflowAgent

    agent = ConditionalWorkflowAgent(settings=settings)
    out = []
    for i, row in enumerate(rows, start=1):
        t0 = time.perf_counter()
        state = await ask(agent, row["query"])
        latency = time.perf_counter() - t0
        quality = state.get("quality") or {}
        citations = state.get("citations") or {}
        result = {"id": row["id"], "type": row["type"], "gold": row["gold"], "path": state.get("path"),
                  "scores": quality.get("scores"), "total": quality.get("total"), "grader": quality.get("source"),
                  "cited": citations.get("valid", []) + citations.get("invalid", []),
                  "invalid_citations": citations.get("invalid", []),
                  "retrieved": [a["article"] for a in (state.get("retrieval") or {}).get("articles", [])],
                  "llm_calls": state.get("llm_calls", 0), "latency_s": round(latency, 2),
                  "errors": state.get("errors") or []}
        out.append(result)
        progress(i, len(rows), result)
    return out


def summarize(results: list[dict]) -> dict:
    in_scope = [r for r in results if r["gold"]]
    out_scope = [r for r in results if not r["gold"]]
    precisions = [len(set(r["cited"]) & set(r["gold"])) / len(set(r["cited"])) for r in in_scope if r["cited"]]
    recalls = [len(set(r["cited"]) & set(r["gold"])) / len(set(r["gold"])) for r in in_scope]
    latencies = sorted(r["latency_s"] for r in results)

    def mean(xs):
        return round(sum(xs) / len(xs), 4) if xs else None

    return {
        "n": len(results),
        "pass_rate_in_scope": mean([r["path"] == "pass" for r in in_scope]),
        "fail_rate_out_of_scope": mean([r["path"] != "pass" for r in out_scope]),
        "citation_precision": mean(precisions),
        "citation_recall": mean(recalls),
        "invalid_citation_rate": mean([bool(r["invalid_citations"]) for r in results]),
        "p50_latency_s": latencies[len(latencies) // 2] if latencies else None,
        "llm_calls_per_question": mean([r["llm_calls"] for r in results]),
        "paths": {p: sum(r["path"] == p for r in results) for p in sorted({str(r["path"]) for r in results})},
    }


def evaluate_e2e(rows: list[dict], settings: Settings, progress=lambda i, n, r: None) -> dict:
    results = asyncio.run(_run(rows, settings, progress))
    return {"summary": summarize(results), "questions": results}
