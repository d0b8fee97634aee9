#!/usr/bin/env python
"""A query-side adapter for a frozen embedder, trained on STARD questions, scored out of fold (not part of CI).

The document vectors of a built national index stay as they are; only the question's vector moves:

    q' = normalise(q + q·W)        W: dim × dim, starting at 0 (= the embedder unchanged)

trained with a softmax over every national article (each gold article against all 64,665, temperature TAU) by
AdamW, whose weight decay pulls W back towards 0. How long to train is chosen on an inner validation part of the
training questions (every VAL_EVERY-th); nothing of a held-out question is seen before it is scored.

Reported per candidate set (the 11k subset and all national articles), each out of fold:
  dense, dense_adapted           the index's embedder, without and with the adapter
  fused_cv, fused_cv_adapted     weighted RRF of dense + bm25 + gram, weights chosen on the training folds only
under two fold schemes: `interleaved` (question i in fold i % k, as bench/stard.py) and `blocks` (k contiguous
runs of questions: STARD's questions come in topic runs whose neighbours share gold articles, so blocks are the
harder, new-topic case), and STARD's own split (`official`: trained on its train questions, scored on its dev).

    nice -n 19 .venv/bin/python bench/stard_adapter.py --index-dir data/national-e5 \
        --json bench/results/stard_adapter.json
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    RESULTS_DIR,
    SHARED_DATA,
    Timer,
    finish,
    load_national,
    load_stard,
    load_subset_keys,
    loadavg,
    log,
    table,
    write_json,
)
from stard import CV_GRID, DEPTH, _mean, _metrics, _objective, choose_combo, prepare_index_dense, replay_fusions

TAU = 0.05
LR = 3e-4
WEIGHT_DECAY = 0.01
BATCH = 64
MAX_EPOCHS = 40
VAL_EVERY = 7  # every 7th training question validates (≈ 14 %)
PATIENCE = 5
KEYS = ("recall@10", "recall@100", "mrr@10")
COMBOS = [(1.0, wb, wg) for wb in CV_GRID for wg in CV_GRID] + [(0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]


# ---------------------------------------------------------------------------------------------- the adapter
def adapt(q: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    if w is None:
        return q
    out = q + q @ w
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def train_adapter(q: np.ndarray, gold_rows: list[list[int]], docs: np.ndarray, seed: int = 0) -> tuple:
    """W trained on these questions, the epoch count chosen on their inner validation part; (W, history)."""
    import torch

    idx = np.arange(len(q))
    val = idx[idx % VAL_EVERY == VAL_EVERY - 1]
    train = idx[idx % VAL_EVERY != VAL_EVERY - 1]
    d = torch.from_numpy(docs)
    qt = torch.from_numpy(q)
    w = torch.zeros((q.shape[1], q.shape[1]), requires_grad=True)
    opt = torch.optim.AdamW([w], lr=LR, weight_decay=WEIGHT_DECAY)
    rng = np.random.default_rng(seed)
    best = (_val_score(q[val], [gold_rows[i] for i in val], docs, None), 0, np.zeros_like(w.detach().numpy()))
    history = [{"epoch": 0, "val": round(best[0], 4)}]
    for epoch in range(1, MAX_EPOCHS + 1):
        order = rng.permutation(train)
        for start in range(0, len(order), BATCH):
            batch = order[start:start + BATCH]
            x = qt[batch] + qt[batch] @ w
            logp = torch.log_softmax((x / x.norm(dim=1, keepdim=True)) @ d.T / TAU, dim=1)
            loss = -torch.stack([logp[i, gold_rows[b]].mean() for i, b in enumerate(batch)]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        wn = w.detach().numpy().copy()
        score = _val_score(q[val], [gold_rows[i] for i in val], docs, wn)
        history.append({"epoch": epoch, "val": round(score, 4), "loss": round(loss.item(), 4)})
        if score > best[0]:
            best = (score, epoch, wn)
        elif epoch - best[1] >= PATIENCE:
            break
    return (best[2] if best[1] else None), {"best_epoch": best[1], "history": history,
                                            "n_train": len(train), "n_val": len(val)}


def _val_score(q: np.ndarray, gold_rows: list[list[int]], docs: np.ndarray, w) -> float:
    ranks = top_rows(adapt(q, w), docs)
    rows = [_row_metrics(r, g) for r, g in zip(ranks, gold_rows)]
    return _objective(_mean(rows))


def _row_metrics(ranked: np.ndarray, gold: list[int]) -> dict:
    return _metrics([int(x) for x in ranked], {int(g) for g in gold})


def top_rows(q: np.ndarray, docs: np.ndarray, depth: int = DEPTH, chunk: int = 256) -> np.ndarray:
    """(n, depth) document rows by cosine, best first."""
    out = np.zeros((len(q), depth), dtype=np.int64)
    for s in range(0, len(q), chunk):
        sims = q[s:s + chunk] @ docs.T
        part = np.argpartition(-sims, depth, axis=1)[:, :depth]
        order = np.argsort(-np.take_along_axis(sims, part, axis=1), axis=1, kind="stable")
        out[s:s + chunk] = np.take_along_axis(part, order, axis=1)
    return out


# ---------------------------------------------------------------------------------------------- lexical channels
def lexical_rankings(national, idx: list[int], questions, tokens) -> dict[str, list[list[int]]]:
    """bm25 and gram rankings over the candidate set `idx` (positions within it), as bench/stard.py computes them."""
    from agentic_rag.retrieval.bm25 import SparseBM25, top_k
    from agentic_rag.retrieval.tokenizer import LegalTokenizer, char_bigrams

    tok = LegalTokenizer()
    out = {}
    for name, doc_toks, q_toks in (("bm25", [tokens[i] for i in idx], [tok.expand_query(q["query"]) for q in questions]),
                                   ("gram", [char_bigrams(national[i].keyword_text) for i in idx],
                                    [char_bigrams(q["query"]) for q in questions])):
        scorer = SparseBM25(doc_toks)
        out[name] = [[h for h, _ in top_k(scorer.get_scores(qt), DEPTH)] for qt in q_toks]
    return out


# ---------------------------------------------------------------------------------------------- one fold scheme
def fold_ids(n: int, k: int, scheme: str) -> np.ndarray:
    return np.arange(n) % k if scheme == "interleaved" else np.minimum(np.arange(n) * k // n, k - 1)


def choose_weights(per_combo: np.ndarray, rows: np.ndarray) -> int:
    return choose_combo(per_combo[:, rows].mean(axis=1), COMBOS.index((1.0, 0.0, 0.0)))


def run_scheme(sets: dict, q_vecs: np.ndarray, gold_national: list[list[int]], national_vecs: np.ndarray,
               questions, train_sets: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    """Out-of-fold metrics of the four matchers on every candidate set; `train_sets` are (train, test) row pairs."""
    out: dict = {name: {"per_q": {m: np.zeros((len(questions), 3)) for m in
                                  ("dense", "dense_adapted", "fused_cv", "fused_cv_adapted")}} for name in sets}
    fold_info = []
    for f, (train, test) in enumerate(train_sets):
        with Timer() as t:
            w, info = train_adapter(q_vecs[train], [gold_national[i] for i in train], national_vecs, seed=f)
        info.update(fold=f, n_test=len(test), train_s=round(t.s, 1),
                    w_frobenius=round(float(np.linalg.norm(w)), 4) if w is not None else 0.0)
        log(f"  fold {f}: best epoch {info['best_epoch']} of {len(info['history']) - 1}, {t.s:.0f} s")
        for name, s in sets.items():
            for label, weights in (("dense", None), ("dense_adapted", w)):
                ranks = top_rows(adapt(q_vecs, weights), s["vecs"])
                ids = s["ids"]
                per_q = np.array([[m[k] for k in KEYS] for m in
                                  (_metrics([ids[j] for j in r], q["gold"]) for r, q in zip(ranks, questions))])
                out[name]["per_q"][label][test] = per_q[test]
                rankings = {"dense": [list(map(int, r)) for r in ranks], **s["lexical"]}
                per_combo = replay_fusions(rankings, ids, questions, COMBOS)
                best = choose_weights(per_combo, train)
                fused = "fused_cv" if weights is None else "fused_cv_adapted"
                out[name]["per_q"][fused][test] = per_combo[best, test]
                info.setdefault("weights", {})[f"{name}.{fused}"] = dict(zip(("dense", "bm25", "gram"), COMBOS[best]))
        fold_info.append(info)
    result = {}
    for name in sets:
        result[name] = {m: dict(zip(KEYS, v[np.concatenate([t for _, t in train_sets])].mean(axis=0).round(4).tolist()))
                        for m, v in out[name]["per_q"].items()}
    return {"sets": result, "folds": fold_info}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--index-dir", type=Path, required=True, help="a national index (init_index.py --national-only)")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--schemes", nargs="+", default=["interleaved", "blocks", "official"])
    p.add_argument("--cache-dir", type=Path, default=RESULTS_DIR)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    t_start = time.perf_counter()
    result: dict = {"benchmark": "stard_adapter", "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "loadavg_start": loadavg(), "config": {"tau": TAU, "lr": LR, "weight_decay": WEIGHT_DECAY,
                                                            "batch": BATCH, "max_epochs": MAX_EPOCHS,
                                                            "val_every": VAL_EVERY, "patience": PATIENCE}}
    questions = load_stard()
    national = load_national()
    row_of = {d.id: i for i, d in enumerate(national)}
    dense = prepare_index_dense(args, national, questions)
    national_vecs, q_vecs = dense["national_vecs"], np.ascontiguousarray(dense["q_vecs"], dtype=np.float32)
    result["dense"] = dense["info"]
    gold_national = [[row_of[g] for g in sorted(q["gold"])] for q in questions]

    from agentic_rag.retrieval.tokenizer import LegalTokenizer

    tokenizer = LegalTokenizer()
    tokens = [tokenizer.tokenize(d.keyword_text) for d in national]
    keys = load_subset_keys()
    subset = [i for i, d in enumerate(national) if (d.source, d.article_cn) in keys]
    sets = {}
    for name, idx in (("subset", subset), ("all", list(range(len(national))))):
        sets[name] = {"ids": [national[i].id for i in idx], "vecs": np.ascontiguousarray(national_vecs[idx]),
                      "lexical": lexical_rankings(national, idx, questions, tokens)}
        log(f"set {name}: {len(idx)} articles, lexical rankings ready")

    n = len(questions)
    for scheme in args.schemes:
        log(f"\n--- scheme {scheme}")
        if scheme == "official":
            train_ids = {int(line.split("\t")[0]) for line in
                         (SHARED_DATA / "stard" / "example" / "train.query.txt").read_text(encoding="utf-8").splitlines()
                         if line.strip()}
            is_train = np.array([q["id"] in train_ids for q in questions])
            pairs = [(np.flatnonzero(is_train), np.flatnonzero(~is_train))]
        else:
            folds = fold_ids(n, args.folds, scheme)
            pairs = [(np.flatnonzero(folds != f), np.flatnonzero(folds == f)) for f in range(args.folds)]
        result[scheme] = run_scheme(sets, q_vecs, gold_national, national_vecs, questions, pairs)
        result[scheme]["n_scored"] = int(sum(len(t) for _, t in pairs))
        if args.json:
            write_json(args.json, result, t_start)
    return finish(result, report, args.json, t_start)


def report(result: dict) -> str:
    rows = []
    for scheme in ("interleaved", "blocks", "official"):
        for set_name, matchers in result.get(scheme, {}).get("sets", {}).items():
            for m, v in matchers.items():
                rows.append((f"{scheme} {set_name} {m}", *(v[k] for k in KEYS)))
    return table(["scheme / set / matcher", "R@10", "R@100", "MRR@10"], rows, first_width=40)


if __name__ == "__main__":
    sys.exit(main())
