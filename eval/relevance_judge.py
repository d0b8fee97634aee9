#!/usr/bin/env python3
"""A per-article relevance judge trained on far more labelled pairs than the dev halves: STARD's training split.

STARD's lay questions carry gold national articles (mapped onto LawRefBook: ../shared/data/stard). For every
question of STARD's official *training* split (never its dev split), the candidates are what a user's knowledge
base of that law would put in front of the gate: the gold articles and the top BM25 articles of the same law
documents (hard negatives: same law, same words, wrong article), each with its dense cosine to the question and a
fused rank (RRF of the BM25 and cosine orders among the candidates, as the retriever fuses). LeCoQA holds the same
1,543 questions with lawyer answers: it adds no question or label beyond STARD's, so it is not used.

The judge is a logistic model over
  * the retrieval evidence the gate already has: cosine, cosine − best cosine, 1 / (fused rank + 1), and the
    IDF-weighted share of the question's character bigrams found in the article (absolute and relative to the best);
  * optionally the element-wise product of the question and article vectors (a learned diagonal bilinear relevance:
    "this kind of article answers this kind of question"), `--interaction`.
Its P(relevant) is reported (AUROC, ECE) on the PIPL and six-law *test* halves the gate never saw — the answers
set's test half (each question retrieved against its own index, no model call) and the PIPL / several-law eval
sets' test halves — beside the shipped per-article model (`stages/grade/judge.py`, fitted on dev).

    .venv/bin/python eval/relevance_judge.py pairs      # STARD train candidates + vectors (cached, resumable)
    .venv/bin/python eval/relevance_judge.py report     # fit on STARD train, score the test halves
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))

from agentic_rag.knowledge.corpus import parse_lawrefbook  # noqa: E402
from agentic_rag.retrieval.bm25 import make_bm25  # noqa: E402
from agentic_rag.retrieval.tokenizer import LegalTokenizer, hanzi_bigrams  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
STARD = SHARED / "stard"
LAWREFBOOK = SHARED / "lawrefbook" / "lawrefbook_articles.jsonl.gz"
CACHE = ROOT / "eval" / "cache"  # vectors: large, rebuilt by `pairs`, not committed
RESULTS = ROOT / "eval" / "results" / "relevance_judge.json"
NEGATIVES = 6  # BM25 candidates per question besides the gold
RRF_K = 60


def log(msg: str) -> None:
    print(time.strftime("%H:%M:%S"), msg, flush=True)


# ------------------------------------------------------------------------------------------------------- pairs
def split_ids(name: str) -> set[int]:
    lines = (STARD / "example" / f"{name}.query.txt").read_text("utf-8").splitlines()
    return {int(line.split("\t", 1)[0]) for line in lines if line.strip()}


def train_questions() -> list[dict]:
    """STARD's training-split questions whose every gold article is in LawRefBook (dev split ids are excluded)."""
    ids, dev = split_ids("train"), split_ids("dev")
    rows = [json.loads(line) for line in (STARD / "stard_qrels_lawrefbook.jsonl").read_text("utf-8").splitlines()]
    return [r for r in rows if r["query_id"] in ids and r["query_id"] not in dev and r["all_gold_mapped"]]


