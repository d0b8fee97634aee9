"""`make demo`: answer one question end to end and show how the answer was reached.

Prints the retrieved articles with per-channel ranks and scores (what the LocalRetriever did).
"""
from __future__ import annotations

import argparse
import logging
import sys

from .config import get_settings
from .index import IndexError_
from .models import ModelNotAvailableError
from .retriever import LocalRetriever, QueryError, RetrievalResult

CHANNELS = ("lookup", "vector", "bm25", "gram")


def format_retrieval(result: RetrievalResult) -> str:
    lines = [f"问题: {result.query}",
             f"类型: {result.query_type}   匹配器: {result.matcher}   "
             f"最高向量相似度: {result.max_vector_score:.3f}" if result.max_vector_score is not None else "",
             f"{'#':>2} {'条文':12} {'得分':>8} " + " ".join(f"{c + ' 名次/分数':>18}" for c in CHANNELS)]
    for i, a in enumerate(result.articles, start=1):
        cells = []
        for c in CHANNELS:
            ch = a.channels.get(c)
            cells.append(f"{int(ch['rank']):>4} / {ch['score']:<11.4f}" if ch else f"{'-':>18}")
        lines.append(f"{i:>2} {a.article_cn:12} {a.score:>8.4f} " + " ".join(f"{c:>18}" for c in cells))
        lines.append(f"   {a.text[:90]}{'…' if len(a.text) > 90 else ''}")
    timing = ", ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items())
    lines.append(f"耗时: {timing}")
    return "\n".join(line for line in lines if line)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("question", nargs="?", default="公司把我的手机号卖给别人合法吗？")
    p.add_argument("--matcher", default="ensemble", choices=["ensemble", "hybrid", "bm25", "vector", "gram"])
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        retriever = LocalRetriever.from_settings(get_settings())
        result = retriever.retrieve(args.question, matcher=args.matcher)
    except (QueryError, IndexError_, ModelNotAvailableError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(format_retrieval(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
