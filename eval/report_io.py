"""What every probe of this folder does with its result: print it, and write it to `--json` when given."""
from __future__ import annotations

import json
from pathlib import Path


def emit(result: dict, path: Path | None) -> None:
    text = json.dumps(result, ensure_ascii=False, indent=1)
    print(text)
    if path:
        path.write_text(text + "\n", encoding="utf-8")
