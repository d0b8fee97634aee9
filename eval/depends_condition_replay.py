#!/usr/bin/env python3
"""The 视情况 sentence's support check replayed on stored answers (stop 48): what each distinct 「视情况，取决于…」
sentence of the stored answer runs (bench/results/*s4[4-7]*.jsonl) gets when checked against the question and its
cited articles (until stop 47) and against the cited articles alone (stop 48: the condition must be the law's).
No model, no index: seconds.

    .venv/bin/python eval/depends_condition_replay.py [--json eval/results/depends_condition_replay.json]
"""
from __future__ import annotations

import argparse
import glob
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "eval"))

from conclusion_rules import PIPL_LAW, articles_by_key  # noqa: E402

from agentic_rag.stages.answer.agent import AnswerStage  # noqa: E402
from agentic_rag.stages.answer.support import judge_sentence  # noqa: E402

_KEY = re.compile(r"\('(.+)', (\d+)\)")


def stored_sentences(pattern: str) -> dict[tuple[str, str], list]:
    """(question id, the 视情况 sentence) → the articles its answer cited, over every stored run matching `pattern`."""
    seen = {}
    for path in sorted(glob.glob(str(ROOT / pattern))):
        for line in open(path, encoding="utf-8"):
            row = json.loads(line)
            for turn in (row.get("first"), row.get("second"), row):
                if isinstance(turn, dict) and turn.get("label") == "视情况" and turn.get("model_sentences"):
                    seen[(row["id"], turn["model_sentences"][0])] = turn.get("cited", [])
    return seen


def cited_text(cited: list, row: dict, index: dict) -> str:
    out = ""
    for key in cited:
        m = _KEY.match(str(key))
        law, number = (m.group(1), int(m.group(2))) if m else (PIPL_LAW, int(str(key).split("#")[-1]))
        out += index[(law, number)].text if (law, number) in index else ""
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", default="bench/results/*s4[4-7]*.jsonl")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    rows = {r["id"]: r for f in glob.glob(str(ROOT / "eval" / "answers*.jsonl"))
            for r in map(json.loads, open(f, encoding="utf-8"))}
    index = articles_by_key(list(rows.values()))
    report = {"sentences": 0, "kept_with_question": 0, "kept_articles_only": 0, "changed": []}
    for (qid, sentence), cited in sorted(stored_sentences(args.runs).items()):
        row, shown = rows[qid], AnswerStage._strip_label(sentence, "视情况")  # judged as the stage judges it: as shown
        articles = cited_text(cited, row, index)
        if not articles:
            continue
        before = judge_sentence(shown, row["query"] + articles, "视情况", question=row["query"])
        after = judge_sentence(shown, articles, "视情况", question=row["query"])
        report["sentences"] += 1
        report["kept_with_question"] += before.kept
        report["kept_articles_only"] += after.kept
        if before.kept != after.kept:
            report["changed"].append({"id": qid, "sentence": sentence, "p_before": before.p, "p_after": after.p})
    print(json.dumps(report, ensure_ascii=False, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
