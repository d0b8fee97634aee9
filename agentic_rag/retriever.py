"""LocalRetriever: query-type analysis → exact lookup + dense + BM25 + 2-gram recall → weighted RRF → rerank.

Matchers (chosen per call; the adaptive retry loop switches between them):

* ``ensemble`` — vector + bm25 + gram      * ``hybrid`` — vector + bm25
* ``bm25`` — jieba/BM25 only              * ``vector`` — dense only      * ``gram`` — character 2-gram BM25 only

Exact article references (第二十八条, 个人信息保护法第29条 …) are looked up directly with every matcher and
pinned first. Every query variant (the original question always included) runs through every channel of the
matcher; all ranked lists are fused with weighted RRF. The object is read-only after construction except for
the lazily built 2-gram index (built once, under a lock), so concurrent `retrieve` calls are safe.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from .bm25 import BM25Scorer, SparseBM25, make_bm25, top_k
from .config import Matcher, Settings, get_settings
from .corpus import Document
from .embedder import Embedder, load_embedder
from .fusion import CHANNEL_WEIGHTS, RankedList, weighted_rrf
from .index import LoadedIndex, load_index
from .models import resolve_embedder
from .query_analysis import ArticleRef, QueryAnalysis, analyze_query, law_matches
from .reranker import Reranker, make_reranker
from .tokenizer import LegalTokenizer, char_bigrams

log = logging.getLogger(__name__)

MATCHER_CHANNELS: dict[str, tuple[str, ...]] = {
    "ensemble": ("vector", "bm25", "gram"),
    "hybrid": ("vector", "bm25"),
    "bm25": ("bm25",),
    "vector": ("vector",),
    "gram": ("gram",),
}
# Weight of each query text in the fusion: the user's own words and the rewriter's main query count fully.
QUERY_WEIGHTS = {"original": 1.0, "main": 1.0, "variant": 0.6, "keywords": 0.6}


class QueryError(ValueError):
    """The question cannot be searched as given (empty, too long); the message is for the user."""


def validate_query(query: str | None, max_chars: int) -> str:
    """The stripped question, or QueryError with a message for the user (empty or too long)."""
    q = (query or "").strip()
    if not q:
        raise QueryError("问题为空：请输入要咨询的法律问题。")
    if len(q) > max_chars:
        raise QueryError(f"问题过长（{len(q)} 字，上限 {max_chars} 字）：请精简后再问。")
    return q


@dataclass
class RetrievedArticle:
    id: str
    title: str
    law: str
    article: int | None
    article_cn: str
    text: str
    chapter: str | None
    section: str | None
    score: float  # final: rerank score when reranked, else the fused RRF score
    rrf_score: float
    rerank_score: float | None
    channels: dict[str, dict[str, float]]  # {"vector": {"rank": 1, "score": 0.62}, "bm25": {...}, "lookup": ...}
    search_type: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RetrievalResult:
    query: str
    query_type: str
    matcher: str
    articles: list[RetrievedArticle]
    refs: list[int] = field(default_factory=list)
    max_vector_score: float | None = None  # best cosine of the user's question: an absolute relevance signal
    timings_ms: dict[str, float] = field(default_factory=dict)


class LocalRetriever:
    def __init__(self, index: LoadedIndex, embedder: Embedder, tokenizer: LegalTokenizer,
                 reranker: Reranker | None = None, settings: Settings | None = None):
        self.settings = settings or get_settings()
        self.index = index
        self.documents: list[Document] = index.documents
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.reranker = reranker
        self._bm25: BM25Scorer = make_bm25(index.tokens, self.settings.bm25_backend)
        self._gram: SparseBM25 | None = None
        self._gram_lock = threading.Lock()
        laws = {d.law for d in self.documents}
        self._n_laws = len(laws)
        # The knowledge base's law when the index holds exactly one (prompts and the citation check name it).
        self.law: str | None = next(iter(laws)) if len(laws) == 1 else None
        self._by_article: dict[int, list[int]] = {}
        for i, d in enumerate(self.documents):
            if d.article is not None:
                self._by_article.setdefault(d.article, []).append(i)

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> LocalRetriever:
        """Resolve the models and load the index named by the settings (errors say how to fix them)."""
        settings = settings or get_settings()
        resolved = resolve_embedder(settings.embedding_model, settings.models_dir)
        embedder = load_embedder(resolved, settings.embed_batch_size)
        index = load_index(settings.data_dir, embedder.model_id, embedder.dim, corpus_file=settings.corpus_path)
        return cls(index, embedder, LegalTokenizer(), make_reranker(settings), settings)

    # ------------------------------------------------------------------ channels
    def _gram_index(self) -> SparseBM25:
        with self._gram_lock:
            if self._gram is None:
                self._gram = SparseBM25([char_bigrams(d.keyword_text) for d in self.documents])
            return self._gram

    def _lookup(self, refs: list[ArticleRef]) -> list[int]:
        found: list[int] = []
        for ref in refs:
            matches = [i for i in self._by_article.get(ref.article, [])
                       if ref.law is None or law_matches(ref.law, self.documents[i].law)]
            if ref.law is None and self._n_laws > 1 and len(matches) > 3:
                continue  # "第5条" of which of many laws? Let the other channels decide.
            found.extend(i for i in matches if i not in found)
        return found

    # ------------------------------------------------------------------ main entry
    def retrieve(self, query: str, variants: Sequence[str] = (), main_query: str | None = None,
                 keywords: Sequence[str] = (), matcher: Matcher = "ensemble", top_k_: int | None = None,
                 rerank: bool = True) -> RetrievalResult:
        """Search the index for `query` (plus the rewriter's `main_query`, `variants` and `keywords`)."""
        query = validate_query(query, self.settings.max_query_chars)
        if matcher not in MATCHER_CHANNELS:
            raise QueryError(f"unknown matcher {matcher!r}; one of {', '.join(MATCHER_CHANNELS)}")
        k = top_k_ or self.settings.top_k
        timings: dict[str, float] = {}
        analysis: QueryAnalysis = analyze_query(query, self.tokenizer.legal_terms)
        texts: list[tuple[str, str]] = [("original", query)]
        for kind, text in [("main", main_query), *[("variant", v) for v in variants]]:
            text = (text or "").strip()[: self.settings.max_query_chars]
            if text and all(text != t for _, t in texts):
                texts.append((kind, text))
        keyword_text = " ".join(w.strip() for w in keywords if w and w.strip())
        channels = MATCHER_CHANNELS[matcher]
        # A single-channel matcher ranks by that channel alone, even one the query type gives no weight in a
        # fusion (gram on semantic questions).
        weights = CHANNEL_WEIGHTS[analysis.type] if len(channels) > 1 else dict.fromkeys(channels, 1.0)
        n_cand = self.settings.channel_candidates
        lists: list[RankedList] = []
        max_cos: float | None = None

        if "vector" in channels:
            t0 = time.perf_counter()
            qvecs = self.embedder.encode_queries([t for _, t in texts])
            t1 = time.perf_counter()
            scores, ids = self.index.store.search(qvecs, n_cand)
            timings["embed"] = (t1 - t0) * 1000
            timings["faiss"] = (time.perf_counter() - t1) * 1000
            for (kind, _), row_s, row_i in zip(texts, scores, ids):
                hits = [(int(i), float(s)) for s, i in zip(row_s, row_i) if i >= 0]
                if hits and kind == "original":  # the user's words, not what a rewriter made of them
                    max_cos = hits[0][1]
                lists.append(RankedList("vector", weights["vector"] * QUERY_WEIGHTS[kind], hits))

        kw_texts = texts + ([("keywords", keyword_text)] if keyword_text else [])
        if "bm25" in channels:
            t0 = time.perf_counter()
            for kind, text in kw_texts:
                hits = top_k(self._bm25.get_scores(self.tokenizer.expand_query(text)), n_cand)
                lists.append(RankedList("bm25", weights["bm25"] * QUERY_WEIGHTS[kind], hits))
            timings["bm25"] = (time.perf_counter() - t0) * 1000
        if "gram" in channels:
            t0 = time.perf_counter()
            gram = self._gram_index()
            for kind, text in kw_texts:
                hits = top_k(gram.get_scores(char_bigrams(text)), n_cand)
                lists.append(RankedList("gram", weights["gram"] * QUERY_WEIGHTS[kind], hits))
            timings["gram"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        fused = weighted_rrf(lists, k=self.settings.rrf_k)
        pinned = self._lookup(analysis.refs)
        by_doc = {h.doc: h for h in fused}
        timings["fusion"] = (time.perf_counter() - t0) * 1000

        rest = [h for h in fused if h.doc not in pinned]
        rerank_scores: dict[int, float] = {}
        if rerank and self.reranker is not None and rest:
            t0 = time.perf_counter()
            head = rest[: self.settings.rerank_top_n]
            scores_ = self.reranker.score(query, [self.documents[h.doc].index_text for h in head])
            rerank_scores = {h.doc: s for h, s in zip(head, scores_)}
            rest = sorted(head, key=lambda h: -rerank_scores[h.doc]) + rest[len(head):]
            timings["rerank"] = (time.perf_counter() - t0) * 1000

        articles: list[RetrievedArticle] = []
        for rank, doc in enumerate(pinned, start=1):
            hit = by_doc.get(doc)
            chans = dict(hit.channels) if hit else {}
            chans["lookup"] = {"rank": rank, "score": 1.0}
            articles.append(self._article(doc, hit.score if hit else 0.0, None, chans, analysis.type, pinned=True))
        for h in rest:
            if len(articles) >= k:
                break
            articles.append(self._article(h.doc, h.score, rerank_scores.get(h.doc), h.channels, analysis.type))
        return RetrievalResult(query=query, query_type=analysis.type, matcher=matcher, articles=articles[:max(k, len(pinned))],
                               refs=analysis.articles, max_vector_score=max_cos, timings_ms=timings)

    def _article(self, doc: int, rrf: float, rerank: float | None, channels: dict, search_type: str,
                 pinned: bool = False) -> RetrievedArticle:
        d = self.documents[doc]
        final = 1.0 + rrf if pinned else (rerank if rerank is not None else rrf)
        return RetrievedArticle(id=d.id, title=d.title, law=d.law, article=d.article, article_cn=d.article_cn,
                                text=d.text, chapter=d.chapter, section=d.section, score=float(final),
                                rrf_score=float(rrf), rerank_score=rerank, channels=channels, search_type=search_type)


_shared: LocalRetriever | None = None
_shared_lock = threading.Lock()


def get_retriever(settings: Settings | None = None) -> LocalRetriever:
    """The process-wide retriever (models and index are loaded once per process)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = LocalRetriever.from_settings(settings)
        return _shared

