"""Cite, don't invent: every article an answer cites must be one that was retrieved.

The check runs in code on the final answer. Article numbers of the knowledge-base law are valid when they were
retrieved; a number that only appears as a cross-reference inside a retrieved article's own text (第四十五条 says
"有本法第十八条第一款…的除外") is accepted as quoted text. Citations of other laws (《民法典》第一千零三十四条) are
valid only when the web results the answer was given contain them. Anything else is flagged and replaced.
When the knowledge base holds several laws (kb_law None) a named law cannot be told apart from the collection by
name, so only the article number is checked: weaker, and said so in the README.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from .numerals import article_cn, cn_to_int
from .query_analysis import find_article_refs, law_matches
from .prompts import CITATION_FLAG

_ART = re.compile(r"第\s*([0-9]{1,4}|[零一二三四五六七八九十百千两〇]{1,8})\s*条")


@dataclass
class CitationCheck:
    cited: list[int] = field(default_factory=list)  # knowledge-base articles the answer cites
    valid: list[int] = field(default_factory=list)  # cited and retrieved
    quoted: list[int] = field(default_factory=list)  # only named inside a retrieved article's text: kept as quote
    invalid: list[int] = field(default_factory=list)
    external: list[str] = field(default_factory=list)  # other laws' articles, e.g. "民法典第1034条"
    external_invalid: list[str] = field(default_factory=list)
    external_spans: list[str] = field(default_factory=list)  # how the invalid external ones were written

    @property
    def ok(self) -> bool:
        return not self.invalid and not self.external_invalid

    def to_dict(self) -> dict:
        return asdict(self)


def check_citations(answer: str, kb_law: str | None, retrieved: list[int], retrieved_texts: list[str] = (),
                    web_text: str = "") -> CitationCheck:
    cross_refs = {r.article for t in retrieved_texts for r in find_article_refs(t) if r.law is None}
    check = CitationCheck()
    for ref in find_article_refs(answer):
        if ref.law and kb_law and not law_matches(ref.law, kb_law):
            label = f"{ref.law}第{ref.article}条"
            if label in check.external or label in check.external_invalid:
                continue
            in_web = ref.law in web_text and (article_cn(ref.article) in web_text or f"第{ref.article}条" in web_text)
            (check.external if in_web else check.external_invalid).append(label)
            if not in_web:
                check.external_spans.append(ref.text)
            continue
        if ref.article in check.cited:
            continue
        check.cited.append(ref.article)
        if ref.article in retrieved:
            check.valid.append(ref.article)
        elif ref.article in cross_refs:
            check.quoted.append(ref.article)
        else:
            check.invalid.append(ref.article)
    return check


def redact_invalid(answer: str, check: CitationCheck) -> str:
    """Replace unverified article citations with a visible marker and add a note saying what was removed."""
    if check.ok:
        return answer
    bad_numbers = set(check.invalid)

    def repl(m: re.Match) -> str:
        try:
            n = cn_to_int(m.group(1))
        except ValueError:
            return m.group(0)
        return "〔未核实的条文〕" if n in bad_numbers else m.group(0)

    text = _ART.sub(repl, answer) if bad_numbers else answer
    for span in check.external_spans:
        text = text.replace(span, "〔未核实的条文〕")
    bad = "、".join([article_cn(n) for n in check.invalid] + check.external_invalid)
    return text + CITATION_FLAG.format(bad=bad)
