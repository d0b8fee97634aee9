#!/usr/bin/env python3
"""Ask the questions of a new-user tryout file through the shipped workflow and record what a user sees.

Each line of the input (`eval/new_user_tryout.jsonl`) is {"id", "kb": "pipl" | "multilaw", "messages": [...],
"expect": what a careful user would want}; several messages are one conversation. Per message: the path, the
answer's opening, the cited (law, article) pairs, LLM calls and seconds. Run it with two checkouts of the code to
compare them (the script and the data folders are the same; PYTHONPATH picks the code):

    PYTHONPATH=. .venv/bin/python eval/new_user_tryout.py --out eval/results/new_user_tryout_after.jsonl
"""
from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KBS = {"pipl": "data", "multilaw": "data-multilaw"}
OPENING = 160


async def converse(app, messages: list[str]) -> list[dict]:
    from agentic_rag.oneshot import converse as run
    from agentic_rag.state import CITATIONS, FINAL_ANSWER, LLM_CALLS, PATH

    out, t0 = [], time.monotonic()
    states = await run(app, messages)
    for message, state in zip(messages, states):
        listed = (CITATIONS.get(state).listed if CITATIONS.get(state) else []) or []
        out.append({"message": message, "path": PATH.get(state), "answer": (FINAL_ANSWER.get(state) or "")[:OPENING],
                    "cited": [list(x) for x in listed], "llm_calls": LLM_CALLS.get(state)})
    out[-1]["seconds"] = round(time.monotonic() - t0, 1)  # the whole conversation
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=Path, default=ROOT / "eval" / "new_user_tryout.jsonl")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    from agentic_rag.config import get_settings
    from agentic_rag.oneshot import build_app
    from agentic_rag.workflow import ConditionalWorkflowAgent

    rows = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    with args.out.open("w", encoding="utf-8") as f:
        for kb, data_dir in KBS.items():
            settings = get_settings().model_copy(update={"data_dir": ROOT / data_dir})
            app = build_app(ConditionalWorkflowAgent(settings=settings), settings)
            for row in (r for r in rows if r["kb"] == kb):
                turns = asyncio.run(converse(app, row["messages"]))
                f.write(json.dumps({**row, "turns": turns}, ensure_ascii=False) + "\n")
                f.flush()
                print(row["id"], [(t["path"], t["answer"][:40]) for t in turns], flush=True)


if __name__ == "__main__":
    main()
