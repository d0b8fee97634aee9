#!/usr/bin/env python
"""The query-side adapter (agentic_rag/retrieval/adapter.py) on STARD: out of fold, on other questions, and the
one a national index ships (not part of CI; ~15 min on 2 cores with a built national index).

Reported per candidate set (the 11k subset and all national articles), each out of fold:
  dense, dense_adapted           the index's embedder, without and with the adapter
  fused_cv, fused_cv_adapted     weighted RRF of dense + bm25 + gram, weights chosen on the training folds only
under two fold schemes: `interleaved` (question i in fold i % k, as bench/stard.py) and `blocks` (k contiguous
runs of questions: STARD's questions come in topic runs whose neighbours share gold articles, so blocks are the
harder, new-topic case), and STARD's own split (`official`: trained on its train questions, scored on its dev).
For each scheme, the share of held-out questions whose gold articles were all gold of some training question
(`gold_seen`) says how much of the gain can be recall of seen articles.

Matchers: `dense` (the embedder alone), `dense_adapted_full` (the adapter at strength 1), `dense_adapted` (at the
strength chosen per fold, see below), and the fusions of the first and the last. The strength s (q + s·qW) is
chosen among STRENGTHS by the mean of R@100 + MRR@10 over three families of questions the adapter was not fitted on,
each over all national articles: the training questions' validation part, and the dev halves of this project's
PIPL and six-law sets (written for it, not STARD's kind: the full correction pulls them towards STARD's laws).

`transfer`: the adapter fitted on all STARD questions on the test halves of those two sets (never used for a
choice), over their own laws' articles and over every national article. `--save` writes it (with its strength)
as <index>/query_adapter.npy (+ .json), which the retriever then applies to every question.

    nice -n 19 .venv/bin/python bench/stard_adapter.py --index-dir data/national-gemma-int8 \
        --json bench/results/stard_adapter.json [--save]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import adapter_fit as qa
from _common import (
    PROJECT_ROOT,
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
from stard import CV_GRID, DEPTH, _metrics, choose_combo, prepare_index_dense, replay_fusions

KEYS = ("recall@10", "recall@100", "mrr@10")
COMBOS = [(1.0, wb, wg) for wb in CV_GRID for wg in CV_GRID] + [(0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]


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


def variants(w: np.ndarray | None, strength: float) -> tuple:
    """(label, W as applied): the embedder alone, the adapter at full strength, at the chosen strength."""
    return (("dense", None), ("dense_adapted_full", w), ("dense_adapted", None if w is None else strength * w))


def run_scheme(sets: dict, q_vecs: np.ndarray, gold_national: list[list[int]], national_vecs: np.ndarray,
               questions, train_sets: list[tuple[np.ndarray, np.ndarray]], own: dict) -> dict:
    """Out-of-fold metrics of the matchers on every candidate set; `train_sets` are (train, test) row pairs. Each
    fold's strength is chosen on its training questions' validation part and the dev halves of `own`."""
    labels = ("dense", "dense_adapted_full", "dense_adapted", "fused_cv", "fused_cv_adapted")
    out = {name: {m: np.zeros((len(questions), 3)) for m in labels} for name in sets}
    fold_info = []
    for f, (train, test) in enumerate(train_sets):
        with Timer() as t:
            w, info = qa.train(q_vecs[train], [gold_national[i] for i in train], national_vecs, seed=f)
        val = train[np.arange(len(train)) % qa.VAL_EVERY == qa.VAL_EVERY - 1]
        strength, scores = choose_strength(w, q_vecs[val], [gold_national[i] for i in val], national_vecs, own)
        info.update(fold=f, n_test=len(test), train_s=round(t.s, 1), strength=strength, strength_scores=scores,
                    w_frobenius=round(float(np.linalg.norm(w)), 4) if w is not None else 0.0)
        log(f"  fold {f}: best epoch {info['best_epoch']} of {len(info['history']) - 1}, strength {strength}, "
            f"{t.s:.0f} s")
        for name, s in sets.items():
            for label, weights in variants(w, strength):
                ranks = qa.top_rows(qa.adapt(q_vecs, weights), s["vecs"], DEPTH)
                ids = s["ids"]
                per_q = np.array([[m[k] for k in KEYS] for m in
                                  (_metrics([ids[j] for j in r], q["gold"]) for r, q in zip(ranks, questions))])
                out[name][label][test] = per_q[test]
                if label == "dense_adapted_full":
                    continue
                rankings = {"dense": [list(map(int, r)) for r in ranks], **s["lexical"]}
                per_combo = replay_fusions(rankings, ids, questions, COMBOS)
                best = choose_weights(per_combo, train)
                fused = "fused_cv" if label == "dense" else "fused_cv_adapted"
                out[name][fused][test] = per_combo[best, test]
                info.setdefault("weights", {})[f"{name}.{fused}"] = dict(zip(("dense", "bm25", "gram"), COMBOS[best]))
        fold_info.append(info)
    scored = np.concatenate([t for _, t in train_sets])
    result = {name: {m: dict(zip(KEYS, v[scored].mean(axis=0).round(4).tolist())) for m, v in per.items()}
              for name, per in out.items()}
    return {"sets": result, "folds": fold_info}


# ---------------------------------------------------------------------------------------------- the strength
STRENGTHS = (0.0, 0.25, 0.5, 0.75, 1.0)


def choose_strength(w, stard_q, stard_gold, national_vecs, own: dict) -> tuple[float, dict]:
    """The strength with the best mean of R@100 + MRR@10 over the question families, each over the national index:
    STARD questions the adapter was not fitted on, and the dev halves of this project's own sets."""
    if w is None:
        return 0.0, {}
    scores = {}
    for s in STRENGTHS:
        fams = [qa.validation_score(stard_q, stard_gold, national_vecs, s * w)]
        fams += [_key_score(o["vecs"][o["dev"]], [o["gold"][i] for i in o["dev"]], o["national"], s * w)
                 for o in own.values()]
        scores[s] = round(float(np.mean(fams)), 4)
    return max(STRENGTHS, key=lambda s: (scores[s], -s)), scores


