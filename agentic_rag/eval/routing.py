"""Routing accuracy: the router stage alone over a labelled question set, per question type.

The expected route of a question follows from its type and gold: a question whose gold articles are in the
knowledge base is `kb` (`multi` when typed multi-intent); one with empty gold, or whose gold laws the knowledge base
does not hold, is `out_of_kb`, and `chitchat` is chit-chat. The router runs for real (its dense similarity comes
from the index's embedder); it asks its model only when its signals disagree, so `--model` matters only there.
"""
from __future__ import annotations

import asyncio

from ..config import Settings
from ..oneshot import ask_stage
from ..state import ROUTE


def expected_route(row: dict, kb_laws: list[str]) -> str:
    if row["type"] == "chitchat":
        return "chitchat"
    laws = {g["law"] for g in row["gold"] if isinstance(g, dict)}
    if not row["gold"] or (laws and not laws & set(kb_laws)):
        return "out_of_kb"
    return "multi" if row["type"] == "multi" else "kb"


def evaluate_routing(rows: list[dict], settings: Settings) -> dict:
    from ..retrieval.retriever import get_retriever
    from ..stages.router.agent import RouterStage

    retriever = get_retriever(settings)
    stage = RouterStage(name=RouterStage.agent_name, settings=settings, retriever_factory=lambda: retriever)
    results = []
    for row in rows:
        route = ROUTE.get(asyncio.run(ask_stage(stage, row["query"])))
        results.append({"id": row["id"], "type": row["type"], "expected": expected_route(row, retriever.laws),
                        "route": route.kind, "source": route.source, "sub_questions": route.sub_questions,
                        "signals": route.signals})
    return {"summary": summarize(results), "questions": results}


def _accuracy(results: list[dict]) -> dict:
    correct = sum(r["route"] == r["expected"] for r in results)
    # kb and multi both take the knowledge-base path: what matters most to users is not being sent astray
    path_ok = sum((r["route"] in ("kb", "multi")) == (r["expected"] in ("kb", "multi")) and
                  (r["route"] in ("kb", "multi") or r["route"] == r["expected"]) for r in results)
    routes = [r["route"] for r in results]
    return {"n": len(results), "accuracy": round(correct / len(results), 4) if results else None,
            "path_accuracy": round(path_ok / len(results), 4) if results else None,
            "routes": {k: routes.count(k) for k in sorted(set(routes))},
            "llm_asked": sum(r["source"] == "llm" for r in results)}


def summarize(results: list[dict]) -> dict:
    types = sorted({r["type"] for r in results})
    return {**_accuracy(results), "by_type": {t: _accuracy([r for r in results if r["type"] == t]) for t in types}}
