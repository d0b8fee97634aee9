#!/usr/bin/env python3
"""Remove a built index: exactly the files its manifest lists (nothing else in the data dir), and the Milvus server
collection it created (reached with MILVUS_URI / MILVUS_TOKEN when set, else the manifest's URI)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentic_rag.config import get_settings
from agentic_rag.knowledge.index import IndexError_, clean_index
from agentic_rag.knowledge.stores import StoreOptions


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    settings = get_settings()
    p.add_argument("--data-dir", type=Path, default=settings.data_dir)
    p.add_argument("--dry-run", action="store_true", help="list what would be removed, remove nothing")
    args = p.parse_args(argv)
    try:
        removed = clean_index(args.data_dir, dry_run=args.dry_run, store_options=StoreOptions.from_settings(settings))
    except IndexError_ as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not removed:
        print(f"no index in {args.data_dir}: nothing to remove")
    for path in removed:
        verb = ("would drop " if args.dry_run else "dropped ") if isinstance(path, str) else (
            "would remove " if args.dry_run else "removed ")
        print(verb + str(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
