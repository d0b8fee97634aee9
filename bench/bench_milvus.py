#!/usr/bin/env python
"""FAISS + SparseBM25 vs Milvus Lite on the same LawRefBook articles and the same STARD questions, in one run.

Each phase builds one index with the real `build_index` (tokenise, "embed", store, write files) into a temp dir,
loads it the way the retriever does, and times the channels per query:

  dense    FAISS IndexFlatIP search                | Milvus search on the dense field (FLAT, or IVF_FLAT)
  bm25     SparseBM25 over LegalTokenizer tokens   | Milvus BM25 (jieba analyzer in the engine)
  hybrid   both + weighted RRF in Python (semantic  | one hybrid_search: dense + BM25 requests, RRFRanker(60)
           weights 1.0 / 0.05, what the retriever does)
Queries get the same colloquial → statute expansion on both sides; query embedding is not timed (see below).

Vectors: RANDOM unit vectors of the real dimension (768, EmbeddingGemma's), deterministic per text, so both stores hold
the same vectors. Real embeddings of 64k articles do not exist here (EmbeddingGemma encodes ~3.5 articles/s on these
2 cores: ~5 h). Dense cost depends on n·dim, not on the values; dense recall is Milvus's top-10 overlap with FAISS's
exact top-10 on the same query vectors (random data has no cluster structure, so IVF recall is a pessimistic
bound). BM25 runs on the real text: STARD Recall@10/@100 and MRR@10 against the gold articles, for both backends.

With --vectors-index DIR (a national index built by init_index.py, e.g. the e5-small-q4 one of bench/stard_national.sh)
the national phases use its REAL document vectors and the same embedder's query vectors instead (cached by
bench/stard.py), and STARD recall is measured for every channel: dense, BM25 and each backend's hybrid.

Sets: national (64,665 national LawRefBook articles) and all (147k, local regulations included).
RSS: each phase is its own subprocess; Milvus Lite's engine is a child process, so its peak (VmHWM) is added.

  nice -n 19 .venv/bin/python bench/bench_milvus.py [--sets national all] [--latency-queries 200] \
      [--vectors-index data/national-e5] [--json bench/results/milvus.json]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    LAWREFBOOK,
    Timer,
    current_rss_mb,
    load_stard,
    loadavg,
    log,
    pctl,
    peak_rss_mb,
    run_phase,
    spread,
    table,
)

DIM = 768
K_CANDIDATES = 30  # what the retriever asks each channel for (CHANNEL_CANDIDATES)
DEPTH = 100  # STARD recall depth
BACKENDS = {"faiss": ("faiss", "FLAT"), "milvus": ("milvus", "FLAT"), "milvus_ivf": ("milvus", "IVF_FLAT")}
DEFAULT_PHASES = {"national": ("faiss", "milvus", "milvus_ivf"), "all": ("faiss", "milvus")}
VECTOR_NOTE = ("dense vectors are random unit vectors of the real dimension (768), the same in both stores (pass "
               "--vectors-index for a national index's real ones). Dense latency depends on n*dim only; dense "
               "recall = overlap of Milvus top-10 with FAISS exact top-10.")


class RandomEmbedder:
    """Unit vectors seeded by a hash of the text: the same text gets the same vector in every process."""

    model_id, dim = "random-unit-768", DIM

    def __init__(self):
        self.seconds = 0.0

    def _vec(self, salt: str, text: str):
        import numpy as np

        seed = int.from_bytes(hashlib.blake2b(f"{salt}{text}".encode(), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def encode_documents(self, texts, show_progress=False):
        import numpy as np

        t0 = time.perf_counter()
        out = np.stack([self._vec("d:", t) for t in texts])
        self.seconds += time.perf_counter() - t0
        return out

    def encode_queries(self, texts):
        import numpy as np

        return np.stack([self._vec("q:", t) for t in texts])


class IndexVectors:
    """The document vectors of a built national index, served by text (build_index asks for Document.index_text);
    texts the index does not hold (an amendment's new wording) are embedded by the index's own embedder."""

    def __init__(self, docs, vectors, embedder):
        self.model_id, self.dim, self.seconds = embedder.model_id, vectors.shape[1], 0.0
        self._inner, self._by_text = embedder, {d.index_text: v for d, v in zip(docs, vectors)}

    def encode_documents(self, texts, show_progress=False):
        import numpy as np

        return np.stack([self._by_text[t] if t in self._by_text else self._inner.encode_documents([t])[0]
                         for t in texts])


def real_vectors(index_dir: Path, docs, questions):
    """(embedder serving the index's document vectors, query vectors of `questions`) — bench/stard.py's loader."""
    from _common import RESULTS_DIR
    from stard import prepare_index_dense

    data = prepare_index_dense(argparse.Namespace(index_dir=index_dir, cache_dir=RESULTS_DIR), docs, questions)
    return IndexVectors(docs, data["national_vecs"], data["embedder"]), data["q_vecs"]


class TimedTokenizer:
    """LegalTokenizer, counting the time build_index spends tokenising."""

    def __init__(self, inner):
        self.inner, self.version, self.seconds = inner, inner.version, 0.0

    def tokenize(self, text):
        t0 = time.perf_counter()
        out = self.inner.tokenize(text)
        self.seconds += time.perf_counter() - t0
        return out


def load_set(name: str):
    from agentic_rag.knowledge.corpus import parse_lawrefbook

    parsed = parse_lawrefbook(LAWREFBOOK, national_only=(name == "national"))
    return parsed.checked(LAWREFBOOK, allow_malformed=True), len(parsed.problems)


def engine_memory_mb() -> dict:
    """Peak and current RSS of this process's Milvus Lite engine (a child process), from /proc."""
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:
        return {}
    out = {}
    for server in server_manager_instance._servers.values():
        with open(f"/proc/{server._p.pid}/status") as f:
            for line in f:
                if line.startswith(("VmHWM:", "VmRSS:")):
                    key = "engine_peak_rss_mb" if line.startswith("VmHWM") else "engine_rss_mb"
                    out[key] = out.get(key, 0) + round(int(line.split()[1]) / 1024, 1)
    return out


# ---------------------------------------------------------------------------------------------- one phase (child)
def build_phase(docs, backend: str, workdir: Path, embedder=None) -> tuple[dict, Path]:
    from agentic_rag.knowledge.index import build_index
    from agentic_rag.knowledge.stores import StoreOptions
    from agentic_rag.retrieval.tokenizer import LegalTokenizer

    store, dense_index = BACKENDS[backend]
    embedder, tokenizer = embedder or RandomEmbedder(), TimedTokenizer(LegalTokenizer())
    data_dir = workdir / f"data-{backend}"
    with Timer() as t:
        manifest = build_index(docs, embedder, tokenizer, data_dir, corpus_source="lawrefbook", force=True,
                               store=store, store_options=StoreOptions(dense_index=dense_index))
    index_dir = data_dir / manifest.index_dir
    store_s = t.s - tokenizer.seconds - embedder.seconds
    return {"store": store, "dense_index": dense_index, "build_s": round(t.s, 1),
            "build_cpu_s_python": round(t.cpu_s, 1),
            "docs_per_s": round(len(docs) / t.s, 1), "tokenize_s": round(tokenizer.seconds, 1),
            "vectors_s": round(embedder.seconds, 1),
            "store_and_files_s": round(store_s, 1), "store_and_files_docs_per_s": round(len(docs) / store_s, 1),
            "index_mb_on_disk": round(sum(f.stat().st_size for f in index_dir.rglob("*") if f.is_file()) / 2**20, 1),
            "rss_after_build_mb": current_rss_mb(), **engine_memory_mb()}, data_dir


def _fused(settings, dense, keyword, k: int = K_CANDIDATES):
    """The retriever's client-side fusion of one dense and one BM25 list (semantic-question weights)."""
    from agentic_rag.retrieval.fusion import CHANNEL_WEIGHTS, RankedList, weighted_rrf

    w = CHANNEL_WEIGHTS["semantic"]

    def hybrid(v, toks):
        lists = [RankedList("vector", w["vector"], dense(v, toks)), RankedList("bm25", w["bm25"], keyword(v, toks))]
        return [(h.doc, h.score) for h in weighted_rrf(lists, settings.rrf_k)][:k]
    return hybrid


def channel_funcs(index, backend: str, settings, k: int = K_CANDIDATES):
    """name → f(query_vector, expanded_tokens) -> [(doc, score)]: dense, bm25, hybrid (+ hybrid_client on Milvus)."""
    from agentic_rag.retrieval.bm25 import make_bm25, top_k

    store = index.store
    if backend == "faiss":
        bm25 = make_bm25(index.tokens, "sparse")

        def dense(v, toks):
            s, i = store.search(v[None, :], k)
            return [(int(d), float(x)) for x, d in zip(s[0], i[0]) if d >= 0]

        def keyword(v, toks):
            return top_k(bm25.get_scores(toks), k)

        return {"dense": dense, "bm25": keyword, "hybrid": _fused(settings, dense, keyword, k)}

    def dense(v, toks):
        return store.dense(v[None, :], k)[0]

    def keyword(v, toks):
        return store.bm25([" ".join(toks)], k)[0]

    def engine(v, toks):  # MILVUS_HYBRID=engine: one hybrid_search, the engine's RRF
        return store.hybrid(v[None, :], [" ".join(toks)], k, settings.rrf_k)[0]

    # hybrid_client = MILVUS_HYBRID=client (the default): Milvus's two rankings, fused here like the FAISS path
    return {"dense": dense, "bm25": keyword, "hybrid": engine, "hybrid_client": _fused(settings, dense, keyword, k)}


def time_channels(funcs, qvecs, qtoks) -> tuple[dict, list]:
    for f in funcs.values():  # warm-up (Milvus: the engine loads its jieba dictionary on first use)
        f(qvecs[0], qtoks[0])
    out, dense_top = {}, []
    for name, f in funcs.items():
        times = []
        for v, toks in zip(qvecs, qtoks):
            t0 = time.perf_counter()
            hits = f(v, toks)
            times.append((time.perf_counter() - t0) * 1000)
            if name == "dense":
                dense_top.append([d for d, _ in hits[:10]])
        out[name] = pctl(times)
    return out, dense_top


def stard_recall(funcs: dict, questions, qvecs, qtoks, ids: list[str]) -> dict:
    """STARD Recall@10/@100 and MRR@10 of each channel (functions asked for DEPTH hits), over every question."""
    from agentic_rag.eval.metrics import mrr_at, recall_at

    out = {}
    for name, f in funcs.items():
        rows = []
        with Timer() as t:
            for q, v, toks in zip(questions, qvecs, qtoks):
                ranked = [ids[d] for d, _ in f(v, toks)]
                rows.append((recall_at(ranked, q["gold"], 10), recall_at(ranked, q["gold"], 100),
                             mrr_at(ranked, q["gold"], 10)))
        n = len(rows)
        out[name] = {"n_questions": n, "recall@10": round(sum(r[0] for r in rows) / n, 4),
                     "recall@100": round(sum(r[1] for r in rows) / n, 4),
                     "mrr@10": round(sum(r[2] for r in rows) / n, 4),
                     "mean_ms_per_query_depth_100": round(t.s * 1000 / n, 2)}
    return out


def phase(args) -> dict:
    from agentic_rag.config import Settings
    from agentic_rag.knowledge.index import load_index
    from agentic_rag.retrieval.tokenizer import LegalTokenizer

    workdir = Path(args.workdir)
    set_name, backend = args.phase.split(":")
    with Timer() as t:
        docs, skipped = load_set(set_name)
    docs = docs[:args.limit_docs] if args.limit_docs else docs
    res: dict = {"set": set_name, "backend": backend, "n_docs": len(docs), "malformed_skipped": skipped,
                 "load_corpus_s": round(t.s, 1)}
    questions = load_stard()
    real = args.vectors_index is not None and set_name == "national"
    embedder, qvecs = real_vectors(Path(args.vectors_index), docs, questions) if real else (None, None)
    if qvecs is None:
        qvecs = RandomEmbedder().encode_queries([q["query"] for q in questions])
    res["vectors"] = embedder.model_id if real else RandomEmbedder.model_id
    log(f"[{args.phase}] {len(docs)} articles, {res['vectors']} vectors; building")
    build, data_dir = build_phase(docs, backend, workdir, embedder)
    res["build"] = build
    del docs
    with Timer() as t:
        index = load_index(data_dir)
        settings = Settings(_env_file=None)
        funcs = channel_funcs(index, backend, settings)  # FAISS: the BM25 matrix is built here
    res["load_s"] = round(t.s, 1)
    if BACKENDS[backend][0] == "milvus":  # did the engine build the dense index, or search brute force?
        info = index.store.client.describe_index(index.store.collection, "dense")
        res["dense_index_state"] = {k: info.get(k) for k in ("index_type", "state", "indexed_rows", "total_rows",
                                                             "pending_index_rows")}
    log(f"[{args.phase}] built in {build['build_s']} s, loaded in {res['load_s']} s; querying")
    tokenizer = LegalTokenizer()
    qtoks = [tokenizer.expand_query(q["query"]) for q in questions]
    timed = spread(list(range(len(questions))), args.latency_queries)
    res["latency_ms"], dense_top = time_channels(funcs, qvecs[timed], [qtoks[i] for i in timed])
    res["latency_queries"] = len(timed)
    res["dense_recall_vs_faiss_exact"] = dense_overlap(workdir / f"{set_name}-faiss-top10.json", dense_top, backend)
    deep = channel_funcs(index, backend, settings, DEPTH)
    recall = stard_recall(deep if real else {"bm25": deep["bm25"]}, questions, qvecs, qtoks,
                          [d.id for d in index.documents])
    res["bm25_stard"], res["stard"] = recall["bm25"], recall
    res.update(engine_memory_mb())
    res["peak_rss_serving_mb"] = peak_rss_mb()  # build + load + queries, before the update re-reads the files
    if BACKENDS[backend][0] == "milvus":
        index.store.close()
        res["update_one_law"] = time_update(data_dir, index.documents, embedder or RandomEmbedder())
        res["update_one_law"]["engine_after"] = engine_memory_mb()
    return res


def time_update(data_dir: Path, documents, embedder) -> dict:
    """An amendment of the law with the most articles: 2 reworded, 1 repealed, 1 added, in place."""
    from collections import Counter
    from dataclasses import replace

    from agentic_rag.knowledge.update import update_law
    from agentic_rag.retrieval.tokenizer import LegalTokenizer

    law = Counter(d.law for d in documents).most_common(1)[0][0]
    old = [d for d in documents if d.law == law]
    new = [replace(d, text=d.text + "（修订）") if i < 2 else d for i, d in enumerate(old[:-1])]
    new.append(replace(old[0], id=old[0].id + "-added", article_cn="第九千条", article=9000, text="新增条文。"))
    with Timer() as t:
        manifest, change = update_law(data_dir, law, new, embedder, LegalTokenizer())
    return {"law": law, "law_articles": len(old), "added": len(change.added), "replaced": len(change.replaced),
            "deleted": len(change.deleted), "s": round(t.s, 2), "embedded": len(change.new),
            "doc_count_after": manifest.doc_count, "generation": manifest.generation}


def dense_overlap(path: Path, dense_top: list, backend: str) -> dict | None:
    """The FAISS phase writes its exact top-10s; the Milvus phases compare theirs with them."""
    if backend == "faiss":
        path.write_text(json.dumps(dense_top), encoding="utf-8")
        return {"recall@10": 1.0, "note": "exact (IndexFlatIP)"}
    if not path.exists():
        return None
    exact = json.loads(path.read_text(encoding="utf-8"))
    overlaps = [len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(dense_top, exact)]
    return {"recall@10": round(sum(overlaps) / len(overlaps), 4), "n": len(overlaps),
            "identical_top10_lists": sum(a == b for a, b in zip(dense_top, exact))}


# ---------------------------------------------------------------------------------------------- driver
def run_subprocess(phase: str, args, workdir: str) -> dict:
    return run_phase(str(Path(__file__).resolve()), phase, [
        "--workdir", workdir, "--latency-queries", str(args.latency_queries), "--limit-docs", str(args.limit_docs),
        *(["--vectors-index", str(args.vectors_index)] if args.vectors_index else [])])


def report(result: dict) -> str:
    rows = []
    for name, ph in result["phases"].items():
        if "error" in ph:
            rows.append((name, ph["error"]))
            continue
        b, lat, bm = ph["build"], ph["latency_ms"], ph["bm25_stard"]
        rss = ph.get("peak_rss_serving_mb", ph["peak_rss_mb"]) + ph.get("engine_peak_rss_mb", 0)
        dense_r = (ph["dense_recall_vs_faiss_exact"] or {}).get("recall@10")
        client = lat.get("hybrid_client", {})
        rows.append((f"{name} ({ph['n_docs']})", b["build_s"], b["docs_per_s"], b["store_and_files_s"], ph["load_s"],
                     lat["dense"]["p50_ms"], lat["dense"]["p95_ms"], lat["bm25"]["p50_ms"], lat["bm25"]["p95_ms"],
                     lat["hybrid"]["p50_ms"], lat["hybrid"]["p95_ms"], client.get("p50_ms"), client.get("p95_ms"),
                     dense_r, bm["recall@10"], bm["recall@100"], round(rss), ph.get("update_one_law", {}).get("s")))
    head = ["phase (articles)", "build s", "docs/s", "store s", "load s", "dense p50", "p95", "bm25 p50", "p95",
            "hybrid p50", "p95", "client p50", "p95", "dense R@10", "BM25 R@10", "R@100", "peak MB", "update s"]
    out = table(head, rows, first_width=30, width=11, digits=3)
    recall = [(f"{name} {ch}", r["recall@10"], r["recall@100"], r["mrr@10"], r["mean_ms_per_query_depth_100"])
              for name, ph in result["phases"].items() if len(ph.get("stard", {})) > 1
              for ch, r in ph["stard"].items()]
    if recall:
        out += "\n\nSTARD over the real vectors\n" + table(["phase channel", "R@10", "R@100", "MRR@10", "ms/query"],
                                                          recall, first_width=36, width=10, digits=3)
    return out


def _header(args) -> dict:
    """What the run measured and how (the JSON's self-description)."""
    return {"benchmark": "bench_milvus", "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "host": {"cpus": os.cpu_count(), "python": platform.python_version(), "nice": os.nice(0),
                    "loadavg_start": loadavg()},
           "vectors": VECTOR_NOTE if not args.vectors_index else (
               f"national phases: the real document vectors of the index in {args.vectors_index} and its embedder's "
               "query vectors (STARD recall per channel under 'stard'); other sets: " + VECTOR_NOTE), "k_candidates": K_CANDIDATES, "stard_depth": DEPTH,
           "channels": {"dense": "FAISS IndexFlatIP search | Milvus dense search (FLAT or IVF_FLAT nlist 1024 "
                                 "nprobe 32), generation filter on",
                        "bm25": "SparseBM25 (LegalTokenizer tokens, lucene idf) | "
                                "Milvus BM25 (jieba analyzer)",
                        "hybrid": "FAISS: dense + SparseBM25 + weighted RRF in Python (semantic weights) | "
                                  "Milvus: one hybrid_search, RRFRanker(60) (MILVUS_HYBRID=engine)",
                        "hybrid_client": "Milvus only: Milvus dense + Milvus BM25 + the same weighted RRF in "
                                         "Python (MILVUS_HYBRID=client, the default)"},
           "update_one_law": "Milvus: init_index --update-law on the law with most articles (2 reworded, "
                             "1 repealed, 1 added), in place, after the queries",
           "not_timed": "query embedding (the same for both backends), query expansion",
           "rss_note": "peak_rss_serving_mb: the phase's Python process (ru_maxrss) after build, load and "
                       "queries; peak_rss_mb: the same at the end (Milvus: after the in-place update, which "
                       "re-reads documents and tokens); engine_peak_rss_mb: Milvus Lite's engine process "
                       "(VmHWM) before the update. The table's peak MB = serving + engine.", "phases": {}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", nargs="+", choices=list(DEFAULT_PHASES), default=list(DEFAULT_PHASES))
    p.add_argument("--latency-queries", type=int, default=200, help="STARD questions timed per channel")
    p.add_argument("--json", type=Path)
    p.add_argument("--vectors-index", type=Path, help="a national index whose real vectors the national phases use")
    p.add_argument("--limit-docs", type=int, default=0, help=argparse.SUPPRESS)  # smoke runs: first N articles
    p.add_argument("--phase", help=argparse.SUPPRESS)  # internal: run one phase in this process
    p.add_argument("--workdir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.phase:
        import logging

        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        la0 = loadavg()
        out = phase(args)
        out.update(peak_rss_mb=peak_rss_mb(), loadavg={"start": la0, "end": loadavg()})
        print(json.dumps(out, ensure_ascii=False))
        return 0
    os.environ.setdefault("TQDM_DISABLE", "1")
    result = _header(args)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-milvus-") as workdir:
        for set_name in args.sets:
            for backend in DEFAULT_PHASES[set_name]:
                result["phases"][f"{set_name}:{backend}"] = run_subprocess(f"{set_name}:{backend}", args, workdir)
    result["host"]["loadavg_end"] = loadavg()
    result["total_wall_s"] = round(time.perf_counter() - t0, 1)
    log("\n" + report(result) + f"\n\ntotal wall time {result['total_wall_s']} s")
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False))
    return 0 if all("error" not in ph for ph in result["phases"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
