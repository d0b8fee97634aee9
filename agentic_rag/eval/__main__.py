"""Command line of the evaluations; the last line printed is one JSON object (machine-readable)."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from ..config import get_settings
from ..index import IndexError_
from ..models import ModelNotAvailableError


def _retrieval(args: argparse.Namespace) -> dict:
    from ..retriever import LocalRetriever
    from .retrieval import evaluate, format_table, load_dataset, plot

    settings = get_settings()
    if args.data_dir:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    retriever = LocalRetriever.from_settings(settings)
    result = evaluate(retriever, load_dataset(args.dataset), args.matchers, depth=args.depth)
    result["dataset"] = str(args.dataset)
    result["index"] = {"doc_count": retriever.index.manifest.doc_count,
                       "embedder": retriever.index.manifest.embedder_id}
    print(format_table(result), file=sys.stderr)
    if args.png:
        plot(result, args.png)
        print(f"chart: {args.png}", file=sys.stderr)
    return result


def main(argv: list[str] | None = None) -> int:
    from .retrieval import DEFAULT_MATCHERS, MATCHERS

    p = argparse.ArgumentParser(prog="python -m agentic_rag.eval", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("retrieval", help="recall@k / MRR@10 / nDCG@10 per matcher on the current index")
    r.add_argument("--dataset", type=Path, required=True)
    r.add_argument("--matchers", nargs="+", default=list(DEFAULT_MATCHERS), choices=list(MATCHERS))
    r.add_argument("--depth", type=int, default=10, help="ranking depth evaluated (default 10)")
    r.add_argument("--data-dir", type=Path, help="index to evaluate (default: DATA_DIR)")
    r.add_argument("--json", type=Path, help="also write the JSON result here")
    r.add_argument("--png", type=Path, help="write a bar chart here")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        result = _retrieval(args)
    except (IndexError_, ModelNotAvailableError, ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    text = json.dumps(result, ensure_ascii=False)
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
