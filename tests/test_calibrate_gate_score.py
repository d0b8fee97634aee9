"""eval/calibrate_gate.py's `score`: the ceiling of the judge's evidence and PASS by what an answer would stand on,
on hand-built feature rows (no model, no index): the numbers the held-out lay evaluation reports come from here."""
from __future__ import annotations

import json
import sys

from agentic_rag.config import PROJECT_ROOT

sys.path.insert(0, str(PROJECT_ROOT / "eval"))
import calibrate_gate  # noqa: E402

# A calibration where only the model's logit d matters: P(relevant) = sigmoid(d); the other dimensions are constant.
CAL = {"relevance": [0.0, 1.0, 0.0, 0.0], "accuracy": [5.0, 0.0, 0.0], "completeness": [5.0, 0.0, 0.0, 0.0, 0.0],
       "gate_shift": 0.0}
SIGNALS = {"best_cosine": 0.5, "cosine_margin": 0.1, "lexical_overlap": 0.3, "exact_hit": 0.0}


def row(rid, gold, articles, diffs, in_scope=True):
    return {"id": rid, "gold": gold, "in_scope": in_scope, "articles": articles, "diffs": diffs,
            "cosines": [0.4] * len(articles), "subs": [None] * len(articles), "signals": SIGNALS}


ROWS = [
    row("best-gold", [10], [10, 23, 47], [4.0, 0.0, -1.0]),          # the judge's best is gold, and it passes
    row("gold-second", [23], [10, 23, 47], [4.0, 1.0, -1.0]),        # gold retrieved, another judged best
    row("gold-best-weak", [47], [10, 23, 47], [-3.0, -3.0, -2.0]),   # gold judged best, but too weak to pass
    row("missed", [66], [10, 23, 47], [4.0, 0.0, 0.0]),              # no gold among the scored articles
    row("outside", [], [10, 23], [-4.0, -4.0], in_scope=False),
]


def test_the_ceiling_counts_questions_whose_best_judged_article_is_gold_whatever_the_threshold():
    c = calibrate_gate.ceiling(ROWS, CAL)
    assert c["in_scope"] == 4 and c["gold_retrieved"] == 3
    assert c["best_judged_is_gold"] == 2  # best-gold and gold-best-weak: a gate can pass at most these from gold
    assert c["answered_from_gold_if_all_passed"] == 0.5
    assert 0.5 < c["article_auroc"] <= 1.0


def test_score_reports_pass_by_what_the_answer_would_stand_on(tmp_path, monkeypatch):
    features, cal, out = tmp_path / "f.jsonl", tmp_path / "cal.json", tmp_path / "report.json"
    features.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    cal.write_text(json.dumps(CAL), encoding="utf-8")
    monkeypatch.setattr(calibrate_gate, "FEATURES", features)
    monkeypatch.setattr(calibrate_gate, "ROOT", tmp_path)
    calibrate_gate.score(type("Args", (), {"calibration": cal, "json": out})())
    report = json.loads(out.read_text(encoding="utf-8"))
    by_case = report["passed_by_case"]
    assert by_case["gold_best"] == "1/2" and by_case["gold_not_best"] == "1/1"
    assert by_case["gold_not_retrieved"] == "1/1" and by_case["out_of_scope"] == "0/1"
    assert report["ceiling"]["best_judged_is_gold"] == 2 and report["n"] == 5


def test_the_test_half_is_never_collected_into_the_file_the_fit_reads(monkeypatch):
    monkeypatch.setattr(calibrate_gate, "FEATURES", calibrate_gate.FIT_FEATURES)
    try:
        calibrate_gate.collect(type("Args", (), {"split": "test", "dataset": "answers"})())
    except SystemExit as e:
        assert "--features" in str(e)
    else:
        raise AssertionError("collect --split test wrote into the fit's features file")


def test_the_synthetic_sample_is_fixed_and_each_row_names_its_own_knowledge_base():
    """`collect --dataset synthetic` reads a fixed sample per law of eval/synthetic_lay_round2.jsonl (seed 44): the
    stored features (eval/results/gate_features_synthetic_round2.jsonl) are these rows, in this order."""
    rows = list(calibrate_gate.synthetic_rows())
    assert len(rows) == sum(calibrate_gate.SYNTHETIC_SAMPLE.values()) == 150
    assert [r["id"] for r, _, _ in rows] == [r["id"] for r, _, _ in calibrate_gate.synthetic_rows()]
    stored = (PROJECT_ROOT / "eval" / "results" / "gate_features_synthetic_round2.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line)["id"] for line in stored.splitlines()] == [r["id"] for r, _, _ in rows]
    for r, kb, gold in rows:
        assert (kb == "pipl") == isinstance(gold[0], int)
        assert kb == "pipl" or gold[0].startswith("中华人民共和国") and ":" in gold[0]