def build_pairs(questions: list[dict]) -> tuple[list[dict], list]:
    """Per question: the gold articles and the top BM25 articles of the gold's law documents."""
    paths = {g["lrb_path"] for q in questions for g in q["gold"]}
    docs = [d for d in parse_lawrefbook(LAWREFBOOK).documents if d.source in paths]
    by_key = {(d.source, d.article_cn): d for d in docs}
    by_path: dict[str, list] = defaultdict(list)
    for d in by_key.values():
        by_path[d.source].append(d)
    tokenizer = LegalTokenizer()
    tokens = {key: tokenizer.tokenize(d.keyword_text) for key, d in by_key.items()}
    pools: dict[tuple[str, ...], tuple[list, object]] = {}
    out = []
    for q in questions:
        gold = {(g["lrb_path"], g["lrb_article"]) for g in q["gold"]}
        pool_key = tuple(sorted({p for p, _ in gold}))
        if pool_key not in pools:
            pool = [d for p in pool_key for d in by_path[p]]
            pools[pool_key] = (pool, make_bm25([tokens[(d.source, d.article_cn)] for d in pool]))
        pool, bm25 = pools[pool_key]
        scores = bm25.get_scores(tokenizer.expand_query(q["query"]))
        order = [int(i) for i in np.argsort(-scores)]
        chosen = [i for i in order[:NEGATIVES]] + [i for i, d in enumerate(pool) if (d.source, d.article_cn) in gold]
        chosen = list(dict.fromkeys(chosen))
        rank = {i: r for r, i in enumerate(order)}
        keys = [(pool[i].source, pool[i].article_cn) for i in chosen]
        out.append({"query_id": q["query_id"], "query": q["query"],
                    "candidates": [{"key": f"{src}#{art}", "gold": (src, art) in gold, "bm25_rank": rank[i]}
                                   for i, (src, art) in zip(chosen, keys)]})
    return out, list(by_key.values())


def encode_cached(embed, texts: list[str], name: str, chunk: int = 256) -> np.ndarray:
    """Vectors of `texts`, cached under CACHE by content hash; resumable in chunks."""
    key = hashlib.sha1("\n".join(texts).encode()).hexdigest()[:12]
    path = CACHE / f"{name}_{len(texts)}_{key}.npy"
    partial = CACHE / f"{name}_{len(texts)}_{key}.partial.npy"
    if path.exists():
        return np.load(path)
    done = np.load(partial) if partial.exists() else np.zeros((0, 0), np.float32)
    parts = [done] if len(done) else []
    start, t0 = len(done), time.time()
    for i in range(start, len(texts), chunk):
        parts.append(embed(texts[i:i + chunk]).astype(np.float32))
        np.save(partial, np.vstack(parts))
        n = min(i + chunk, len(texts))
        log(f"{name}: {n}/{len(texts)} ({(n - start) / (time.time() - t0):.2f}/s)")
    vecs = np.vstack(parts)
    np.save(path, vecs)
    partial.unlink(missing_ok=True)
    return vecs


def pairs(args) -> None:
    from agentic_rag.config import get_settings
    from agentic_rag.retrieval.embedder import embedder_from_settings

    CACHE.mkdir(parents=True, exist_ok=True)
    questions = train_questions()
    log(f"{len(questions)} STARD training questions with every gold article mapped")
    rows, docs = build_pairs(questions)
    used = sorted({c["key"] for r in rows for c in r["candidates"]})
    text = {f"{d.source}#{d.article_cn}": d.index_text for d in docs}
    log(f"{sum(len(r['candidates']) for r in rows)} pairs, {len(used)} distinct articles to embed")
    embedder = embedder_from_settings(get_settings())
    q_vecs = encode_cached(embedder.encode_queries, [r["query"] for r in rows], "stard_train_queries")
    d_vecs = encode_cached(embedder.encode_documents, [text[k] for k in used], "stard_train_docs")
    (CACHE / "stard_train_pairs.json").write_text(json.dumps(
        {"embedder": embedder.model_id, "articles": used, "texts": [text[k] for k in used], "rows": rows},
        ensure_ascii=False), encoding="utf-8")
    log(f"cached: queries {q_vecs.shape}, articles {d_vecs.shape}")


# ---------------------------------------------------------------------------------------------------- features
def idf_table(texts: list[str]) -> dict[str, float]:
    df: dict[str, int] = defaultdict(int)
    for t in texts:
        for b in hanzi_bigrams(t):
            df[b] += 1
    return {b: math.log((len(texts) + 1) / (n + 1)) for b, n in df.items()}


