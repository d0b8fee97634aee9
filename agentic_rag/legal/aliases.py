"""Short names people use for laws (个保法, 消法, PIPL), one registry: `resources/law_aliases.json`.

The Latin-letter ones (PIPL, DSL, CSL) are written next to 第X条 with no 法 to end them, so the reference parser
(`refs`) and the law-name finder (`laws`) both read them from here, in any case.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def aliases() -> dict[str, str]:
    text = (resources.files("agentic_rag") / "resources" / "law_aliases.json").read_text(encoding="utf-8")
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def latin_alias_pattern() -> str:
    """A regex matching a Latin-letter alias as a whole word, in any case (「PIPL第47条」, 「pipl 第47条」)."""
    names = sorted((k for k in aliases() if k.isascii()), key=len, reverse=True)
    return r"(?<![A-Za-z])(?i:" + "|".join(map(re.escape, names)) + r")(?![A-Za-z])"


def alias_key(name: str) -> str:
    """The registry's spelling of a name as written: Latin aliases are kept upper-case."""
    return name.upper() if name.isascii() else name
