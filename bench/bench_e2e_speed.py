#!/usr/bin/env python3
"""End-to-end speed with the embedded model, two configurations side by side in one run.

The same questions (stratified over the PIPL eval set's in-scope types) go through the whole workflow under
`before` (a rewrite before the first retrieval, the JSON grade the 1.5B model generates, a 900-token answer budget:
the previous pipeline's levers) and `after` (the user's words first, the calibrated logit gate on the prompt prefix
the answer reuses, a 600-token budget), alternating which
runs first per question so that machine load drifts evenly, in one process with one llama.cpp context. Reported per
configuration: latency p50, seconds per stage, LLM calls, prompt / completion / prefix-cached tokens, generation
tokens per second, and the time from the end of grading to the first answer text shown (streaming on). Ratios
after / before are what to read: the machine is shared.

    .venv/bin/python bench/bench_e2e_speed.py [--questions 10] [--json bench/results/e2e_speed.json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_rag.config import get_settings
from agentic_rag.eval.e2e import interleave_types
from agentic_rag.eval.retrieval import load_dataset
from agentic_rag.oneshot import ask
from agentic_rag.state import LLM_CALLS, LLM_USAGE, PATH, QUALITY, TIMINGS

CONFIGS = {"before": {"gate_mode": "json", "answer_max_tokens": 900, "rewrite_first_attempt": True}, "after": {}}
TYPES = ("semantic", "keyword", "multi", "exact")


async def run_one(agent, question: str) -> dict:
    marks: dict[str, float] = {}
    started = time.perf_counter()

    def on_event(ev) -> None:
        now = time.perf_counter() - started
        if ev.author == "QualityEvaluatorAgent" and not ev.partial:
            marks["graded"] = now
        if ev.partial and ev.author == "AnswerGeneratorAgent":  # the articles' text first, then the model's
            marks.setdefault("first_model_text" if "first_text" in marks else "first_text", now)

    state = await ask(agent, question, on_event, stream=True)
    latency = time.perf_counter() - started
    usage, timings = LLM_USAGE.get(state) or {}, TIMINGS.get(state) or {}
    quality = QUALITY.get(state)
    return {"path": PATH.get(state), "latency_s": round(latency, 2), "timings": timings,
            "llm_calls": LLM_CALLS.get(state), "usage": usage, "gate": quality.source if quality else None,
            "first_text_after_grade_s": round(marks["first_text"] - marks.get("graded", 0.0), 2)
            if "first_text" in marks else None,
            "first_model_text_after_grade_s": round(marks["first_model_text"] - marks.get("graded", 0.0), 2)
            if "first_model_text" in marks else None,
            "answer_tokens_per_s": round(usage.get("completion", 0) / timings["answer"], 1)
            if timings.get("answer") else None}


def summary(rows: list[dict]) -> dict:
    def med(values):
        values = [v for v in values if v is not None]
        return round(statistics.median(values), 2) if values else None

    stages = sorted({k for r in rows for k in r["timings"]})
    passed = [r for r in rows if r["path"] == "pass"]
    return {"n": len(rows), "p50_latency_s": med([r["latency_s"] for r in rows]),
            "p50_latency_answered_s": med([r["latency_s"] for r in passed]),  # a FAIL writes no answer: faster
            "median_stage_s": {s: med([r["timings"].get(s) for r in rows]) for s in stages},
            "p50_first_text_after_grade_s": med([r["first_text_after_grade_s"] for r in rows]),
            "p50_first_model_text_after_grade_s": med([r["first_model_text_after_grade_s"] for r in rows]),
            "max_llm_calls_on_pass": max((r["llm_calls"] for r in passed), default=None),
            "median_answer_tokens_per_s": med([r["answer_tokens_per_s"] for r in rows]),
            "tokens": {k: sum(r["usage"].get(k, 0) for r in rows) for k in ("prompt", "completion", "cached")},
            "paths": {p: sum(r["path"] == p for r in rows) for p in sorted({str(r["path"]) for r in rows})}}


def main() -> int:
    from agentic_rag.llm.local import forget_prompts
    from agentic_rag.retrieval.retriever import get_retriever
    from agentic_rag.workflow import ConditionalWorkflowAgent

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--questions", type=int, default=10)
    p.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "e2e_speed.json")
    args = p.parse_args()
    rows = [r for r in interleave_types(load_dataset(ROOT / "eval" / "pipl_eval.jsonl")) if r["type"] in TYPES]
    rows = rows[: args.questions]
    base = get_settings().model_copy(update={"agentic_max_retries": 0, "reranker": "none"})
    retriever = get_retriever(base)
    agents = {name: ConditionalWorkflowAgent(settings=base.model_copy(update=update), retriever_factory=lambda: retriever)
              for name, update in CONFIGS.items()}
    results: dict[str, list[dict]] = {name: [] for name in CONFIGS}
    for i, row in enumerate(rows):
        order = list(CONFIGS) if i % 2 == 0 else list(reversed(CONFIGS))
        for name in order:
            forget_prompts()  # neither configuration starts from the other's evaluated prompt of this question
            result = asyncio.run(run_one(agents[name], row["query"]))
            results[name].append({"id": row["id"], "type": row["type"], **result})
            print(f"[{i + 1}/{len(rows)}] {name:6} {row['id']:9} {result['path']:8} {result['latency_s']:6.1f}s "
                  f"first text +{result['first_text_after_grade_s']}s calls={result['llm_calls']}", flush=True)
    out = {name: summary(r) for name, r in results.items()}
    b, a = out["before"]["p50_latency_s"], out["after"]["p50_latency_s"]
    out["ratio_after_over_before_p50"] = round(a / b, 3) if a and b else None
    out["configs"], out["questions"] = CONFIGS, results
    args.json.write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps({k: v for k, v in out.items() if k != "questions"}, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
