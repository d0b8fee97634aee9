#!/usr/bin/env python3
"""Build `agentic_rag/resources/law_catalogue.jsonl`: one entry per national law (the 法律 categories of the
national laws database, not regulations or interpretations): its title and its first articles, which state what
the law governs ("为了规范劳动合同…制定本法"). The router embeds these at index time and asks whether a question
is closer to another law than to the knowledge base's own (statutes are not copyrighted: PRC Copyright Law art. 5).

    .venv/bin/python eval/build_law_catalogue.py [--corpus ../shared/data/lawrefbook/lawrefbook_articles.jsonl.gz]
"""
from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAW_CATEGORIES = ("行政法", "经济法", "宪法相关法", "民法商法", "社会法", "诉讼与非诉讼程序法", "民法典", "刑法", "宪法")
FIRST_ARTICLES = 3
MAX_CHARS = 300


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/lawrefbook/lawrefbook_articles.jsonl.gz")
    p.add_argument("--out", type=Path, default=ROOT / "agentic_rag/resources/law_catalogue.jsonl")
    args = p.parse_args()
    texts: dict[str, list[str]] = {}
    with gzip.open(args.corpus, "rt", encoding="utf-8") as f:
        for row in map(json.loads, f):
            if row["category"].split("/")[0] not in LAW_CATEGORIES:
                continue
            parts = texts.setdefault(row["law"], [])
            if len(parts) < FIRST_ARTICLES:
                parts.append(row["text"])
    with open(args.out, "w", encoding="utf-8") as out:
        for law in sorted(texts):
            text = f"《{law}》" + "".join(texts[law])
            out.write(json.dumps({"law": law, "text": text[:MAX_CHARS]}, ensure_ascii=False) + "\n")
    print(f"{len(texts)} laws -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
