"""Retrieval metrics on hand-computed cases, `evaluate` with a scripted retriever, and the eval CLI end to end."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from agentic_rag.config import PROJECT_ROOT
from agentic_rag.eval.metrics import mean_metrics, mrr_at, ndcg_at, recall_at, score_ranking
from agentic_rag.eval.retrieval import evaluate, format_table, load_dataset
from agentic_rag.retrieval.types import Article, Retrieval
from tests import hermetic

METRIC_KEYS = {"recall@1", "recall@3", "recall@5", "recall@10", "mrr@10", "ndcg@10"}


# ---------------------------------------------------------------------------------------------- metrics
def test_recall():
    ranked = ["a", "b", "c", "d"]
    assert recall_at(ranked, {"b", "z"}, 1) == 0.0
    assert recall_at(ranked, {"b", "z"}, 2) == 0.5
    assert recall_at(ranked, {"b", "d"}, 10) == 1.0
    assert recall_at(ranked, {"b", "d"}, 3) == 0.5
    assert recall_at(ranked, set(), 5) == 0.0
    assert recall_at([], {"a"}, 5) == 0.0


def test_mrr():
    assert mrr_at(["x", "y", "g"], {"g"}) == pytest.approx(1 / 3)
    assert mrr_at(["g", "x"], {"g"}) == 1.0
    assert mrr_at(["x", "g2", "g1"], {"g1", "g2"}) == 0.5  # first gold item counts
    assert mrr_at(["x", "y", "g"], {"g"}, k=2) == 0.0  # beyond k
    assert mrr_at(["x"] * 10 + ["g"], {"g"}) == 0.0  # rank 11 is outside @10


def test_ndcg():
    assert ndcg_at(["g1", "g2", "x"], {"g1", "g2"}) == pytest.approx(1.0)
    expected = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg_at(["x", "g1", "g2"], {"g1", "g2"}) == pytest.approx(expected)  # ≈ 0.6934
    assert ndcg_at(["x", "g"], {"g"}) == pytest.approx(1 / math.log2(3))  # ≈ 0.6309
    assert ndcg_at(["x", "y"], {"g"}) == 0.0
    assert ndcg_at([], set()) == 0.0
    # more gold items than k: the ideal DCG is capped at k
    assert ndcg_at(["g1", "g2"], {"g1", "g2", "g3"}, k=2) == pytest.approx(1.0)


def test_score_ranking_and_mean():
    m = score_ranking([5, 28, 31], {31, 28})
    assert set(m) == METRIC_KEYS
    assert (m["recall@1"], m["recall@3"], m["mrr@10"]) == (0.0, 1.0, 0.5)
    mean = mean_metrics([{"recall@1": 1.0, "mrr@10": 1.0}, {"recall@1": 0.0, "mrr@10": 1 / 3}])
    assert mean == {"recall@1": 0.5, "mrr@10": 0.6667}
    assert mean_metrics([]) == {}


# ---------------------------------------------------------------------------------------------- dataset, evaluate
def _write_dataset(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_load_dataset_defaults_and_errors(tmp_path):
    path = tmp_path / "ds.jsonl"
    path.write_text('{"query": "第五十七条", "gold": [57]}\n\n{"query": "x", "gold": [], "id": "q9", "type": "oos"}\n',
                    encoding="utf-8")
    rows = load_dataset(path)
    assert [(r["id"], r["type"], r["gold"]) for r in rows] == [("1", "unknown", [57]), ("q9", "oos", [])]
    path.write_text('{"query": "a", "gold": [1]}\n{"query": "no gold"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        load_dataset(path)


def _article(n: int) -> Article:
    return Article(id=f"pipl#{n}", title="", law="pipl", article=n, article_cn=f"第{n}条", text="")


class ScriptedRetriever:
    """Returns a fixed ranking per (query, matcher); records the calls."""

    reranker = None

    def __init__(self, rankings: dict[tuple[str, str], list[int]]):
        self.rankings = rankings
        self.calls: list[tuple] = []

    def retrieve(self, query, matcher="ensemble", top_k_=None, rerank=True):
        self.calls.append((query, matcher, top_k_, rerank))
        return Retrieval(query=query, query_type="semantic", matcher=matcher,
                               articles=[_article(n) for n in self.rankings[(query, matcher)]])


def test_evaluate_with_a_scripted_retriever():
    rows = [{"id": "1", "query": "q1", "gold": [57], "type": "exact"},
            {"id": "2", "query": "q2", "gold": [28, 31], "type": "semantic"},
            {"id": "3", "query": "oos", "gold": [], "type": "oos"}]
    retriever = ScriptedRetriever({("q1", "bm25"): [57, 1], ("q2", "bm25"): [5, 31, 28],
                                   ("q1", "hybrid"): [3, 57], ("q2", "hybrid"): [1, 2, 3]})
    result = evaluate(retriever, rows, ["bm25", "hybrid_rerank"], depth=7)
    assert (result["n"], result["n_total"]) == (2, 3)
    assert all(q != "oos" for q, *_ in retriever.calls)  # out-of-scope rows are not scored
    assert ("q1", "hybrid", 7, True) in retriever.calls and ("q1", "bm25", 7, False) in retriever.calls
    bm25 = result["matchers"]["bm25"]
    assert bm25["recall@1"] == 0.5 and bm25["recall@3"] == 1.0 and bm25["mrr@10"] == 0.75
    hybrid = result["matchers"]["hybrid_rerank"]
    assert hybrid["recall@10"] == 0.5 and hybrid["mrr@10"] == 0.25
    assert result["by_type"]["bm25"]["semantic"]["n"] == 1 and result["by_type"]["bm25"]["exact"]["recall@1"] == 1.0
    assert bm25["p50_ms"] is not None
    table = format_table(result)
    assert "bm25" in table and "hybrid_rerank" in table and "recall@5 by question type" in table


# ---------------------------------------------------------------------------------------------- the CLI
def test_eval_cli_end_to_end(pipl_data_dir, tmp_path):
    dataset = _write_dataset(tmp_path / "small.jsonl", [
        {"id": "a", "query": "第五十七条", "gold": [57], "type": "exact"},
        {"id": "b", "query": "我家孩子才10岁，App收集他的信息要我同意吗？", "gold": [28, 31], "type": "semantic"},
        {"id": "c", "query": "今天天气怎么样？", "gold": [], "type": "out_of_scope"},
    ])
    out_json, out_png = tmp_path / "out.json", tmp_path / "out.png"
    env = {"PYTHONPATH": str(PROJECT_ROOT), "MODELS_DIR": str(PROJECT_ROOT / "models")}
    proc = hermetic.run(
        [sys.executable, "-m", "agentic_rag.eval", "retrieval", "--dataset", str(dataset),
         "--matchers", "bm25", "vector", "hybrid", "--data-dir", str(pipl_data_dir),
         "--json", str(out_json), "--png", str(out_png)],
        cwd=tmp_path, env_extra=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["n"] == 2 and result["n_total"] == 3
    assert set(result["matchers"]) == {"bm25", "vector", "hybrid"}
    for name, metrics in result["matchers"].items():
        assert METRIC_KEYS <= set(metrics), name
        for key in METRIC_KEYS:
            assert 0.0 <= metrics[key] <= 1.0, (name, key, metrics[key])
        assert metrics["mrr@10"] >= 0.5  # 第五十七条 is pinned first by every matcher
    assert result["index"] == {"doc_count": 74, "embedder": "embeddinggemma-300m"}
    assert json.loads(out_json.read_text(encoding="utf-8")) == result
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "recall@5 by question type" in proc.stderr


def test_eval_cli_missing_model_exits_1(tmp_path, capsys):
    from agentic_rag.eval.__main__ import main

    dataset = _write_dataset(tmp_path / "d.jsonl", [{"query": "x", "gold": [1]}])
    with pytest.MonkeyPatch.context() as mp:
        # no embedding model in this models dir: a clear error, exit status 1, no traceback
        mp.setenv("MODELS_DIR", str(tmp_path / "no-models"))
        from agentic_rag import config

        config.get_settings.cache_clear()
        try:
            assert main(["retrieval", "--dataset", str(dataset), "--data-dir", str(tmp_path / "none")]) == 1
            err = capsys.readouterr().err
            assert err.startswith("error:") and "download_models.py" in err and "Traceback" not in err
        finally:
            config.get_settings.cache_clear()
