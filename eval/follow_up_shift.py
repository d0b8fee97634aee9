#!/usr/bin/env python3
"""A prior shift of the gate for questions that continue a conversation (follow-ups, clarification replies),
replayed on a conversation eval run's stored gate scores: measured at stop 37, not shipped (docs/evaluation.md,
"A prior shift for follow-ups, measured end to end").

The gate's weights were fitted on questions asked alone; a follow-up is searched as the rule form
「上一问题：…；追问：…」, whose wrapper and earlier facts lower its cosines and word overlap. The conversation eval
stores, for every graded turn, the gate's four calibrated scores (with `shift`, the prior shift the run applied: 0
when absent) and whether the article the gate judged most relevant is gold (`agentic_rag/eval/conversation.py
gate_view`). A shift s is replayed on those scores without asking the model again: each score is a sigmoid × 10,
so its logit moves by s. On the turns that use the history (follow-ups, clarification replies) the rule picks the shift that
maximises

    PASSes whose best article is gold − 2 × PASSes whose best article is not

(an answer built on a non-governing article costs twice what a right answer gains), ties to the stricter gate.
Scores are stored rounded to 0.1, so the replay is approximate near 0 and 10; the end-to-end run reports it.
A turn the signals gate failed without the model (`skip_model`) may be graded by the model once shifted: the
replay reads the signals gate's scores for it, the run decides.

    .venv/bin/python -m agentic_rag.eval conversation --dataset eval/conversation_eval.jsonl --split dev \
        --pipl-dir data --multilaw-dir data-multilaw --checkpoint eval/results/conversation_dev_s37.jsonl
    .venv/bin/python eval/follow_up_shift.py eval/results/conversation_dev_s37.jsonl \
        --test eval/results/conversation_test_s37.jsonl
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_rag.stages.grade.judge import sigmoid  # noqa: E402

REPORT = ROOT / "eval" / "results" / "follow_up_shift.json"
THRESHOLD = 32
WRONG_COST = 2
SHIFTS = [round(0.1 * i, 1) for i in range(0, 21)]


def graded_follow_ups(path: Path) -> list[dict]:
    """The turns of a conversation eval run that used the history and were graded by the calibrated gate."""
    convs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [t for c in convs for t in c["turns"]
            if t["context"] in ("follow_up", "clarify_reply") and t.get("gate")]


def replay(gate: dict, shift: float) -> float:
    """The total the gate would give with the prior shift `shift` instead of the one the run applied."""
    total = 0.0
    for score in gate["scores"].values():
        p = min(max(score / 10, 0.005), 0.995)
        logit = math.log(p / (1 - p)) - gate.get("shift", 0.0) + shift
        total += round(10 * sigmoid(logit), 1)
    return round(total, 1)


def counts(turns: list[dict], shift: float) -> dict:
    passed = [t for t in turns if replay(t["gate"], shift) >= THRESHOLD]
    gold = sum(t["gate"]["best_is_gold"] for t in passed)
    return {"shift": shift, "turns": len(turns), "pass_best_gold": gold, "pass_best_other": len(passed) - gold,
            "refused_best_gold": sum(t["gate"]["best_is_gold"] for t in turns) - gold}


def choose(turns: list[dict]) -> float:
    rows = [counts(turns, s) for s in SHIFTS]
    best = max(rows, key=lambda r: (r["pass_best_gold"] - WRONG_COST * r["pass_best_other"], -r["shift"]))
    return best["shift"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dev", type=Path, help="a conversation eval checkpoint of the dev split")
    p.add_argument("--test", type=Path, help="a test-split checkpoint: replayed at the chosen shift, reported only")
    p.add_argument("--json", type=Path, default=REPORT)
    args = p.parse_args()
    dev = graded_follow_ups(args.dev)
    shift = choose(dev)
    report = {"rule": f"max PASS(best gold) - {WRONG_COST} x PASS(best not gold), ties to the stricter",
              "dev_run": str(args.dev), "chosen": shift, "dev": [counts(dev, s) for s in SHIFTS]}
    if args.test:
        test = graded_follow_ups(args.test)
        report.update(test_run=str(args.test), test=[counts(test, 0.0), counts(test, shift)])
    args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "dev"}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
