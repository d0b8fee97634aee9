#!/usr/bin/env python3
"""Calibrate the gate (`agentic_rag/stages/grade/judge.py`) on labelled questions, and report it out of fold.

    collect  run retrieval + the evaluator model's per-article relevance logits for every question (resumable JSONL:
             eval/results/gate_features.jsonl): the embedded model, or with EVALUATOR_MODEL=<LiteLLM model> an API
             model whose provider returns logprobs (then into its own --features file: the weights are per model)
    score    a shipped calibration on a features file it was not fitted on (e.g. `collect --dataset answers --split
             test` into eval/results/gate_features_answers_test.jsonl): PASS by what the answer would stand on, and
             the ceiling of the judge's evidence (how often the article it judges most relevant is a governing one)
    fit      splits the questions into dev and test (every other question of each set and type, by id); on dev,
             k-fold cross-validation of the logistic models → out-of-fold AUROC and PASS rates per question type;
             the fit on all of dev is shipped (resources/gate_calibration.json) and scored on test, which it never
             saw (eval/results/gate_calibration.json). End-to-end runs report on the test ids (--split test).
    cascade  the signals-gate totals outside which the gate decides without the model's call, as the model's gate
             would have on every dev question (`skip_model` in the shipped calibration; run it again after `fit`),
             reported on the test halves (eval/results/gate_cascade.json)

Labels: for the PIPL knowledge base, a question is answerable (1) when it is in scope and a gold article is among
the articles scored; out of scope (0) are the PIPL set's chit-chat and other-law questions and every question of
the several-law set whose gold articles are not PIPL articles. In-scope questions whose gold was not retrieved
are left out of the fit (the retry loop is for them) and reported apart. An article is relevant (1) when gold.

    .venv/bin/python eval/calibrate_gate.py collect && .venv/bin/python eval/calibrate_gate.py fit
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_rag.config import get_settings
from agentic_rag.stages.grade.judge import SIGNALS, sigmoid, weakest_sub_question

PIPL = "中华人民共和国个人信息保护法"
FEATURES = ROOT / "eval" / "results" / "gate_features.jsonl"
FIT_FEATURES = FEATURES  # what `fit` reads by default: never the test half
REPORT = ROOT / "eval" / "results" / "gate_calibration.json"
SHIPPED = ROOT / "agentic_rag" / "resources" / "gate_calibration.json"
# --without-logit: the gate of retrieval signals alone (no model call), shipped beside the logit one
REPORT_SIGNALS = ROOT / "eval" / "results" / "gate_calibration_signals.json"
SHIPPED_SIGNALS = ROOT / "agentic_rag" / "resources" / "gate_calibration_signals.json"
DATASETS = (ROOT / "eval" / "pipl_eval.jsonl", ROOT / "eval" / "multilaw_eval.jsonl")
ANSWERS = ROOT / "eval" / "answers_eval.jsonl"  # its rows carry their own dev/test split
ROUTES = (ROOT / "eval" / "results" / "routing_pipl.json", ROOT / "eval" / "results" / "routing_multilaw_on_pipl_kb.json")
THRESHOLD = 32
L2 = 1.0


# ----------------------------------------------------------------------------------------------------- collect
def pipl_gold(row: dict) -> list[int] | None:
    """Gold PIPL article numbers; None when the question is about other laws only (out of scope for PIPL)."""
    gold = row["gold"]
    if not gold:
        return []
    if isinstance(gold[0], int):
        return gold
    numbers = [g["article"] for g in gold if g["law"] == PIPL]
    return numbers or None


def article_features(articles) -> dict:
    """Per-article retrieval evidence: the dense cosine (best over the query texts) and the fused score."""
    return {"cosines": [float(a.channels.get("vector", {}).get("score", 0.0)) for a in articles],
            "rrf": [a.rrf_score for a in articles]}


def backfill(rows: list[dict]) -> None:
    """Rows collected before the per-article features existed get their cosines from the stored vectors (the
    question against each scored article: what the dense channel computes), and the fused scores as missing."""
    missing = [r for r in rows if "cosines" not in r]
    if not missing:
        return
    from agentic_rag.retrieval.retriever import LocalRetriever

    questions = {row["id"]: row["query"] for path in DATASETS
                 for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    retriever = LocalRetriever.from_settings(get_settings().model_copy(update={"reranker": "none"}))
    position = {d.article: i for i, d in enumerate(retriever.documents)}
    for r in missing:
        q = retriever.embedder.encode_queries([questions[r["id"]]])[0]
        vectors = retriever.index.store.vectors([position[n] for n in r["articles"]])
        r.update(cosines=[round(float(v @ q), 6) for v in vectors], rrf=[None] * len(r["articles"]))
    FEATURES.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def article_key(article, one_law: bool):
    """How a features row names an article: its number in the PIPL knowledge base, 'law:number' in a several-law
    one (numbers repeat across laws)."""
    return article.article if one_law else f"{article.law}:{article.article}"


def answers_rows(split_name: str):
    """(row, knowledge base, gold keys) of the answers set's `split_name` half (never the other half: the answers
    eval reports on test); chit-chat goes to the router, not the gate."""
    for row in map(json.loads, ANSWERS.read_text(encoding="utf-8").splitlines()):
        if row["split"] != split_name or row["type"] == "chitchat":
            continue
        gold = row["gold"] if row["kb"] == "pipl" else [f"{g['law']}:{g['article']}" for g in row["gold"]]
        yield {**row, "set": ANSWERS.stem}, row["kb"], gold


SYNTHETIC = ROOT / "eval" / "synthetic_lay_round2.jsonl"  # lay questions the shipped query adapter never saw
SYNTHETIC_SAMPLE = {PIPL: 40, "中华人民共和国劳动合同法": 22, "中华人民共和国电子商务法": 22,
                    "中华人民共和国消费者权益保护法": 22, "中华人民共和国数据安全法": 12, "中华人民共和国民法典": 32}


def synthetic_rows():
    """A sample per law (seed 44) of the second round of synthetic lay questions, each against its own knowledge
    base; gold is the one article it was written from (incomplete: another article may govern too). For scoring and
    probes, never a fit of the shipped gate: it has no out-of-scope questions."""
    rows = [json.loads(line) for line in SYNTHETIC.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(44)
    for law, n in SYNTHETIC_SAMPLE.items():
        for i, r in rng.sample([(i, r) for i, r in enumerate(rows) if r["law"] == law], n):
            kb = "pipl" if law == PIPL else "multilaw"
            gold = [r["article"]] if kb == "pipl" else [f"{law}:{r['article']}"]
            yield {"id": f"syn2-{i:03d}", "query": r["query"], "type": "synthetic", "kb": kb,
                   "set": "synthetic_round2", "split": "dev"}, kb, gold


def eval_rows():
    for path in DATASETS:
        for row in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
            yield {**row, "set": path.stem}, "pipl", pipl_gold(row)


def collect(args) -> None:
    from agentic_rag.llm.models import make_model
    from agentic_rag.retrieval.analysis import is_pure_lookup
    from agentic_rag.retrieval.retriever import LocalRetriever
    from agentic_rag.stages.base import SYSTEM
    from agentic_rag.stages.evidence import label, prompt_articles, shared_prefix
    from agentic_rag.stages.grade.prompt import relevance_questions

    if (args.split == "test" or args.dataset == "synthetic") and FEATURES.resolve() == FIT_FEATURES.resolve():
        raise SystemExit("the test half and the synthetic sample go into their own --features file (the fit reads "
                         f"{FIT_FEATURES.relative_to(ROOT)}): e.g. --features eval/results/gate_features_answers_test.jsonl")
    settings = get_settings().model_copy(update={"reranker": "none"})
    retrievers = {kb: LocalRetriever.from_settings(settings.model_copy(update={"data_dir": Path(d or settings.data_dir)}))
                  for kb, d in (("pipl", args.pipl_dir), ("multilaw", args.multilaw_dir))
                  if args.dataset != "eval" or kb == "pipl"}
    model = make_model("evaluator", settings)  # the embedded model, or an API model whose provider gives logprobs
    done = {json.loads(line)["id"] for line in FEATURES.read_text().splitlines()} if FEATURES.exists() else set()
    rows = {"answers": lambda: answers_rows(args.split), "synthetic": synthetic_rows, "eval": eval_rows}[args.dataset]()
    for row, kb, gold in rows:
        if row["id"] in done or is_pure_lookup(row["query"]):
            continue
        one_law = kb == "pipl"
        result = retrievers[kb].retrieve(row["query"])
        articles = prompt_articles(result.articles)
        prefix, tails = relevance_questions(shared_prefix(row["query"], articles, one_law=one_law),
                                            [label(a, one_law) for a in articles])
        scored = asyncio.run(model.score_tails(SYSTEM, prefix, tails))
        line = {"id": row["id"], "set": row["set"], "type": row["type"], "gold": gold or [],
                "in_scope": bool(gold), "articles": [article_key(a, one_law) for a in articles],
                "subs": [a.sub_question for a in articles], "diffs": scored.diffs,
                "signals": result.signals.model_dump(), **article_features(articles),
                "seconds": round(scored.seconds, 2), "prefix_tokens": scored.prefix_tokens}
        if "split" in row:
            line["split"] = row["split"]
        with open(FEATURES, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
        print(f"{row['id']:12} gold={gold} top={line['articles'][:3]} d={[round(d, 2) for d in scored.diffs]} "
              f"{scored.seconds:.1f}s", flush=True)


# --------------------------------------------------------------------------------------------------------- fit
def fit_logistic(x: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None, l2: float = L2) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method (intercept first, not penalised)."""
    x1 = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(x1.shape[1])
    sample_w = np.ones(len(y)) if weights is None else weights
    penalty = np.eye(x1.shape[1]) * l2
    penalty[0, 0] = 0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(x1 @ w, -30, 30)))
        grad = x1.T @ (sample_w * (p - y)) + penalty @ w
        hess = x1.T @ (x1 * (sample_w * p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def balanced(y: np.ndarray) -> np.ndarray:
    pos = max(1, int(y.sum()))
    neg = max(1, len(y) - pos)
    return np.where(y == 1, len(y) / (2 * pos), len(y) / (2 * neg))


MISSES_FAIL = False  # fit --misses-fail: an in-scope question none of whose gold articles was scored is one to fail


def labelled(rows: list[dict]) -> list[dict]:
    """Rows with a question label: answerable (1) or not (0): out of scope, and with --misses-fail an in-scope
    question whose governing articles were not retrieved (an answer would stand on a loosely related one); without
    it those are left out."""
    out = []
    for r in rows:
        hit = bool(set(r["gold"]) & set(r["articles"]))
        if r["in_scope"] and not hit and not MISSES_FAIL:
            continue
        out.append({**r, "y": int(r["in_scope"] and hit)})
    return out


def fit_models(rows: list[dict]) -> dict:
    y = np.array([r["y"] for r in rows], float)
    d_art, y_art = [], []
    for r in rows:
        for i, (n, d, cos) in enumerate(zip(r["articles"], r["diffs"], r["cosines"])):
            d_art.append([d, 1.0 / (i + 1), cos])
            y_art.append(1.0 if n in r["gold"] else 0.0)
    relevance = fit_logistic(np.array(d_art), np.array(y_art), balanced(np.array(y_art)))
    acc_x = np.array([[r["diffs"][0], r["signals"]["best_cosine"]] for r in rows])
    comp_x = np.array([[r["signals"][k] for k in SIGNALS] for r in rows])
    return {"relevance": relevance.round(4).tolist(),
            "accuracy": fit_logistic(acc_x, y, balanced(y)).round(4).tolist(),
            "completeness": fit_logistic(comp_x, y, balanced(y)).round(4).tolist()}


def total(r: dict, m: dict, shift: float = 0.0) -> tuple[float, list[float]]:
    """(the gate's total with the dimensions shifted by `shift`, the unshifted per-article P(relevant))."""
    lin = lambda w, v: w[0] + sum(a * b for a, b in zip(w[1:], v))
    logits = [lin(m["relevance"], [d, 1.0 / (i + 1), cos]) for i, (d, cos) in enumerate(zip(r["diffs"], r["cosines"]))]
    dims = [max(logits), lin(m["accuracy"], [r["diffs"][0], r["signals"]["best_cosine"]]),
            lin(m["completeness"], [r["signals"][k] for k in SIGNALS]), weakest_sub_question(r["subs"], logits)]
    return round(sum(round(10 * sigmoid(x + shift), 1) for x in dims), 1), [sigmoid(x) for x in logits]


def choose_shift(rows: list[dict], oof_models: dict[str, dict], target_fail: float | None,
                 routes: dict[str, str] | None = None) -> float:
    """The logit shift where PASS ≥ 32 sits: the best balanced accuracy (in-scope PASS rate + out-of-scope FAIL
    rate) out of fold, ties to the stricter gate; or, with `target_fail`, the most lenient shift at which
    out-of-scope questions fail at least that often. With `routes`, a question the router sends away fails
    whatever its total: the rates are the system's (what users see), not the gate's alone."""
    routes = routes or {}

    def rates(shift):
        passed = {r["id"]: routes.get(r["id"], "kb") in ("kb", "multi") and total(r, oof_models[r["id"]], shift)[0]
                  >= THRESHOLD for r in rows}
        pos, neg = [passed[r["id"]] for r in rows if r["y"]], [not passed[r["id"]] for r in rows if not r["y"]]
        return sum(pos) / len(pos), sum(neg) / len(neg)
    shifts = [round(x * 0.1, 1) for x in range(-30, 31)]  # from the strictest gate to the most lenient
    if target_fail is None:
        return max(shifts, key=lambda s: (sum(rates(s)), -s))
    return max([s for s in shifts if rates(s)[1] >= target_fail], default=shifts[0])


def choose_relevant(rows: list[dict], probs: dict[str, list[float]]) -> float:
    """The P(relevant) from which an article may be cited: the best F1 of the cited set against gold on dev."""
    def f1(t):
        pr = [citation_view(r, probs[r["id"]], t) for r in rows if r["y"] == 1]
        p, q = sum(a for a, _ in pr) / len(pr), sum(b for _, b in pr) / len(pr)
        return 2 * p * q / (p + q) if p + q else 0.0
    return max((round(x * 0.05, 2) for x in range(2, 19)), key=f1)


def hedges(rows: list[dict], models_of, shift: float, t: float) -> list[bool]:
    """For each question below PASS whose best article reaches P(relevant) `t` (a hedged answer): is that best
    article a gold one of an in-scope question? In-scope misses count too: they are hedged from a wrong article."""
    out = []
    for r in rows:
        tot, probs = total(r, models_of(r), shift)
        if r["articles"] and tot < THRESHOLD and max(probs) >= t:
            out.append(bool(r["in_scope"]) and r["articles"][probs.index(max(probs))] in (r["gold"] or []))
    return out


# A hedged answer from a non-governing article is an answer built on the wrong article. At "half of them from a gold
# article" (the bar until stop 36) the adapter-era refit hedged from 0.6 on, and on the held-out lay test half
# only 10 of its 26 hedges would have stood on a gold article.
HEDGE_PRECISION = 0.75


def choose_ambiguous(rows: list[dict], models_of, shift: float) -> float:
    """CRAG's middle action for the calibrated judge: the lowest best-article P(relevant) from which a question
    below PASS gets a hedged answer, such that at least HEDGE_PRECISION of the dev questions hedged would be hedged
    from a gold article; the lowest at which none is hedged when no threshold does (then the action is never
    taken)."""
    for t in (round(0.4 + 0.05 * i, 2) for i in range(12)):
        h = hedges(rows, models_of, shift, t)
        if not h or sum(h) / len(h) >= HEDGE_PRECISION:
            return t
    return 1.0


def auroc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 4)


def folds(rows: list[dict], k: int, seed: int = 13) -> list[list[dict]]:
    """Stratified by (set, type), so that every fold holds every kind of question."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["set"], r["type"], r["y"]), []).append(r)
    out: list[list[dict]] = [[] for _ in range(k)]
    rng = random.Random(seed)
    i = 0
    for key in sorted(groups):
        items = groups[key][:]
        rng.shuffle(items)
        for r in items:
            out[i % k].append(r)
            i += 1
    return out


def citation_view(r: dict, probs: list[float], threshold: float) -> tuple[float, float]:
    """Precision and recall of the articles judged relevant against gold (what the answer may cite)."""
    chosen = {n for n, p in zip(r["articles"], probs) if p >= threshold} or {r["articles"][probs.index(max(probs))]}
    gold = set(r["gold"])
    return len(chosen & gold) / len(chosen), len(chosen & gold) / len(gold)


def report(rows: list[dict], scored: dict[str, tuple[float, list[float]]], threshold: float) -> dict:
    out: dict = {"auroc": auroc([scored[r["id"]][0] for r in rows if r["y"] == 1],
                                [scored[r["id"]][0] for r in rows if r["y"] == 0])}
    for name, label, want in (("answerable_pass_rate", 1, True), ("out_of_scope_fail_rate", 0, False)):
        hits = [(scored[r["id"]][0] >= THRESHOLD) == want for r in rows if r["y"] == label]
        out[name] = round(sum(hits) / len(hits), 4) if hits else None
    for key in sorted({(r["set"], r["type"]) for r in rows}):
        group = [r for r in rows if (r["set"], r["type"]) == key]
        passed = [scored[r["id"]][0] >= THRESHOLD for r in group]
        entry = {"n": len(group), "pass_rate": round(sum(passed) / len(group), 4)}
        answerable = [r for r in group if r["y"] == 1]
        if answerable:
            pr = [citation_view(r, scored[r["id"]][1], threshold) for r in answerable]
            entry.update(relevant_precision=round(float(np.mean([p for p, _ in pr])), 4),
                         relevant_recall=round(float(np.mean([q for _, q in pr])), 4))
        out[f"{key[0]}/{key[1]}"] = entry
    return out


def load_routes() -> dict[str, str]:
    """id → the router's route for the eval sets' questions (`python -m agentic_rag.eval route --json`: ROUTES)."""
    return {q["id"]: q["route"] for f in ROUTES if f.exists()
            for q in json.loads(f.read_text(encoding="utf-8"))["questions"]}


def with_router(rows: list[dict], scored: dict[str, tuple[float, list[float]]]) -> dict | None:
    """The whole system's rates: a question the router sends away (chit-chat, another law) never reaches the gate,
    so it fails whatever its total; routes from `python -m agentic_rag.eval route --json` (ROUTES)."""
    routes = load_routes()
    if not routes:
        return None
    passed = {r["id"]: routes.get(r["id"], "kb") in ("kb", "multi") and scored[r["id"]][0] >= THRESHOLD for r in rows}
    pos, neg = [passed[r["id"]] for r in rows if r["y"]], [not passed[r["id"]] for r in rows if not r["y"]]
    return {"answerable_pass_rate": round(sum(pos) / len(pos), 4), "out_of_scope_fail_rate": round(sum(neg) / len(neg), 4)}


def split(rows: list[dict]) -> dict[str, str]:
    """id → "dev" | "test": a row's own split where its set has one (the answers set), else every other question
    of each (set, type), in id order."""
    groups: dict = {}
    for r in rows:
        if "split" not in r:
            groups.setdefault((r["set"], r["type"]), []).append(r["id"])
    alternate = {rid: ("dev" if i % 2 == 0 else "test") for ids in groups.values() for i, rid in enumerate(sorted(ids))}
    return {**alternate, **{r["id"]: r["split"] for r in rows if "split" in r}}


def passed_by_case(rows: list[dict], m: dict, shift: float) -> dict[str, str]:
    """How many lay questions PASS, by what the answer would stand on: a gold article judged most relevant, a gold
    article retrieved but another judged most relevant, no gold retrieved (a wrong-article answer), out of scope."""
    cases = ("gold_best", "gold_not_best", "gold_not_retrieved", "out_of_scope")
    counts: dict[str, list[int]] = {k: [0, 0] for k in cases}
    for r in rows:
        tot, probs = total(r, m, shift)
        best = r["articles"][probs.index(max(probs))] if r["articles"] else None
        if not r["in_scope"]:
            case = "out_of_scope"
        elif not set(r["gold"]) & set(r["articles"]):
            case = "gold_not_retrieved"
        else:
            case = "gold_best" if best in r["gold"] else "gold_not_best"
        counts[case][0] += tot >= THRESHOLD
        counts[case][1] += 1
    return {k: f"{a}/{b}" for k, (a, b) in counts.items()}


def _hedge_counts(h: list[bool]) -> dict:
    return {"hedged": len(h), "from_a_gold_article": sum(h)}


def previous(rows: list[dict]) -> dict | None:
    """The shipped calibration (before this fit) on the answers set's dev rows, which it was not fitted on: what
    the refit is compared with."""
    answers = [r for r in labelled(rows) if r["set"] == ANSWERS.stem]
    if not answers or not SHIPPED.exists():
        return None
    old = json.loads(SHIPPED.read_text(encoding="utf-8"))
    return report(answers, {r["id"]: total(r, old, old["gate_shift"]) for r in answers}, old["relevant_threshold"])


def fit(args) -> None:
    rows = [json.loads(line) for line in FEATURES.read_text(encoding="utf-8").splitlines()]
    before = previous(rows)
    backfill(rows)
    if args.without_logit:  # the model's 是/否 logit taken out: its weights fit to 0, the rest is retrieval evidence
        rows = [{**r, "diffs": [0.0] * len(r["diffs"])} for r in rows]
    part = split(rows)
    data = labelled(rows)
    # The answers set's dev rows are lay questions the gate is judged on: held out of the fit (reported as such)
    # unless --pool-answers fits on them too.
    held_out = [r for r in data if r["set"] == ANSWERS.stem and not args.pool_answers]
    data = [r for r in data if r not in held_out]
    dev, test = [r for r in data if part[r["id"]] == "dev"], [r for r in data if part[r["id"]] == "test"]
    oof_models: dict[str, dict] = {}
    for i, held in enumerate(folds(dev, args.k)):
        models = fit_models([r for j, f in enumerate(folds(dev, args.k)) if j != i for r in f])
        oof_models.update((r["id"], models) for r in held)
    shift = args.shift if args.shift is not None else \
        choose_shift(dev, oof_models, args.target_fail, load_routes() if args.with_router else None)
    oof = {r["id"]: total(r, oof_models[r["id"]], shift) for r in dev}
    relevant = choose_relevant(dev, {rid: probs for rid, (_, probs) in oof.items()})
    final = fit_models(dev)
    # What reaches the gate: the router's kb/multi questions (in-scope misses too: they would be hedged from a wrong
    # article); out-of-scope questions the router sends away are never hedged.
    routes = load_routes()
    every = [r for r in rows if r["articles"] and routes.get(r["id"], "kb") in ("kb", "multi")]
    dev_all, test_all = [r for r in every if part[r["id"]] == "dev"], [r for r in every if part[r["id"]] == "test"]
    ambiguous = choose_ambiguous(dev_all, lambda r: oof_models.get(r["id"], final), shift)
    result = {"k_folds": args.k, "n_dev": len(dev), "n_test": len(test), "gate_shift": shift,
              "relevant_threshold": relevant, "left_out_in_scope_misses": len(rows) - len(data),
              "dev_out_of_fold": report(dev, oof, relevant),
              "answers_dev_out_of_fold": report([r for r in dev if r["set"] == ANSWERS.stem], oof, relevant)
              if any(r["set"] == ANSWERS.stem for r in dev) else None, "answers_dev_previous_calibration": before,
              "test": report(test, {r["id"]: total(r, final, shift) for r in test}, relevant),
              "answers_dev_held_out": report(held_out, {r["id"]: total(r, final, shift) for r in held_out}, relevant)
              if held_out else None,
              "answers_dev_passed_by_case": passed_by_case([r for r in rows if r["set"] == ANSWERS.stem], final, shift),
              "dev_out_of_fold_with_router": with_router(dev, oof),
              "test_with_router": with_router(test, {r["id"]: total(r, final, shift) for r in test}),
              "ambiguous_relevance": ambiguous,
              "hedged_dev": _hedge_counts(hedges(dev_all, lambda r: oof_models.get(r["id"], final), shift, ambiguous)),
              "hedged_test": _hedge_counts(hedges(test_all, lambda r: final, shift, ambiguous)),
              "test_ids": sorted(rid for rid, p in part.items() if p == "test"), "fitted_on_dev": final}
    REPORT.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    SHIPPED.write_text(json.dumps({**final, "relevant_threshold": relevant, "gate_shift": shift,
                                   "ambiguous_relevance": ambiguous, "provenance": {
        "fitted": True, "by": "eval/calibrate_gate.py fit", "features": str(FEATURES.relative_to(ROOT)),
        "model_logit": not args.without_logit, "fit_args": {k: v for k, v in vars(args).items() if k not in ("command", "features")},
        "n_dev": len(dev), "test_auroc": result["test"]["auroc"], "k_folds": args.k}},
        ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False, indent=2))


# ------------------------------------------------------------------------------------------------------- score
def ceiling(rows: list[dict], m: dict) -> dict:
    """What the judge's evidence allows on these questions, whatever the threshold: how often a governing article
    is retrieved at all, how often the article judged most relevant is one (the article an answer would stand on),
    and the per-article AUROC of P(relevant). A gate can only trade refusals against wrong-article answers below
    this line."""
    in_scope = [r for r in rows if r["in_scope"] and r["articles"]]
    retrieved = [r for r in in_scope if set(r["gold"]) & set(r["articles"])]
    best_gold, pos, neg = 0, [], []
    for r in retrieved:
        _, probs = total(r, m)
        best_gold += r["articles"][probs.index(max(probs))] in r["gold"]
        for a, p in zip(r["articles"], probs):
            (pos if a in r["gold"] else neg).append(p)
    return {"in_scope": len(in_scope), "gold_retrieved": len(retrieved), "best_judged_is_gold": best_gold,
            "answered_from_gold_if_all_passed": round(best_gold / len(in_scope), 3) if in_scope else None,
            "article_auroc": auroc(pos, neg)}


def score(args) -> None:
    """A shipped calibration on a features file it was never fitted on (the answers set's test half): PASS by what
    the answer would stand on, the question-level AUROC, and the ceiling of its evidence."""
    rows = [json.loads(line) for line in FEATURES.read_text(encoding="utf-8").splitlines()]
    m = json.loads(args.calibration.read_text(encoding="utf-8"))
    totals = {r["id"]: total(r, m, m["gate_shift"])[0] for r in rows if r["articles"]}
    answerable = [r for r in rows if r["id"] in totals and r["in_scope"] and set(r["gold"]) & set(r["articles"])]
    out_of_scope = [r for r in rows if r["id"] in totals and not r["in_scope"]]
    result = {"features": str(FEATURES.resolve().relative_to(ROOT)),
              "calibration": str(args.calibration.resolve().relative_to(ROOT)), "gate_shift": m["gate_shift"],
              "n": len(rows),
              "auroc": auroc([totals[r["id"]] for r in answerable], [totals[r["id"]] for r in out_of_scope]),
              "passed_by_case": passed_by_case([r for r in rows if r["articles"]], m, m["gate_shift"]),
              "ceiling": ceiling(rows, m)}
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False, indent=2))


# ----------------------------------------------------------------------------------------------------- cascade
def cascade_rows(rows: list[dict], logit: dict, signals: dict) -> list[dict]:
    """Per question: the shipped gate's total with the model's logit (L) and the signals gate's (S, no model call),
    and the article each judges most relevant."""
    out = []
    for r in rows:
        if not r["articles"]:
            continue
        lt, lp = total(r, logit, logit["gate_shift"])
        st, sp = total({**r, "diffs": [0.0] * len(r["diffs"])}, signals, signals["gate_shift"])
        out.append({"id": r["id"], "set": r["set"], "in_scope": r["in_scope"], "L": lt, "S": st,
                    "passes": lt >= THRESHOLD, "best_L": r["articles"][lp.index(max(lp))],
                    "best_S": r["articles"][sp.index(max(sp))], "gold": r["gold"], "seconds": r.get("seconds") or 0.0,
                    "hedges_S": st < THRESHOLD and max(sp) >= signals["ambiguous_relevance"]})
    return out


def cascade_bounds(rows: list[dict]) -> tuple[float, float]:
    """The widest signals-gate totals that decide as the model's gate does on every dev question: below
    `fail_below` none of them passed, above `pass_above` all passed and the same article was judged most relevant."""
    fail_below = min(r["S"] for r in rows if r["passes"])
    pass_above = max([r["S"] for r in rows if not r["passes"] or r["best_L"] != r["best_S"]])
    return fail_below, pass_above


def cascade_report(rows: list[dict], fail_below: float, pass_above: float) -> dict:
    low = [r for r in rows if r["S"] < fail_below and not r["hedges_S"]]  # a hedge is left to the model
    high = [r for r in rows if r["S"] > pass_above]
    seconds = sum(r["seconds"] for r in rows)
    return {"n": len(rows), "decided_without_model": round((len(low) + len(high)) / len(rows), 3),
            "model_seconds_saved": round(sum(r["seconds"] for r in low + high) / seconds, 3) if seconds else None,
            "fail_without_model": len(low), "of_which_the_model_passed": [r["id"] for r in low if r["passes"]],
            "pass_without_model": len(high), "of_which_the_model_failed": [r["id"] for r in high if not r["passes"]],
            "other_article_judged_best": [r["id"] for r in high if r["best_L"] != r["best_S"]],
            "best_is_gold_when_passed_without_model": sum(r["best_S"] in r["gold"] for r in high)}


def cascade(args) -> None:
    """Where retrieval evidence alone decides as the model's gate would (`Calibration.skip_model`): the bounds are
    chosen on dev (the fit's features: both eval sets' dev halves and the answers set's dev half), reported on the
    test halves, and written into the shipped calibration."""
    rows = [json.loads(line) for line in FEATURES.read_text(encoding="utf-8").splitlines()]
    logit = json.loads(SHIPPED.read_text(encoding="utf-8"))
    signals = json.loads(SHIPPED_SIGNALS.read_text(encoding="utf-8"))
    part = split(rows)
    scored = cascade_rows(rows, logit, signals)
    dev = [r for r in scored if part[r["id"]] == "dev"]
    fail_below, pass_above = cascade_bounds(dev)
    result = {"fail_below": fail_below, "pass_above": pass_above, "threshold": THRESHOLD,
              "dev": cascade_report(dev, fail_below, pass_above),
              "test": cascade_report([r for r in scored if part[r["id"]] == "test"], fail_below, pass_above)}
    for path in args.test_features:
        held = cascade_rows([json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()], logit, signals)
        result[path.stem] = cascade_report(held, fail_below, pass_above)
    args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    logit["skip_model"] = {"fail_below": fail_below, "pass_above": pass_above, "threshold": THRESHOLD,
                           "by": "eval/calibrate_gate.py cascade", "report": str(args.json.resolve().relative_to(ROOT))}
    SHIPPED.write_text(json.dumps(logit, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--features", type=Path, default=FEATURES, help="the features file (one per evaluator model)")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--dataset", choices=("eval", "answers", "synthetic"), default="eval",
                   help="eval: the PIPL and several-law retrieval sets (PIPL index); answers: eval/answers_eval.jsonl, "
                        "each row against its own knowledge base; synthetic: 150 of eval/synthetic_lay_round2.jsonl "
                        "(into its own --features file)")
    c.add_argument("--split", choices=("dev", "test"), default="dev",
                   help="answers: the half collected; test only into its own --features file, to score a fitted gate "
                        "on lay questions it never saw (`score`), never to fit on")
    c.add_argument("--pipl-dir", help="the PIPL index (default: the configured DATA_DIR)")
    c.add_argument("--multilaw-dir", default="data-multilaw", help="the six-law index (answers)")
    f = sub.add_parser("fit")
    f.add_argument("--k", type=int, default=5)
    f.add_argument("--without-logit", action="store_true",
                   help="fit the gate without the model's per-article logit (no model call when grading): written to "
                        "gate_calibration_signals.json")
    f.add_argument("--shift", type=float,
                   help="the logit shift, given instead of chosen (e.g. the most lenient at which the lay dev "
                        "questions' wrong-article PASSes, answers_dev_passed_by_case, are no more than before)")
    f.add_argument("--pool-answers", action="store_true",
                   help="fit on the answers set's dev rows too (default: held out of the fit and reported apart)")
    f.add_argument("--misses-fail", action="store_true",
                   help="label in-scope questions whose gold was not retrieved as ones the gate should fail")
    f.add_argument("--with-router", action="store_true",
                   help="choose the shift on the system's rates: a question the router sends away fails")
    f.add_argument("--target-fail", type=float, default=None,
                   help="share of out-of-scope dev questions the gate must fail (out of fold), which sets the shift; "
                        "default: the shift of the best balanced accuracy")
    sc = sub.add_parser("score", help="score a shipped calibration on a --features file it was not fitted on")
    sc.add_argument("--calibration", type=Path, default=SHIPPED)
    sc.add_argument("--json", type=Path)
    ca = sub.add_parser("cascade", help="the signals-gate totals outside which the model's call is skipped")
    ca.add_argument("--test-features", type=Path, nargs="*", default=[ROOT / "eval" / "results" /
                                                                       "gate_features_answers_test.jsonl"])
    ca.add_argument("--json", type=Path, default=ROOT / "eval" / "results" / "gate_cascade.json")
    a = p.parse_args()
    FEATURES = a.features
    MISSES_FAIL = getattr(a, "misses_fail", False)
    if getattr(a, "without_logit", False):
        REPORT, SHIPPED = REPORT_SIGNALS, SHIPPED_SIGNALS
    {"collect": collect, "fit": fit, "score": score, "cascade": cascade}[a.command](a)
