"""eval/follow_up_shift.py: the conversation prior shift is replayed on stored gate scores and chosen by its rule
(hand-built turns, no model)."""
from __future__ import annotations

import json
import math
import sys

from agentic_rag.config import PROJECT_ROOT

sys.path.insert(0, str(PROJECT_ROOT / "eval"))
import follow_up_shift  # noqa: E402


def gate(logit: float, best_is_gold: bool, shift: float = 0.0) -> dict:
    score = round(10 / (1 + math.exp(-(logit + shift))), 1)
    return {"scores": dict.fromkeys(("relevance", "completeness", "accuracy", "coverage"), score),
            "total": round(4 * score, 1), "shift": shift, "best_is_gold": best_is_gold}


def turn(g: dict, context: str = "follow_up") -> dict:
    return {"context": context, "gate": g}


def test_replay_gives_back_the_stored_total_at_the_shift_the_run_applied():
    for g in (gate(1.2, True), gate(1.2, True, shift=0.5), gate(-0.3, False, shift=0.2)):
        assert abs(follow_up_shift.replay(g, g["shift"]) - g["total"]) <= 0.2
    g = gate(1.2, True, shift=0.5)  # logit 1.7 stored: replayed without the shift it is the unshifted total
    assert abs(follow_up_shift.replay(g, 0.0) - gate(1.2, True)["total"]) <= 0.2


def test_the_rule_takes_the_shift_that_passes_gold_without_twice_as_many_wrong(tmp_path):
    # at 1.39 a turn totals 32 (σ = 0.8): gold turns just below pass at a small shift, a wrong one needs more
    turns = [turn(gate(1.2, True)), turn(gate(1.25, True)), turn(gate(0.9, False)), turn(gate(2.0, False))]
    assert follow_up_shift.choose(turns) == 0.2
    assert follow_up_shift.counts(turns, 0.2) == {"shift": 0.2, "turns": 4, "pass_best_gold": 2,
                                                  "pass_best_other": 1, "refused_best_gold": 0}
    path = tmp_path / "run.jsonl"  # only turns that used the history and were graded count
    convs = [{"turns": [turn(gate(3.0, True), "first"), turn(gate(1.2, True)), turn(None), turn(gate(0.9, False),
                                                                                             "clarify_reply")]}]
    path.write_text("".join(json.dumps(c) + "\n" for c in convs), encoding="utf-8")
    assert [t["gate"]["best_is_gold"] for t in follow_up_shift.graded_follow_ups(path)] == [True, False]
