"""The labelled eval sets stay valid: their own checkers (stdlib scripts in eval/) pass on every committed set — the
answers set, the held-out fresh set (its own mode: split `fresh`, no near-duplicate of any other set's question) and
the conversation set and its held-out fresh sets, and the adapter's synthetic lay questions and follow-ups (none
near an eval question). A label edit that breaks a must-not pattern against the statute text, or a fresh question
that repeats a question of another set, fails here."""
from __future__ import annotations

import sys

import pytest

from tests import hermetic
from tests.conftest import LAWREFBOOK, PROJECT_ROOT


@pytest.mark.parametrize("args", [["eval/check_answers_eval.py"],
                                  ["eval/check_answers_eval.py", "eval/answers_fresh.jsonl"],
                                  ["eval/check_answers_eval.py", "eval/answers_fresh2.jsonl"],
                                  ["eval/check_conversation_eval.py"],
                                  *(["eval/check_conversation_eval.py", "--data", f"eval/{name}.jsonl", "--fresh"]
                                    for name in ("conversation_fresh", "conversation_fresh2")),
                                  ["eval/check_synthetic_lay.py"],
                                  ["eval/check_synthetic_lay.py", "eval/synthetic_lay_round2.jsonl"],
                                  ["eval/check_synthetic_lay.py", "--follow-ups"]],
                         ids=["answers", "fresh", "fresh2", "conversation", "conversation-fresh", "conversation-fresh2",
                              "synthetic-lay", "synthetic-lay-round2", "synthetic-follow-ups"])
def test_the_labelled_sets_pass_their_checkers(args):
    if not LAWREFBOOK.exists():
        pytest.skip(f"{LAWREFBOOK} missing (the shared data folder)")
    done = hermetic.run([sys.executable, *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "OK" in done.stdout