def coverage(question: str, text: str, idf: dict[str, float]) -> float:
    """IDF-weighted share of the question's bigrams that the article has."""
    qb = hanzi_bigrams(question)
    total = sum(idf.get(b, 1.0) for b in qb) or 1.0
    return sum(idf.get(b, 1.0) for b in qb & hanzi_bigrams(text)) / total


def fused_ranks(*orders: list[float]) -> list[int]:
    """Rank of each candidate in the RRF of several score lists (higher score = better in each)."""
    rrf = np.zeros(len(orders[0]))
    for scores in orders:
        for r, i in enumerate(np.argsort(-np.asarray(scores))):
            rrf[i] += 1.0 / (RRF_K + r + 1)
    return [int(r) for r in np.argsort(np.argsort(-rrf))]


def base_features(cosines: list[float], ranks: list[int], covs: list[float]) -> np.ndarray:
    best_cos, best_cov = max(cosines), max(max(covs), 1e-6)
    return np.array([[c, c - best_cos, 1.0 / (r + 1), v, v / best_cov] for c, r, v in zip(cosines, ranks, covs)])


BASE = ("cosine", "cosine − best", "1/(rank+1)", "bigram coverage", "coverage / best")
INTERACTION_SCALE = 30.0  # q⊙a sums to the cosine; scaled so that its weights sit near the base features'


def design(base: np.ndarray, q: np.ndarray | None, a: np.ndarray | None, interaction: bool) -> np.ndarray:
    return np.hstack([base, INTERACTION_SCALE * q[None, :] * a]) if interaction else base


