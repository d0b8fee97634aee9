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


_NUMBER = r"-?\d+(?:\.\d+)?"
_OUT_OF = re.compile(rf"({_NUMBER})\s*(?:/|／|分?\s*满分|of)\s*(\d+)")
_GIVEN = re.compile(rf"(?:给|得|打|评|为|是)\s*({_NUMBER})\s*分")


def as_score(value, low: float = 0.0, high: float = 10.0) -> float | None:
    """A score in [low, high] from 8, 8.5, "8", "8分", "8/10", "给3分"; None when unreadable.

    Never clamps: 50, -5 or "85/100" mean the grader used another scale (or none), so the grade is unreadable
    rather than a pass. Text with several candidate numbers ("满分10分，给3分") takes the given score.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        number = _score_in_text(str(value or ""), high)
    if number is None or not low <= number <= high:  # NaN fails the comparison too
        return None
    return number


def _score_in_text(text: str, high: float) -> float | None:
    out_of = _OUT_OF.search(text)
    if out_of:
        return float(out_of.group(1)) if float(out_of.group(2)) == high else None
    given = _GIVEN.findall(text)
    if len(given) == 1:
        return float(given[0])
    numbers = re.findall(_NUMBER, text)
    return float(numbers[0]) if len(numbers) == 1 else None


def as_str_list(value, limit: int) -> list[str]:
    if isinstance(value, str):
        value = re.split(r"[，,、;；\n]+", value)
    if not isinstance(value, list):
        return []
    return [str(v).strip() for v in value if str(v).strip()][:limit]
