#!/usr/bin/env python
"""The whole retriever (fusion, law vote, lookups; `LocalRetriever.retrieve`) on the held-out lay sets: how often
the first article is a gold one, and a gold one is among the five the gate scores. Run it with the checkout to
measure as its argument (its own code and resources/query_adapter.npy); the sets are always this checkout's, read
as bench/lay_adapter.py reads them (`project_questions`).

    .venv/bin/python bench/retriever_first_article.py <checkout> --json F.json      # ~1 min, no model call
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
HELD_OUT = {"answers test": ("answers", "test"), "fresh": ("fresh", "fresh"), "fresh2": ("fresh2", "fresh"),
            "conversation test": ("conversation", "test")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    root, out_path = args.checkout.resolve(), args.json.resolve() if args.json else None
    sys.path.insert(0, str(root))
    os.chdir(root)
    from agentic_rag.config import get_settings
    from agentic_rag.retrieval.retriever import LocalRetriever

    sys.path.insert(0, str(BENCH))  # only now: bench/_common puts this script's own project root on the path
    from lay_adapter import project_questions  # the labelled lay questions, as the adapter's report reads them

    settings = get_settings()
    retrievers = {kb: LocalRetriever.from_settings(settings.model_copy(update={"data_dir": root / d}))
                  for kb, d in (("pipl", "data"), ("multilaw", "data-multilaw"))}
    out, labelled = {}, project_questions()
    for name, (set_, split) in HELD_OUT.items():
        questions = [q for q in labelled if q["set"] == set_ and q["split"] == split]
        first = five = 0
        for q in questions:
            keys = [a.key for a in retrievers[q["kb"]].retrieve(q["text"]).articles[:5]]
            first += bool(keys and keys[0] in q["gold"])
            five += bool(set(keys) & set(q["gold"]))
        out[name] = {"n": len(questions), "first": round(first / len(questions), 3),
                     "in_five": round(five / len(questions), 3)}
        print(name, out[name], flush=True)
    if out_path:
        out_path.write_text(json.dumps({"checkout": str(root), **out}, ensure_ascii=False, indent=1) + "\n",
                             encoding="utf-8")


if __name__ == "__main__":
    main()
