#!/usr/bin/env python3
"""Questions that ask what a term means, before and after the definition lookup (`legal/definitions.py`,
`LocalRetriever.defining`), side by side in one run.

For every term a knowledge base defines (「…，是指」) two questions are asked: 「T是什么意思？」 and 「什么是T？」. Gold is
the article that defines T. Before = the same retriever with the definition lookup switched off.

    retrieval (seconds): the defining article's rank, hit@1, hit@5
    --e2e (the embedded model; one model job at a time): path, whether the answer cites the defining article, LLM
          calls and latency per question, before and after alternating per question

    .venv/bin/python eval/definitions_eval.py --json eval/results/definitions.json [--e2e]
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

from agentic_rag.config import get_settings  # noqa: E402
from agentic_rag.legal.definitions import defined_terms  # noqa: E402
from agentic_rag.retrieval.retriever import LocalRetriever  # noqa: E402

KBS = {"pipl": ROOT / "data", "multilaw": ROOT / "data-multilaw"}
FORMS = ("{t}是什么意思？", "什么是{t}？")


def questions(retriever: LocalRetriever, kb: str) -> list[dict]:
    out = []
    for d in retriever.documents:
        for term in defined_terms(d.text):
            out += [{"kb": kb, "term": term, "query": f.format(t=term), "gold": [d.law, d.article]} for f in FORMS]
    return out


def rank(retriever: LocalRetriever, row: dict) -> int | None:
    keys = [[a.law, a.article] for a in retriever.retrieve(row["query"]).articles]
    return keys.index(row["gold"]) + 1 if row["gold"] in keys else None


def retrieval_rows(retriever: LocalRetriever, rows: list[dict]) -> None:
    on = retriever.defining
    for row in rows:
        retriever.defining = lambda q: []  # before: the ranking alone
        row["rank_before"] = rank(retriever, row)
        retriever.defining = on
        row["rank_after"] = rank(retriever, row)


async def e2e_rows(retriever: LocalRetriever, rows: list[dict], settings) -> None:
    from agentic_rag.oneshot import ask
    from agentic_rag.state import CITATIONS, LLM_CALLS, PATH
    from agentic_rag.workflow import ConditionalWorkflowAgent

    agent = ConditionalWorkflowAgent(settings=settings, retriever_factory=lambda: retriever)
    on = retriever.defining
    for i, row in enumerate(rows):
        for side in (("before", "after") if i % 2 == 0 else ("after", "before")):
            retriever.defining = on if side == "after" else (lambda q: [])
            t0 = time.monotonic()
            state = await ask(agent, row["query"])
            listed = (CITATIONS.get(state).listed if CITATIONS.get(state) else []) or []
            row[side] = {"path": PATH.get(state), "cites_definition": row["gold"] in [list(x) for x in listed],
                         "llm_calls": LLM_CALLS.get(state), "latency_s": round(time.monotonic() - t0, 2)}
        retriever.defining = on
        print(row["query"], row["before"], row["after"], flush=True)


def summary(rows: list[dict], e2e: bool) -> dict:
    n = len(rows)
    out = {"n": n}
    for side in ("before", "after"):
        ranks = [r[f"rank_{side}"] for r in rows]
        out[f"hit@1_{side}"] = round(sum(x == 1 for x in ranks) / n, 3)
        out[f"hit@5_{side}"] = round(sum(x is not None and x <= 5 for x in ranks) / n, 3)
        if e2e:
            out[f"answered_from_definition_{side}"] = round(sum(r[side]["path"] == "pass" and r[side]["cites_definition"]
                                                                for r in rows) / n, 3)
            out[f"refused_{side}"] = round(sum(r[side]["path"] == "none" for r in rows) / n, 3)
            out[f"llm_calls_{side}"] = round(statistics.mean(r[side]["llm_calls"] or 0 for r in rows), 2)
            out[f"p50_latency_s_{side}"] = statistics.median(r[side]["latency_s"] for r in rows)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, default=ROOT / "eval" / "results" / "definitions.json")
    ap.add_argument("--e2e", action="store_true")
    args = ap.parse_args()
    report = {}
    for kb, data_dir in KBS.items():
        settings = get_settings().model_copy(update={"data_dir": data_dir})
        retriever = LocalRetriever.from_settings(settings)
        rows = questions(retriever, kb)
        retrieval_rows(retriever, rows)
        if args.e2e:
            asyncio.run(e2e_rows(retriever, rows, settings))
        report[kb] = {"summary": summary(rows, args.e2e), "questions": rows}
        print(kb, report[kb]["summary"], flush=True)
    args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