def _key_score(q, gold_keys, cand: dict, w) -> float:
    ranked = [[cand["keys"][j] for j in r] for r in qa.top_rows(qa.adapt(q, w), cand["vecs"], DEPTH)]
    rows = [_metrics(r, g) for r, g in zip(ranked, gold_keys)]
    return float(np.mean([r["recall@100"] + r["mrr@10"] for r in rows]))


def scheme_pairs(scheme: str, questions, folds: int) -> list[tuple[np.ndarray, np.ndarray]]:
    if scheme == "official":
        lines = (SHARED_DATA / "stard" / "example" / "train.query.txt").read_text(encoding="utf-8").splitlines()
        train_ids = {int(line.split("\t")[0]) for line in lines if line.strip()}
        is_train = np.array([q["id"] in train_ids for q in questions])
        return [(np.flatnonzero(is_train), np.flatnonzero(~is_train))]
    fold = fold_ids(len(questions), folds, scheme)
    return [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(folds)]


def gold_seen(pairs, gold_national: list[list[int]]) -> float:
    """Share of held-out questions all of whose gold articles are gold of some training question."""
    seen, n = 0, 0
    for train, test in pairs:
        known = {g for i in train for g in gold_national[i]}
        seen += sum(all(g in known for g in gold_national[i]) for i in test)
        n += len(test)
    return round(seen / n, 4)


# ---------------------------------------------------------------------------------------------- own question sets
OWN_SETS = {"pipl_eval": ("eval/pipl_eval.jsonl", ["中华人民共和国个人信息保护法"]),
            "multilaw_eval": ("eval/multilaw_eval.jsonl", ["中华人民共和国劳动合同法", "中华人民共和国消费者权益保护法",
                                                           "中华人民共和国电子商务法", "中华人民共和国个人信息保护法",
                                                           "中华人民共和国数据安全法", "中华人民共和国民法典"])}


def own_sets(national, national_vecs: np.ndarray, embedder) -> dict:
    """This project's question sets (article lookups left out: the retriever looks those up), gold as law#article,
    split into halves by (type, id) — dev chooses the strength, test reports — with their candidate sets: their
    own laws' articles and every national article."""
    keys = [f"{d.law}#{d.article}" for d in national]
    everything = {"keys": keys, "vecs": national_vecs}
    out = {}
    for name, (path, laws) in OWN_SETS.items():
        qs = [json.loads(line) for line in (PROJECT_ROOT / path).read_text(encoding="utf-8").splitlines()]
        qs = [q for q in qs if q["gold"] and q["type"] != "exact"]
        gold = [{f"{g['law']}#{g['article']}" if isinstance(g, dict) else f"{laws[0]}#{g}" for g in q["gold"]}
                for q in qs]
        rows = [i for i, d in enumerate(national) if d.law in laws]
        half = {}
        for t in {q["type"] for q in qs}:
            ids = sorted((q["id"], i) for i, q in enumerate(qs) if q["type"] == t)
            half.update((i, k % 2) for k, (_, i) in enumerate(ids))
        out[name] = {"vecs": embedder.encode_queries([q["query"] for q in qs]), "gold": gold,
                     "types": [q["type"] for q in qs],
                     "dev": np.array([i for i in range(len(qs)) if half[i] == 0]),
                     "test": np.array([i for i in range(len(qs)) if half[i] == 1]),
                     "own_kb": {"keys": [keys[i] for i in rows], "vecs": national_vecs[rows]}, "national": everything}
    return out


def transfer(own: dict, w: np.ndarray, strength: float) -> dict:
    """The adapter fitted on all STARD questions on this project's test halves (never used for any choice), over
    their own laws and over every national article, without it, at the chosen strength and at full strength."""
    from agentic_rag.eval.metrics import mrr_at, recall_at

    out = {}
    for name, o in own.items():
        test = o["test"]
        for cand in ("own_kb", "national"):
            entry = out.setdefault(name, {"n_test": len(test)}).setdefault(cand, {})
            for label, weights in variants(w, strength):
                top = qa.top_rows(qa.adapt(o["vecs"][test], weights), o[cand]["vecs"], DEPTH)
                ranked = [[o[cand]["keys"][j] for j in r] for r in top]
                rows = [{"recall@1": recall_at(r, o["gold"][i], 1), "recall@5": recall_at(r, o["gold"][i], 5),
                         "recall@100": recall_at(r, o["gold"][i], 100), "mrr@10": mrr_at(r, o["gold"][i], 10),
                         "type": o["types"][i]} for r, i in zip(ranked, test)]
                entry[label] = _by_type(rows)
    return out


