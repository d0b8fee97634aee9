"""BM25 scorers over pre-tokenised documents.

`SparseBM25` precomputes every (document, term) BM25 weight once into a sparse column matrix, so a query costs
one column slice and a sum (the approach of bm25s) instead of rank-bm25's Python loop over every document for
every query term. With ``idf="okapi"`` it reproduces `rank_bm25.BM25Okapi` scores exactly (the comparison test
checks this); the default ``idf="lucene"`` (log(1 + (N-n+.5)/(n+.5))) is never negative, so a term present in most
articles (个人信息 in the PIPL) still counts a little instead of being floored by rank-bm25's epsilon rule.

`RankBM25` wraps rank-bm25 (the design's library) behind the same interface so it stays selectable
(``BM25_BACKEND=rank_bm25``) and comparable in the benchmark.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal, Protocol

import numpy as np
from scipy import sparse

IdfKind = Literal["lucene", "okapi"]


class BM25Scorer(Protocol):
    def get_scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """One score per document, in corpus order."""


class SparseBM25:
    def __init__(self, corpus_tokens: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75,
                 idf: IdfKind = "lucene", epsilon: float = 0.25):
        self.vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        tfs: list[float] = []
        for i, toks in enumerate(corpus_tokens):
            for term, tf in Counter(toks).items():
                rows.append(i)
                cols.append(self.vocab.setdefault(term, len(self.vocab)))
                tfs.append(tf)
        n_docs = len(corpus_tokens)
        self.n_docs = n_docs
        if n_docs == 0:
            self._weights = sparse.csc_matrix((0, 0), dtype=np.float32)
            return
        # explicit int dtypes: when no document has a token the empty lists would become float arrays
        rows_a, cols_a = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        tf_a = np.asarray(tfs, dtype=np.float64)
        doc_len = np.array([len(t) for t in corpus_tokens], dtype=np.float64)
        avgdl = max(doc_len.sum() / n_docs, 1e-9)
        df = np.bincount(cols_a, minlength=len(self.vocab)).astype(np.float64)
        if idf == "okapi":
            idf_v = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
            floor = epsilon * idf_v.mean() if len(idf_v) else 0.0
            idf_v = np.where(idf_v < 0, floor, idf_v)
        else:
            idf_v = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        norm = k1 * (1 - b + b * doc_len[rows_a] / avgdl)
        w = idf_v[cols_a] * tf_a * (k1 + 1) / (tf_a + norm)
        self._weights = sparse.csc_matrix((w.astype(np.float32), (rows_a, cols_a)), shape=(n_docs, len(self.vocab)))

    def get_scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        counts = Counter(self.vocab[t] for t in query_tokens if t in self.vocab)
        if not counts or self.n_docs == 0:
            return np.zeros(self.n_docs, dtype=np.float32)
        cols = np.fromiter(counts.keys(), dtype=np.int64)
        mult = np.fromiter(counts.values(), dtype=np.float32)
        return np.asarray(self._weights[:, cols] @ mult).ravel()


class RankBM25:
    """rank-bm25's BM25Okapi behind the `BM25Scorer` interface (slow at scale; kept for comparison)."""

    def __init__(self, corpus_tokens: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75):
        from rank_bm25 import BM25Okapi

        self.n_docs = len(corpus_tokens)
        # BM25Okapi divides by zero on an empty corpus or when every document is empty (all scores are 0 then).
        # A few empty documents are fine as they are: padding them would change avgdl and so every score.
        has_terms = any(len(t) for t in corpus_tokens)
        self._bm25 = BM25Okapi([list(t) for t in corpus_tokens], k1=k1, b=b) if has_terms else None

    def get_scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        if self._bm25 is None or not query_tokens:
            return np.zeros(self.n_docs, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(list(query_tokens)), dtype=np.float32)


def make_bm25(corpus_tokens: Sequence[Sequence[str]], backend: str = "sparse") -> BM25Scorer:
    if backend == "rank_bm25":
        return RankBM25(corpus_tokens)
    if backend == "sparse":
        return SparseBM25(corpus_tokens)
    raise ValueError(f"unknown BM25 backend {backend!r} (sparse | rank_bm25)")


def top_k(scores: np.ndarray, k: int, min_score: float = 0.0) -> list[tuple[int, float]]:
    """Indices and scores of the k best documents scoring above `min_score`, best first (ties by index)."""
    if k <= 0 or scores.size == 0:
        return []
    idx = np.flatnonzero((scores > min_score) & np.isfinite(scores))
    if idx.size > k:
        # Keep every document scoring at least the k-th best score, so that ties at the cut are also won by
        # the lower index (argpartition alone keeps an arbitrary subset of the tied documents).
        kth = np.partition(-scores[idx], k - 1)[k - 1]
        idx = idx[-scores[idx] <= kth]
    idx = idx[np.lexsort((idx, -scores[idx]))][:k]
    return [(int(i), float(scores[i])) for i in idx]
