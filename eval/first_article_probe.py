#!/usr/bin/env python
"""A probe (stop 44, not shipped): among in-scope questions, is the retriever's first article a governing one? That is
what the gate must tell apart. The shipped gate's total against a logistic model on the gate's own evidence (the
first article's logit and P(relevant), the retrieval signals, the cosine and logit gaps to the rest), fitted on the
dev half of the stop-41 features with and without 150 synthetic round-2 questions (which the shipped adapter never
saw; `calibrate_gate.py collect --dataset synthetic`); AUROC on the test halves, and the right passes at the shipped
gate's count of wrong ones.

    .venv/bin/python eval/first_article_probe.py [--json eval/results/first_article_probe.json]   # seconds
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

import calibrate_gate as cg

RESULTS = Path(__file__).resolve().parent / "results"


def load(name: str) -> list[dict]:
    return [json.loads(line) for line in (RESULTS / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def evidence(r: dict, m: dict) -> list[float]:
    """The first article's logit, the retrieval signals, the gaps to the rest, the first article's P(relevant)."""
    d, c, s = r["diffs"], r["cosines"], r["signals"]
    p_first = cg.total(r, m)[1][0]  # the shipped judge's unshifted P(relevant) of the first article
    return [d[0], s["best_cosine"], s["cosine_margin"], s["lexical_overlap"], c[0] - c[1], d[0] - max(d[1:]), p_first]


def labelled(rows: list[dict], m: dict) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    rows = [r for r in rows if r["in_scope"] and len(r["articles"]) > 1]
    return (np.array([evidence(r, m) for r in rows]),
            np.array([1.0 if r["articles"][0] in r["gold"] else 0.0 for r in rows]), rows)


def auc(score, y) -> float:
    return round(cg.auroc([s for s, t in zip(score, y) if t], [s for s, t in zip(score, y) if not t]), 3)


def right_at(score, y, wrong_allowed: int) -> int:
    """Questions passed from a governing first article, best score first, until one more wrong pass would exceed
    `wrong_allowed`."""
    wrong = right = 0
    for _, t in sorted(zip(score, y), key=lambda z: -z[0]):
        if not t and wrong + 1 > wrong_allowed:
            break
        wrong += not t
        right += bool(t)
    return right


def scored(w, mu, sd, rows: list[dict], m: dict) -> dict:
    x, y, kept = labelled(rows, m)
    score = w[0] + ((x - mu) / sd) @ w[1:]
    shipped = [cg.total(r, m, m["gate_shift"])[0] for r in kept]
    passed = [(s >= cg.THRESHOLD, bool(t)) for s, t in zip(shipped, y)]
    right, wrong = sum(p and t for p, t in passed), sum(p and not t for p, t in passed)
    return {"n": int(len(y)), "gold_first": int(y.sum()), "auroc_model": auc(score, y),
            "auroc_shipped_total": auc(shipped, y), "shipped_pass_right_wrong": [right, wrong],
            "model_pass_right_at_same_wrong": right_at(score, y, wrong)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    m = json.loads(cg.SHIPPED.read_text(encoding="utf-8"))
    s41 = load("gate_features_s41.jsonl")
    half = cg.split(s41)
    dev = [r for r in s41 if half[r["id"]] == "dev"]
    tests = {"answers test": load("gate_features_answers_test_s41.jsonl"),
             "eval test": [r for r in s41 if half[r["id"]] == "test"],
             "synthetic": load("gate_features_synthetic_round2.jsonl")}
    out = {}
    fits = {"dev": dev, "dev + synthetic": dev + tests["synthetic"], "synthetic": tests["synthetic"]}
    for name, fit_rows in fits.items():
        x, y, _ = labelled(fit_rows, m)
        mu, sd = x.mean(0), x.std(0) + 1e-9
        w = cg.fit_logistic((x - mu) / sd, y, cg.balanced(y))
        out[name] = {"n_fit": int(len(y)), "gold_first_share": round(float(y.mean()), 3),
                     **{t: scored(w, mu, sd, rows, m) for t, rows in tests.items()}}
    text = json.dumps(out, ensure_ascii=False, indent=1)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
