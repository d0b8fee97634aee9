#!/usr/bin/env python
"""The whole retriever (fusion, law vote, lookups; `LocalRetriever.retrieve`) on the held-out lay sets: how often
the first article is a gold one, and a gold one is among the five the gate scores. Run it with the checkout to
measure as its argument (its own code and resources/query_adapter.npy); the sets are always this checkout's.

    .venv/bin/python bench/retriever_first_article.py <checkout> --json F.json      # ~1 min, no model call
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

EVAL = Path(__file__).resolve().parent.parent / "eval"
PIPL = "中华人民共和国个人信息保护法"


def _keys(gold) -> set:
    return {(PIPL, g) if isinstance(g, int) else (g["law"], g["article"]) for g in gold or []}


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (EVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def held_out_sets() -> dict[str, list[tuple[str, str, set]]]:
    """(kb, question, gold keys) per set; questions without gold (out of scope) left out."""
    sets = {"answers test": [(r["kb"], r["query"], _keys(r["gold"])) for r in _rows("answers_eval.jsonl")
                             if r["split"] == "test"],
            "fresh": [(r["kb"], r["query"], _keys(r["gold"])) for r in _rows("answers_fresh.jsonl")],
            "fresh2": [(r["kb"], r["query"], _keys(r["gold"])) for r in _rows("answers_fresh2.jsonl")],
            "conversation test": [(c["kb"], t["standalone"], _keys(t["gold"])) for c in _rows("conversation_eval.jsonl")
                                  if c["split"] == "test" for t in c["turns"]]}
    return {name: [q for q in qs if q[2]] for name, qs in sets.items()}


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

    settings = get_settings()
    retrievers = {kb: LocalRetriever.from_settings(settings.model_copy(update={"data_dir": root / d}))
                  for kb, d in (("pipl", "data"), ("multilaw", "data-multilaw"))}
    out = {}
    for name, questions in held_out_sets().items():
        first = five = 0
        for kb, question, gold in questions:
            keys = [a.key for a in retrievers[kb].retrieve(question).articles[:5]]
            first += bool(keys and keys[0] in gold)
            five += bool(set(keys) & gold)
        out[name] = {"n": len(questions), "first": round(first / len(questions), 3),
                     "in_five": round(five / len(questions), 3)}
        print(name, out[name], flush=True)
    if out_path:
        out_path.write_text(json.dumps({"checkout": str(root), **out}, ensure_ascii=False, indent=1) + "\n",
                             encoding="utf-8")


if __name__ == "__main__":
    main()
