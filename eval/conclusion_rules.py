#!/usr/bin/env python3
"""The conclusion's label decided in code (agentic_rag/stages/answer/conclusion.py), measured alone: each polar
question of eval/answers_eval.jsonl is given its gold (governing) articles, the answer stage's own clause choice
picks the deciding clause (lexical, as without an embedder), and `decide` gives the label; compared with the
lawyer's reference label. No model, no index: seconds.

Hard-wrong = the opposite polarity (可以 for 不可以, 需要 for 不需要 …); 视情况 for a polar reference is counted as a miss
but not as hard-wrong (an honest "it depends" is not a wrong conclusion). Rules were written looking at the dev
half only; report the test half.

    .venv/bin/python eval/conclusion_rules.py [--embedder] [--json eval/results/conclusion_rules.json]
    .venv/bin/python eval/conclusion_rules.py --dataset eval/answers_fresh.jsonl    # the held-out set
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_rag.knowledge.corpus import load_law_text, parse_lawrefbook  # noqa: E402
from agentic_rag.legal.vocabulary import common_words  # noqa: E402
from agentic_rag.retrieval.types import Article  # noqa: E402
from agentic_rag.stages.answer.conclusion import OPPOSITE, POLARITY_LABELS, decide  # noqa: E402
from agentic_rag.stages.answer.deciding import embedder_similarity, rank_clauses  # noqa: E402

PIPL_LAW = "中华人民共和国个人信息保护法"
LAWREFBOOK = ROOT.parent / "shared" / "data" / "lawrefbook" / "lawrefbook_articles.jsonl.gz"


def articles_by_key(rows: list[dict]) -> dict[tuple[str, int], Article]:
    """(law, article number) → the article's text, for every gold article of `rows`."""
    out = {(PIPL_LAW, d.article): d for d in load_law_text(ROOT / "chinese_law.txt")}
    laws = {g["law"] for r in rows if r["kb"] == "multilaw" for g in r["gold"]}
    if laws:
        out.update({(d.law, d.article): d for d in parse_lawrefbook(LAWREFBOOK, laws=laws).documents})
    return {k: Article(id=d.id, title=d.title, law=d.law, article=d.article, article_cn=d.article_cn, text=d.text)
            for k, d in out.items()}


def gold_keys(row: dict) -> list[tuple[str, int]]:
    return [(PIPL_LAW, g) if isinstance(g, int) else (g["law"], g["article"]) for g in row["gold"]]


def clause_embed():
    """The answer stage's clause similarity (stages/answer/agent.py `_embedder`) with the configured embedder."""
    from agentic_rag.config import get_settings
    from agentic_rag.retrieval.embedder import embedder_from_settings

    return embedder_similarity(embedder_from_settings(get_settings()), {})


def decided(rows: list[dict], embed=None):
    """Each row with its gold articles, the deciding clause the answer stage would choose among them, and the rules'
    decision on it."""
    index = articles_by_key(rows)
    laws = {a.law for a in index.values()}
    common = {law: common_words([a.text for a in index.values() if a.law == law]) for law in laws}
    for row in rows:
        gold = [index[k] for k in gold_keys(row) if k in index]
        best = next(iter(rank_clauses(row["query"], gold, embed)), None)
        yield row, gold, best, decide(row["query"], best.clause, common[best.article.law]) if best else \
            decide(row["query"], None)


def evaluate(rows: list[dict], embed=None) -> dict:
    results = []
    for row, _, _, decision in decided(rows, embed):
        ref = row["conclusion"]["label"]
        results.append({"id": row["id"], "type": row["type"], "ref": ref, "label": decision.label,
                        "rule": decision.rule, "correct": decision.label == ref,
                        "hard_wrong": OPPOSITE.get(ref) == decision.label})
    by_type = {}
    for t in sorted({r["type"] for r in results}):
        rs = [r for r in results if r["type"] == t]
        by_type[t] = {"n": len(rs), "accuracy": round(sum(r["correct"] for r in rs) / len(rs), 3),
                      "hard_wrong": sum(r["hard_wrong"] for r in rs)}
    n = len(results)
    return {"n": n, "accuracy": round(sum(r["correct"] for r in results) / n, 3) if n else None,
            "hard_wrong": sum(r["hard_wrong"] for r in results),
            "labels": dict(Counter(r["label"] for r in results)), "by_type": by_type, "questions": results}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", type=Path, default=ROOT / "eval" / "answers_eval.jsonl")
    p.add_argument("--json", type=Path)
    p.add_argument("--embedder", action="store_true", help="rank clauses by the shipped embedder's cosine")
    args = p.parse_args()
    embed = clause_embed() if args.embedder else None
    rows = [json.loads(line) for line in args.dataset.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r["conclusion"]["label"] in POLARITY_LABELS and r["gold"]]
    splits = [s for s in ("dev", "test", "fresh") if any(r["split"] == s for r in rows)]
    report = {split: evaluate([r for r in rows if r["split"] == split], embed) for split in splits}
    report["clause_choice"] = "embedder" if args.embedder else "lexical"
    for split, rep in ((k, report[k]) for k in splits):
        print(f"{split}: n={rep['n']} accuracy={rep['accuracy']} hard_wrong={rep['hard_wrong']} "
              + " ".join(f"{t}={v['accuracy']}({v['n']})" for t, v in rep["by_type"].items()))
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
