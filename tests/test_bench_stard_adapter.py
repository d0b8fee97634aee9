"""bench/stard_adapter.py: the query adapter learns a systematic query-side shift from training questions and
helps held-out ones; with nothing to learn it stays the identity (synthetic vectors: no data, no model)."""
from __future__ import annotations

import sys

import numpy as np

from agentic_rag.config import PROJECT_ROOT

sys.path.insert(0, str(PROJECT_ROOT / "bench"))
import stard_adapter as sa


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
    top = sa.top_rows(q, docs, depth)
    return float(np.mean([g[0] in row for row, g in zip(top, gold)]))


def test_top_rows_are_the_exact_cosine_order():
    docs, q, _ = _world(n_q=20)
    want = np.argsort(-(q @ docs.T), axis=1, kind="stable")[:, :10]
    assert (sa.top_rows(q, docs, 10, chunk=7) == want).all()


def test_adapter_learns_a_query_side_distortion_and_generalises():
    docs, q, gold = _world()
    train, test = np.arange(200), np.arange(200, 300)
    w, info = sa.train_adapter(q[train], [gold[i] for i in train], docs)
    assert w is not None and info["best_epoch"] > 0
    before = _recall(q[test], docs, [gold[i] for i in test])
    after = _recall(sa.adapt(q[test], w), docs, [gold[i] for i in test])
    assert after > before + 0.1, (before, after)


def test_no_distortion_leaves_little_to_learn():
    docs, q, gold = _world(shift=False)
    w, _ = sa.train_adapter(q[:200], gold[:200], docs)
    before = _recall(q[200:], docs, gold[200:])
    after = _recall(sa.adapt(q[200:], w), docs, gold[200:])
    assert after >= before - 0.03


def test_fold_schemes():
    assert list(sa.fold_ids(10, 5, "interleaved")) == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]
    assert list(sa.fold_ids(10, 5, "blocks")) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
