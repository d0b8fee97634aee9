"""Retrieval channels behind one protocol, and the one registry of matchers (which channels a matcher fuses).

A channel ranks the whole knowledge base for each query text (the user's words, the rewriter's main query, its
variants, the keywords) and returns one ranked list per text; the retriever fuses them with weighted RRF. The
exact article lookup is not a ranking channel: found articles are pinned first by every matcher.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol

from ..knowledge.stores import TextSearchStore
from .adapter import QueryAdapter
from .bm25 import BM25Scorer, SparseBM25, top_k
from .embedder import Embedder
from .tokenizer import LegalTokenizer, char_bigrams

TextKind = Literal["original", "main", "variant", "keywords"]
# Weight of each query text in the fusion: the user's own words and the rewriter's main query count fully.
QUERY_WEIGHTS: dict[str, float] = {"original": 1.0, "main": 1.0, "variant": 0.6, "keywords": 0.6}


class QueryText(NamedTuple):
    kind: TextKind
    text: str


@dataclass
class ChannelHits:
    text: QueryText
    hits: list[tuple[int, float]]  # (document index, raw channel score), best first
    top_cosine: float | None = None  # best dense cosine of this text, when the channel computed one (the gate's floor)
    # The dense channel with a query adapter: the plain question's order and cosines (the similarity floor's and the
    # router's evidence), while `hits` are the adapted question's, in its order with its cosines (the gate's).
    cosines: list[tuple[int, float]] | None = None

    @property
    def by_cosine(self) -> list[tuple[int, float]]:
        """The hits of the plain question, in the embedder's own order, each with its cosine."""
        return self.cosines if self.cosines is not None else self.hits


class Channel(Protocol):
    name: str
    uses_keywords: bool  # also searched with the rewriter's keyword string

    def search(self, texts: Sequence[QueryText], k: int, timings: dict[str, float]) -> list[ChannelHits]:
        """One ranked list per text; may add its own sub-step times (ms) to `timings`."""


class DenseChannel:
    """Embedding similarity through the index's vector store (cosine: vectors are normalised). With a query adapter
    the hits are the adapted question's (its order, its cosines); the plain question's stay in `cosines`."""

    name = "vector"
    uses_keywords = False

    def __init__(self, embedder: Embedder, store, adapter: QueryAdapter | None = None):
        self.embedder, self.store, self.adapter = embedder, store, adapter

    def search(self, texts: Sequence[QueryText], k: int, timings: dict[str, float]) -> list[ChannelHits]:
        t0 = time.perf_counter()
        vectors = self.embedder.encode_queries([t.text for t in texts])
        t1 = time.perf_counter()
        out = [ChannelHits(t, hits) for t, hits in zip(texts, self._search(vectors, k))]
        if self.adapter is not None:
            for result, adapted in zip(out, self._search(self.adapter.apply(vectors), k)):
                result.cosines, result.hits = result.hits, adapted
        timings.update({"embed": (t1 - t0) * 1000,
                        getattr(self.store, "kind", "faiss"): (time.perf_counter() - t1) * 1000})
        for result in out:
            result.top_cosine = result.by_cosine[0][1] if result.by_cosine else None
        return out

    def _search(self, vectors, k: int) -> list[list[tuple[int, float]]]:
        scores, ids = self.store.search(vectors, k)
        return [[(int(i), float(s)) for s, i in zip(row_s, row_i) if i >= 0] for row_s, row_i in zip(scores, ids)]


class Bm25Channel:
    """jieba + legal dictionary BM25; queries are expanded with the colloquial → statute vocabulary."""

    name = "bm25"
    uses_keywords = True

    def __init__(self, scorer: BM25Scorer, tokenizer: LegalTokenizer):
        self.scorer, self.tokenizer = scorer, tokenizer

    def search(self, texts: Sequence[QueryText], k: int, timings: dict[str, float]) -> list[ChannelHits]:
        return [ChannelHits(t, top_k(self.scorer.get_scores(self.tokenizer.expand_query(t.text)), k)) for t in texts]


