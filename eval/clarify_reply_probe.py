#!/usr/bin/env python3
"""Why are replies to a clarifying question refused? (stop 40, a probe; nothing shipped from it)

Every clarify_reply turn of the three conversation sets is asked through the shipped workflow in one of these forms:

* conv        — the vague opener, then the reply, in one session (what users do; the rule form 原问题：…；补充：…)
* standalone  — the labeller's standalone question for that turn, as a first question (an upper bound for any merge)
* reply_ask   — the reply's facts followed by the opener's ask, as a first question (a natural merge)

Recorded per turn: the gate's total, source and action, whether the article it judged most relevant is gold (read
as the conversation eval reads it, `gate_view`), the first gold article's rank among the retrieved, the path, seconds. Run one form at a time (the embedded model).

    .venv/bin/python eval/clarify_reply_probe.py conv >> eval/results/clarify_reply_probe.jsonl
"""
from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_rag.config import get_settings  # noqa: E402
from agentic_rag.eval.conversation import gate_view  # noqa: E402
from agentic_rag.eval.retrieval import _key, gold_keys  # noqa: E402
from agentic_rag.oneshot import build_app, converse  # noqa: E402
from agentic_rag.state import PATH, QUALITY, RETRIEVAL  # noqa: E402
from agentic_rag.workflow import ConditionalWorkflowAgent  # noqa: E402

SETS = ("conversation_eval.jsonl", "conversation_fresh.jsonl", "conversation_fresh2.jsonl")
FORMS = {
    "conv": lambda opener, reply, turn: [opener, reply],
    "standalone": lambda opener, reply, turn: [turn["standalone"]],
    "reply_ask": lambda opener, reply, turn: [reply.rstrip("。？?！!") + "，" + opener],
}


def replies():
    for name in SETS:
        for line in (ROOT / "eval" / name).read_text(encoding="utf-8").splitlines():
            conv = json.loads(line)
            for i, turn in enumerate(conv["turns"]):
                if turn["kind"] == "clarify_reply":
                    yield conv, conv["turns"][i - 1]["user"], turn


async def run(form: str) -> None:
    settings = get_settings()
    apps = {kb: build_app(ConditionalWorkflowAgent(settings=settings.model_copy(update={"data_dir": ROOT / d})),
                          settings) for kb, d in (("pipl", "data"), ("multilaw", "data-multilaw"))}
    for conv, opener, turn in replies():
        t0 = time.time()
        state = (await converse(apps[conv["kb"]], FORMS[form](opener, turn["user"], turn)))[-1]
        quality, retrieval, gold = QUALITY.get(state), RETRIEVAL.get(state), turn["gold"]
        keys = [_key(a, gold) for a in retrieval.articles] if retrieval else []
        gate = gate_view(state, gold)  # the conversation eval's own reading of the gate
        print(json.dumps({
            "id": conv["id"], "split": conv["split"], "form": form, "path": PATH.get(state),
            "total": quality.total if quality else None, "source": quality.source if quality else None,
            "action": quality.action if quality else None, "best_is_gold": bool(gate and gate["best_is_gold"]),
            "gold_rank": next((r + 1 for r, k in enumerate(keys) if k in gold_keys(gold)), None),
            "seconds": round(time.time() - t0, 1)}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1] if len(sys.argv) > 1 else "conv"))
