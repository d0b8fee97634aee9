"""Retrieval evaluation of the current index on a labelled question set.

Dataset format (JSONL): {"id": str, "query": str, "gold": [...], "type": str}. Gold items are
``{"law": <full title as in the corpus>, "article": int}`` (several laws: matched as (law, article) pairs),
article numbers
(int, matched against each hit's article number — right for a one-law index such as the PIPL) or document ids
(str, ``path#第X条`` — right for multi-law corpora such as LawRefBook). Questions with empty gold (out of scope,
chit-chat) are excluded from the metrics.
"""
from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from pathlib import Path

from ..retrieval.channels import MATCHERS as CHANNEL_MATCHERS
from ..retrieval.retriever import LocalRetriever
from ..retrieval.types import Article
from .metrics import mean_metrics, score_ranking

log = logging.getLogger(__name__)

# The runtime's matchers (`channels.MATCHERS`, the one registry), each also with the second stage: "<matcher>_rerank".
RERANKED = "_rerank"
EVAL_MATCHERS = (*CHANNEL_MATCHERS, *(m + RERANKED for m in CHANNEL_MATCHERS))
DEFAULT_MATCHERS = ("bm25", "vector", "hybrid", "hybrid" + RERANKED, "ensemble", "gram")


def matcher_of(name: str) -> tuple[str, bool]:
    """(runtime matcher, rerank) of an eval matcher name."""
    base = name.removesuffix(RERANKED)
    if base not in CHANNEL_MATCHERS:
        raise ValueError(f"unknown matcher {name!r}; one of {', '.join(EVAL_MATCHERS)}")
    return base, name != base


def load_dataset(path: Path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                row["query"], row["gold"] = str(row["query"]), list(row["gold"])
                row.setdefault("id", str(line_no))
                row.setdefault("type", "unknown")
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}: line {line_no} is not an eval row ({e})") from e
            rows.append(row)
    return rows


def gold_keys(gold: list) -> set:
    """What a gold list names: (law, article) pairs, article numbers, or document ids."""
    return {(g["law"], g["article"]) if isinstance(g, dict) else g for g in gold}


def _key(article: Article, gold: list) -> object:
    if gold and isinstance(gold[0], dict):
        return article.law, article.article
    return article.article if gold and isinstance(gold[0], int) else article.id


def evaluate(retriever: LocalRetriever, rows: list[dict], matchers: list[str], depth: int = 10) -> dict:
    """Metrics per matcher overall and per question type, plus latency."""
    scored = [r for r in rows if r["gold"]]
    result: dict = {"n": len(scored), "n_total": len(rows), "matchers": {}, "by_type": {},
                    "reranker": getattr(retriever.reranker, "name", None)}
    for name in matchers:
        matcher, rerank = matcher_of(name)
        per_row, by_type, latencies = [], defaultdict(list), []
        for row in scored:
            t0 = time.perf_counter()
            res = retriever.retrieve(row["query"], matcher=matcher, top_k_=depth, rerank=rerank)
            latencies.append((time.perf_counter() - t0) * 1000)
            ranked = [_key(a, row["gold"]) for a in res.articles]
            m = score_ranking(ranked, gold_keys(row["gold"]))
            per_row.append(m)
            by_type[row["type"]].append(m)
        result["matchers"][name] = mean_metrics(per_row)
        latencies.sort()
        result["matchers"][name]["p50_ms"] = round(latencies[len(latencies) // 2], 1) if latencies else None
        result["by_type"][name] = {t: {**mean_metrics(v), "n": len(v)} for t, v in sorted(by_type.items())}
    return result


def format_table(result: dict) -> str:
    cols = ["recall@1", "recall@3", "recall@5", "recall@10", "mrr@10", "ndcg@10", "p50_ms"]
    lines = [f"{'matcher':15}" + "".join(f"{c:>11}" for c in cols)]
    for name, m in result["matchers"].items():
        lines.append(f"{name:15}" + "".join(f"{m.get(c, float('nan')):>11.3f}" if m.get(c) is not None
                                             else f"{'-':>11}" for c in cols))
    lines.append("")
    lines.append("recall@5 by question type:")
    types = sorted({t for bt in result["by_type"].values() for t in bt})
    lines.append(f"{'matcher':15}" + "".join(f"{t:>11}" for t in types))
    for name, bt in result["by_type"].items():
        lines.append(f"{name:15}" + "".join(f"{bt[t]['recall@5']:>11.3f}" if t in bt else f"{'-':>11}" for t in types))
    return "\n".join(lines)


def plot(result: dict, out_png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = ["recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10"]
    names = list(result["matchers"])
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        ax.bar([j + i * width for j in range(len(metrics))], [result["matchers"][name][m] for m in metrics],
               width, label=name)
    ax.set_xticks([j + width * (len(names) - 1) / 2 for j in range(len(metrics))], metrics)
    ax.set_ylim(0, 1)
    ax.set_title(f"retrieval, {result['n']} questions")
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