class StoreBm25Channel:
    """The store's own BM25 (Milvus: jieba analyzer in the engine, over the same article text as `Bm25Channel`).
    Queries get the same colloquial → statute expansion, handed to the engine's analyzer as words."""

    name = "bm25"
    uses_keywords = True

    def __init__(self, store: TextSearchStore, tokenizer: LegalTokenizer):
        self.store, self.tokenizer = store, tokenizer

    def search(self, texts: Sequence[QueryText], k: int, timings: dict[str, float]) -> list[ChannelHits]:
        queries = [" ".join(self.tokenizer.expand_query(t.text)) for t in texts]
        return [ChannelHits(t, hits) for t, hits in zip(texts, self.store.bm25(queries, k))]


class EngineHybridChannel:
    """Milvus's in-engine RRF of its dense and BM25 rankings: one fused list per query text, one round trip each
    (matcher hybrid with MILVUS_HYBRID=engine). The engine weighs both equally (pymilvus' RRFRanker has no weights),
    unlike the per-query-type weights of the client-side fusion, which is why it is not the default (PIPL eval R@5
    0.805 vs 0.895, docs/milvus.md)."""

    name = "milvus_rrf"
    uses_keywords = False  # the keyword string has no meaningful embedding

    def __init__(self, embedder: Embedder, tokenizer: LegalTokenizer, store: TextSearchStore, rrf_k: int = 60,
                 adapter: QueryAdapter | None = None):
        self.embedder, self.tokenizer, self.store, self.rrf_k = embedder, tokenizer, store, rrf_k
        self.adapter = adapter

    def search(self, texts: Sequence[QueryText], k: int, timings: dict[str, float]) -> list[ChannelHits]:
        t0 = time.perf_counter()
        vectors = self.embedder.encode_queries([t.text for t in texts])
        t1 = time.perf_counter()
        queries = [" ".join(self.tokenizer.expand_query(t.text)) for t in texts]
        ranked = self.adapter.apply(vectors) if self.adapter is not None else vectors
        out = [ChannelHits(t, hits) for t, hits in zip(texts, self.store.hybrid(ranked, queries, k, self.rrf_k))]
        for result, vector in zip(out, vectors):  # RRF scores are not cosines: the gate needs the original's
            if result.text.kind == "original":
                top = self.store.dense(vector[None, :], 1)[0]
                result.top_cosine = top[0][1] if top else None
        timings.update(embed=(t1 - t0) * 1000, milvus_hybrid=(time.perf_counter() - t1) * 1000)
        return out


class GramChannel:
    """Character 2-gram BM25: robust to segmentation errors; built on first use (seconds at 64k articles)."""

    name = "gram"
    uses_keywords = True

    def __init__(self, keyword_texts: Sequence[str]):
        self._texts = keyword_texts
        self._scorer: SparseBM25 | None = None
        self._lock = threading.Lock()

    def _index(self) -> SparseBM25:
        with self._lock:
            if self._scorer is None:
                self._scorer = SparseBM25([char_bigrams(t) for t in self._texts])
            return self._scorer

    def search(self, texts: Sequence[QueryText], k: int, timings: dict[str, float]) -> list[ChannelHits]:
        scorer = self._index()
        return [ChannelHits(t, top_k(scorer.get_scores(char_bigrams(t.text)), k)) for t in texts]


Matcher = Literal["ensemble", "hybrid", "bm25", "vector", "gram"]
# The one matcher registry: matcher name → the channels it fuses. The adaptive retry walks this order.
MATCHERS: dict[Matcher, tuple[str, ...]] = {
    "ensemble": ("vector", "bm25", "gram"),
    "hybrid": ("vector", "bm25"),
    "bm25": ("bm25",),
    "vector": ("vector",),
    "gram": ("gram",),
}
