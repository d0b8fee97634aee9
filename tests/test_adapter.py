"""The query adapter (agentic_rag/retrieval/adapter.py) learns a systematic query-side distortion from training
questions and helps held-out ones; with nothing to learn it stays the identity; saved and loaded with the embedder
it was fitted for, refused for another (synthetic vectors: no data, no model). Also bench/stard_adapter.py's folds."""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from agentic_rag.config import PROJECT_ROOT
from agentic_rag.retrieval import adapter as qa

sys.path.insert(0, str(PROJECT_ROOT / "bench"))
import adapter_fit as fit  # fitting the adapter is training code: bench/, not the runtime package
import stard_adapter


def _unit(x):
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _world(n_docs=400, dim=16, n_q=300, seed=0, shift=True):
    """Questions are their gold article seen through a fixed linear distortion (plus noise): what a
    query-side adapter can undo."""
    rng = np.random.default_rng(seed)
    docs = _unit(rng.normal(size=(n_docs, dim)))
    gold = rng.integers(0, n_docs, n_q)
    distortion = np.eye(dim) + (rng.normal(scale=0.6, size=(dim, dim)) if shift else 0)
    q = _unit(docs[gold] @ distortion + rng.normal(scale=0.15, size=(n_q, dim)))
    return docs, q, [[int(g)] for g in gold]


def _recall(q, docs, gold, depth=10):
    top = fit.top_rows(q, docs, depth)
    return float(np.mean([g[0] in row for row, g in zip(top, gold)]))


def test_top_rows_are_the_exact_cosine_order():
    docs, q, _ = _world(n_q=20)
    want = np.argsort(-(q @ docs.T), axis=1, kind="stable")[:, :10]
    assert (fit.top_rows(q, docs, 10, chunk=7) == want).all()
    assert fit.top_rows(q, docs[:5], 10).shape == (20, 5)  # fewer documents than the depth


def test_adapter_learns_a_query_side_distortion_and_generalises():
    docs, q, gold = _world()
    w, info = fit.train(q[:200], gold[:200], docs)
    assert w is not None and info["best_epoch"] > 0 and info["n_fit"] + info["n_val"] == 200
    before, after = _recall(q[200:], docs, gold[200:]), _recall(qa.adapt(q[200:], w), docs, gold[200:])
    assert after > before + 0.1, (before, after)


def test_no_distortion_leaves_nothing_to_learn():
    docs, q, gold = _world(shift=False)
    w, _ = fit.train(q[:200], gold[:200], docs)
    assert _recall(qa.adapt(q[200:], w), docs, gold[200:]) >= _recall(q[200:], docs, gold[200:]) - 0.03


def test_saved_with_its_embedder_and_refused_for_another(tmp_path):
    w = np.random.default_rng(1).normal(size=(16, 16)).astype(np.float32) * 0.1
    qa.QueryAdapter(w, "embeddinggemma-300m@onnx-int8", {"fitted_on": "synthetic"}).save(tmp_path / "a.npy")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "a.npy"]  # no temporary files left
    loaded = qa.QueryAdapter.load(tmp_path / "a.npy", "embeddinggemma-300m@onnx-int8", 16)
    np.testing.assert_array_equal(loaded.weights, w)
    assert loaded.provenance["fitted_on"] == "synthetic"
    q = _unit(np.random.default_rng(2).normal(size=(3, 16)))
    np.testing.assert_allclose(np.linalg.norm(loaded.apply(q), axis=1), 1.0, atol=1e-6)
    with pytest.raises(qa.AdapterMismatchError, match="QUERY_ADAPTER=none"):
        qa.QueryAdapter.load(tmp_path / "a.npy", "multilingual-e5-small-q4", 16)
    with pytest.raises(qa.AdapterMismatchError):
        qa.QueryAdapter.load(tmp_path / "a.npy", "embeddinggemma-300m@onnx-int8", 768)


def test_fold_schemes():
    assert list(stard_adapter.fold_ids(10, 5, "interleaved")) == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]
    assert list(stard_adapter.fold_ids(10, 5, "blocks")) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    pairs = [(np.array([0, 1]), np.array([2, 3]))]
    assert stard_adapter.gold_seen(pairs, [[1], [2], [2], [5]]) == 0.5


class _Embedder:
    model_id, dim = "tiny", 16

    def encode_queries(self, texts):
        return _unit(np.ones((len(texts), 16)) + np.arange(16))

    def encode_documents(self, texts, show_progress=False):
        return _unit(np.ones((len(texts), 16)))


def test_the_index_folder_adapter_is_picked_up_unless_turned_off(tmp_path, monkeypatch):
    from agentic_rag.config import Settings
    from agentic_rag.knowledge.errors import IndexError_

    monkeypatch.setattr(qa, "SHIPPED", tmp_path / "shipped" / qa.ADAPTER_FILE)
    settings = Settings(_env_file=None, data_dir=tmp_path)
    assert qa.load_adapter("tiny", 16, settings) is None  # nothing there: questions as embedded
    w = np.eye(16, dtype=np.float32)[::-1] * 0.5
    qa.QueryAdapter(w, "tiny", {"fitted_on": "synthetic"}).save(tmp_path / qa.ADAPTER_FILE)
    adapter = qa.load_adapter("tiny", 16, settings)
    np.testing.assert_array_equal(adapter.weights, w)
    assert qa.load_adapter("tiny", 16, Settings(_env_file=None, data_dir=tmp_path, query_adapter="none")) is None
    with pytest.raises(IndexError_, match="no such file"):  # reported as a knowledge-base problem
        qa.load_adapter("tiny", 16, Settings(_env_file=None, data_dir=tmp_path, query_adapter=str(tmp_path / "x")))
    with pytest.raises(qa.AdapterMismatchError):  # the index's own adapter must fit the embedder
        qa.load_adapter("other", 16, settings)


