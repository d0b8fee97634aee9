#!/usr/bin/env python3
"""Where the label rules say 视情况 on a polar question, may the embedded model's yes/no logit decide? (stop 45)

Stop 38 (`polarity_probe.py`) asked this with 9 dev questions to choose on, too few. Stop 42 added 163 polar
questions written and labelled blind (`conclusion_labels.jsonl`), most of whose misses are an honest 视情况 where the
lawyer concludes: enough to choose thresholds on. Each polar question is given its gold articles; the label rules
decide as `conclusion_rules.py --embedder` does; where they say 视情况 the model is asked, on the answer stage's own
prompt prefix (system message, question, the deciding article: `evidence.shared_prefix`), three tails: the ask
kind's (allowed / required / entitled), a generic "is the answer yes", and "does it depend on what the question
does not say". `report` chooses, on the labelled set and the answers set's dev half, the thresholds (lo, hi) of one
tail that turn 视情况 into the positive label above hi and the negative one below lo, scoring +1 for the lawyer's
label, −1 for a definite label where the lawyer says 视情况, −3 for the opposite of the lawyer's label; it reports
them on the answers test half, both fresh sets and the second round of labelled questions
(`conclusion_labels_round2.jsonl`, written after the choice: a held-out check).

    .venv/bin/python eval/polarity_decision.py collect   # ~10 min, resumable
    .venv/bin/python eval/polarity_decision.py report [--json eval/results/polarity_decision.json]
"""
from __future__ import annotations

import json
import sys
from itertools import product
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))

from conclusion_rules import clause_embed, decided  # noqa: E402
from report_io import probe_main  # noqa: E402

from agentic_rag.stages.answer.conclusion import OPPOSITE, POLARITY_LABELS, ask_kind  # noqa: E402
from agentic_rag.stages.answer import prompt  # noqa: E402
from agentic_rag.stages.answer.polarity import NEGATIVE, POSITIVE  # noqa: E402
from agentic_rag.stages.base import SYSTEM  # noqa: E402
from agentic_rag.stages.evidence import shared_prefix  # noqa: E402

OUT = ROOT / "eval" / "results" / "polarity_decision.jsonl"
SETS = {"labels": ("conclusion_labels.jsonl", None), "labels2": ("conclusion_labels_round2.jsonl", None),
        "answers-dev": ("answers_eval.jsonl", "dev"),
        "answers-test": ("answers_eval.jsonl", "test"), "fresh": ("answers_fresh.jsonl", None),
        "fresh2": ("answers_fresh2.jsonl", None)}
TUNE = ("labels", "answers-dev")  # labels2 (stop 45, written after the choice) is a held-out check
TAILS = prompt.POLARITY_TAIL  # the shipped tails: the thresholds are chosen for these words
GENERIC = "【任务】只依据上面的法条，对用户问题的回答是肯定的吗？只回答“是”或“否”。"
DEPENDS = "【任务】只依据上面的法条判断：回答这个问题是否还取决于问题中没有说明的情况？只回答“是”或“否”。"


def polar_rows() -> list[dict]:
    rows = []
    for name, (path, split) in SETS.items():
        for line in (ROOT / "eval" / path).read_text(encoding="utf-8").splitlines():
            r = json.loads(line) if line.strip() else None
            if r and r["conclusion"]["label"] in POLARITY_LABELS and r["gold"] and split in (None, r["split"]):
                rows.append({**r, "set": name})
    return rows


def collect_rows(out: Path, rows: list[dict], system: str, line_of) -> None:
    """Resumable into `out`: each row with the rules' decision on its gold articles, written as
    `line_of(row, gold, best, decision, score)`, where `score(prefix, tails)` gives the embedded model's diffs."""
    from agentic_rag.config import get_settings
    from agentic_rag.llm.local import load_model, local_model_path
    from agentic_rag.llm.scoring import yes_no_diffs

    settings = get_settings()
    llama = load_model(local_model_path(settings.local_llm, settings), settings).llama
    done = {json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()} if out.exists() else set()
    with open(out, "a", encoding="utf-8") as f:
        for r, gold, best, decision in decided(rows, clause_embed()):  # all rows: their laws' common words
            if r["id"] not in done:
                line = line_of(r, gold, best, decision, lambda prefix, tails: yes_no_diffs(llama, system, prefix, tails))
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
                f.flush()


