"""The static HTML report: one self-contained file from whatever results exist, each section with a table and an inline
SVG chart, nothing fetched from the network, and a short note (not a crash) for every results file that is missing."""
from __future__ import annotations

import json
import re
from pathlib import Path

from agentic_rag.eval.__main__ import main as eval_main
from agentic_rag.eval.report import build_report, write_report

SECTIONS = ["retrieval", "retrieval-multilaw", "e2e", "answers", "conversations", "latency"]
RET = {"recall@1": 0.5, "recall@3": 0.75, "recall@5": 0.8, "recall@10": 0.9, "mrr@10": 0.6, "ndcg@10": 0.65}


def _retrieval() -> dict:
    return {"n": 4, "n_total": 5, "dataset": "eval/pipl_eval.jsonl", "matchers": {"bm25": {**RET, "p50_ms": 1.5},
                                                                                   "hybrid": {**RET, "recall@1": 0.7}},
            "by_type": {m: {"semantic": {**RET, "n": 3}, "exact": {**RET, "recall@5": 1.0, "n": 1}}
                        for m in ("bm25", "hybrid")}}


def _answers_summary(acc: float) -> dict:
    m = {"n": 4, "conclusion_accuracy": acc, "answered_from_governing": 0.75, "key_point_recall": 0.6, "refused": 0.25,
         "p50_latency_s": 3.0}
    return {**m, "by_type": {"no": {**m, "conclusion_accuracy": acc / 2}, "kb:pipl": m}}


def _questions(n: int) -> list[dict]:
    return [{"id": f"q{i}", "latency_s": 1.0 + i, "first_text_s": 0.5 + i / 2} for i in range(n)]


def _write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _no_network(page: str) -> None:
    assert "http://" not in page and "https://" not in page and "//" not in re.sub(r"<!DOCTYPE[^>]*>", "", page)
    for ref in re.findall(r"""(?:src|href)\s*=\s*["']?([^"' >]*)""", page):
        assert ref.startswith("#"), ref  # only in-page anchors
    assert "<script" not in page and "<link" not in page and "@import" not in page and "url(" not in page


def test_report_from_synthetic_results(tmp_path):
    results, bench = tmp_path / "eval" / "results", tmp_path / "bench" / "results"
    _write(results / "retrieval.json", _retrieval())
    _write(results / "retrieval_multilaw.json", _retrieval())
    e2e = {"n": 5, "pass_rate_in_scope": 0.8, "citation_precision": 0.7, "citation_recall": 0.6, "p50_latency_s": 2.0,
           "paths": {"pass": 4, "none": 1}}
    _write(results / "e2e_local1.5b_v2.json", {"summary": {**e2e, "by_type": {"semantic": e2e, "exact": e2e}},
                                               "questions": _questions(5)})
    _write(bench / "answers_before_after.json", {"versions": {"before": _answers_summary(0.4),
                                                              "after": _answers_summary(0.8)}})
    _write(results / "answers_test.json", {"summary": _answers_summary(0.7), "questions": _questions(4), "split": "test"})
    _write(results / "conversation_pipl.json", {"summary": {"n": 6, "rewrite_keeps_must_keep": 0.9,
                                                            "by_kind": {"pronoun": {"n": 3, "recall@5": 0.5},
                                                                        "topic_switch": {"n": 3, "recall@5": 1.0}}},
                                                "questions": _questions(6)})
    out = tmp_path / "docs" / "report.html"
    assert eval_main(["report", "--out", str(out), "--results", str(results), "--bench", str(bench)]) == 0
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # one file
    page = out.read_text(encoding="utf-8")
    _no_network(page)
    for anchor in SECTIONS:
        block = page.split(f'<section id="{anchor}">', 1)[1].split("</section>", 1)[0]
        assert "<table>" in block and "<svg" in block, anchor  # a table and a chart in each section
        assert 'class="what"' in block and "Source:" in block and "Not run yet" not in block, anchor
    for name in ("retrieval.json", "retrieval_multilaw.json", "e2e_local1.5b_v2.json", "answers_before_after.json",
                 "answers_test.json", "conversation_pipl.json"):
        assert name in page
    assert ">hybrid<" in page and ">semantic<" in page and ">topic_switch<" in page and ">before<" in page
    assert "e2e_local1.5b_v2 · latency_s (n=5)" in page and "answers_test · first_text_s (n=4)" in page
    assert page.count("<svg") >= 9


def test_report_survives_missing_and_broken_files(tmp_path):
    results, bench = tmp_path / "results", tmp_path / "bench"
    page, sections = build_report(results, bench)  # nothing at all
    assert sections == SECTIONS and page.count("Not run yet") == len(SECTIONS)
    _no_network(page)
    results.mkdir()
    (results / "retrieval.json").write_text("{not json", encoding="utf-8")
    _write(results / "e2e_local1.5b_v2.json", {"summary": {"n": 0}, "questions": "oops"})
    _write(results / "answers_dev.json", ["a list, not a result"])
    _write(results / "conversation_x.json", {"summary": {"n": 2}})
    out, _ = write_report(tmp_path / "r.html", results, bench)
    page = out.read_text(encoding="utf-8")
    assert "unreadable or without a summary" in page and "no numeric metrics" in page
    retrieval = page.split('<section id="retrieval">', 1)[1].split("</section>", 1)[0]
    assert "Not run yet" in retrieval
    _no_network(page)
