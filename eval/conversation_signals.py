#!/usr/bin/env python3
"""The contextualise stage's follow-up rule (`signals.reading`) on second messages written blind, without seeing
the rule or any result (`eval/follow_up_messages.jsonl`): does the message need the first question? No model.
(Vague first messages, the other blind set, are scored by `eval/fit_vague_opener.py`.)

Halves by id: odd ids are dev (the rule may be tuned looking at its misses), even ids test (reported, its misses
never printed). Reported per half: precision and recall of "follow-up".

    .venv/bin/python eval/conversation_signals.py [--json eval/results/conversation_signals.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))

from agentic_rag.stages.contextualise import signals  # noqa: E402
from report_io import emit  # noqa: E402

MESSAGES = ROOT / "eval" / "follow_up_messages.jsonl"


def half(row: dict) -> str:
    return "dev" if int(row["id"].rsplit("-", 1)[1]) % 2 else "test"


def rate(hits: int, n: int) -> float | None:
    return round(hits / n, 3) if n else None


def follow_ups(items: list[dict], misses: bool) -> dict:
    read = [(r, signals.reading(r["message"]).follow_up) for r in items]
    tp = sum(p and r["follow_up"] for r, p in read)
    out = {"precision": rate(tp, sum(p for _, p in read)), "recall": rate(tp, sum(r["follow_up"] for r, _ in read)),
           "n_follow_up": sum(r["follow_up"] for r, _ in read), "n_self_contained": sum(not r["follow_up"] for r, _ in read)}
    if misses:
        out["misses"] = [f"{'follow-up' if r['follow_up'] else 'self-contained'}: {r['message']}"
                         for r, p in read if p != r["follow_up"]]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    items = [json.loads(line) for line in MESSAGES.read_text(encoding="utf-8").splitlines() if line.strip()]
    result = {h: follow_ups([r for r in items if half(r) == h], misses=h == "dev") for h in ("dev", "test")}
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
