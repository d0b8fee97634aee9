#!/usr/bin/env python3
"""The support check (agentic_rag/stages/answer/support.py) measured on labelled sentences, and its weights fitted.

eval/support_sentences.jsonl: 577 sentences the embedded 1.5B wrote in answers of the earlier form, each labelled by
a lawyer against the articles the model was given (supported / unsupported / contradicted / fragment, and whether
it is legally wrong; eval/support_sentences.README.md). The check should let supported sentences through and stop
the others. Reported with 5-fold cross-validation grouped by question (a question's sentences are never split
between fitting and scoring), for the code checks alone and with the model's 是/否 logit:

* flag precision / recall — of the sentences it stops, how many should be stopped; of those that should, how many;
* legally wrong sentences let through, supported sentences lost, and what the logit costs per sentence.

    .venv/bin/python eval/support_check.py features   # the 1.5B's logit per sentence (resumable, ~20 min)
    .venv/bin/python eval/support_check.py fit        # CV report → eval/results/support_check.json; shipped weights
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_rag.stages.answer.support import _CJK, SupportModel, bigram_support, judge_sentence  # noqa: E402

LABELS = ROOT / "eval" / "support_sentences.jsonl"
RAW = ROOT / "eval" / "support_sentences_raw.jsonl"
FEATURES = ROOT / "eval" / "results" / "support_features.jsonl"
REPORT = ROOT / "eval" / "results" / "support_check.json"
SHIPPED = ROOT / "agentic_rag" / "resources" / "support_calibration.json"
FOLDS = 5


def load() -> list[dict]:
    raw = {r["sid"]: r for r in map(json.loads, RAW.read_text(encoding="utf-8").splitlines())}
    rows = []
    for line in LABELS.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        r["articles"] = raw[r["sid"]]["articles"]
        rows.append(r)
    return rows


def sources(r: dict) -> str:
    return r["question"] + "".join(a["text"] for a in r["articles"])


def code_features(r: dict) -> dict:
    """The code checks of a sentence: its wording's share in the sources, and whether it passes the rules that
    stop a sentence whatever its wording (numbers not in the articles, a citation with nothing else)."""
    rules = judge_sentence(r["sentence"], sources(r), None, model=SupportModel(0.0, 0.0, 0.0, 0.0))
    return {"lexical": bigram_support(r["sentence"], _CJK.sub("", sources(r))), "numbers_ok": rules.kept}


async def _llm_features(rows: list[dict]) -> None:
    from agentic_rag.config import get_settings
    from agentic_rag.llm.models import make_model
    from agentic_rag.stages.answer.agent import SUPPORT_TAIL
    from agentic_rag.stages.base import SYSTEM
    from agentic_rag.stages.evidence import PREFIX

    done = {json.loads(x)["sid"] for x in FEATURES.read_text(encoding="utf-8").splitlines()} \
        if FEATURES.exists() else set()
    model = make_model("answer", get_settings())
    by_answer: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["sid"] not in done:
            key = (r["qid"], r["source"], tuple(a["title"] for a in r["articles"]))
            by_answer.setdefault(key, []).append(r)
    for i, group in enumerate(by_answer.values(), 1):
        one_law = "multilaw" not in group[0]["source"]  # as the runtime names articles: 第十条 in a one-law base
        block = "\n".join(f"【{a['title'].split('》')[-1] if one_law else a['title']}】{a['text'][:500]}"
                          for a in group[0]["articles"]) or "（无）"
        prefix = PREFIX.format(question=group[0]["question"], articles=block)
        t0 = time.perf_counter()
        scored = await model.score_tails(SYSTEM, prefix, [SUPPORT_TAIL.format(sentence=r["sentence"]) for r in group])
        seconds = time.perf_counter() - t0
        with open(FEATURES, "a", encoding="utf-8") as f:
            for r, d in zip(group, scored.diffs):
                f.write(json.dumps({"sid": r["sid"], "d": d, "group_seconds": round(seconds, 2),
                                    "group_size": len(group), "prefix_tokens": scored.prefix_tokens}) + "\n")
        print(f"[{i}/{len(by_answer)}] {len(group)} sentences, {seconds:.1f} s", file=sys.stderr, flush=True)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 3000) -> np.ndarray:
    """Weights [intercept, …] of an L2-regularised logistic regression (gradient descent; a few features)."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(xb.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) / len(y) + l2 * np.r_[0, w[1:]] / len(y)
        w -= 0.5 * grad
    return w


