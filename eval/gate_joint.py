#!/usr/bin/env python3
"""Was the four-dimension gate the best use of its evidence? One alternative, measured the same way.

The shipped gate (eval/calibrate_gate.py) fits three logistic models (per-article relevance, accuracy,
completeness) and sums four calibrated dimensions, PASS ≥ 32/40. The alternative here: ONE logistic model of
P(answerable) over the same evidence (best article logit of the relevance model, the first article's d, best
cosine, its margin, lexical overlap, exact hit; `--extra` adds the second-best article and the mean d of the top 3),
thresholded at the best balanced accuracy out of fold. Same features file, same dev/test split, same 5 folds.

    .venv/bin/python eval/gate_joint.py [--extra]   → eval/results/gate_joint.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibrate_gate as cg  # noqa: E402


def features(r: dict, m: dict, extra: bool) -> list[float]:
    w = m["relevance"]
    logits = [w[0] + w[1] * d + w[2] / (i + 1) + w[3] * c for i, (d, c) in enumerate(zip(r["diffs"], r["cosines"]))]
    s = r["signals"]
    x = [max(logits), r["diffs"][0], s["best_cosine"], s["cosine_margin"], s["lexical_overlap"], s["exact_hit"]]
    if extra:
        x += [sorted(logits)[-2] if len(logits) > 1 else max(logits), float(np.mean(r["diffs"][:3]))]
    return x


def fit(rows: list[dict], extra: bool):
    m = cg.fit_models(rows)
    x = np.array([features(r, m, extra) for r in rows])
    y = np.array([r["y"] for r in rows], float)
    mu, sd = x.mean(0), x.std(0) + 1e-9
    return m, cg.fit_logistic((x - mu) / sd, y, cg.balanced(y)), mu, sd


def score(r: dict, model, extra: bool) -> float:
    m, w, mu, sd = model
    return float(w[0] + ((np.array(features(r, m, extra)) - mu) / sd) @ w[1:])


def rates(rows: list[dict], scores: dict, t: float, routes: dict | None = None) -> tuple[float, float]:
    ok = {r["id"]: scores[r["id"]] >= t and (routes is None or routes.get(r["id"], "kb") in ("kb", "multi"))
          for r in rows}
    pos = [ok[r["id"]] for r in rows if r["y"]]
    neg = [not ok[r["id"]] for r in rows if not r["y"]]
    return round(float(np.mean(pos)), 4), round(float(np.mean(neg)), 4)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--extra", action="store_true", help="also the second-best article and the mean d of the top 3")
    p.add_argument("--json", type=Path, default=cg.ROOT / "eval" / "results" / "gate_joint.json")
    a = p.parse_args()
    rows = [json.loads(line) for line in cg.FEATURES.read_text(encoding="utf-8").splitlines()]
    part, data = cg.split(rows), cg.labelled(rows)
    dev = [r for r in data if part[r["id"]] == "dev"]
    test = [r for r in data if part[r["id"]] == "test"]
    routes = {q["id"]: q["route"] for f in cg.ROUTES if f.exists()
              for q in json.loads(f.read_text(encoding="utf-8"))["questions"]}
    oof, parts = {}, cg.folds(dev, 5)
    for i, held in enumerate(parts):
        model = fit([r for j, f in enumerate(parts) if j != i for r in f], a.extra)
        oof.update((r["id"], score(r, model, a.extra)) for r in held)
    t = max(sorted(set(oof.values())), key=lambda v: (sum(rates(dev, oof, v)), v))
    final = fit(dev, a.extra)
    st = {r["id"]: score(r, final, a.extra) for r in test}
    auroc = lambda rs, sc: cg.auroc([sc[r["id"]] for r in rs if r["y"]], [sc[r["id"]] for r in rs if not r["y"]])
    shipped = json.loads((cg.REPORT).read_text(encoding="utf-8"))
    out = {"model": "one logistic P(answerable)" + (" + extra features" if a.extra else ""),
           "dev_out_of_fold": {"auroc": auroc(dev, oof), "pass_fail": rates(dev, oof, t),
                               "with_router": rates(dev, oof, t, routes)},
           "test": {"auroc": auroc(test, st), "pass_fail": rates(test, st, t), "with_router": rates(test, st, t, routes)},
           "shipped_four_dimensions": {
               "dev_out_of_fold": [shipped["dev_out_of_fold"][k] for k in ("auroc", "answerable_pass_rate",
                                                                         "out_of_scope_fail_rate")],
               "test": [shipped["test"][k] for k in ("auroc", "answerable_pass_rate", "out_of_scope_fail_rate")]}}
    a.json.write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps(out, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
