#!/usr/bin/env python
"""A follow-up's own words searched beside the rule form (`stages/retrieve.py:fuse_own_words`), retrieval only: on
the follow-up turns of stored conversation runs (their rule-form question, the message, the previous turn's law as
focus in a several-law base), how often the first article is gold and a gold one is among the five the gate
scores, and what the second search costs (the two configurations alternate per turn, each embeds its texts from
scratch; p50 ms and the ratio).

    .venv/bin/python bench/follow_up_fusion.py --json bench/results/follow_up_fusion.json   # ~2 min, no model call
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from _common import PROJECT_ROOT, log

RUNS = {"dev": "conversation_dev_s39.jsonl", "test": "conversation_test_s41.jsonl",
        "fresh": "conversation_fresh_s39.jsonl", "fresh2": "conversation_fresh2_s41.jsonl"}
FOLLOW_UP_KINDS = {"pronoun", "ellipsis", "penalty", "more", "law_change"}


def follow_up_turns(path: Path):
    """(knowledge base, the turn, the previous turn's law) of every follow-up the conversation read with the
    history and whose gold is labelled."""
    for conv in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
        previous = None
        for turn in conv["turns"]:
            if turn["kind"] in FOLLOW_UP_KINDS and turn["context"] == "follow_up" and turn["gold"]:
                cited = previous["cited"] if previous else []
                law = cited[0]["law"] if cited and isinstance(cited[0], dict) else None
                yield conv["kb"], turn, law
            previous = turn


def gold_keys(turn: dict, kb: str) -> set:
    return {g if kb == "pipl" else (g["law"], g["article"]) for g in turn["gold"]}


def key(article, kb: str):
    return article.article if kb == "pipl" else (article.law, article.article)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from agentic_rag.config import get_settings
    from agentic_rag.retrieval.retriever import LocalRetriever
    from agentic_rag.stages.retrieve import fuse_own_words

    settings = get_settings()
    retrievers = {kb: LocalRetriever.from_settings(settings.model_copy(update={"data_dir": PROJECT_ROOT / d}))
                  for kb, d in (("pipl", "data"), ("multilaw", "data-multilaw"))}

    def question_only(r, turn, focus):
        return r.retrieve(turn["question"], focus_laws=focus)

    def fused(r, turn, focus):
        return fuse_own_words(r.retrieve(turn["question"], focus_laws=focus), r.retrieve(turn["user"], focus_laws=focus))

    configs = {"question": question_only, "fused": fused}
    out = {}
    for name, file in RUNS.items():
        counts = {c: {"first": 0, "in_five": 0, "ms": []} for c in configs}
        turns = list(follow_up_turns(PROJECT_ROOT / "eval" / "results" / file))
        for i, (kb, turn, law) in enumerate(turns):
            r, gold = retrievers[kb], gold_keys(turn, kb)
            order = list(configs) if i % 2 == 0 else list(configs)[::-1]
            for c in order:
                # the embedder keeps recent query vectors: both configurations embed from scratch (in the app the
                # router has usually embedded the question already, so the added cost there is the own words' search)
                getattr(r.embedder, "_cache", {}).clear()
                start = time.perf_counter()
                five = [key(a, kb) for a in configs[c](r, turn, [law] if law else []).evidence[:5]]
                counts[c]["ms"].append((time.perf_counter() - start) * 1000)
                counts[c]["first"] += bool(five) and five[0] in gold
                counts[c]["in_five"] += bool(gold & set(five))
        n = len(turns)
        out[name] = {"n": n, "run": file, **{c: {"gold_first": round(v["first"] / n, 3),
                                                  "gold_in_five": round(v["in_five"] / n, 3),
                                                  "p50_ms": round(statistics.median(v["ms"]), 1)}
                                               for c, v in counts.items()}}
        out[name]["ms_ratio"] = round(out[name]["fused"]["p50_ms"] / out[name]["question"]["p50_ms"], 2)
        log(f"{name}: {json.dumps(out[name], ensure_ascii=False)}")
    if args.json:
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps(out, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