def scored_line(r: dict, gold, best, decision, score) -> dict:
    kind = ask_kind(r["query"])
    row = {"id": r["id"], "set": r["set"], "type": r["type"], "ref": r["conclusion"]["label"],
           "rule_label": decision.label, "rule": decision.rule, "kind": kind}
    if decision.label == "视情况" and kind in POSITIVE and best:
        scored = score(shared_prefix(r["query"], [best.article], r["kb"] == "pipl"), [TAILS[kind], GENERIC, DEPENDS])
        row.update(d_kind=round(scored.diffs[0], 3), d_generic=round(scored.diffs[1], 3),
                   d_depends=round(scored.diffs[2], 3), seconds=round(scored.seconds, 2))
    return row


def collect(out: Path) -> None:
    collect_rows(out, polar_rows(), SYSTEM, scored_line)


def relabel(r: dict, tail: str, lo: float, hi: float) -> str:
    d = r.get(tail)
    if d is None:
        return r["rule_label"]
    if tail == "d_depends":  # high: it depends; the kind's logit then says which way
        return r["rule_label"] if d >= lo else POSITIVE[r["kind"]] if r["d_kind"] >= hi else NEGATIVE[r["kind"]]
    return POSITIVE[r["kind"]] if d >= hi else NEGATIVE[r["kind"]] if d <= lo else r["rule_label"]


def outcome(rows: list[dict], labels: list[str]) -> dict:
    right = sum(lab == r["ref"] for r, lab in zip(rows, labels))
    opposite = sum(OPPOSITE.get(r["ref"]) == lab for r, lab in zip(rows, labels))
    overclaimed = sum(r["ref"] == "视情况" and lab != "视情况" for r, lab in zip(rows, labels))
    return {"n": len(rows), "right": right, "opposite": opposite, "definite_for_视情况": overclaimed,
            "utility": right - overclaimed - 3 * opposite}


def grid(rows: list[dict], tail: str) -> list[float]:
    values = sorted({r[tail] for r in rows if r.get(tail) is not None})
    return [-99.0, 99.0] + [v + 1e-3 for v in values] + [v - 1e-3 for v in values]


def choose(rows: list[dict], tail: str) -> tuple[float, float]:
    """The (lo, hi) of the best utility on `rows`; among ties the narrowest change (fewest relabelled)."""
    cands = [(lo, hi) for lo, hi in product(grid(rows, tail), grid(rows, "d_kind" if tail == "d_depends" else tail))
             if tail == "d_depends" or lo < hi]
    base = [r["rule_label"] for r in rows]

    def key(t):
        labels = [relabel(r, tail, *t) for r in rows]
        return outcome(rows, labels)["utility"], -sum(a != b for a, b in zip(labels, base))
    return max(cands, key=key)


def auroc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    return round(float(np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg])), 3)


def report(out: Path) -> dict:
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    tune = [r for r in rows if r["set"] in TUNE]
    result = {"rules": {s: outcome([r for r in rows if r["set"] == s], [r["rule_label"] for r in rows if r["set"] == s])
                        for s in SETS}}
    for tail in ("d_kind", "d_generic", "d_depends"):
        lo, hi = choose(tune, tail)
        scored = {"thresholds": [round(lo, 3), round(hi, 3)]}
        for s in SETS:
            rs = [r for r in rows if r["set"] == s]
            hedged = [r for r in rs if r.get(tail) is not None]
            scored[s] = {**outcome(rs, [relabel(r, tail, lo, hi) for r in rs]),
                         "auroc_pos_neg_where_视情况": auroc([r[tail] for r in hedged if r["ref"] in POSITIVE.values()],
                                                         [r[tail] for r in hedged if r["ref"] in NEGATIVE.values()])}
        result[tail] = scored
    return result


def main() -> int:
    return probe_main(__doc__, OUT, collect, report)


if __name__ == "__main__":
    sys.exit(main())
