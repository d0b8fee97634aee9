"""LocalRetriever: query analysis → exact lookup + channels → weighted RRF → optional rerank.

Matchers (`channels.MATCHERS`) choose which channels are fused; the adaptive retry switches between them. Exact
article references (第二十八条, 个人信息保护法第29条 …) are looked up directly with every matcher and pinned
first. Every query text (the original question always included) runs through every channel of the matcher; all
ranked lists are fused with weighted RRF. The object is read-only after construction except for the lazily built
2-gram index (built once, under a lock), so concurrent `retrieve` calls are safe.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from ..config import Settings, get_settings
from ..knowledge.corpus import Document
from ..knowledge.index import LoadedIndex, load_index, read_manifest
from ..knowledge.stores import StoreOptions, TextSearchStore
from ..legal.definitions import asked_term, defined_terms, matching
from ..legal.laws import laws_named, resolve
from ..legal.modality import imposes_penalty
from ..legal.refs import ArticleRef, find_article_refs
from ..legal.vocabulary import common_words
from .adapter import QueryAdapter, load_adapter
from .analysis import QueryAnalysis, analyze_query, is_pure_lookup
from .bm25 import make_bm25
from .channels import (
    MATCHERS,
    QUERY_WEIGHTS,
    Bm25Channel,
    Channel,
    ChannelHits,
    DenseChannel,
    EngineHybridChannel,
    GramChannel,
    Matcher,
    QueryText,
    StoreBm25Channel,
)
from .embedder import Embedder, embedder_from_settings
from .fusion import CHANNEL_WEIGHTS, FusedHit, RankedList, weighted_rrf
from .rerank import Reranker, make_reranker
from .tokenizer import LegalTokenizer
from .types import Article, Retrieval, RetrievalSignals

log = logging.getLogger(__name__)

# Several laws in one knowledge base: the law a question names outranks the others. The law its top hits agree on
# (≥ 60 % of their fused score) may get a lift (LAW_VOTE_BOOST), off by default: on STARD over the national laws
# every lift lowered R@10 in every fold (bench/stard.py, retriever_cv), and on eval/multilaw_eval.jsonl it changed
# nothing.
NAMED_LAW_BOOST = 3.0
LAW_VOTERS = 10
LAW_VOTE_SHARE = 0.6


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


# A question that only asks for 第X条, in several laws that each have one: each law's is listed, up to this many.
LISTED_LAWS = 6


class LocalRetriever:
    def __init__(self, index: LoadedIndex, embedder: Embedder, tokenizer: LegalTokenizer,
                 reranker: Reranker | None = None, settings: Settings | None = None,
                 adapter: QueryAdapter | None = None):
        self.settings = settings or get_settings()
        self.adapter = adapter
        self.index = index
        self.documents: list[Document] = index.documents
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.reranker = reranker
        self.channels: dict[str, Channel] = self._channels(index, embedder, tokenizer)
        self.laws: list[str] = sorted({d.law for d in self.documents})
        # The knowledge base's law when the index holds exactly one (prompts and the citation check name it).
        self.law: str | None = self.laws[0] if len(self.laws) == 1 else None
        self._by_article: dict[int, list[int]] = {}
        self._common: dict[str, frozenset[str]] = {}
        self._defining: dict[str, list[int]] = {}  # a defined term → the articles defining it
        self._sanctioning: dict[tuple[str, int], list[int]] = {}  # (law, article) → the articles sanctioning its breach
        for i, d in enumerate(self.documents):
            if d.article is not None:
                self._by_article.setdefault(d.article, []).append(i)
            for term in defined_terms(d.text):
                self._defining.setdefault(term, []).append(i)
            if imposes_penalty(d.text):
                for named in {ref.article for ref in find_article_refs(d.text) if ref.law is None}:
                    self._sanctioning.setdefault((d.law, named), []).append(i)

    def _channels(self, index: LoadedIndex, embedder: Embedder, tokenizer: LegalTokenizer) -> dict[str, Channel]:
        """The channels over this index. A store with its own full-text search (Milvus) serves the BM25 channel,
        and the in-engine hybrid, instead of a BM25 matrix built here."""
        store = index.store
        channels: dict[str, Channel] = {"vector": DenseChannel(embedder, store, self.adapter),
                                        "gram": GramChannel([d.keyword_text for d in self.documents])}
        if isinstance(store, TextSearchStore):
            channels["bm25"] = StoreBm25Channel(store, tokenizer)
            if self.settings.milvus_hybrid == "engine":
                channels["milvus_rrf"] = EngineHybridChannel(embedder, tokenizer, store, self.settings.rrf_k,
                                                             self.adapter)
        else:
            channels["bm25"] = Bm25Channel(make_bm25(index.tokens, self.settings.bm25_backend), tokenizer)
        return channels

    def channel_names(self, matcher: Matcher) -> tuple[str, ...]:
        """The channels a matcher fuses here: with MILVUS_HYBRID=engine, matcher hybrid on Milvus is the engine's
        own RRF (one list per text)."""
        if matcher == "hybrid" and "milvus_rrf" in self.channels:
            return ("milvus_rrf",)
        return MATCHERS[matcher]

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> LocalRetriever:
        """Resolve the models and load the index named by the settings (errors say how to fix them)."""
        settings = settings or get_settings()
        manifest = read_manifest(settings.data_dir)
        embedder = embedder_from_settings(settings, index_embedder=manifest.embedder_id if manifest else None)
        index = load_index(settings.data_dir, embedder.model_id, embedder.dim, corpus_file=settings.corpus_path,
                           store_options=StoreOptions.from_settings(settings))
        return cls(index, embedder, LegalTokenizer(), make_reranker(settings), settings,
                   load_adapter(embedder.model_id, embedder.dim, settings))

    def warm_up(self) -> None:
        """One query per keyword channel: Milvus's engine loads its jieba dictionary on the first full-text search
        (~1.5 s) and the 2-gram matrix is built on first use (10-35 s at 64k articles)."""
        for name in ("bm25", "gram"):
            if name in self.channels:
                self.channels[name].search([QueryText("original", "个人信息")], 1, {})

    # ------------------------------------------------------------------ lookups
    def lookup(self, refs: Sequence[ArticleRef], default_law: str | None = None, every: bool = False) -> list[int]:
        """Document indices of the referenced articles. A named law is resolved (消法, 个保法 …); an unnamed one
        means `default_law` (the law being read) or, in a one-law index, that law; "第5条" of which of many laws is
        left to the other channels, unless `every` (a question that only asks for the article: each law's is
        listed, up to LISTED_LAWS)."""
        found: list[int] = []
        for ref in refs:
            matches = self._matches(ref, default_law)
            if matches is None:
                continue  # another law's article: not in this knowledge base
            unread = not ref.law and default_law is None
            if unread and len(self.laws) > 1 and len(matches) > (LISTED_LAWS if every else 3):
                continue
            found.extend(i for i in matches if i not in found)
        return found

    def _matches(self, ref: ArticleRef, default_law: str | None) -> list[int] | None:
        """The documents `ref` names: of its law, else of `default_law`, else of any law here; None when it names a
        law outside this knowledge base."""
        law = resolve(ref.law, self.laws) if ref.law else default_law
        if ref.law and law is None:
            return None
        return [i for i in self._by_article.get(ref.article, []) if law is None or self.documents[i].law == law]

    def _stated_laws(self, query: str, focus_laws: Sequence[str]) -> list[str]:
        """The laws the question names, else those the conversation is about (`focus_laws`) that are here."""
        return laws_named(query, self.laws) or [law for law in focus_laws if law in self.laws]

    def _law_read(self, query: str, focus_laws: Sequence[str]) -> str | None:
        """The law an unnamed 第X条 is of: the one law the question names elsewhere (「劳动合同法里，第十条说什么」), or
        else the one law the conversation is about (「那第十条呢？」 after a question on 劳动合同法)."""
        laws = self._stated_laws(query, focus_laws)
        return laws[0] if len(laws) == 1 else None

    def defining(self, question: str) -> list[int]:
        """The articles defining the term `question` asks the meaning of (「个人信息处理者是什么意思」 → 第七十三条):
        looked up like a numbered article; in a law the question names, when it names one; at most three."""
        asked = asked_term(question)
        if asked is None:
            return []
        found = [i for term in matching(asked, self._defining) for i in self._defining[term]]
        named = laws_named(question, self.laws)
        found = [i for i in found if self.documents[i].law in named] if named else found
        return list(dict.fromkeys(found))[:3]

    def sanctioning(self, law: str, article: int) -> list[int]:
        """The articles of `law` that set a sanction and name its 第`article`条 (「违反本法第三十六条规定，…的，…罚款」)."""
        return self._sanctioning.get((law, article), [])

    def absent(self, refs: Sequence[ArticleRef]) -> list[int]:
        """The numbers of `refs` that no article of the law they name (any law here, when they name none) has; a
        reference to a law outside this knowledge base is not counted (that question is not about these laws)."""
        return [ref.article for ref in refs if self._matches(ref, None) == []]

    def article(self, doc: int, **fields) -> Article:
        d = self.documents[doc]
        return Article(id=d.id, title=d.title, law=d.law, article=d.article, article_cn=d.article_cn, text=d.text,
                       chapter=d.chapter, section=d.section, **fields)

    def common_words(self, law: str) -> frozenset[str]:
        """The words nearly every article of `law` here has (`legal.vocabulary`), computed once per law."""
        if law not in self._common:
            self._common[law] = common_words([d.text for d in self.documents if d.law == law])
        return self._common[law]

    def similarity(self, question: str) -> tuple[float | None, list[int]]:
        """The best cosine of the question over the knowledge base and the top documents (router signals)."""
        result = self.channels["vector"].search([QueryText("original", question)], 5, {})[0]
        return result.top_cosine, [doc for doc, _ in result.hits]

    def nearest_laws(self, question: str) -> dict:
        """The knowledge-base law and the other national law closest to the question (empty without a law map)."""
        law_map = self.index.law_map
        return law_map.nearest(self.embedder.encode_queries([question])[0]) if law_map is not None else {}

    def cosine(self, a: str, b: str) -> float:
        """How alike two texts are to the embedder (the router uses it to tell one ask said twice from two asks)."""
        va, vb = self.embedder.encode_queries([a, b])
        return float(va @ vb)

    # ------------------------------------------------------------------ main entry
    def retrieve(self, query: str, variants: Sequence[str] = (), main_query: str | None = None,
                 keywords: Sequence[str] = (), matcher: Matcher = "ensemble", top_k_: int | None = None,
                 rerank: bool = True, exclude: Sequence[str] = (), focus_laws: Sequence[str] = ()) -> Retrieval:
        """Search the index for `query` (plus the rewriter's `main_query`, `variants` and `keywords`); articles
        whose id is in `exclude` (already judged by an earlier attempt) are skipped, looked-up ones excepted.
        `focus_laws` (several laws: the law a conversation is about) are favoured like a law the query names, when
        it names none."""
        query = validate_query(query, self.settings.max_query_chars)
        if matcher not in MATCHERS:
            raise QueryError(f"unknown matcher {matcher!r}; one of {', '.join(MATCHERS)}")
        analysis = analyze_query(query, self.tokenizer.legal_terms)
        timings: dict[str, float] = {}
        lists, dense = self._rank(self._texts(query, main_query, variants, keywords), analysis, matcher, timings)
        t0 = time.perf_counter()
        fused, focus = self._law_aware(weighted_rrf(lists, k=self.settings.rrf_k), query, focus_laws)
        pinned = self.lookup(analysis.refs, self._law_read(query, focus_laws), every=is_pure_lookup(query)) or \
            self.defining(query)
        timings["fusion"] = (time.perf_counter() - t0) * 1000
        skip = set(exclude)
        rest = [h for h in fused if h.doc not in pinned and self.documents[h.doc].id not in skip]
        rerank_scores = self._rerank(query, rest, timings) if rerank else {}
        if rerank_scores:
            rest = sorted(rest[:len(rerank_scores)], key=lambda h: -rerank_scores[h.doc]) + rest[len(rerank_scores):]
        k = top_k_ or self.settings.top_k
        articles = self._articles(pinned, {h.doc: h for h in fused}, rest, rerank_scores, analysis.type, k)
        top = pinned[0] if pinned else (rest[0].doc if rest else None)
        plain = dense.by_cosine if dense else []
        return Retrieval(query=query, query_type=analysis.type, matcher=matcher, articles=articles,
                         refs=analysis.articles, absent=self.absent(analysis.refs),
                         max_vector_score=plain[0][1] if plain else None,
                         signals=self._signals(query, dense.hits if dense else [], top, bool(pinned)), focus_laws=focus,
                         timings_ms={k_: round(v, 1) for k_, v in timings.items()})

    def _law_aware(self, fused: list[FusedHit], query: str,
                   focus_laws: Sequence[str] = ()) -> tuple[list[FusedHit], list[str]]:
        """In a knowledge base of several laws, favour the law the question names, or else the law the conversation
        is about (`focus_laws`), or else the one its best hits agree on (a vote of the top hits weighted by fused
        score)."""
        if len(self.laws) < 2 or not fused:
            return fused, []
        focus = self._stated_laws(query, focus_laws)
        boost = NAMED_LAW_BOOST
        if not focus:
            votes: dict[str, float] = {}
            for h in fused[:LAW_VOTERS]:
                votes[self.documents[h.doc].law] = votes.get(self.documents[h.doc].law, 0.0) + h.score
            law, share = max(votes.items(), key=lambda kv: kv[1])
            voted = share >= LAW_VOTE_SHARE * sum(votes.values())
            focus, boost = ([law], self.settings.law_vote_boost) if voted else ([], 1.0)
        if not focus or boost == 1.0:
            return fused, []
        for h in fused:
            if self.documents[h.doc].law in focus:
                h.score *= boost
        return sorted(fused, key=lambda h: (-h.score, h.doc)), focus

    def _signals(self, query: str, dense: list[tuple[int, float]], top: int | None, exact: bool) -> RetrievalSignals:
        """Retrieval evidence the gate weighs: how close and how peaked the dense match is (`dense`: the dense
        channel's hits, the adapted question's with a query adapter), how many of the question's words the top
        article has, and whether an article was looked up by number."""
        words = set(self.tokenizer.expand_query(query))
        top_words = set(self.index.tokens[top]) if top is not None else set()
        return RetrievalSignals(best_cosine=dense[0][1] if dense else 0.0,
                                cosine_margin=dense[0][1] - dense[min(4, len(dense) - 1)][1] if dense else 0.0,
                                lexical_overlap=len(words & top_words) / len(words) if words else 0.0,
                                exact_hit=1.0 if exact else 0.0)

    def _texts(self, query: str, main_query: str | None, variants: Sequence[str],
               keywords: Sequence[str]) -> list[QueryText]:
        texts = [QueryText("original", query)]
        for kind, text in [("main", main_query), *[("variant", v) for v in variants]]:
            text = (text or "").strip()[: self.settings.max_query_chars]
            if text and all(text != t.text for t in texts):
                texts.append(QueryText(kind, text))
        keyword_text = " ".join(w.strip() for w in keywords if w and w.strip())
        return texts + ([QueryText("keywords", keyword_text)] if keyword_text else [])

    def _rank(self, texts: list[QueryText], analysis: QueryAnalysis, matcher: Matcher,
              timings: dict[str, float]) -> tuple[list[RankedList], ChannelHits | None]:
        names = self.channel_names(matcher)
        # A single-channel matcher ranks by that channel alone, even one the query type gives no weight in a fusion.
        if len(names) > 1:  # FUSION_WEIGHTS overrides the default per query type (and per channel)
            weights = {**CHANNEL_WEIGHTS[analysis.type], **(self.settings.fusion_weights or {}).get(analysis.type, {})}
        else:
            weights = dict.fromkeys(names, 1.0)
        lists: list[RankedList] = []
        dense: ChannelHits | None = None  # the user's own words against the dense channel
        for name in names:
            channel = self.channels[name]
            t0 = time.perf_counter()
            own = texts if channel.uses_keywords else [t for t in texts if t.kind != "keywords"]
            for result in channel.search(own, self.settings.channel_candidates, timings):
                if name == "vector" and result.text.kind == "original":
                    dense = result  # the user's words, not what a rewriter made of them
                lists.append(RankedList(name, weights[name] * QUERY_WEIGHTS[result.text.kind], result.hits))
            timings[name] = (time.perf_counter() - t0) * 1000
        if "vector" not in names:  # the gate weighs the dense similarity whatever the matcher ranks by
            dense = self.channels["vector"].search(texts[:1], self.settings.channel_candidates, timings)[0]
        return lists, dense

    def _rerank(self, query: str, rest: list[FusedHit], timings: dict[str, float]) -> dict[int, float]:
        if self.reranker is None or not rest:
            return {}
        t0 = time.perf_counter()
        head = rest[: self.settings.rerank_top_n]
        scores = self.reranker.score(query, [self.documents[h.doc].index_text for h in head])
        timings["rerank"] = (time.perf_counter() - t0) * 1000
        return {h.doc: s for h, s in zip(head, scores)}

    def _articles(self, pinned: list[int], by_doc: dict[int, FusedHit], rest: list[FusedHit],
                  rerank_scores: dict[int, float], query_type: str, k: int) -> list[Article]:
        articles = []
        for rank, doc in enumerate(pinned, start=1):
            hit = by_doc.get(doc)
            rrf = hit.score if hit else 0.0
            channels = {**(hit.channels if hit else {}), "lookup": {"rank": rank, "score": 1.0}}
            articles.append(self.article(doc, score=1.0 + rrf, rrf_score=rrf, channels=channels,
                                         search_type=query_type))
        for h in rest[: max(0, k - len(pinned))]:
            rr = rerank_scores.get(h.doc)
            articles.append(self.article(h.doc, score=rr if rr is not None else h.score, rrf_score=h.score,
                                         rerank_score=rr, channels=h.channels, search_type=query_type))
        return articles


_shared: dict[str, LocalRetriever] = {}
_shared_lock = threading.Lock()


def get_retriever(settings: Settings | None = None) -> LocalRetriever:
    """The process-wide retriever of these settings (models and index are loaded once per process; an agent built
    with another DATA_DIR in the same process gets its own)."""
    settings = settings or get_settings()
    key = settings.model_dump_json()
    with _shared_lock:
        if key not in _shared:
            _shared[key] = LocalRetriever.from_settings(settings)
        return _shared[key]
