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


def test_the_follow_up_checker_names_each_fault():
    """`check_synthetic_lay.follow_up_problems` on hand-made rows (no data files): a first question that is not a
    synthetic one, an article outside the laws, an article number, a follow-up that repeats an eval message."""
    sys.path.insert(0, str(PROJECT_ROOT / "eval"))
    from check_synthetic_lay import bigrams, follow_up_problems

    law = "中华人民共和国个人信息保护法"
    firsts = {(law, 13, "健身房把我手机号给了别人，可以吗？")}
    good = {"law": law, "first_article": 13, "first_question": "健身房把我手机号给了别人，可以吗？",
            "follow_up": "那他们会被罚多少？", "article": 66}
    rows = [good, {**good, "first_question": "另一个问题？"}, {**good, "article": 999},
            {**good, "follow_up": "按第六十六条罚多少？"}, {**good, "follow_up": "这种App会被罚吗？"}, {**good, "extra": 1}]
    found = follow_up_problems(rows, {(law, 13), (law, 66)}, [bigrams("这种App会被罚吗？")], firsts)
    assert [p.split(":")[0] for p in found] == ["line 2", "line 3", "line 4", "line 5", "line 6"]
    assert "not a line of" in found[0] and "not in the six laws" in found[1] and "article number" in found[2]
    assert "near an eval message" in found[3] and "expected" in found[4]


@pytest.mark.parametrize("name", ["conclusion_labels", "conclusion_labels_round2"])
def test_the_labelled_polar_questions_quote_their_article_and_repeat_no_eval_question(name):
    """eval/conclusion_labels*.jsonl (the label rules' and the model's 视情况 thresholds' tuning sets): one of the five
    labels, the deciding clause verbatim from the gold article, no question near an eval question."""
    if not LAWREFBOOK.exists():
        pytest.skip(f"{LAWREFBOOK} missing (the shared data folder)")
    import json
    sys.path.insert(0, str(PROJECT_ROOT / "eval"))
    from check_synthetic_lay import JACCARD_LIMIT, bigrams, eval_questions, jaccard
    from conclusion_rules import articles_by_key, gold_keys

    from agentic_rag.stages.answer.conclusion import POLARITY_LABELS

    rows = [json.loads(line) for line in (PROJECT_ROOT / "eval" / f"{name}.jsonl").read_text(encoding="utf-8")
            .splitlines() if line.strip()]
    index, others = articles_by_key(rows), eval_questions()
    assert len({r["id"] for r in rows}) == len(rows) > 100
    for r in rows:
        assert r["conclusion"]["label"] == r["type"] in POLARITY_LABELS, r["id"]
        assert r["deciding"] in index[gold_keys(r)[0]].text, r["id"]
        assert max(jaccard(bigrams(r["query"]), o) for o in others) < JACCARD_LIMIT, r["id"]
