"""Article references in text — the one place that knows how people and models write 第X条.

Used by query analysis (exact lookups), the corpus parsers, follow-up retrieval (依照本法第X条) and the citation
check. A reference carries its span, so that the citation check can redact exactly one occurrence and never a
different law's article that happens to have the same number.

Law names: anything in 《》, or a run of CJK characters ending in 法/法典/条例/规定/办法/解释 once the verbs that
introduce a citation (依据、根据、按照 …) are stripped. Anaphoric names (本法、该法、相关规定 …) mean "the law being
read", so they carry no law name.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .aliases import alias_key, latin_alias_pattern
from .numerals import CHINESE_NUMERAL_CHARS, cn_to_int, int_to_cn

NUMBER = rf"[0-9]{{1,4}}|[{CHINESE_NUMERAL_CHARS}]{{1,8}}"
_PART = rf"(?:第[ \t]*(?:{NUMBER})|[0-9]{{1,3}})"  # 第一款, 第2项, 2项 (一项 alone is a quantifier: 一项措施)
# 第二十八条 / 第28条 / 第 28 条 / 个人信息保护法第29条 / 《民法典》第一千零三十四条 / 二十八条 / 28条; a paragraph and
# item after it (第十三条第一款第二项) belong to the reference, so that a lookup of one is a lookup of its article
_LATIN_LAW = latin_alias_pattern()  # 「PIPL第47条」: no 法 ends the name
_REF_RE = re.compile(
    rf"(?:《(?P<titled>[^《》]{{1,40}})》|(?P<law>(?:(?![第条])[\u4e00-\u9fff]){{1,30}}?(?:法典|法|条例|规定|办法|解释)|"
    rf"{_LATIN_LAW}))?"
    rf"[ \t]*(?P<di>第)?[ \t]*(?P<num>{NUMBER})[ \t]*条(?:之[一二三四五六七八九十]+)?"
    rf"(?:[ \t]*{_PART}[ \t]*款)?(?:[ \t]*(?P<item>{_PART})[ \t]*项)?"
)
# Words that introduce a citation, not part of a law's name ("依据该法第十条", "根据相关规定第十条").
_LEADING = re.compile(r"^(?:依据|根据|按照|依照|参照|对照|违反|适用|符合|见|按|依|据|即|及|和|与|或|、|如|在|由|是|的)+")
_ANAPHORA = re.compile(r"^(?:本|该|此|上述|前述|相关|有关|其他|其它|下列|以上|本部|这部|那部)(?:法律|法规|法典|法|条例|规定|办法|解释)$")


@dataclass(frozen=True)
class ArticleRef:
    article: int
    law: str | None = None  # as written, without 《》; None when not named or anaphoric (本法、该法 …)
    text: str = ""  # the matched span, e.g. 《民法典》第一千零三十四条
    start: int = 0  # span of `text` in the source
    end: int = 0
    number_start: int = 0  # where 第X条 begins: redacting it keeps the law name readable
    item: int | None = None  # 第二项 of 第十三条第一款第二项


def _law_name(m: re.Match) -> str | None:
    if m["titled"]:
        return m["titled"].strip() or None
    if not m["law"]:
        return None
    name = alias_key(_LEADING.sub("", m["law"]))
    if len(name) < 2 or _ANAPHORA.match(name) or name.endswith("本法"):
        return None
    return name


def iter_article_refs(text: str) -> Iterator[ArticleRef]:
    """Every article reference in `text`, in order, duplicates included.

    A bare Chinese numeral without 第 counts only when it has a unit (二十八条), so 一条短信 is not article 1.
    """
    for m in _REF_RE.finditer(text):
        num = m["num"]
        if not m["di"] and not num.isdigit() and not re.search("[十百千]", num):
            continue
        try:
            n = cn_to_int(num)
        except ValueError:
            continue
        if n <= 0:
            continue
        number_start = m.start("di") if m["di"] else m.start("num")
        yield ArticleRef(n, _law_name(m), m.group(0).strip(), m.start(), m.end(), number_start, _item(m["item"]))


def _item(text: str | None) -> int | None:
    try:
        return cn_to_int(text.lstrip("第 \t")) if text else None
    except ValueError:
        return None


def find_article_refs(text: str) -> list[ArticleRef]:
    """Distinct (law, article) references in order of first appearance."""
    seen: set[tuple[str | None, int]] = set()
    refs = []
    for ref in iter_article_refs(text):
        if (ref.law, ref.article) not in seen:
            seen.add((ref.law, ref.article))
            refs.append(ref)
    return refs


# 「Article 47」 / 「PIPL article 47」 / 「art. 47 of the PIPL」 in English: read only where a question asks for nothing
# but articles (`retrieval.analysis`); an English question about a case cannot be concluded by the Chinese label
# rules, so it is not read as citing one
_EN_REF_RE = re.compile(rf"(?:(?P<law>{_LATIN_LAW})(?:'s)?\s*)?(?i:\b(?:article|art\.)\s*(?P<num>[0-9]{{1,4}})\b)"
                        rf"(?:\s+(?i:of\s+(?:the\s+)?)(?P<of>{_LATIN_LAW}))?")


def english_refs(text: str) -> list[ArticleRef]:
    return [ArticleRef(int(m["num"]), alias_key(m["law"] or m["of"]) if m["law"] or m["of"] else None, m.group(0),
                       m.start(), m.end(), m.start())
            for m in _EN_REF_RE.finditer(text) if int(m["num"]) > 0]


def strip_english_refs(text: str) -> str:
    return _EN_REF_RE.sub("", text)


def strip_refs(text: str) -> str:
    """The text without its article references (what is left of "第28条是什么内容" is "是什么内容")."""
    return _REF_RE.sub("", text)


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def law_matches(named: str, law: str) -> bool:
    """Does the law named in a text ("个保法", "请给出个人信息保护法") denote `law`?

    The name as captured may carry leading words of the sentence, so some suffix of it (3+ characters, or the
    whole name) must be an in-order abbreviation of the law's title: 个保法 ⊑ 个人信息保护法, while 刑法 or
    民法典 do not denote the PIPL.
    """
    law = law.removeprefix("中华人民共和国")
    named = named.removeprefix("中华人民共和国")
    for start in range(len(named)):
        suffix = named[start:]
        if (len(suffix) >= 3 or start == 0) and _is_subsequence(suffix, law):
            return True
    return False


# How people write several articles at once: 「第47、48条」, 「第47至49条」, 「第四十七条到第四十九条」. Written out one by one
# (「第47条、第48条」), every reader of references sees each; a range longer than this is read as its two ends.
MAX_RANGE = 10
# 「第４７条」, and 條 / 麼 as Traditional Chinese writes them (「第四十七條是什麼」)
_READ_AS = str.maketrans("０１２３４５６７８９條麼", "0123456789条么")
_SEPARATOR = r"[ \t]*(?:、|,|，|和|及|与)[ \t]*第?[ \t]*"
_RANGE = re.compile(rf"第[ \t]*(?P<a>{NUMBER})[ \t]*条?[ \t]*(?:至|到|-|~|～|—|－)[ \t]*第?[ \t]*(?P<b>{NUMBER})[ \t]*条")
_LIST = re.compile(rf"第[ \t]*(?P<numbers>(?:{NUMBER})(?:{_SEPARATOR}(?:{NUMBER}))+)[ \t]*条")


def _written(n: int, like: str) -> str:
    return f"第{n}条" if like.isdigit() else f"第{int_to_cn(n)}条"


def _range(m: re.Match) -> str:
    try:
        a, b = cn_to_int(m["a"]), cn_to_int(m["b"])
    except ValueError:
        return m.group(0)
    if not 0 < a < b:
        return m.group(0)
    numbers = range(a, b + 1) if b - a < MAX_RANGE else (a, b)
    return "、".join(_written(n, m["a"]) for n in numbers)


def spell_out_refs(text: str) -> str:
    """The text with full-width digits, 條 and 麼 read as ASCII digits, 条 and 么, and lists and ranges of articles
    written one by one."""
    text = _RANGE.sub(_range, text.translate(_READ_AS))
    return _LIST.sub(lambda m: "、".join(f"第{n}条" for n in re.split(_SEPARATOR, m["numbers"])), text)
