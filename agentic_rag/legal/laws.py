"""Law names as people write them (劳动合同法, 消法, 个保法, 《中华人民共和国民法典》), resolved to full titles.

A name may come with words of the sentence in front of it ("请给出个人信息保护法"), so its suffixes are tried,
longest first: a knowledge-base law's short title, then a known alias, then any national law's title (which makes
it another law: 劳动法 is not 劳动合同法). Only when none of these match, an in-order abbreviation of exactly one
knowledge-base law counts (个信法 ⊑ 个人信息保护法).
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from .aliases import alias_key, aliases, latin_alias_pattern
from .refs import law_matches

PREFIX = "中华人民共和国"


def short(title: str) -> str:
    return title.strip().strip("《》").removeprefix(PREFIX)


@lru_cache(maxsize=1)
def national_titles() -> dict[str, str]:
    """Short title → full title of every national law and administrative regulation."""
    lines = (resources.files("agentic_rag") / "resources" / "national_laws.txt").read_text(encoding="utf-8")
    return {short(t): t for t in lines.splitlines() if t and not t.startswith("#")}


def national_title(named: str) -> str | None:
    """The full title of the national law a name denotes (exact short title or alias), None when unknown."""
    name = alias_key(short(named))
    for start in range(len(name) - 1):
        suffix = name[start:]
        if suffix in national_titles():
            return national_titles()[suffix]
        if suffix in aliases():
            return aliases()[suffix]
    return None


def resolve(named: str, laws: list[str]) -> str | None:
    """The law of `laws` (full titles) that `named` denotes, or None when it denotes another law or none."""
    by_short = {short(law): law for law in laws}
    name = alias_key(short(named))
    for start in range(len(name) - 1):
        suffix = name[start:]
        if suffix in by_short:
            return by_short[suffix]
        full = aliases().get(suffix) or national_titles().get(suffix)
        if full is not None:
            return full if full in laws else None
    matches = [law for law in laws if law_matches(named, law)]
    return matches[0] if len(matches) == 1 else None


# A law's name as people write it: in book-title marks, or words ending in 法典 / 法 / 条例 (the span may start
# with other words of the sentence), or a Latin alias (PIPL).
LAW_NAME = re.compile(rf"《([^《》]{{2,40}})》|([\u4e00-\u9fff]{{1,30}}?(?:法典|法|条例))|({latin_alias_pattern()})")


def laws_named(text: str, laws: list[str]) -> list[str]:
    """The laws of `laws` that `text` names anywhere (劳动合同法里…, 按消法…, 《民法典》…), in order."""
    found: list[str] = []
    for m in LAW_NAME.finditer(text):
        law = resolve(m.group(1) or m.group(2) or m.group(3), laws)
        if law and law not in found:
            found.append(law)
    return found
