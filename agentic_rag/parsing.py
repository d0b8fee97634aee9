"""Lenient parsing of LLM output that was asked to be JSON.

Small local models wrap JSON in code fences, add prose before or after it, use full-width punctuation or leave
trailing commas. We take the first balanced {...} object that parses after light repairs, else None; callers
then fall back to a safe default and record why.
"""
from __future__ import annotations

import json
import re

_FENCE = re.compile(r"```(?:json)?", re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _candidates(text: str):
    """Balanced {...} substrings, outermost first, in order of appearance."""
    depth, start, in_str, esc = 0, None, False, False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0 and start is not None:
                yield text[start:i + 1]


def parse_json_object(text: str | None) -> dict | None:
    if not text:
        return None
    cleaned = _FENCE.sub("", text).replace("“", '"').replace("”", '"').replace("：", ":").replace("，", ",")
    for raw in (text, cleaned):
        for cand in _candidates(raw):
            for attempt in (cand, _TRAILING_COMMA.sub(r"\1", cand)):
                try:
                    value = json.loads(attempt)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    return value
    return None


def as_score(value, low: float = 0.0, high: float = 10.0) -> float | None:
    """A number in [low, high] from 8, "8", "8/10", "8分"; None when there is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        m = re.search(r"-?\d+(?:\.\d+)?", str(value or ""))
        if not m:
            return None
        number = float(m.group())
    return min(max(number, low), high)


def as_str_list(value, limit: int) -> list[str]:
    if isinstance(value, str):
        value = re.split(r"[，,、;；\n]+", value)
    if not isinstance(value, list):
        return []
    return [str(v).strip() for v in value if str(v).strip()][:limit]
