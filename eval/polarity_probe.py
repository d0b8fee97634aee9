#!/usr/bin/env python3
"""Can the embedded model decide a conclusion's polarity where the label rules say 视情况? (stop 38, not shipped)

Each polar question of the answers set and the fresh set is given its gold articles (as `conclusion_rules.py`
does); the label rules decide as in the answer stage; the 1.5B is asked, on top of the question + articles prefix,
whether the answer to the question is yes (logit(是) − logit(否), `llm.scoring`): once with a tail for the question's
ask kind (allowed / required / entitled), once with a generic one. `report` gives, per half, the AUROC of the logit
between positive (可以 / 需要) and negative (不可以 / 不需要) reference labels — over all definite references and over
those where the rules say 视情况, the case a model decision would change. A threshold would be chosen on dev.

    .venv/bin/python eval/polarity_probe.py collect [--out eval/results/polarity_probe.jsonl]   # ~6 min, resumable
    .venv/bin/python eval/polarity_probe.py report  [--json eval/results/polarity_probe.json]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))

from polarity_decision import collect_rows  # noqa: E402
from report_io import probe_main  # noqa: E402

from agentic_rag.stages.answer import prompt  # noqa: E402
from agentic_rag.stages.answer.conclusion import POLARITY_LABELS, ask_kind  # noqa: E402

OUT = ROOT / "eval" / "results" / "polarity_probe.jsonl"
DATASETS = ("answers_eval.jsonl", "answers_fresh.jsonl")
SYSTEM = "你是一名严谨的中国法律助手，只依据给出的法条回答。"
TAILS = prompt.POLARITY_TAIL  # the same words as the shipped tails
GENERIC = "【任务】只依据上面的法条，对用户问题的回答是肯定的吗？只回答“是”或“否”。"
POSITIVE, NEGATIVE = {"可以", "需要"}, {"不可以", "不需要"}


def polar_rows() -> list[dict]:
    rows = [json.loads(line) for name in DATASETS
            for line in (ROOT / "eval" / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if r["conclusion"]["label"] in POLARITY_LABELS and r["gold"]]


def line(r: dict, gold, _, decision, score) -> dict:
    kind = ask_kind(r["query"])
    prefix = f"用户问题：{r['query']}\n\n法条：\n" + "\n".join(f"【{a.law}{a.article_cn}】{a.text}" for a in gold) + "\n\n"
    diffs = score(prefix, [TAILS.get(kind, TAILS["permission"]), GENERIC]).diffs
    return {"id": r["id"], "split": r["split"], "type": r["type"], "ref": r["conclusion"]["label"],
            "rule_label": decision.label, "rule": decision.rule, "kind": kind,
            "d_kind": round(diffs[0], 3), "d_generic": round(diffs[1], 3)}


def collect(out: Path) -> None:
    collect_rows(out, polar_rows(), SYSTEM, line)


def auroc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    return round(float(np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg])), 3)


def report(rows: list[dict]) -> dict:
    out = {}
    for split in ("dev", "test", "fresh"):
        rs = [r for r in rows if r["split"] == split]
        hedged = [r for r in rs if r["rule_label"] == "视情况"]
        out[split] = {"n": len(rs), "rules_accuracy": round(float(np.mean([r["rule_label"] == r["ref"] for r in rs])), 3),
                      "rules_say_视情况": {"positive": sum(r["ref"] in POSITIVE for r in hedged),
                                         "negative": sum(r["ref"] in NEGATIVE for r in hedged),
                                         "视情况": sum(r["ref"] == "视情况" for r in hedged)}}
        for tail in ("d_kind", "d_generic"):
            out[split][tail] = {
                "auroc_definite": auroc([r[tail] for r in rs if r["ref"] in POSITIVE], [r[tail] for r in rs if r["ref"] in NEGATIVE]),
                "auroc_where_rules_say_视情况": auroc([r[tail] for r in hedged if r["ref"] in POSITIVE],
                                                   [r[tail] for r in hedged if r["ref"] in NEGATIVE])}
    return out


def main() -> int:
    return probe_main(__doc__, OUT, collect,
                      lambda out: report([json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]))


if __name__ == "__main__":
    sys.exit(main())
