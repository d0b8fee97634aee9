#!/usr/bin/env python
"""Retrieval performance benchmark: index build cost, per-stage query latency, scale, rank-bm25 vs SparseBM25.

Phases (each runs in its own subprocess, so the peak RSS reported per phase is that phase's own
``resource.getrusage(RUSAGE_SELF).ru_maxrss`` — interpreter, imports and models included):

  pipl_build    (a) build an index of the 74 PIPL articles with the real offline embedder; time per stage
                    (tokenize, embed, FAISS add, write) and docs/s, then the real `build_index` end to end
  pipl_query    (b) LocalRetriever over that index (built in a temp dir): per-stage latency p50/p95 of the
                    `ensemble` matcher (embed, faiss, bm25, gram, fusion, rerank if a reranker is available)
                    over ~30 questions of eval/pipl_eval.jsonl
  scale         (c) all national LawRefBook articles (~64,665): tokenisation, BM25 / 2-gram index build,
                    FAISS IndexFlatIP add + search with RANDOM normalised vectors of the embedder's dimension
                    (768; embedding 64k articles takes hours here — only the vector search cost depends on the
                    vectors, and it does not depend on their values), then LocalRetriever per-stage latencies
                    over that corpus with real query embeddings, plus fusion alone
  bm25_compare  (d) rank-bm25 (BM25Okapi) vs SparseBM25 on the same tokenised 64k corpus and the same ~200
                    STARD questions: build time, p50/p95 query latency, speed ratio, top-10 agreement
                    with idf="okapi"

Usage:
  nice -n 10 .venv/bin/python bench/bench_retrieval.py [--quick] [--json bench/results/bench.json]

A readable table goes to stderr; the last line on stdout is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    MODELS_DIR,
    PIPL_EVAL,
    Timer,
    current_rss_mb,
    load_national,
    load_stard,
    loadavg,
    log,
    pctl,
    peak_rss_mb,
    run_phase,
    spread,
    table,
)

ALL_PHASES = ("pipl_build", "pipl_query", "scale", "bm25_compare")
QUICK_PHASES = ("pipl_build", "pipl_query")
STAGES = ("embed", "faiss", "bm25", "gram", "fusion", "rerank")


def _threads() -> dict:
    out = {}
    try:
        import torch

        out["torch_threads"] = torch.get_num_threads()
    except Exception:  # pragma: no cover
        pass
    try:
        import faiss

        out["faiss_omp_threads"] = faiss.omp_get_max_threads()
    except Exception:  # pragma: no cover
        pass
    return out


def _stage_rows(stages: dict, n: int) -> dict:
    return {k: {"s": round(t.s, 4), "cpu_s": round(t.cpu_s, 4), "docs_per_s": round(n / t.s, 1) if t.s > 0 else None}
            for k, t in stages.items()}


def _stage_stats(timings: list[dict], totals: list[float], cpu: list[float] | None = None) -> dict:
    out = {}
    for stage in STAGES:
        vals = [t[stage] for t in timings if stage in t]
        if vals:
            out[stage] = pctl(vals)
    other = [tot - sum(t.values()) for t, tot in zip(timings, totals)]
    out["other (analysis, result objects)"] = pctl(other)
    out["total"] = pctl(totals)
    if cpu:
        out["total CPU time (all threads)"] = pctl(cpu)
    return out


def _time_queries(retriever, questions) -> dict:
    """Per-stage and total latency of the ensemble matcher over the questions."""
    timings, totals, cpu = [], [], []
    for q in questions:
        with Timer() as t:
            r = retriever.retrieve(q["query"], matcher="ensemble")
        timings.append(r.timings_ms)
        totals.append(t.s * 1000)
        cpu.append(t.cpu_s * 1000)
    return _stage_stats(timings, totals, cpu)


def _rerun_one_thread(retriever, questions) -> dict:
    """The same questions again with torch limited to one thread (2 threads on a shared 2-core machine can
    oversubscribe the CPUs: OpenMP threads then wait for each other)."""
    import torch

    default_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        retriever.retrieve(questions[0]["query"], matcher="ensemble")
        return _time_queries(retriever, questions)
    finally:
        torch.set_num_threads(default_threads)


def _latency_table(default: dict, one: dict | None, width: int) -> str:
    rows = []
    for k, v in default.items():
        o = (one or {}).get(k, {})
        rows.append((k, v["p50_ms"], v["p95_ms"], v["mean_ms"], v["n"], o.get("p50_ms"), o.get("p95_ms")))
    return table(["stage", "p50 ms", "p95 ms", "mean ms", "n", "p50 1thr", "p95 1thr"], rows, first_width=width,
                 digits=2)


# ---------------------------------------------------------------------------------------------- phase (a)
def phase_pipl_build(args) -> dict:
    import numpy as np

    from agentic_rag.config import Settings
    from agentic_rag.knowledge.corpus import file_sha256, load_corpus
    from agentic_rag.knowledge.index import DOCS_FILE, TOKENS_FILE, _write_jsonl, build_index
    from agentic_rag.knowledge.stores.faiss_store import FaissStore
    from agentic_rag.retrieval.embedder import load_embedder
    from agentic_rag.retrieval.tokenizer import LegalTokenizer
    from agentic_rag.weights import resolve_embedder

    settings = Settings(_env_file=None)
    res: dict = {"rss_after_imports_mb": current_rss_mb()}
    with Timer() as t:
        docs = load_corpus(settings.corpus_path, structure=settings.corpus_structure)
    n = len(docs)
    res["n_docs"] = n
    res["corpus"] = str(settings.corpus_path)
    res["load_corpus_s"] = round(t.s, 4)

    tokenizer = LegalTokenizer()
    with Timer() as t:
        tokenizer.tokenize("初始化")  # jieba prefix dictionary + legal user dictionary
    res["tokenizer_init_s"] = round(t.s, 3)
    resolved = resolve_embedder(None, MODELS_DIR)
    with Timer() as t:
        embedder = load_embedder(resolved, settings.embed_batch_size)
    res["embedder"] = {"model_id": embedder.model_id, "dim": embedder.dim, "load_s": round(t.s, 2)}
    res.update(_threads())

    stages: dict[str, Timer] = {}
    with Timer() as stages["tokenize"]:
        tokens = [tokenizer.tokenize(d.keyword_text) for d in docs]
    vecs = []
    with Timer() as stages["embed"]:  # same batching as index.build_index (256 per encode call)
        for start in range(0, n, 256):
            vecs.append(embedder.encode_documents([d.index_text for d in docs[start:start + 256]]))
    import torch

    default_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with Timer() as stages["embed (torch 1 thread, same texts again)"]:
        for start in range(0, n, 256):
            embedder.encode_documents([d.index_text for d in docs[start:start + 256]])
    torch.set_num_threads(default_threads)
    mat = np.concatenate(vecs)
    store = FaissStore(embedder.dim)
    with Timer() as stages["faiss_add"]:
        store.add(mat)
    with tempfile.TemporaryDirectory(prefix="bench-write-") as tmp, Timer() as stages["write"]:
        _write_jsonl(Path(tmp) / TOKENS_FILE, tokens)
        _write_jsonl(Path(tmp) / DOCS_FILE, (d.to_dict() for d in docs))
        store.save(Path(tmp))
    res["stages"] = _stage_rows(stages, n)
    total = sum(t.s for k, t in stages.items() if "1 thread" not in k)
    res["stages_total_s"] = round(total, 3)
    res["embed_share_of_build"] = round(stages["embed"].s / total, 4)
    res["mean_chars_per_doc (index_text)"] = round(sum(len(d.index_text) for d in docs) / n, 1)

    # The real build (tokenizer and embedder already warm), into the dir the query phase uses.
    data_dir = Path(args.workdir) / "pipl_index"
    with Timer() as t:
        build_index(docs, embedder, tokenizer, data_dir, corpus_source=str(settings.corpus_path),
                    corpus_file_sha256=file_sha256(settings.corpus_path), force=True)
    res["build_index_end_to_end_s"] = round(t.s, 3)
    res["build_index_end_to_end_cpu_s"] = round(t.cpu_s, 3)
    res["build_index_docs_per_s"] = round(n / t.s, 1)
    res["data_dir"] = str(data_dir)
    return res


# ---------------------------------------------------------------------------------------------- phase (b)
def phase_pipl_query(args) -> dict:
    from agentic_rag.config import Settings
    from agentic_rag.retrieval.retriever import LocalRetriever

    data_dir = Path(args.workdir) / "pipl_index"
    settings = Settings(data_dir=data_dir, models_dir=MODELS_DIR, _env_file=None)  # reranker=auto
    with Timer() as t:
        retriever = LocalRetriever.from_settings(settings)
    res: dict = {"retriever_load_s": round(t.s, 2), "n_docs": len(retriever.documents),
                 "reranker": getattr(retriever.reranker, "name", None), "matcher": "ensemble",
                 "channel_candidates": settings.channel_candidates, "top_k": settings.top_k}
    res.update(_threads())
    rows = [json.loads(line) for line in PIPL_EVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = spread(rows, args.pipl_queries)
    res["n_queries"] = len(questions)
    res["query_types"] = {tp: sum(q.get("type") == tp for q in questions)
                          for tp in sorted({q.get("type", "?") for q in questions})}
    with Timer() as t:
        retriever.channels["gram"]._index()  # built lazily on the first gram query
    res["gram_index_build_s"] = round(t.s, 4)
    warm = []
    for q in questions[:3]:  # first calls pay one-time costs (torch graph warm-up)
        with Timer() as t:
            retriever.retrieve(q["query"], matcher="ensemble")
        warm.append(round(t.s * 1000, 1))
    res["warmup_ms"] = warm
    res["latency"] = _time_queries(retriever, questions)
    res["latency_torch_1_thread"] = _rerun_one_thread(retriever, questions)
    if retriever.reranker is None:
        res["latency_note"] = "no reranker available locally (RERANKER=auto found no cross-encoder): no rerank stage"
    return res


# ---------------------------------------------------------------------------------------------- phase (c)
def phase_scale(args) -> dict:
    import numpy as np

    from agentic_rag.config import Settings
    from agentic_rag.knowledge.corpus import corpus_sha256
    from agentic_rag.knowledge.index import DOCS_FILE, TOKENS_FILE, LoadedIndex, Manifest, _write_jsonl
    from agentic_rag.knowledge.stores.faiss_store import FaissStore
    from agentic_rag.retrieval.bm25 import SparseBM25, top_k
    from agentic_rag.retrieval.embedder import load_embedder
    from agentic_rag.retrieval.fusion import RankedList, weighted_rrf
    from agentic_rag.retrieval.retriever import LocalRetriever
    from agentic_rag.retrieval.tokenizer import LegalTokenizer, char_bigrams
    from agentic_rag.weights import resolve_embedder

    res: dict = {"rss_after_imports_mb": current_rss_mb()}
    with Timer() as t:
        docs = load_national()
    n = len(docs)
    res["n_docs"] = n
    res["load_corpus_s"] = round(t.s, 2)
    mem: dict[str, float] = {"after_load_docs": current_rss_mb()}

    tokenizer = LegalTokenizer()
    with Timer() as t:
        tokenizer.tokenize("初始化")
    res["tokenizer_init_s"] = round(t.s, 3)
    stages: dict[str, Timer] = {}
    with Timer() as stages["tokenize (LegalTokenizer, search mode)"]:
        tokens = [tokenizer.tokenize(d.keyword_text) for d in docs]
    res["mean_tokens_per_doc"] = round(sum(map(len, tokens)) / n, 1)
    mem["after_tokenize"] = current_rss_mb()
    with Timer() as stages["bm25 index build (SparseBM25)"]:
        bm25 = SparseBM25(tokens)
    res["bm25_vocab"] = len(bm25.vocab)
    mem["after_bm25"] = current_rss_mb()
    with Timer() as stages["gram index build (2-grams + SparseBM25)"]:
        gram = SparseBM25([char_bigrams(d.keyword_text) for d in docs])
    mem["after_gram"] = current_rss_mb()

    resolved = resolve_embedder(None, MODELS_DIR)
    with Timer() as t:
        embedder = load_embedder(resolved)
    res["embedder"] = {"model_id": embedder.model_id, "dim": embedder.dim, "load_s": round(t.s, 2)}
    dim = embedder.dim
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((n, dim), dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store = FaissStore(dim)
    with Timer() as stages["faiss add (IndexFlatIP, random vectors)"]:
        store.add(vecs)
    del vecs
    mem["after_faiss"] = current_rss_mb()

    with tempfile.TemporaryDirectory(prefix="bench-scale-write-") as tmp:
        with Timer() as stages["write (documents, tokens, vectors.faiss)"]:
            _write_jsonl(Path(tmp) / TOKENS_FILE, tokens)
            _write_jsonl(Path(tmp) / DOCS_FILE, (d.to_dict() for d in docs))
            store.save(Path(tmp))
        res["index_size_mb"] = round(sum(f.stat().st_size for f in Path(tmp).iterdir()) / 2**20, 1)
    res["stages"] = _stage_rows(stages, n)
    res["embed_estimate"] = {
        "note": "not run: embedding all articles takes hours on this machine",
        "est_s_at_baseline_5.4_docs_per_s (11k LawRefBook, baselines note)": round(n / 5.4),
        "est_s_at_pipl_measured_docs_per_s": round(n / args.embed_docs_per_s) if args.embed_docs_per_s else None,
        "pipl_measured_docs_per_s": args.embed_docs_per_s or None}

    # Shared tokens for the rank-bm25 comparison phase (same corpus, no re-tokenisation).
    with Timer() as t, open(Path(args.workdir) / "national_tokens.jsonl", "w", encoding="utf-8") as f:
        for toks in tokens:
            f.write(json.dumps(toks, ensure_ascii=False))
            f.write("\n")
    res["tokens_cache_write_s"] = round(t.s, 2)

    questions = spread(load_stard(), args.stard_queries)
    res["n_queries"] = len(questions)

    # --- the real LocalRetriever over the 64k corpus (random doc vectors, real query embeddings)
    manifest = Manifest(index_dir="bench-in-memory", files=[], embedder_id=embedder.model_id, embedder_dim=dim,
                        doc_count=n, corpus_sha256=corpus_sha256(docs), corpus_source="lawrefbook national",
                        tokenizer_version=tokenizer.version, created_at="bench")
    settings = Settings(models_dir=MODELS_DIR, reranker="none", _env_file=None)
    with Timer() as t:
        retriever = LocalRetriever(LoadedIndex(manifest, docs, tokens, store), embedder, tokenizer, None, settings)
    res["retriever_init_s (builds SparseBM25 again)"] = round(t.s, 2)
    retriever.channels["gram"]._scorer = gram  # the same lazily built 2-gram index, timed above
    with Timer() as t:
        retriever.lookup([])
    res["lookup_no_refs_ms (law-set scan inside the fusion stage)"] = round(t.s * 1000, 2)
    for q in questions[:3]:  # warm-up
        retriever.retrieve(q["query"], matcher="ensemble")
    res["retriever_latency"] = _time_queries(retriever, questions)
    res["retriever_latency_torch_1_thread"] = _rerun_one_thread(retriever, questions)

    # --- per-stage micro latencies, one query at a time (query vectors embedded once, in a batch)
    with Timer() as t:
        qvecs = embedder.encode_queries([q["query"] for q in questions])
    res["query_embed_batch_ms_per_query"] = round(t.s * 1000 / len(questions), 1)
    micro: dict[str, list[float]] = {k: [] for k in (
        "bm25 query tokenize (expand_query)", "bm25 get_scores", "bm25 top_k(30)",
        "gram query 2-grams + get_scores + top_k(30)",
        "faiss search k=30", "faiss search k=100", "faiss search k=30 (1 OpenMP thread)",
        "weighted_rrf (3 lists x 30)")}
    import faiss

    omp_default = faiss.omp_get_max_threads()
    for q, qv in zip(questions, qvecs):
        text, qv = q["query"], qv[None, :]
        with Timer() as t:
            qtok = tokenizer.expand_query(text)
        micro["bm25 query tokenize (expand_query)"].append(t.s * 1000)
        with Timer() as t:
            scores = bm25.get_scores(qtok)
        micro["bm25 get_scores"].append(t.s * 1000)
        with Timer() as t:
            bm_hits = top_k(scores, 30)
        micro["bm25 top_k(30)"].append(t.s * 1000)
        with Timer() as t:
            gr_hits = top_k(gram.get_scores(char_bigrams(text)), 30)
        micro["gram query 2-grams + get_scores + top_k(30)"].append(t.s * 1000)
        with Timer() as t:
            s30, i30 = store.search(qv, 30)
        micro["faiss search k=30"].append(t.s * 1000)
        with Timer() as t:
            store.search(qv, 100)
        micro["faiss search k=100"].append(t.s * 1000)
        faiss.omp_set_num_threads(1)
        with Timer() as t:
            store.search(qv, 30)
        micro["faiss search k=30 (1 OpenMP thread)"].append(t.s * 1000)
        faiss.omp_set_num_threads(omp_default)
        lists = [RankedList("vector", 1.0, [(int(i), float(s)) for s, i in zip(s30[0], i30[0])]),
                 RankedList("bm25", 0.35, bm_hits), RankedList("gram", 0.1, gr_hits)]
        with Timer() as t:
            weighted_rrf(lists)
        micro["weighted_rrf (3 lists x 30)"].append(t.s * 1000)
    res["micro_latency"] = {k: pctl(v) for k, v in micro.items()}
    res["faiss_note"] = (f"FAISS numbers use {n} RANDOM L2-normalised vectors of the real dimension {dim} "
                         "(IndexFlatIP is exact brute force: its cost depends on n and dim only)")
    res["rss_checkpoints_mb"] = mem
    return res


# ---------------------------------------------------------------------------------------------- phase (d)
def phase_bm25_compare(args) -> dict:
    import numpy as np

    from agentic_rag.retrieval.bm25 import RankBM25, SparseBM25, top_k
    from agentic_rag.retrieval.tokenizer import LegalTokenizer

    cache = Path(args.workdir) / "national_tokens.jsonl"
    with Timer() as t:
        if cache.exists():  # written by the scale phase
            with open(cache, encoding="utf-8") as f:
                tokens = [json.loads(line) for line in f]
        else:  # run on its own: tokenise here (same tokenizer, same text)
            tk = LegalTokenizer()
            tokens = [tk.tokenize(d.keyword_text) for d in load_national()]
    res: dict = {"n_docs": len(tokens), "tokens_load_s": round(t.s, 2), "tokens_from_scale_phase": cache.exists()}
    empty = sum(1 for tk in tokens if not tk)
    res["empty_token_docs"] = empty
    if empty:  # RankBM25 replaces empty documents by one dummy token: give both the same corpus
        tokens = [tk or ["\x00"] for tk in tokens]
    tokenizer = LegalTokenizer()
    questions = spread(load_stard(), args.stard_queries)
    qtoks = [tokenizer.expand_query(q["query"]) for q in questions]
    res["n_queries"] = len(qtoks)
    res["mean_query_tokens"] = round(sum(map(len, qtoks)) / len(qtoks), 1)

    import gc
    import tracemalloc

    builds: dict[str, float] = {}
    with Timer() as t:
        rank = RankBM25(tokens)
    builds["rank_bm25"] = t.s
    with Timer() as t:
        okapi = SparseBM25(tokens, idf="okapi")
    builds["sparse_okapi"] = t.s
    with Timer() as t:
        lucene = SparseBM25(tokens)
    builds["sparse_lucene"] = t.s
    # Memory of each index, measured on a second, untimed build under tracemalloc (Python objects and numpy /
    # scipy buffers): retained = still allocated after the build, peak = the build's high-water mark.
    mem: dict[str, dict] = {}
    for name, make in (("rank_bm25", lambda: RankBM25(tokens)), ("sparse_okapi", lambda: SparseBM25(tokens, idf="okapi")),
                       ("sparse_lucene", lambda: SparseBM25(tokens))):
        gc.collect()
        tracemalloc.start()
        obj = make()
        retained, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del obj
        mem[name] = {"retained_mb": round(retained / 2**20, 1), "build_peak_mb": round(peak / 2**20, 1)}
    gc.collect()

    lat: dict[str, list[float]] = {k: [] for k in builds}
    same_order = same_set = tie_explained = 0
    max_rel_diff = 0.0
    mismatches = []
    for qi, qt in enumerate(qtoks):  # interleaved, so machine load hits all three alike
        with Timer() as t:
            s_rank = rank.get_scores(qt)
            top_rank = top_k(s_rank, 10)
        lat["rank_bm25"].append(t.s * 1000)
        with Timer() as t:
            s_ok = okapi.get_scores(qt)
            top_ok = top_k(s_ok, 10)
        lat["sparse_okapi"].append(t.s * 1000)
        with Timer() as t:
            top_k(lucene.get_scores(qt), 10)
        lat["sparse_lucene"].append(t.s * 1000)
        scale = max(float(np.abs(s_rank).max()), 1e-9)
        max_rel_diff = max(max_rel_diff, float(np.abs(s_rank.astype(np.float64) - s_ok).max()) / scale)
        ids_r, ids_o = [i for i, _ in top_rank], [i for i, _ in top_ok]
        if ids_r == ids_o:
            same_order += 1
            same_set += 1
            continue
        if set(ids_r) == set(ids_o):
            same_set += 1
        # a difference is a tie when the swapped documents score the same within float32 precision
        diff = [i for i, j in zip(ids_r, ids_o) if i != j]
        tol = 1e-5 * scale
        explained = all(abs(float(s_rank[i]) - float(s_rank[j])) <= tol
                        for i, j in zip(ids_r, ids_o) if i != j)
        tie_explained += explained
        if len(mismatches) < 5:
            mismatches.append({"query": questions[qi]["query"], "rank_bm25": ids_r, "sparse_okapi": ids_o,
                               "n_positions_differ": len(diff), "explained_by_ties": explained})
    stats = {k: pctl(v) for k, v in lat.items()}
    res["build_s"] = {k: round(v, 3) for k, v in builds.items()}
    res["index_memory_tracemalloc"] = mem
    res["query_latency"] = stats
    res["speedup_p50 (rank_bm25 / sparse)"] = {
        k: round(stats["rank_bm25"]["p50_ms"] / stats[k]["p50_ms"], 1) for k in ("sparse_okapi", "sparse_lucene")}
    res["speedup_build (rank_bm25 / sparse)"] = {
        k: round(builds["rank_bm25"] / builds[k], 2) for k in ("sparse_okapi", "sparse_lucene")}
    res["top10_agreement_okapi"] = {"queries": len(qtoks), "identical_order": same_order, "identical_set": same_set,
                                    "differ_only_by_ties": tie_explained,
                                    "max_abs_score_diff_rel_to_max": max_rel_diff, "examples": mismatches}
    res["latency_note"] = "latency = get_scores + top_k(10), query tokenisation excluded"
    return res


PHASES = {"pipl_build": phase_pipl_build, "pipl_query": phase_pipl_query, "scale": phase_scale,
          "bm25_compare": phase_bm25_compare}


# ---------------------------------------------------------------------------------------------- driver
def run_phase_subprocess(name: str, args, workdir: str) -> dict:
    return run_phase(str(Path(__file__).resolve()), name, [
        "--workdir", workdir, "--pipl-queries", str(args.pipl_queries), "--stard-queries", str(args.stard_queries),
        "--embed-docs-per-s", str(args.embed_docs_per_s or 0)])


def report(result: dict) -> str:
    ph = result["phases"]
    parts = [f"host: {result['host']['cpus']} CPUs, load avg at start {result['host']['loadavg_start']}, "
             f"end {result['host']['loadavg_end']}"]
    a = ph.get("pipl_build")
    if a and "stages" in a:
        parts.append(f"\n(a) index build, {a['n_docs']} PIPL articles, embedder {a['embedder']['model_id']} "
                     f"(dim {a['embedder']['dim']}, load {a['embedder']['load_s']} s; tokenizer init "
                     f"{a['tokenizer_init_s']} s)")
        rows = [(k, v["s"], v["cpu_s"], v["docs_per_s"]) for k, v in a["stages"].items()]
        rows.append(("sum of stages (default threads)", a["stages_total_s"], None, round(a["n_docs"] / a["stages_total_s"], 1)))
        rows.append(("build_index() end to end (warm)", a["build_index_end_to_end_s"],
                     a["build_index_end_to_end_cpu_s"], a["build_index_docs_per_s"]))
        parts.append(table(["stage", "wall s", "CPU s", "docs/s"], rows, first_width=42, digits=3))
    b = ph.get("pipl_query")
    if b and "latency" in b:
        parts.append(f"\n(b) LocalRetriever 'ensemble' over {b['n_docs']} PIPL articles, {b['n_queries']} questions "
                     f"{b['query_types']}; reranker: {b['reranker']}; 2-gram index (lazy) {b['gram_index_build_s']} s")
        parts.append(_latency_table(b["latency"], b.get("latency_torch_1_thread"), 34))
        parts.append(f"(columns '1thr': the same questions again with torch.set_num_threads(1); default threads: "
                     f"{b.get('torch_threads')})")
        if b.get("latency_note"):
            parts.append(b["latency_note"])
    c = ph.get("scale")
    if c and "stages" in c:
        parts.append(f"\n(c) scale: {c['n_docs']} national LawRefBook articles (load {c['load_corpus_s']} s, "
                     f"{c['mean_tokens_per_doc']} tokens/doc, BM25 vocab {c['bm25_vocab']}, on-disk index "
                     f"{c['index_size_mb']} MB)")
        rows = [(k, v["s"], v["cpu_s"], v["docs_per_s"]) for k, v in c["stages"].items()]
        e = c["embed_estimate"]
        rows.append(("embed: NOT RUN, estimate at 5.4 docs/s", e["est_s_at_baseline_5.4_docs_per_s (11k LawRefBook, baselines note)"], None, 5.4))
        if e.get("pipl_measured_docs_per_s"):
            rows.append((f"embed: NOT RUN, estimate at {e['pipl_measured_docs_per_s']} docs/s (PIPL here)",
                         e["est_s_at_pipl_measured_docs_per_s"], None, e["pipl_measured_docs_per_s"]))
        parts.append(table(["build stage", "wall s", "CPU s", "docs/s"], rows, first_width=48, digits=2))
        parts.append(c["faiss_note"])
        parts.append(table(["query stage (one query at a time)", "p50 ms", "p95 ms", "mean ms"],
                           [(k, v["p50_ms"], v["p95_ms"], v["mean_ms"]) for k, v in c["micro_latency"].items()],
                           first_width=48, digits=2))
        parts.append(f"query embedding in one batch of {c['n_queries']}: {c['query_embed_batch_ms_per_query']} ms/query")
        parts.append(f"LocalRetriever 'ensemble' over the 64k corpus, {c['n_queries']} STARD questions "
                     f"(lookup scan without refs: {c['lookup_no_refs_ms (law-set scan inside the fusion stage)']} ms):")
        parts.append(_latency_table(c["retriever_latency"], c.get("retriever_latency_torch_1_thread"), 48))
    d = ph.get("bm25_compare")
    if d and "build_s" in d:
        parts.append(f"\n(d) rank-bm25 vs SparseBM25: {d['n_docs']} docs (same LegalTokenizer tokens), "
                     f"{d['n_queries']} STARD questions ({d['mean_query_tokens']} tokens each, expand_query)")
        rows = []
        for k in ("rank_bm25", "sparse_okapi", "sparse_lucene"):
            q = d["query_latency"][k]
            m = d["index_memory_tracemalloc"][k]
            rows.append((k, d["build_s"][k], q["p50_ms"], q["p95_ms"], m["retained_mb"], m["build_peak_mb"]))
        parts.append(table(["implementation", "build s", "p50 ms", "p95 ms", "index MB", "build pk MB"], rows,
                           digits=2, width=12))
        ag = d["top10_agreement_okapi"]
        parts.append(f"speed-up p50 (rank_bm25 / sparse): {d['speedup_p50 (rank_bm25 / sparse)']}; build: "
                     f"{d['speedup_build (rank_bm25 / sparse)']}")
        parts.append(f"top-10 agreement rank_bm25 vs SparseBM25(idf='okapi'): identical order {ag['identical_order']}"
                     f"/{ag['queries']}, identical set {ag['identical_set']}/{ag['queries']}, differences explained "
                     f"by score ties {ag['differ_only_by_ties']}; max |score diff| / max score "
                     f"{ag['max_abs_score_diff_rel_to_max']:.2e}")
    rows = [(name, p.get("peak_rss_mb"), p.get("wall_s")) for name, p in ph.items()]
    parts.append("\n(e) peak RSS per phase (each phase in its own subprocess: ru_maxrss of that process)")
    parts.append(table(["phase", "peak RSS MB", "wall s"], rows, digits=1))
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="PIPL phases only (smoke run)")
    p.add_argument("--json", type=Path, help="also write the JSON result here")
    p.add_argument("--phases", nargs="+", choices=ALL_PHASES, help="run only these phases")
    p.add_argument("--pipl-queries", type=int, default=30)
    p.add_argument("--stard-queries", type=int, default=200)
    p.add_argument("--embed-docs-per-s", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--phase", choices=ALL_PHASES, help=argparse.SUPPRESS)  # internal: run one phase here
    p.add_argument("--workdir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.phase:  # child process
        import logging

        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        os.environ.setdefault("TQDM_DISABLE", "1")
        la0 = loadavg()
        out = PHASES[args.phase](args)
        out["peak_rss_mb"] = peak_rss_mb()
        out["loadavg"] = {"start": la0, "end": loadavg()}
        print(json.dumps(out, ensure_ascii=False))
        return 0

    phases = args.phases or (QUICK_PHASES if args.quick else ALL_PHASES)
    if "pipl_query" in phases and "pipl_build" not in phases:
        phases = [ph for ph in ALL_PHASES if ph in phases or ph == "pipl_build"]
    result: dict = {"benchmark": "bench_retrieval", "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "host": {"cpus": os.cpu_count(), "python": platform.python_version(),
                             "nice": os.nice(0), "loadavg_start": loadavg()},
                    "rss_method": "each phase runs in its own subprocess; peak_rss_mb = that process's ru_maxrss",
                    "phases": {}}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as workdir:
        for name in phases:
            if name == "scale":
                a = result["phases"].get("pipl_build", {})
                args.embed_docs_per_s = a.get("stages", {}).get("embed", {}).get("docs_per_s") or 0.0
            result["phases"][name] = run_phase_subprocess(name, args, workdir)
    result["host"]["loadavg_end"] = loadavg()
    result["total_wall_s"] = round(time.perf_counter() - t0, 1)
    log("\n" + report(result))
    log(f"\ntotal wall time {result['total_wall_s']} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
        log(f"JSON written to {args.json}")
    print(json.dumps(result, ensure_ascii=False))
    return 0 if all("error" not in ph for ph in result["phases"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
