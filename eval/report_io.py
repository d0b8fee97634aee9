"""What the probes of this folder share: print the result and write it to `--json`; a collect / report command line."""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def emit(result: dict, path: Path | None) -> None:
    text = json.dumps(result, ensure_ascii=False, indent=1)
    print(text)
    if path:
        path.write_text(text + "\n", encoding="utf-8")


def probe_main(doc: str, out: Path, collect, report) -> int:
    """`collect` (the slow part, resumable into `--out`) or `report` (from `--out`, printed and written to `--json`)."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("command", choices=("collect", "report"))
    p.add_argument("--out", type=Path, default=out)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    if args.command == "collect":
        collect(args.out)
    else:
        emit(report(args.out), args.json)
    return 0
