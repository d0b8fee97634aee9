#!/usr/bin/env python3
"""Validate eval/synthetic_lay.jsonl (training questions for the query adapter, eval/synthetic_lay.README.md).
Stdlib only.

    python3 eval/check_synthetic_lay.py [path]

Checks (any failure → exit status 1):
  * schema: law, article (int), query (non-empty string), nothing else;
  * every (law, article) is a numbered article of the six laws in LawRefBook;
  * no query names an article number (第X条): the adapter learns lay words, not lookups;
  * no query is near another set's question (character-bigram Jaccard >= 0.35, stricter than the answers set's
    0.6): the adapter is fitted on these, and every eval set is reported as held out.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from check_answers_eval import EVAL, bigrams, jaccard, load_multilaw

DEFAULT = EVAL / "synthetic_lay.jsonl"
JACCARD_LIMIT = 0.35
ANSWER_SETS = ("answers_eval", "answers_fresh", "answers_fresh2", "pipl_eval", "multilaw_eval")
CONVERSATION_SETS = ("conversation_eval", "conversation_fresh", "conversation_fresh2")
ARTICLE_NUMBER = re.compile(r"第[一二三四五六七八九十百千零〇两\d]+条")


def eval_questions() -> list[set[str]]:
    """Bigrams of every question of the eval sets (answers, eval and conversation sets: messages and standalones)."""
    texts = []
    for name in ANSWER_SETS:
        texts += [json.loads(line)["query"] for line in (EVAL / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
                  if line.strip()]
    for name in CONVERSATION_SETS:
        for line in (EVAL / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts += [t[k] for t in json.loads(line)["turns"] for k in ("user", "standalone") if t.get(k)]
    return [bigrams(t) for t in texts]


def problems(rows: list[dict], articles: set[tuple[str, int]], others: list[set[str]]) -> list[str]:
    out = []
    for i, row in enumerate(rows, start=1):
        if set(row) != {"law", "article", "query"} or not isinstance(row["article"], int) \
                or not isinstance(row["query"], str) or not row["query"].strip():
            out.append(f"line {i}: expected law, article (int), query: {row}")
            continue
        if (row["law"], row["article"]) not in articles:
            out.append(f"line {i}: {row['law']} article {row['article']} is not in the six laws")
        if ARTICLE_NUMBER.search(row["query"]):
            out.append(f"line {i}: names an article number: {row['query']}")
        mine = bigrams(row["query"])
        near = max((jaccard(mine, b) for b in others), default=0.0)
        if near >= JACCARD_LIMIT:
            out.append(f"line {i}: near an eval question (J={near:.2f}): {row['query']}")
    return out


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    found = problems(rows, set(load_multilaw()), eval_questions())
    for p in found:
        print(p)
    laws = sorted({r.get("law") for r in rows})
    print(f"{len(rows)} questions over {len(laws)} laws; {len(found)} problems")
    if found:
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
