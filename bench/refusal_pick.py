#!/usr/bin/env python3
"""A refusal's numbered list of the nearest articles, measured: how many refused in-scope questions become an answer
from a governing article when the user replies with the number of the article that is their case.

Each question of the answers set's half is asked in a session of its own (both knowledge bases, the embedded model,
streaming as the front ends run it). When the gate refuses it and the reply lists a governing article, a simulated
user replies with that article's number, in the same session; the second answer is scored like any answer
(`agentic_rag.eval.answers.score`). The simulated user is an oracle: it stands for a reader who recognises their
case from the article's number and first words, which the numbers below assume. Out-of-scope questions and
refusals that list no governing article get no reply.

    nice .venv/bin/python bench/refusal_pick.py --split test --checkpoint bench/results/refusal_pick.jsonl \
        --json bench/results/refusal_pick.json
    nice .venv/bin/python bench/refusal_pick.py --dataset eval/answers_fresh2.jsonl --split fresh --checkpoint …
"""
from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from _common import PROJECT_ROOT, log
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.runners import InMemoryRunner
from google.genai import types

from agentic_rag.config import get_settings
from agentic_rag.eval.answers import load_rows, score
from agentic_rag.eval.retrieval import gold_keys
from agentic_rag.oneshot import build_app
from agentic_rag.state import CONVERSATION, FINAL_ANSWER, LLM_CALLS, PATH, QUALITY

ANSWERS = PROJECT_ROOT / "eval" / "answers_eval.jsonl"


def apps(pipl_dir: str, multilaw_dir: str) -> dict:
    from agentic_rag.retrieval.retriever import LocalRetriever
    from agentic_rag.workflow import ConditionalWorkflowAgent

    out = {}
    for kb, data_dir in (("pipl", pipl_dir), ("multilaw", multilaw_dir)):
        settings = get_settings().model_copy(update={"data_dir": Path(data_dir)})
        retriever = LocalRetriever.from_settings(settings)
        agent = ConditionalWorkflowAgent(settings=settings, retriever_factory=lambda r=retriever: r)
        out[kb] = build_app(agent, settings)
    return out


def gold_option(row: dict, state: dict) -> int | None:
    """The number (1-based) of the first listed article that governs the question, if the refusal listed one."""
    record = CONVERSATION.get(state)
    pending = record.pending if record else None
    if pending is None or not pending.articles:
        return None
    gold = gold_keys(row["gold"]) if row["gold"] else set()
    for i, (law, number) in enumerate(pending.articles, start=1):
        if (law, number) in gold or number in gold:
            return i
    return None


def turn_view(row: dict, state: dict, seconds: float) -> dict:
    quality = QUALITY.get(state)
    return {"path": PATH.get(state), **score(row, state), "seconds": round(seconds, 2),
            "llm_calls": LLM_CALLS.get(state, 0), "gate": quality.source if quality else None,
            "answer": FINAL_ANSWER.get(state) or ""}


async def turn(runner, session_id: str, text: str) -> tuple[dict, float]:
    """One message in the session, streamed as the front ends run it; (the state after it, its seconds)."""
    t0 = time.perf_counter()
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(user_id="bench", session_id=session_id, new_message=message,
                                    run_config=RunConfig(streaming_mode=StreamingMode.SSE)):
        pass
    session = await runner.session_service.get_session(app_name=runner.app_name, user_id="bench",
                                                       session_id=session_id)
    return dict(session.state), time.perf_counter() - t0


async def one(app, row: dict) -> dict:
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name=app.name, user_id="bench")
    first, seconds = await turn(runner, session.id, row["query"])
    result = {"id": row["id"], "kb": row["kb"], "type": row["type"], "in_scope": bool(row["gold"]),
              "first": turn_view(row, first, seconds)}
    pending = CONVERSATION.get(first).pending if CONVERSATION.get(first) else None
    result["listed"] = [list(a) for a in pending.articles] if pending else []
    result["pick"] = gold_option(row, first) if result["first"]["path"] == "none" else None
    if result["pick"] is not None:  # the reply is read against the refusal the session recorded
        second, seconds = await turn(runner, session.id, str(result["pick"]))
        result["second"] = turn_view(row, second, seconds)
    return result


def summarize(results: list[dict]) -> dict:
    scope = [r for r in results if r["in_scope"]]
    n = len(scope)

    def share(pred) -> float | None:
        return round(sum(map(pred, scope)) / n, 4) if n else None

    final = [r.get("second", r["first"]) for r in scope]
    seconds = sorted(r["second"]["seconds"] for r in scope if "second" in r)
    return {
        "n_in_scope": n, "n_out_of_scope": len(results) - n,
        "first_turn": {"answered_from_governing": share(lambda r: r["first"]["answered_from_governing"]),
                       "refused": share(lambda r: r["first"]["path"] == "none"),
                       "conclusion_correct": share(lambda r: r["first"]["conclusion_correct"])},
        "refused_listing_a_governing_article": sum(r["pick"] is not None for r in scope),
        "refused_in_scope": sum(r["first"]["path"] == "none" for r in scope),
        "with_one_pick": {"answered_from_governing": round(sum(f["answered_from_governing"] for f in final) / n, 4),
                          "conclusion_correct": round(sum(f["conclusion_correct"] for f in final) / n, 4),
                          "built_on_wrong_article": round(sum(f["built_on_wrong_article"] for f in final) / n, 4),
                          "refused": round(sum(f["path"] == "none" for f in final) / n, 4)},
        "picked_turns": {"n": len(seconds), "p50_seconds": seconds[len(seconds) // 2] if seconds else None,
                         "llm_calls": round(sum(r["second"]["llm_calls"] for r in scope if "second" in r)
                                            / max(1, len(seconds)), 2),
                         "conclusion_correct": sum(r["second"]["conclusion_correct"] for r in scope if "second" in r),
                         "labels": [r["second"]["label"] for r in scope if "second" in r]},
        "out_of_scope_listed_then_picked": sum(r["pick"] is not None for r in results if not r["in_scope"]),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", type=Path, default=ANSWERS, help="an answers set (e.g. eval/answers_fresh.jsonl)")
    p.add_argument("--split", default="test", choices=("dev", "test", "fresh"))
    p.add_argument("--pipl-dir", default="data")
    p.add_argument("--multilaw-dir", default="data-multilaw")
    p.add_argument("--checkpoint", type=Path, required=True, help="one JSON line per finished question (resumable)")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    rows = [r for r in load_rows(args.dataset, args.split) if r["type"] != "chitchat"]
    done = {json.loads(line)["id"]: json.loads(line) for line in args.checkpoint.read_text().splitlines()} \
        if args.checkpoint.exists() else {}
    built = apps(args.pipl_dir, args.multilaw_dir)
    results = []
    for i, row in enumerate(rows, start=1):
        if row["id"] not in done:
            done[row["id"]] = asyncio.run(one(built[row["kb"]], row))
            with args.checkpoint.open("a", encoding="utf-8") as f:
                f.write(json.dumps(done[row["id"]], ensure_ascii=False) + "\n")
        r = done[row["id"]]
        results.append(r)
        log(f"[{i}/{len(rows)}] {r['id']:13} {r['first']['path']:8} pick={r['pick']} "
            f"{r.get('second', {}).get('path', '-')} {r.get('second', {}).get('label', '')}")
    report = {"dataset": args.dataset.name, "split": args.split, "summary": summarize(results), "questions": results}
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps(report["summary"], ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
