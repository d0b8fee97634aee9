#!/usr/bin/env python
"""STARD retrieval benchmark on the LawRefBook corpus (not part of CI: minutes without --dense, hours with it).

Questions: the 1,440 STARD questions whose gold articles are all mapped onto LawRefBook
(../shared/data/stard/stard_qrels_lawrefbook.jsonl); gold keys (lrb_path, lrb_article) are our document ids
``path#第X条``.

Candidate sets:
  subset   the 11,321-article subset (every gold article + 10,000 national distractors; stard_subset_11k.keys.jsonl)
  all      every national LawRefBook article (64,665)

Matchers:
  bm25_naive         jieba.lcut + a tiny stopword list + BM25Okapi (SparseBM25 idf="okapi", which reproduces
                     rank_bm25.BM25Okapi exactly; bench_retrieval.py checks the top-10s) — the baseline of the notes
  bm25               the project's keyword channel: LegalTokenizer (legal dictionary, search mode, stopwords) over
                     Document.keyword_text, SparseBM25 (lucene idf), queries via expand_query (colloquial terms)
  bm25_okapi         the same tokens with okapi idf (separates the tokenizer's effect from the idf's)
  gram               the project's character 2-gram BM25 channel
  --dense (subset only) or --index-dir DIR (both sets: the vectors of a national index built by init_index.py):
  dense              the embedder (EmbeddingGemma with --dense; the index's embedder with --index-dir) over
                     Document.index_text (《law》第X条：text), FAISS IndexFlatIP
  rrf_naive_dense    RRF k=60, equal weights, bm25_naive + dense (the baselines note's hybrid)
  rrf_bm25_dense     RRF k=60, equal weights, bm25 + dense
  retriever_hybrid   LocalRetriever matcher="hybrid" (per-query-type weighted RRF, article lookup), 100 candidates/channel
  retriever_ensemble LocalRetriever matcher="ensemble" (vector + bm25 + gram)
  retriever_cv       LocalRetriever "ensemble" configured per fold with fused_cv's weights (FUSION_WEIGHTS) and a
                     LAW_VOTE_BOOST chosen on the same training folds: what a deployment of the agent gets
  fused_cv           weighted RRF of dense + bm25 + gram with weights chosen by k-fold cross-validation over the
                     questions (--folds): each fold's weights are chosen on the other folds among a grid that
                     includes every single channel alone (best R@100 + MRR@10 among the weights no worse than
                     dense alone on any metric there), and the numbers are out-of-fold (the chosen weights per
                     fold and the per-fold comparison with the best single channel are in the JSON, "cv")

Document vectors are cached under bench/results/ (.npy, keyed by model and corpus hash, with a resumable
.partial.npy while encoding), so a rerun costs nothing; query vectors likewise.

Metrics: Recall@10, Recall@100, MRR@10 (agentic_rag.eval.metrics), compared with the naive floors of
../shared/notes/retrieval-baselines.md and STARD's published best Recall@100 (0.907, on STARD's own 55k corpus).

  nice -n 10 .venv/bin/python bench/stard.py [--dense | --index-dir data/national-e5] [--limit N] \
      [--json bench/results/stard_bm25.json]

A table goes to stderr; the last line on stdout is one JSON object.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    MODELS_DIR,
    RESULTS_DIR,
    Timer,
    load_national,
    load_stard,
    load_subset_keys,
    loadavg,
    log,
    pctl,
    peak_rss_mb,
    spread,
    table,
)

DEPTH = 100  # ranking depth evaluated, and the depth of every list fed into a fusion
FLOORS = {  # ../shared/notes/retrieval-baselines.md (naive implementations measured on this machine class)
    "subset": {"bm25_naive": {"recall@10": 0.519, "recall@100": 0.741, "mrr@10": 0.428},
               "dense": {"recall@10": 0.664, "recall@100": 0.882, "mrr@10": 0.565},
               "rrf_equal": {"recall@10": 0.632, "recall@100": 0.873, "mrr@10": 0.520}},
    "all": {"bm25_naive": {"recall@10": 0.425, "recall@100": 0.631, "mrr@10": 0.344}},
}
STARD_PUBLISHED_BEST_R100 = 0.907  # STARD paper, best system, on STARD's own 55,348-article corpus
# Which floor each matcher is compared with.
FLOOR_OF = {"bm25_naive": "bm25_naive", "bm25": "bm25_naive", "bm25_okapi": "bm25_naive", "gram": "bm25_naive",
            "dense": "dense", "rrf_naive_dense": "rrf_equal", "rrf_bm25_dense": "rrf_equal",
            "retriever_hybrid": "dense", "retriever_ensemble": "dense", "retriever_cv": "dense"}

NAIVE_STOPWORDS = frozenset(
    ["的", "了", "是", "在", "和", "与", "或", "及", "等", "吗", "呢", "啊", "吧", "呀", "么", "我", "你", "他", "她", "它", "我们", "你们", "他们", "这", "那", "这个", "那个", "有", "被", "把", "对", "为", "什么", "怎么", "怎样", "如何", "哪些", "是否", "可以", "能", "会", "要", "请问", "一个", "就", "都", "也", "还", "又", "但", "而", "如果"])
_HAS_WORD = re.compile(r"[\w\u4e00-\u9fff]")


def naive_tokenize(text: str) -> list[str]:
    import jieba

    return [t for t in (w.strip().lower() for w in jieba.lcut(text)) if t and _HAS_WORD.search(t)
            and t not in NAIVE_STOPWORDS]


def _metrics(ranked: list[str], gold: set[str]) -> dict[str, float]:
    from agentic_rag.eval.metrics import mrr_at, recall_at

    return {"recall@10": recall_at(ranked, gold, 10), "recall@100": recall_at(ranked, gold, 100),
            "mrr@10": mrr_at(ranked, gold, 10)}


def _mean(rows: list[dict]) -> dict[str, float]:
    return {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]} if rows else {}


# ---------------------------------------------------------------------------------------------- dense cache
class CachedQueryEmbedder:
    """Duck-typed `Embedder` for LocalRetriever: query vectors from the cache, the real model otherwise."""

    def __init__(self, embedder, texts: list[str], vecs):
        self._embedder = embedder
        self.model_id, self.dim = embedder.model_id, embedder.dim
        self._by_text = {t: v for t, v in zip(texts, vecs)}

    def encode_queries(self, texts: list[str]):
        import numpy as np

        if all(t in self._by_text for t in texts):
            return np.stack([self._by_text[t] for t in texts])
        return self._embedder.encode_queries(texts)


def _sha(parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\x00")
    return h.hexdigest()[:16]


def _save_atomic(path: Path, arr) -> None:
    import numpy as np

    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        np.save(f, arr)
    os.replace(tmp, path)


def encode_cached(embedder, texts: list[str], kind: str, cache_dir: Path, chunk: int = 512) -> tuple:
    """Vectors of `texts` (documents or queries), cached in cache_dir; resumable while documents are encoded."""
    import numpy as np

    key = _sha([embedder.model_id, kind, *texts])
    path = cache_dir / f"stard_{kind}_{embedder.model_id}_{len(texts)}_{key}.npy"
    partial = path.with_suffix(".partial.npy")
    if path.exists():
        vecs = np.load(path)
        log(f"{kind} vectors: cache hit {path.name} {vecs.shape}")
        return vecs, {"cached": True, "file": str(path)}
    done = np.load(partial) if partial.exists() else np.zeros((0, embedder.dim), np.float32)
    if len(done):
        log(f"{kind} vectors: resuming at {len(done)}/{len(texts)} from {partial.name}")
    parts = [done]
    t0 = time.perf_counter()
    n_new = 0
    encode = embedder.encode_documents if kind == "docs" else embedder.encode_queries
    for start in range(len(done), len(texts), chunk):
        batch = texts[start:start + chunk]
        parts.append(encode(batch))
        n_new += len(batch)
        if kind == "docs":
            _save_atomic(partial, np.concatenate(parts))
        el = time.perf_counter() - t0
        rate = n_new / el
        log(f"  encoded {start + len(batch)}/{len(texts)} {kind} ({rate:.2f}/s, "
            f"eta {(len(texts) - start - len(batch)) / rate / 60:.1f} min)")
    vecs = np.concatenate(parts).astype(np.float32)
    _save_atomic(path, vecs)
    partial.unlink(missing_ok=True)
    el = time.perf_counter() - t0
    return vecs, {"cached": False, "file": str(path), "encoded": n_new, "s": round(el, 1),
                  "per_s": round(n_new / el, 2) if el else None}


# ---------------------------------------------------------------------------------------------- main
def run(args) -> dict:
    from agentic_rag.retrieval.bm25 import SparseBM25, top_k
    from agentic_rag.retrieval.tokenizer import LegalTokenizer, char_bigrams

    t_start = time.perf_counter()
    result: dict = {"benchmark": "stard", "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "loadavg_start": loadavg(), "depth": DEPTH, "floors": FLOORS,
                    "stard_published_best_recall@100": STARD_PUBLISHED_BEST_R100, "sets": {}, "timings_s": {}}
    questions = load_stard()
    result["n_questions_all_gold_mapped"] = len(questions)
    if args.limit:
        questions = spread(questions, args.limit)
    result["n_questions"] = len(questions)
    log(f"{len(questions)} STARD questions (all gold mapped), "
        f"{sum(len(q['gold']) for q in questions) / len(questions):.2f} gold articles per question")

    with Timer() as t:
        national = load_national()
    result["timings_s"]["load_national"] = round(t.s, 1)
    keys = load_subset_keys()
    subset_idx = [i for i, d in enumerate(national) if (d.source, d.article_cn) in keys]
    if len(subset_idx) != len(keys):
        log(f"warning: {len(keys) - len(subset_idx)} subset keys are not national articles (ignored)")
    sets = {"subset": subset_idx, "all": list(range(len(national)))}
    if args.sets:
        sets = {k: v for k, v in sets.items() if k in args.sets}

    tokenizer = LegalTokenizer()
    with Timer() as t:
        legal_tokens = [tokenizer.tokenize(d.keyword_text) for d in national]
    result["timings_s"]["tokenize_legal"] = round(t.s, 1)
    with Timer() as t:
        naive_tokens = [naive_tokenize(d.index_text if args.naive_text == "index" else d.keyword_text)
                        for d in national]
    result["timings_s"]["tokenize_naive"] = round(t.s, 1)
    result["naive_doc_text"] = ("Document.index_text (《law》第X条：text)" if args.naive_text == "index"
                                else "Document.keyword_text (law text)")
    log(f"tokenised {len(national)} articles: LegalTokenizer {result['timings_s']['tokenize_legal']} s, "
        f"jieba.lcut {result['timings_s']['tokenize_naive']} s")
    q_legal = [tokenizer.expand_query(q["query"]) for q in questions]
    q_naive = [naive_tokenize(q["query"]) for q in questions]
    q_gram = [char_bigrams(q["query"]) for q in questions]

    dense_data = None
    if args.index_dir:
        dense_data = prepare_index_dense(args, national, questions)
        result["dense"] = dense_data["info"]
    elif args.dense:
        dense_data = prepare_dense(args, national, subset_idx, questions)
        result["dense"] = dense_data["info"]

    for set_name, idx in sets.items():
        docs = [national[i] for i in idx]
        ids = [d.id for d in docs]
        id_set = set(ids)
        gold_cov = sum(1 for q in questions for g in q["gold"] if g in id_set) / sum(len(q["gold"]) for q in questions)
        log(f"\n--- set {set_name}: {len(docs)} articles, gold coverage {gold_cov:.4f}")
        info: dict = {"n_docs": len(docs), "gold_coverage": round(gold_cov, 4), "matchers": {}, "build_s": {}}
        rankings: dict[str, list[list[int]]] = {}

        specs = {
            "bm25_naive": (lambda: SparseBM25([naive_tokens[i] for i in idx], idf="okapi"), q_naive),
            "bm25": (lambda: SparseBM25([legal_tokens[i] for i in idx]), q_legal),
            "bm25_okapi": (lambda: SparseBM25([legal_tokens[i] for i in idx], idf="okapi"), q_legal),
            "gram": (lambda: SparseBM25([char_bigrams(d.keyword_text) for d in docs]), q_gram),
        }
        for name, (build, qtoks) in specs.items():
            with Timer() as t:
                scorer = build()
            info["build_s"][name] = round(t.s, 2)
            lat, per_q, ranks = [], [], []
            for q, qt in zip(questions, qtoks):
                with Timer() as t:
                    hits = top_k(scorer.get_scores(qt), DEPTH)
                lat.append(t.s * 1000)
                ranks.append([h for h, _ in hits])
                per_q.append(_metrics([ids[h] for h, _ in hits], q["gold"]))
            rankings[name] = ranks
            info["matchers"][name] = {**_mean(per_q), "latency": pctl(lat)}
            log(f"{name:20} R@10 {info['matchers'][name]['recall@10']:.3f}  R@100 "
                f"{info['matchers'][name]['recall@100']:.3f}  MRR@10 {info['matchers'][name]['mrr@10']:.3f}  "
                f"(build {info['build_s'][name]} s, p50 {info['matchers'][name]['latency']['p50_ms']} ms)")
            del scorer

        make_retriever = None
        if dense_data is not None and "national_vecs" in dense_data:
            make_retriever = run_dense(info, rankings, docs, ids, questions,
                                       {**dense_data, "doc_vecs": dense_data["national_vecs"][idx]},
                                       legal_tokens, idx, tokenizer)
        elif dense_data is not None and set_name == "subset":
            make_retriever = run_dense(info, rankings, docs, ids, questions, dense_data, legal_tokens, idx, tokenizer)
        if args.folds and "dense" in rankings:
            cv_fusion(info, rankings, ids, questions, args.folds)
            cv_retriever(info, make_retriever, questions, args.folds)
        result["sets"][set_name] = info

    result["timings_s"]["total"] = round(time.perf_counter() - t_start, 1)
    result["loadavg_end"] = loadavg()
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def prepare_dense(args, national, subset_idx, questions) -> dict:
    import torch

    from agentic_rag.retrieval.embedder import load_embedder
    from agentic_rag.weights import resolve_embedder

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    with Timer() as t:
        embedder = load_embedder(resolve_embedder(None, MODELS_DIR))
    info = {"model_id": embedder.model_id, "dim": embedder.dim, "load_s": round(t.s, 1),
            "doc_text": "Document.index_text = 《law》第X条：text", "torch_threads": torch.get_num_threads()}
    cache_dir = Path(args.cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    texts = [national[i].index_text for i in subset_idx]
    log(f"dense: {len(texts)} subset articles with {embedder.model_id} (cache in {cache_dir})")
    doc_vecs, info["docs"] = encode_cached(embedder, texts, "docs", cache_dir)
    q_texts = [q["query"] for q in questions]
    q_vecs, info["queries"] = encode_cached(embedder, q_texts, "queries", cache_dir, chunk=256)
    return {"embedder": embedder, "doc_vecs": doc_vecs, "q_vecs": q_vecs, "info": info}


def prepare_index_dense(args, national, questions) -> dict:
    """Document vectors of every national article from a built index (rows matched by document id)."""
    import numpy as np

    from agentic_rag.knowledge.corpus import Document, iter_jsonl
    from agentic_rag.knowledge.index import read_manifest
    from agentic_rag.knowledge.stores import store_backend
    from agentic_rag.retrieval.embedder import load_embedder, parse_variant_id
    from agentic_rag.weights import resolve_embedder

    manifest = read_manifest(args.index_dir)
    if manifest is None:
        raise SystemExit(f"no index in {args.index_dir}: build it with init_index.py --national-only first")
    base, seq, dim, quant = parse_variant_id(manifest.embedder_id)
    embedder = load_embedder(resolve_embedder(base, MODELS_DIR), 16, None, seq, dim, quant)
    index_dir = args.index_dir / manifest.index_dir
    row = {Document.from_dict(r).id: i for i, r in enumerate(iter_jsonl(index_dir / "documents.jsonl"))}
    missing = [d.id for d in national if d.id not in row]
    if missing:
        raise SystemExit(f"{len(missing)} national articles are not in the index {args.index_dir} (e.g. {missing[:3]})")
    store = store_backend(manifest.store).load(index_dir)
    with Timer() as t:
        all_vecs = store.vectors(list(range(len(store))))
    national_vecs = np.ascontiguousarray(all_vecs[[row[d.id] for d in national]], dtype=np.float32)
    info = {"model_id": manifest.embedder_id, "dim": manifest.embedder_dim, "index_dir": str(args.index_dir),
            "index_created_at": manifest.created_at, "index_doc_count": manifest.doc_count,
            "read_vectors_s": round(t.s, 1), "doc_text": "Document.index_text = 《law》第X条：text"}
    cache_dir = Path(args.cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    q_vecs, info["queries"] = encode_cached(embedder, [q["query"] for q in questions], "queries", cache_dir, chunk=256)
    log(f"dense: {len(national)} national vectors from {args.index_dir} ({manifest.embedder_id})")
    return {"embedder": embedder, "national_vecs": national_vecs, "q_vecs": q_vecs, "info": info}


# ---------------------------------------------------------------------------------------------- fusion by CV
CV_GRID = [0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5]
CV_CHANNELS = ("dense", "bm25", "gram")


def _objective(m: dict[str, float]) -> float:
    """What the weights are chosen by: the two STARD targets, equally."""
    return m["recall@100"] + m["mrr@10"]


def replay_fusions(rankings, ids, questions, combos) -> np.ndarray:
    """(n_combos, n_questions, 3) recall@10 / recall@100 / MRR@10 of weighted_rrf(dense, bm25, gram) per weight combo.

    weighted_rrf for every combo at once: a document's score is sum_ch w_ch / (60 + rank_ch); lists with weight 0
    are skipped (a document only they hold is not ranked); ties go to the lower document index."""
    import numpy as np

    weights = np.array(combos, dtype=float)
    per_combo = np.zeros((len(combos), len(questions), 3))
    for qi, q in enumerate(questions):
        union = sorted({d for ch in CV_CHANNELS for d in rankings[ch][qi]})
        pos = {d: j for j, d in enumerate(union)}
        contrib = np.zeros((3, len(union)))
        present = np.zeros((3, len(union)), bool)
        for c, ch in enumerate(CV_CHANNELS):
            for rank, d in enumerate(rankings[ch][qi], start=1):
                if not present[c, pos[d]]:
                    contrib[c, pos[d]] = 1.0 / (60 + rank)
                    present[c, pos[d]] = True
        scores = weights @ contrib
        listed = ((weights > 0).astype(float) @ present.astype(float)) > 0
        is_gold = np.array([ids[d] in q["gold"] for d in union], dtype=bool)
        n_gold = len(q["gold"])
        doc_order = np.array(union)
        for ci in range(len(combos)):
            keep = np.flatnonzero(listed[ci])
            order = keep[np.lexsort((doc_order[keep], -scores[ci, keep]))][:DEPTH]
            hits = is_gold[order]
            first = np.flatnonzero(hits[:10])
            per_combo[ci, qi] = [hits[:10].sum() / n_gold, hits.sum() / n_gold, 1.0 / (first[0] + 1) if len(first) else 0.0]
    return per_combo


def choose_combo(means: np.ndarray, dense: int) -> int:
    """The combo with the best objective among those no worse than dense alone on any metric (on these means):
    a fusion that buys Recall@100 with a lower MRR@10 is not taken (the agent shows its top 5)."""
    import numpy as np

    eligible = (means >= means[dense] - 1e-9).all(axis=1)
    scores = np.where(eligible, means[:, 1] + means[:, 2], -np.inf)
    return int(np.argmax(scores))


def cv_fusion(info, rankings, ids, questions, folds: int) -> None:
    """Weighted RRF of dense + bm25 + gram, weights chosen on k-1 folds, scored on the held-out fold."""
    import numpy as np

    combos: list[tuple[float, float, float]] = [(1.0, wb, wg) for wb in CV_GRID for wg in CV_GRID]
    combos += [(0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]  # bm25 alone, gram alone ((1, 0, 0) is dense alone)
    keys = ("recall@10", "recall@100", "mrr@10")
    with Timer() as t:
        per_combo = replay_fusions(rankings, ids, questions, combos)
    fold_of = np.arange(len(questions)) % folds  # questions are in file order: interleaved folds
    singles = {"dense": combos.index((1.0, 0.0, 0.0)), "bm25": combos.index((0.0, 1.0, 0.0)),
               "gram": combos.index((0.0, 0.0, 1.0))}
    oof = np.zeros((len(questions), 3))
    fold_rows = []
    for f in range(folds):
        train, test = fold_of != f, fold_of == f
        best = choose_combo(per_combo[:, train].mean(axis=1), singles["dense"])
        oof[test] = per_combo[best, test]
        held = {name: dict(zip(keys, per_combo[ci, test].mean(axis=0).round(4).tolist())) for name, ci in singles.items()}
        fused_held = dict(zip(keys, per_combo[best, test].mean(axis=0).round(4).tolist()))
        best_single = max(held, key=lambda n: _objective(held[n]))
        fold_rows.append({"fold": f, "n_test": int(test.sum()), "weights": dict(zip(CV_CHANNELS, combos[best])),
                          "held_out_fused": fused_held, "held_out_singles": held,
                          "best_single_on_held_out": best_single,
                          "not_below_best_single": all(fused_held[k] >= held[best_single][k] - 1e-9 for k in keys)})
    full = per_combo.mean(axis=1)
    overall_best = choose_combo(full, singles["dense"])
    info["matchers"]["fused_cv"] = {**dict(zip(keys, oof.mean(axis=0).round(4).tolist())),
                                    "note": f"out-of-fold over {folds} folds (weights chosen on the other folds)"}
    info["cv"] = {"folds": folds, "objective": "recall@100 + mrr@10", "grid": CV_GRID, "channels": list(CV_CHANNELS),
                  "per_fold": fold_rows, "replay_s": round(t.s, 1),
                  "weights_on_all_questions": dict(zip(CV_CHANNELS, combos[overall_best])),
                  "in_sample_best": dict(zip(keys, full[overall_best].round(4).tolist())),
                  "every_fold_not_below_best_single": all(r["not_below_best_single"] for r in fold_rows)}
    m = info["matchers"]["fused_cv"]
    log(f"{'fused_cv':20} R@10 {m['recall@10']:.3f}  R@100 {m['recall@100']:.3f}  MRR@10 {m['mrr@10']:.3f}  "
        f"(out-of-fold, {folds} folds; weights {[r['weights'] for r in fold_rows]})")


def run_dense(info, rankings, docs, ids, questions, dense, legal_tokens, idx, tokenizer):
    """Dense and the fusions over it; returns a factory of the project's retriever over this set (settings → it)."""
    from agentic_rag.config import Settings
    from agentic_rag.knowledge.corpus import corpus_sha256
    from agentic_rag.knowledge.index import LoadedIndex, Manifest
    from agentic_rag.knowledge.stores.faiss_store import FaissStore
    from agentic_rag.retrieval.fusion import RankedList, weighted_rrf
    from agentic_rag.retrieval.retriever import LocalRetriever

    embedder = dense["embedder"]
    store = FaissStore(embedder.dim)
    store.add(dense["doc_vecs"])
    with Timer() as t:
        scores, hits = store.search(dense["q_vecs"], DEPTH)
    faiss_ms = t.s * 1000 / len(questions)
    dense_rank = [[int(i) for i in row if i >= 0] for row in hits]
    rankings["dense"] = dense_rank
    per_q = [_metrics([ids[i] for i in r], q["gold"]) for r, q in zip(dense_rank, questions)]
    info["matchers"]["dense"] = {**_mean(per_q), "latency_note": f"FAISS batch search {faiss_ms:.2f} ms/query; "
                                 "query embedding not included (cached)"}
    log(f"{'dense':20} R@10 {info['matchers']['dense']['recall@10']:.3f}  R@100 "
        f"{info['matchers']['dense']['recall@100']:.3f}  MRR@10 {info['matchers']['dense']['mrr@10']:.3f}")

    for name, kw in (("rrf_naive_dense", "bm25_naive"), ("rrf_bm25_dense", "bm25")):
        per_q, lat = [], []
        for qi, q in enumerate(questions):
            with Timer() as t:
                fused = weighted_rrf([RankedList("bm25", 1.0, [(d, 0.0) for d in rankings[kw][qi]]),
                                      RankedList("vector", 1.0, [(d, 0.0) for d in dense_rank[qi]])], k=60)
            lat.append(t.s * 1000)
            per_q.append(_metrics([ids[h.doc] for h in fused[:DEPTH]], q["gold"]))
        info["matchers"][name] = {**_mean(per_q), "latency": pctl(lat)}
        log(f"{name:20} R@10 {info['matchers'][name]['recall@10']:.3f}  R@100 "
            f"{info['matchers'][name]['recall@100']:.3f}  MRR@10 {info['matchers'][name]['mrr@10']:.3f}")

    # The project's own retriever over the subset (real document vectors; cached query vectors).
    manifest = Manifest(index_dir="stard-in-memory", files=[], embedder_id=embedder.model_id,
                        embedder_dim=embedder.dim, doc_count=len(docs), corpus_sha256=corpus_sha256(docs),
                        corpus_source="stard subset", tokenizer_version=tokenizer.version, created_at="bench")
    qemb = CachedQueryEmbedder(embedder, [q["query"] for q in questions], dense["q_vecs"])
    index = LoadedIndex(manifest, docs, [legal_tokens[i] for i in idx], store)

    def make_retriever(**overrides) -> LocalRetriever:
        settings = Settings(models_dir=MODELS_DIR, reranker="none", channel_candidates=DEPTH, _env_file=None,
                            **overrides)
        return LocalRetriever(index, qemb, tokenizer, None, settings)

    retriever = make_retriever()
    for matcher in ("hybrid", "ensemble"):
        name = f"retriever_{matcher}"
        per_q, lat, types = [], [], {}
        for q in questions:
            with Timer() as t:
                res = retriever.retrieve(q["query"], matcher=matcher, top_k_=DEPTH, rerank=False)
            lat.append(t.s * 1000)
            types[res.query_type] = types.get(res.query_type, 0) + 1
            per_q.append(_metrics([a.id for a in res.articles], q["gold"]))
        info["matchers"][name] = {**_mean(per_q), "latency": pctl(lat), "query_types": types,
                                  "latency_note": "query embedding from the cache (not included)"}
        log(f"{name:20} R@10 {info['matchers'][name]['recall@10']:.3f}  R@100 "
            f"{info['matchers'][name]['recall@100']:.3f}  MRR@10 {info['matchers'][name]['mrr@10']:.3f}")
    return make_retriever