def verdicts(w: np.ndarray, x: np.ndarray, numbers: np.ndarray, threshold: float) -> np.ndarray:
    """True where the check keeps the sentence."""
    p = 1 / (1 + np.exp(-(w[0] + x @ w[1:])))
    return (p >= threshold) & numbers


def scores(keep: np.ndarray, rows: list[dict]) -> dict:
    should_stop = np.array([r["label"] != "supported" for r in rows])
    wrong = np.array([r["legally_wrong"] for r in rows])
    stopped = ~keep
    tp = int((stopped & should_stop).sum())
    return {"n": len(rows), "stopped": int(stopped.sum()),
            "flag_precision": round(tp / max(1, stopped.sum()), 3),
            "flag_recall": round(tp / max(1, should_stop.sum()), 3),
            "legally_wrong_let_through": int((keep & wrong).sum()), "legally_wrong": int(wrong.sum()),
            "supported_lost": int((stopped & ~should_stop).sum()), "supported": int((~should_stop).sum())}


def cross_validate(rows: list[dict], x: np.ndarray, numbers: np.ndarray, thresholds) -> dict:
    """Out-of-fold keep/stop per sentence at each threshold (folds by question)."""
    y = np.array([r["label"] == "supported" for r in rows], dtype=float)
    qids = sorted({r["qid"] for r in rows})
    fold = np.array([qids.index(r["qid"]) % FOLDS for r in rows])
    out = {}
    for t in thresholds:
        keep = np.zeros(len(rows), dtype=bool)
        for k in range(FOLDS):
            w = fit_logistic(x[fold != k], y[fold != k])
            keep[fold == k] = verdicts(w, x[fold == k], numbers[fold == k], t)
        out[t] = scores(keep, rows)
    return out


def fit(rows: list[dict]) -> dict:
    feats = {json.loads(x)["sid"]: json.loads(x) for x in FEATURES.read_text(encoding="utf-8").splitlines()} \
        if FEATURES.exists() else {}
    code = [code_features(r) for r in rows]
    numbers = np.array([c["numbers_ok"] for c in code])
    lexical = np.array([[c["lexical"]] for c in code])
    thresholds = (0.3, 0.4, 0.5, 0.6, 0.7)
    report = {"n": len(rows), "labels": {k: sum(r["label"] == k for r in rows) for k in
                                        ("supported", "unsupported", "contradicted", "fragment")},
              "code_only": {str(t): v for t, v in cross_validate(rows, lexical, numbers, thresholds).items()}}
    with_d = [r for r in rows if r["sid"] in feats]
    if len(with_d) == len(rows):
        x = np.hstack([lexical, np.array([[feats[r["sid"]]["d"]] for r in rows])])
        report["with_llm"] = {str(t): v for t, v in cross_validate(rows, x, numbers, thresholds).items()}
        groups = {(feats[r["sid"]]["group_seconds"], feats[r["sid"]]["group_size"]) for r in rows}
        report["llm_seconds_per_sentence"] = round(sum(s for s, _ in groups) / sum(n for _, n in groups), 3)
    return report


def ship(rows: list[dict], report: dict, use_llm: bool, threshold: float) -> None:
    feats = {json.loads(x)["sid"]: json.loads(x) for x in FEATURES.read_text(encoding="utf-8").splitlines()} \
        if use_llm else {}
    y = np.array([r["label"] == "supported" for r in rows], dtype=float)
    lexical = [[code_features(r)["lexical"]] for r in rows]
    code = fit_logistic(np.array(lexical), y)  # what decides when a sentence comes with no logit
    w = fit_logistic(np.array([x + [feats[r["sid"]]["d"]] for x, r in zip(lexical, rows)]), y) if use_llm else code
    data = {"intercept": round(float(w[0]), 4), "lexical": round(float(w[1]), 4),
            "llm": round(float(w[2]), 4) if use_llm else 0.0, "threshold": threshold,
            **({"code_intercept": round(float(code[0]), 4), "code_lexical": round(float(code[1]), 4)} if use_llm else {}),
            "provenance": f"eval/support_check.py fit on {len(rows)} labelled sentences "
                          f"(eval/support_sentences.jsonl); CV report in eval/results/support_check.json"}
    SHIPPED.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    report["shipped"] = data


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=("features", "fit"))
    p.add_argument("--llm", action="store_true", help="ship the weights with the model's logit")
    p.add_argument("--threshold", type=float, default=0.5)
    args = p.parse_args()
    rows = load()
    if args.command == "features":
        asyncio.run(_llm_features(rows))
        return 0
    report = fit(rows)
    ship(rows, report, args.llm, args.threshold)
    REPORT.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
