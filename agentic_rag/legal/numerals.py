"""Chinese numerals as statutes write them (第二十八条, 第一百零五条) and back."""
from __future__ import annotations

import re

_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN = "零一二三四五六七八九"
CHINESE_NUMERAL_CHARS = "".join(_DIGITS) + "".join(_UNITS)
# A quantity as statutes and answers write it: 3倍, 三倍, 百分之五, 30日, 三十日, 2个月, 500元, 十四周岁, 四分之三, 过半数 …
# (group 1: the number before its unit; a percentage, a fraction or a majority is the whole match). Not an ordinal:
# 第六项 names an item, it counts nothing.
QUANTITY = re.compile(r"(?<![第\d一二两三四五六七八九十百千零〇])"
                      r"(\d+(?:\.\d+)?|[一二两三四五六七八九十百千零〇]+)(?=\s*(倍|日|天|个月|月|年|元|万元|周岁|岁|小时|个工作日|%|项|次))"
                      r"|百分之[一二三四五六七八九十百零〇\d]+|[一二三四五六七八九十]+分之[一二三四五六七八九十]+|过半数")


def cn_to_int(text: str) -> int:
    """Parse a Chinese (or ASCII) numeral below 10000: '二十八' → 28, '十' → 10, '一百零五' → 105, '28' → 28.

    Raises ValueError on anything else, so a malformed article number is never silently read as 0.
    """
    text = text.strip()
    if text.isdigit():
        return int(text)
    if not text or any(ch not in _DIGITS and ch not in _UNITS for ch in text):
        raise ValueError(f"not a Chinese numeral: {text!r}")
    total, digit = 0, None
    for ch in text:
        if ch in _DIGITS:
            if digit is not None and digit != 0 and _DIGITS[ch] != 0:
                raise ValueError(f"not a Chinese numeral: {text!r}")
            digit = _DIGITS[ch]
        else:
            unit = _UNITS[ch]
            total += (1 if digit is None else digit) * unit
            digit = None
    return total + (digit or 0)


def int_to_cn(n: int) -> str:
    """Write 1 ≤ n < 10000 the way statutes number articles: 10 → 十, 28 → 二十八, 105 → 一百零五."""
    if not 0 < n < 10000:
        raise ValueError(f"article numbers are 1..9999, got {n}")
    parts: list[str] = []
    zero_pending = False
    for unit_value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d = (n // unit_value) % 10
        if d == 0:
            zero_pending = bool(parts)
            continue
        if zero_pending:
            parts.append("零")
            zero_pending = False
        if not (unit == "十" and d == 1 and not parts):
            parts.append(_CN[d])
        parts.append(unit)
    return "".join(parts)


def article_cn(n: int) -> str:
    return f"第{int_to_cn(n)}条"