# ---------------------------------------------------------------------------------------------- the agent's retriever by CV
VOTE_GRID = (1.0, 1.25, 1.5, 2.0)  # LAW_VOTE_BOOST candidates (1 = off; 1.5 is the default)


def retriever_metrics(retriever, questions) -> np.ndarray:
    """(n_questions, 3) recall@10 / recall@100 / MRR@10 of the retriever's ensemble matcher at depth DEPTH."""
    import numpy as np

    rows = [_metrics([a.id for a in retriever.retrieve(q["query"], matcher="ensemble", top_k_=DEPTH,
                                                       rerank=False).articles], q["gold"]) for q in questions]
    return np.array([[r[k] for k in ("recall@10", "recall@100", "mrr@10")] for r in rows])


def cv_retriever(info, make_retriever, questions, folds: int) -> None:
    """LocalRetriever itself, configured as a deployment would be: the fusion weights cv_fusion chose on each
    fold's training part (as FUSION_WEIGHTS, every query type) and LAW_VOTE_BOOST chosen on the same part; scored
    on the held-out fold. Every setting it is run with is also reported in-sample (`grid`)."""
    import numpy as np

    keys = ("recall@10", "recall@100", "mrr@10")
    fold_of = np.arange(len(questions)) % folds
    cache: dict[tuple, np.ndarray] = {}

    def per_q(weights: dict, boost: float) -> np.ndarray:
        key = (*weights.values(), boost)
        if key not in cache:
            w = {"vector": weights["dense"], "bm25": weights["bm25"], "gram": weights["gram"]}
            cache[key] = retriever_metrics(make_retriever(fusion_weights=dict.fromkeys(("semantic", "keyword", "exact"), w),
                                                          law_vote_boost=boost), questions)
        return cache[key]

    oof = np.zeros((len(questions), 3))
    chosen = []
    for f, fold in enumerate(info["cv"]["per_fold"]):
        train, test = fold_of != f, fold_of == f
        boost = max(VOTE_GRID, key=lambda b: (_objective(dict(zip(keys, per_q(fold["weights"], b)[train].mean(0)))), -b))
        oof[test] = per_q(fold["weights"], boost)[test]
        chosen.append({"fold": f, "weights": fold["weights"], "law_vote_boost": boost})
    info["matchers"]["retriever_cv"] = {**dict(zip(keys, oof.mean(axis=0).round(4).tolist())),
                                        "note": f"LocalRetriever, settings chosen on the other folds ({folds} folds)"}
    info["retriever_cv"] = {"per_fold": chosen, "grid": [
        {"weights": dict(zip(("dense", "bm25", "gram"), k[:3])), "law_vote_boost": k[3],
         **dict(zip(keys, v.mean(axis=0).round(4).tolist()))} for k, v in cache.items()]}
    m = info["matchers"]["retriever_cv"]
    log(f"{'retriever_cv':20} R@10 {m['recall@10']:.3f}  R@100 {m['recall@100']:.3f}  MRR@10 {m['mrr@10']:.3f}  "
        f"(out-of-fold; boosts {[c['law_vote_boost'] for c in chosen]})")


