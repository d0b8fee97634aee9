#!/usr/bin/env python3
"""Validate eval/synthetic_lay.jsonl (training questions for the query adapter, eval/synthetic_lay.README.md).
Stdlib only.

    python3 eval/check_synthetic_lay.py [path]
    python3 eval/check_synthetic_lay.py --follow-ups [path]     # eval/synthetic_follow_ups.jsonl

Checks (any failure → exit status 1):
  * schema: law, article (int), query (non-empty string), nothing else;
  * every (law, article) is a numbered article of the six laws in LawRefBook;
  * no query names an article number (第X条): the adapter learns lay words, not lookups;
  * no query is near another set's question (character-bigram Jaccard >= 0.35, stricter than the answers set's
    0.6): the adapter is fitted on these, and every eval set is reported as held out.
With --follow-ups (eval/synthetic_follow_ups.README.md): law, first_article, first_question (a line of
synthetic_lay.jsonl or synthetic_lay_round2.jsonl), follow_up and article, nothing else; the article exists; no
article number; no follow-up near an eval message.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from check_answers_eval import EVAL, bigrams, jaccard, load_multilaw

DEFAULT = EVAL / "synthetic_lay.jsonl"
ROUND2 = EVAL / "synthetic_lay_round2.jsonl"  # stop 44's second round (not in the shipped adapter)
FOLLOW_UPS = EVAL / "synthetic_follow_ups.jsonl"
FOLLOW_UP_KEYS = {"law", "first_article", "first_question", "follow_up", "article"}
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
        out += written_problems(i, row["law"], row["article"], row["query"], articles, others, "question")
    return out


def written_problems(i: int, law: str, article: int, text: str, articles: set[tuple[str, int]],
                     others: list[set[str]], what: str) -> list[str]:
    """Line `i`'s article exists, its text names no article number and is not near an eval `what`."""
    out = []
    if (law, article) not in articles:
        out.append(f"line {i}: {law} article {article} is not in the six laws")
    if ARTICLE_NUMBER.search(text):
        out.append(f"line {i}: names an article number: {text}")
    near = max((jaccard(bigrams(text), b) for b in others), default=0.0)
    if near >= JACCARD_LIMIT:
        out.append(f"line {i}: near an eval {what} (J={near:.2f}): {text}")
    return out


def follow_up_problems(rows: list[dict], articles: set[tuple[str, int]], others: list[set[str]],
                       firsts: set[tuple[str, int, str]]) -> list[str]:
    out = []
    for i, row in enumerate(rows, start=1):
        if set(row) != FOLLOW_UP_KEYS or not all(isinstance(row[k], int) for k in ("first_article", "article")):
            out.append(f"line {i}: expected {sorted(FOLLOW_UP_KEYS)} (articles as int): {row}")
            continue
        if (row["law"], row["first_article"], row["first_question"]) not in firsts:
            out.append(f"line {i}: the first question is not a line of {DEFAULT.name} or {ROUND2.name}")
        out += written_problems(i, row["law"], row["article"], row["follow_up"], articles, others, "message")
    return out


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv: list[str]) -> int:
    follow_ups = "--follow-ups" in argv
    argv = [a for a in argv if a != "--follow-ups"]
    path = Path(argv[1]) if len(argv) > 1 else FOLLOW_UPS if follow_ups else DEFAULT
    rows = _read(path)
    if follow_ups:
        firsts = {(r["law"], r["article"], r["query"]) for r in _read(DEFAULT) + _read(ROUND2)}
        found = follow_up_problems(rows, set(load_multilaw()), eval_questions(), firsts)
    else:
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