def _by_type(rows: list[dict]) -> dict:
    keys = ("recall@1", "recall@5", "recall@100", "mrr@10")
    mean = lambda rs: {k: round(sum(r[k] for r in rs) / len(rs), 4) for k in keys}
    return {"all": mean(rows), **{t: mean([r for r in rows if r["type"] == t]) for t in sorted({r["type"] for r in rows})}}


# ---------------------------------------------------------------------------------------------- main
def candidate_sets(national, national_vecs: np.ndarray, questions) -> dict:
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
    return sets


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--index-dir", type=Path, required=True, help="a national index (init_index.py --national-only)")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--schemes", nargs="+", default=["interleaved", "blocks", "official"])
    p.add_argument("--cache-dir", type=Path, default=RESULTS_DIR)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--save", action="store_true", help="write the adapter fitted on all questions into the index")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    t_start = time.perf_counter()
    result: dict = {"benchmark": "stard_adapter", "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "loadavg_start": loadavg()}
    questions = load_stard()
    national = load_national()
    row_of = {d.id: i for i, d in enumerate(national)}
    dense = prepare_index_dense(args, national, questions)
    national_vecs, q_vecs = dense["national_vecs"], np.ascontiguousarray(dense["q_vecs"], dtype=np.float32)
    result["dense"] = dense["info"]
    gold_national = [[row_of[g] for g in sorted(q["gold"])] for q in questions]
    sets = candidate_sets(national, national_vecs, questions)
    own = own_sets(national, national_vecs, dense["embedder"])
    for scheme in args.schemes:
        log(f"\n--- scheme {scheme}")
        pairs = scheme_pairs(scheme, questions, args.folds)
        result[scheme] = run_scheme(sets, q_vecs, gold_national, national_vecs, questions, pairs, own)
        result[scheme].update(n_scored=int(sum(len(t) for _, t in pairs)), gold_seen=gold_seen(pairs, gold_national))
        result["sets"] = by_set(result, args.schemes)
        if args.json:
            write_json(args.json, result, t_start)
    log("\n--- the adapter fitted on all questions; transfer to other question sets")
    w, info = qa.train(q_vecs, gold_national, national_vecs)
    val = np.flatnonzero(np.arange(len(questions)) % qa.VAL_EVERY == qa.VAL_EVERY - 1)
    strength, info["strength_scores"] = choose_strength(w, q_vecs[val], [gold_national[i] for i in val],
                                                        national_vecs, own)
    result["final"] = {**info, "strength": strength}
    result["transfer"] = transfer(own, w, strength)
    if args.save and w is not None:
        save(args.index_dir, dense["info"]["model_id"], w, strength, result)
    elif args.save:
        log("not saved: no epoch improved on the embedder as it is")
    return finish(result, report, args.json, t_start)


def by_set(result: dict, schemes: list[str]) -> dict:
    """The layout every bench/results/stard_*.json shares: sets.<set>.matchers.<matcher>@<scheme>."""
    out: dict = {}
    for scheme in (s for s in schemes if s in result):
        for set_name, matchers in result[scheme]["sets"].items():
            dest = out.setdefault(set_name, {"matchers": {}})["matchers"]
            dest.update({f"{m}@{scheme}": v for m, v in matchers.items()})
    return out


def save(index_dir: Path, embedder_id: str, w: np.ndarray, strength: float, result: dict) -> None:
    provenance = {"fitted_on": f"STARD, {len(load_stard())} questions with every gold article in LawRefBook",
                  "by": "bench/stard_adapter.py --save", "best_epoch": result["final"]["best_epoch"],
                  "out_of_fold": {s: result[s]["sets"]["all"] for s in ("interleaved", "blocks", "official")
                                  if s in result},
                  "transfer": result["transfer"], "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    qa.QueryAdapter(w, embedder_id, provenance, strength).save(index_dir / qa.ADAPTER_FILE)
    log(f"adapter written to {index_dir / qa.ADAPTER_FILE}")


def report(result: dict) -> str:
    rows = []
    for scheme in ("interleaved", "blocks", "official"):
        for set_name, matchers in result.get(scheme, {}).get("sets", {}).items():
            for m, v in matchers.items():
                rows.append((f"{scheme} {set_name} {m}", *(v[k] for k in KEYS)))
    lines = [table(["scheme / set / matcher", "R@10", "R@100", "MRR@10"], rows, first_width=40)]
    for name, entry in result.get("transfer", {}).items():
        for cand in ("own_kb", "national"):
            for label, m in entry[cand].items():
                lines.append(f"transfer {name} (test half) over {cand} {label}: {m['all']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