def test_the_shipped_adapter_serves_its_embedder_only(tmp_path, monkeypatch):
    from agentic_rag.config import Settings

    shipped = tmp_path / "resources" / qa.ADAPTER_FILE
    shipped.parent.mkdir()
    qa.QueryAdapter(np.eye(16, dtype=np.float32), "tiny", {}, strength=0.5).save(shipped)
    monkeypatch.setattr(qa, "SHIPPED", shipped)
    settings = Settings(_env_file=None, data_dir=tmp_path / "index")
    assert qa.load_adapter("tiny", 16, settings).strength == 0.5
    assert qa.load_adapter("multilingual-e5-small-q4", 16, settings) is None  # another embedder: left out, no error


def test_the_shipped_adapter_is_for_the_shipped_embedder():
    meta = json.loads(qa.SHIPPED.with_suffix(".json").read_text(encoding="utf-8"))
    assert meta["embedder_id"] == "embeddinggemma-300m" and 0 < meta["strength"] <= 1
    assert np.load(qa.SHIPPED, allow_pickle=False).shape == (meta["dim"], meta["dim"])


class _Store:
    """A flat cosine store over fixed vectors (what FaissStore.search and .vectors return)."""

    def __init__(self, docs):
        self.docs = docs

    def search(self, q, k):
        sims = q @ self.docs.T
        ids = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        return np.take_along_axis(sims, ids, axis=1), ids

    def vectors(self, ids):
        return self.docs[ids]


def test_the_adapter_gives_the_dense_hits_and_the_plain_cosines_stay_beside_them():
    """Without the adapter article 0 is nearest; the adapter moves the question to article 1. The hits are the
    adapted question's (its order, its cosines: the gate's evidence), the plain question's order and cosines stay
    in `cosines`, and the best cosine (the similarity floor, the router) is the plain best."""
    from agentic_rag.retrieval.channels import DenseChannel, QueryText

    docs = _unit(np.eye(16)[:4] + 0.01)
    embedder = _Embedder()
    query = embedder.encode_queries(["q"])[0]
    plain = list(np.argsort(-(docs @ query), kind="stable"))
    w = np.zeros((16, 16), np.float32)
    w[:, int(plain[-1])] = 50.0  # pull every question towards the article that was last
    adapter = qa.QueryAdapter(w, "tiny", {})
    adapted = adapter.apply(query[None, :])[0]
    result = DenseChannel(embedder, _Store(docs), adapter).search([QueryText("original", "q")], 4, {})[0]
    assert result.hits[0][0] == plain[-1] and [i for i, _ in result.cosines] == plain
    assert dict(result.hits) == pytest.approx({int(i): float(docs[i] @ adapted) for i in range(4)})
    assert dict(result.cosines) == pytest.approx({int(i): float(docs[i] @ query) for i in range(4)})
    assert [s for _, s in result.hits] == sorted((s for _, s in result.hits), reverse=True)
    assert result.top_cosine == pytest.approx(float(docs[plain[0]] @ query))
    alone = DenseChannel(embedder, _Store(docs)).search([QueryText("original", "q")], 4, {})[0]
    assert [i for i, _ in alone.hits] == plain and alone.cosines is None


def test_strength_scales_the_correction_and_is_saved(tmp_path):
    w = np.random.default_rng(3).normal(size=(16, 16)).astype(np.float32) * 0.2
    q = _unit(np.random.default_rng(4).normal(size=(5, 16)))
    half = qa.QueryAdapter(w, "tiny", {}, strength=0.5)
    np.testing.assert_allclose(half.apply(q), qa.adapt(q, 0.5 * w), atol=1e-6)
    half.save(tmp_path / "a.npy")
    assert qa.QueryAdapter.load(tmp_path / "a.npy", "tiny", 16).strength == 0.5
    assert qa.QueryAdapter(w, "tiny", {}, strength=0.0).apply(q) == pytest.approx(q, abs=1e-6)


def test_the_strength_is_the_one_other_questions_tolerate():
    """Every strength is scored on both families (the fitted kind's unseen questions, and questions of another
    kind); the chosen one has the best mean; with no adapter the strength is 0."""
    docs, q, gold = _world()
    w, _ = fit.train(q[:200], gold[:200], docs)
    rng = np.random.default_rng(5)
    plain_gold = rng.integers(0, len(docs), 80)
    plain_q = _unit(docs[plain_gold] + rng.normal(scale=0.15, size=(80, 16)))
    own = {"plain": {"vecs": plain_q, "gold": [{f"d{g}"} for g in plain_gold], "dev": np.arange(80),
                     "national": {"keys": [f"d{i}" for i in range(len(docs))], "vecs": docs}}}
    strength, scores = stard_adapter.choose_strength(w, q[200:], gold[200:], docs, own)
    assert set(scores) == set(stard_adapter.STRENGTHS) and scores[strength] == max(scores.values())
    assert stard_adapter.choose_strength(None, q, gold, docs, own) == (0.0, {})
