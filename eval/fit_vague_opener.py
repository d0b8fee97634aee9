#!/usr/bin/env python3
"""Fit the vague-opener model (`agentic_rag/stages/contextualise/vagueness.py`) and report it on what it never saw.

Training (dev only): the odd-id half of the blind openers (`eval/vague_openers.jsonl`), the first turns of the
conversation set's dev half, and the questions of the answers set's dev half and the PIPL / several-law eval sets
(all clear: they state a case). A balanced logistic regression on the shipped embedder's query vectors; L2 chosen by
5-fold cross-validation (balanced accuracy at 0.5); the threshold is the lowest (0.5, 0.55, …) at which no clear
training message is asked back out of fold — a clear question asked back costs the user a turn, and replies to a
clarifying question are rarely answered from gold (docs/evaluation.md). Held out: the openers' even-id half, the
answers set's test half and the fresh answers set, the conversation set's test half and the fresh conversations'
first turns, and the first questions of `eval/follow_up_messages.jsonl` — beside the lexical rule it replaces.

    .venv/bin/python eval/fit_vague_opener.py [--save]   # --save writes agentic_rag/resources/vague_opener.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))

from calibrate_gate import balanced, fit_logistic  # noqa: E402

from agentic_rag.stages.contextualise import signals  # noqa: E402
from agentic_rag.stages.contextualise.vagueness import RESOURCE, OpenerModel, never_vague  # noqa: E402

EVAL = ROOT / "eval"
OUT = ROOT / "agentic_rag" / "resources" / RESOURCE
RESULTS = EVAL / "results" / "vague_opener.json"
L2S = (0.1, 1.0, 10.0)
THRESHOLDS = tuple(round(0.5 + 0.05 * i, 2) for i in range(9))


def jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (EVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def odd(row: dict) -> bool:
    return int(row["id"].rsplit("-", 1)[1]) % 2 == 1


def first_turns(name: str, split: str) -> list[tuple[str, bool]]:
    return [(r["turns"][0]["user"], r["turns"][0]["kind"] == "vague_first") for r in jsonl(name) if r["split"] == split]


def sets() -> tuple[list[tuple[str, bool]], dict[str, list[tuple[str, bool]]]]:
    openers = jsonl("vague_openers.jsonl")
    train = [(r["text"], r["vague"]) for r in openers if odd(r)]
    train += first_turns("conversation_eval.jsonl", "dev")
    train += [(r["query"], False) for r in jsonl("answers_eval.jsonl") if r["split"] == "dev"]
    train += [(r["query"], False) for name in ("pipl_eval.jsonl", "multilaw_eval.jsonl") for r in jsonl(name)]
    held = {"openers, even half": [(r["text"], r["vague"]) for r in openers if not odd(r)],
            "answers test half + fresh set": [(r["query"], False) for r in jsonl("answers_eval.jsonl")
                                              if r["split"] == "test"] + [(r["query"], False) for r in jsonl("answers_fresh.jsonl")],
            "conversations: test half + fresh, first turns": first_turns("conversation_eval.jsonl", "test")
            + first_turns("conversation_fresh.jsonl", "fresh"),
            "follow-up set's first questions": [(q, False) for q in dict.fromkeys(r["first"] for r in jsonl("follow_up_messages.jsonl"))]}
    keep = lambda rows: [(t, v) for t, v in rows if not never_vague(t)]  # noqa: E731 (decided before any model)
    return keep(train), {k: keep(v) for k, v in held.items()}


def rates(asked: list[bool], labels: list[bool]) -> dict:
    vague = [a for a, v in zip(asked, labels) if v]
    clear = [a for a, v in zip(asked, labels) if not v]
    return {"vague_asked_back": f"{sum(vague)}/{len(vague)}" if vague else None, "clear_asked_back": f"{sum(clear)}/{len(clear)}"}


def balanced_accuracy(p: np.ndarray, y: np.ndarray) -> float:
    return float(((p[y == 1] >= 0.5).mean() + (p[y == 0] < 0.5).mean()) / 2)


def out_of_fold(x: np.ndarray, y: np.ndarray, l2: float, k: int = 5) -> np.ndarray:
    fold = np.arange(len(y)) % k
    p = np.zeros(len(y))
    for f in range(k):
        w = fit_logistic(x[fold != f], y[fold != f], balanced(y[fold != f]), l2=l2)
        p[fold == f] = 1 / (1 + np.exp(-(x[fold == f] @ w[1:] + w[0])))
    return p


def choose_threshold(p: np.ndarray, y: np.ndarray) -> float:
    return next((t for t in THRESHOLDS if not (p[y == 0] >= t).any()), THRESHOLDS[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--save", action="store_true")
    args = p.parse_args()
    from agentic_rag.config import get_settings
    from agentic_rag.retrieval.embedder import embedder_from_settings

    embedder = embedder_from_settings(get_settings())
    train, held = sets()
    x = embedder.encode_queries([t for t, _ in train])
    y = np.array([float(v) for _, v in train])
    oof = {l2: out_of_fold(x, y, l2) for l2 in L2S}
    cv = {l2: round(balanced_accuracy(p, y), 4) for l2, p in oof.items()}
    l2 = max(L2S, key=lambda c: (cv[c], c))
    threshold = choose_threshold(oof[l2], y)
    w = fit_logistic(x, y, balanced(y), l2=l2)
    model = OpenerModel(embedder.model_id, w[1:].astype(np.float32), float(w[0]), threshold)
    report = {"embedder": embedder.model_id, "train": {"n": len(y), "vague": int(y.sum())},
              "cv_balanced_accuracy_by_l2": {str(k): v for k, v in cv.items()}, "l2": l2, "threshold": threshold,
              "out_of_fold_at_threshold": rates(list(oof[l2] >= threshold), [bool(v) for v in y]), "held_out": {}}
    for name, rows in held.items():
        texts, labels = [t for t, _ in rows], [v for _, v in rows]
        vecs = embedder.encode_queries(texts)
        report["held_out"][name] = {"model": rates([model.probability(v) >= threshold for v in vecs], labels),
                                    "lexical rule": rates([signals.vague(t) is not None for t in texts], labels)}
    print(json.dumps(report, ensure_ascii=False, indent=1))
    RESULTS.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    if args.save:
        data = {"embedder_id": model.embedder_id, "dim": int(model.weights.shape[0]), "threshold": model.threshold,
                "bias": round(model.bias, 6), "weights": [round(float(v), 6) for v in model.weights],
                "provenance": {k: report[k] for k in ("train", "cv_balanced_accuracy_by_l2", "l2", "out_of_fold_at_threshold")}
                | {"fitted_by": "eval/fit_vague_opener.py", "held_out": "eval/results/vague_opener.json"}}
        tmp = OUT.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