def report(result: dict) -> str:
    parts = [f"STARD on LawRefBook: {result['n_questions']} questions (of {result['n_questions_all_gold_mapped']} "
             f"with all gold mapped), depth {result['depth']}; load avg {result['loadavg_start']} -> "
             f"{result['loadavg_end']}"]
    rows = []
    for set_name, info in result["sets"].items():
        floors = FLOORS.get(set_name, {})
        for name, m in info["matchers"].items():
            floor = floors.get(FLOOR_OF.get(name, ""), {})
            lat = m.get("latency", {}).get("p50_ms") if isinstance(m.get("latency"), dict) else None
            rows.append((f"{set_name} ({info['n_docs']}) {name}", m["recall@10"], m["recall@100"], m["mrr@10"],
                         floor.get("recall@10"), floor.get("recall@100"), floor.get("mrr@10"),
                         round(m["recall@100"] - floor["recall@100"], 3) if floor else None, lat))
        for fname, f in floors.items():
            rows.append((f"{set_name} FLOOR {fname} (notes)", f["recall@10"], f["recall@100"], f["mrr@10"],
                         None, None, None, None, None))
    parts.append(table(["set / matcher", "R@10", "R@100", "MRR@10", "flr R@10", "flr R@100", "flr MRR",
                        "dR@100", "p50 ms"], rows, first_width=42, width=10))
    parts.append(f"floor = the naive baseline of ../shared/notes/retrieval-baselines.md for the matcher's family "
                 f"(BM25 matchers vs naive BM25, dense/retriever vs dense, rrf vs equal-weight RRF); "
                 f"STARD's published best Recall@100 = {STARD_PUBLISHED_BEST_R100} (on STARD's own 55k corpus, "
                 "not directly comparable)")
    parts.append(f"timings (s): {result['timings_s']}; peak RSS {result['peak_rss_mb']} MB")
    if result.get("dense"):
        parts.append(f"dense: {result['dense']}")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dense", action="store_true", help="also dense + RRF on the 11k subset (embeds it once: ~35+ min)")
    p.add_argument("--limit", type=int, help="only N questions (evenly spread), for a quick run")
    p.add_argument("--sets", nargs="+", choices=["subset", "all"], help="candidate sets (default both)")
    p.add_argument("--naive-text", choices=["index", "keyword"], default="index",
                   help="document text of the naive baseline: index_text (default) or keyword_text")
    p.add_argument("--torch-threads", type=int, help="torch.set_num_threads for the embedder (default: torch's)")
    p.add_argument("--index-dir", type=Path, help="dense vectors of all national articles from this built index "
                                                  "(init_index.py --national-only); enables dense on both sets")
    p.add_argument("--folds", type=int, default=5, help="k of the cross-validated fusion (0: off)")
    p.add_argument("--json", type=Path, help="also write the JSON result here")
    p.add_argument("--cache-dir", type=Path, default=RESULTS_DIR, help="where document/query vectors are cached")
    args = p.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    result = run(args)
    log("\n" + report(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
        log(f"JSON written to {args.json}")
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