def stard_design(interaction: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels and question groups of the STARD training pairs (from the `pairs` cache)."""
    data = json.loads((CACHE / "stard_train_pairs.json").read_text("utf-8"))
    q_vecs = encode_cached(None, [r["query"] for r in data["rows"]], "stard_train_queries")
    d_vecs = encode_cached(None, data["texts"], "stard_train_docs")
    pos = {k: i for i, k in enumerate(data["articles"])}
    idf = idf_table(data["texts"])
    xs, ys, gs = [], [], []
    for qi, r in enumerate(data["rows"]):
        idx = [pos[c["key"]] for c in r["candidates"]]
        cos = [float(d_vecs[i] @ q_vecs[qi]) for i in idx]
        ranks = fused_ranks([-c["bm25_rank"] for c in r["candidates"]], cos)
        covs = [coverage(r["query"], data["texts"][i], idf) for i in idx]
        xs.append(design(base_features(cos, ranks, covs), q_vecs[qi], d_vecs[idx], interaction))
        ys += [float(c["gold"]) for c in r["candidates"]]
        gs += [qi] * len(idx)
    return np.vstack(xs), np.array(ys), np.array(gs)


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    import calibrate_gate

    return calibrate_gate.fit_logistic(x, y, l2=l2)


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(w[0] + x @ w[1:], -30, 30)))


# ------------------------------------------------------------------------------------------------------ metrics
def auroc(p: np.ndarray, y: np.ndarray) -> float | None:
    pos, neg = p[y == 1], p[y == 0]
    if not len(pos) or not len(neg):
        return None
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return round(float(wins / (len(pos) * len(neg))), 4)


def ece(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: |mean P − share relevant| per equal-width bin, weighted by the bin's size."""
    which = np.minimum((p * bins).astype(int), bins - 1)
    return round(float(sum(abs(p[which == b].mean() - y[which == b].mean()) * (which == b).sum()
                           for b in range(bins) if (which == b).any()) / len(p)), 4)


def top1(p: np.ndarray, y: np.ndarray, groups: np.ndarray) -> float | None:
    """Of the questions with a gold article among the candidates, how often the judge's best one is gold."""
    hits = [y[groups == g][np.argmax(p[groups == g])] for g in np.unique(groups) if y[groups == g].any()]
    return round(float(np.mean(hits)), 4) if hits else None


def scores(p: np.ndarray, y: np.ndarray, groups: np.ndarray) -> dict:
    return {"pairs": int(len(y)), "relevant": int(y.sum()), "auroc": auroc(p, y), "ece": ece(p, y),
            "judge_top1_is_gold": top1(p, y, groups), "mean_p": round(float(p.mean()), 4)}


def choose_l2(x: np.ndarray, y: np.ndarray, groups: np.ndarray, grid=(0.1, 1.0, 10.0, 100.0)) -> tuple[float, dict]:
    """L2 by 5-fold cross-validation over STARD training questions (grouped by question)."""
    fold = groups % 5
    cv = {}
    for l2 in grid:
        p = np.zeros(len(y))
        for k in range(5):
            w = fit(x[fold != k], y[fold != k], l2)
            p[fold == k] = predict(w, x[fold == k])
        cv[l2] = scores(p, y, groups)
    best = max(grid, key=lambda l2: cv[l2]["auroc"] or 0)
    return best, {str(k): v for k, v in cv.items()}


# ------------------------------------------------------------------------------------------------- test halves
def kb_retriever(data_dir: Path):
    from agentic_rag.config import get_settings
    from agentic_rag.retrieval.retriever import LocalRetriever

    return LocalRetriever.from_settings(get_settings().model_copy(update={"data_dir": data_dir, "reranker": "none"}))


def test_groups() -> list[dict]:
    """The questions the gate never saw, each with its scored articles: the answers set's test half retrieved
    against its own index (top 5, no model call), and the eval sets' test halves as the gate collected them (top 5
    of the PIPL index, with the 1.5B's per-article logit)."""
    import calibrate_gate

    out = []
    rows = [json.loads(line) for line in calibrate_gate.FEATURES.read_text("utf-8").splitlines()]
    half = calibrate_gate.split(rows)
    queries = {r["id"]: r["query"] for path in calibrate_gate.DATASETS
               for r in map(json.loads, path.read_text("utf-8").splitlines())}
    for r in rows:
        if half[r["id"]] == "test" and r["set"] != "answers_eval":
            out.append({"id": r["id"], "set": r["set"], "kb": "pipl", "query": queries[r["id"]],
                        "keys": r["articles"], "gold": [a in r["gold"] for a in r["articles"]], "diffs": r["diffs"]})
    for row in map(json.loads, calibrate_gate.ANSWERS.read_text("utf-8").splitlines()):
        if row["split"] == "test" and row["type"] != "chitchat":
            gold = [(calibrate_gate.PIPL, g) if isinstance(g, int) else (g["law"], g["article"]) for g in row["gold"]]
            out.append({"id": row["id"], "set": "answers_eval", "kb": row["kb"], "query": row["query"],
                        "gold_keys": gold})
    return out


def scored_articles(g: dict, ret) -> tuple[list[int], list[bool], list[float] | None]:
    """A test group's articles (document positions), their labels and, where the gate scored them, its logits."""
    if "keys" in g:  # as the gate collected it: PIPL article numbers
        position = {d.article: i for i, d in enumerate(ret.documents)}
        return [position[k] for k in g["keys"]], g["gold"], g["diffs"]
    position = {(d.law, d.article): i for i, d in enumerate(ret.documents)}
    docs = [position[(a.law, a.article)] for a in ret.retrieve(g["query"]).articles[:5]]
    gold = set(map(tuple, g["gold_keys"]))
    return docs, [(ret.documents[i].law, ret.documents[i].article) in gold for i in docs], None


def judges(g: dict, ret, weights: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[bool]]:
    """The logit of P(relevant) of each judge for the group's articles."""
    docs, labels, diffs = scored_articles(g, ret)
    q = ret.embedder.encode_queries([g["query"]])[0]
    vecs = ret.index.store.vectors(docs)
    cos = [float(v @ q) for v in vecs]
    base = base_features(cos, list(range(len(docs))), [coverage(g["query"], ret.documents[i].text, ret_idf(ret))
                                                        for i in docs])
    rank_cos = np.array([[0.0, 1.0 / (i + 1), c] for i, c in enumerate(cos)])
    w = weights
    preds = {"shipped signals (rank, cosine; fitted on dev)": rank_cos @ w["signals"][1:] + w["signals"][0],
             "STARD judge": base @ w["base"][1:] + w["base"][0],
             "STARD judge + q⊙a": design(base, q, vecs, True) @ w["interaction"][1:] + w["interaction"][0]}
    if diffs is not None:
        with_d = np.array([[d, 1.0 / (i + 1), c] for i, (d, c) in enumerate(zip(diffs, cos))])
        preds["shipped logit (1.5B 是/否, rank, cosine)"] = with_d @ w["logit"][1:] + w["logit"][0]
    return preds, labels


def score_groups(groups: list[dict], interaction_w: np.ndarray, base_w: np.ndarray) -> dict:
    """Per-article P(relevant) of every judge on every group's articles, pooled per set."""
    from agentic_rag.stages.grade.judge import calibration

    retrievers = {"pipl": kb_retriever(ROOT / "data"), "multilaw": kb_retriever(ROOT / "data-multilaw")}
    weights = {"logit": np.array(calibration("logit").relevance), "signals": np.array(calibration("signals").relevance),
               "base": base_w, "interaction": interaction_w}
    pooled: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for n, g in enumerate(groups):
        preds, labels = judges(g, retrievers[g["kb"]], weights)
        for name, logit in preds.items():
            for key in (g["set"] if g["set"] != "answers_eval" else f"answers_eval/{g['kb']}", "all"):
                pooled[key][name].append((1 / (1 + np.exp(-np.clip(logit, -30, 30))), np.array(labels, float), n))
    report = {}
    for key, by_judge in pooled.items():
        report[key] = {}
        for name, parts in by_judge.items():
            p = np.concatenate([a for a, _, _ in parts])
            y = np.concatenate([b for _, b, _ in parts])
            grp = np.concatenate([[n] * len(a) for a, _, n in parts])
            report[key][name] = scores(p, y, grp)
    return report


_IDF: dict[int, dict] = {}


def ret_idf(ret) -> dict[str, float]:
    if id(ret) not in _IDF:
        _IDF[id(ret)] = idf_table([d.text for d in ret.documents])
    return _IDF[id(ret)]


def report(args) -> None:
    x_base, y, groups = stard_design(False)
    l2_base, cv_base = choose_l2(x_base, y, groups)
    w_base = fit(x_base, y, l2_base)
    x_int, _, _ = stard_design(True)
    l2_int, cv_int = choose_l2(x_int, y, groups)
    w_int = fit(x_int, y, l2_int)
    log(f"STARD train CV: base {cv_base[str(l2_base)]}, + q⊙a {cv_int[str(l2_int)]}")
    tests = score_groups(test_groups(), w_int, w_base)
    for key, judges in tests.items():
        for name, sc in judges.items():
            log(f"{key:28s} {name:48s} {sc}")
    out = {"trained_on": "STARD official train split (questions with every gold article in LawRefBook), gold + "
                         f"top-{NEGATIVES} BM25 articles of the gold's law documents",
           "pairs": int(len(y)), "questions": int(len(np.unique(groups))), "relevant": int(y.sum()),
           "base_features": BASE, "weights_base": w_base.round(4).tolist(), "l2_base": l2_base,
           "stard_cv": {"base": cv_base, "interaction": cv_int}, "l2_interaction": l2_int, "test": tests}
    args.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    log(f"written {args.json}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("pairs", help="STARD training candidates and their vectors (cached under eval/cache)")
    r = sub.add_parser("report", help="fit on STARD train, report on the PIPL and six-law test halves")
    r.add_argument("--json", type=Path, default=RESULTS)
    args = p.parse_args()
    {"pairs": pairs, "report": report}[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
