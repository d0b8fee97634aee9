"""Cite, don't invent: every article an answer cites must be one that was retrieved — checked in code.

Each reference in the answer (with its span) is one of:

* a knowledge-base article — named by a knowledge-base law, by 本法/该法, or by number alone. Valid when that
  (law, article) was given to the answer; kept as a quote when it only appears as a cross-reference inside a
  given article's own text; else invalid, and its 第X条 is replaced by a visible marker — also when it was
  retrieved but withheld from the answer as irrelevant (recorded as such);
* another law's article (《民法典》第一千零三十四条) — shown as 网络来源（未核实） when the web results the
  answer was given contain it, else replaced. Web text is never evidence of a knowledge-base article.

Replacement works on spans, so an invalid 第八十条 never touches a web-sourced 《民法典》第八十条 elsewhere.
A number alone in a knowledge base of several laws is valid when a given article of some law has that number.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...legal.laws import resolve
from ...legal.numerals import article_cn
from ...legal.refs import ArticleRef, find_article_refs, iter_article_refs
from ...retrieval.types import Article
from ...state import Citations

UNVERIFIED = "〔未核实的条文〕"
WEB_SOURCED = "（网络来源，未核实）"
# A sentence that said nothing but "according to <removed citation>" is dropped whole: the note below tells the reader
# what was removed, and a bare "根据〔未核实的条文〕" line only reads like a broken answer.
_SENTENCE = re.compile(r"(?<=[。！？；!?;\n])")
_FILLER = re.compile(r"《[^》\n]{1,40}》|根据|依据|依照|按照|参照|参见|另见|详见|以及|及|和|与|或|相关|上述|本法|该法|的|规定|"
                     r"[\s、，,：:（）()\-*>#。！？；!?;]|\d+[.、]")
NOTE = "\n\n> 核对说明：回答中提到的{bad}不在本次作为依据的条文中，已删除该引用，请以上列条文为准。"


@dataclass
class Evidence:
    """What an answer may cite: the articles it was given, and the (cleaned) web text it was shown."""

    articles: list[Article]
    kb_laws: list[str]
    web_text: str = ""
    withheld: list[Article] = field(default_factory=list)  # retrieved, judged irrelevant, not given

    def kb_law_of(self, named: str | None) -> str | None | bool:
        """The knowledge-base law a named law denotes; None when unnamed; False when it is another law."""
        if named is None:
            return None
        return resolve(named, self.kb_laws) or False


def _given(ev: Evidence, law: str | None, number: int) -> list[Article]:
    return [a for a in ev.articles if a.article == number and (law is None or a.law == law)]


def _quoted(ev: Evidence, law: str | None, number: int) -> bool:
    return any(r.article == number for a in ev.articles if law is None or a.law == law
               for r in find_article_refs(a.text) if r.law is None)


def _in_web(ev: Evidence, ref: ArticleRef) -> bool:
    web = ev.web_text
    return bool(web) and ref.law in web and (article_cn(ref.article) in web or f"第{ref.article}条" in web)


def _record_kb(rec: Citations, ev: Evidence, ref: ArticleRef, law: str | None, seen: set) -> str:
    """Classify one knowledge-base citation (once per (law, article)); returns 'valid' | 'quoted' | 'invalid'."""
    given = _given(ev, law, ref.article)
    status = "valid" if given else "quoted" if _quoted(ev, law, ref.article) else "invalid"
    if (law, ref.article) in seen:
        return status
    seen.add((law, ref.article))
    if ref.article not in rec.cited:
        rec.cited.append(ref.article)
    if ref.article not in getattr(rec, status):
        getattr(rec, status).append(ref.article)
    key = [given[0].law if given else law, ref.article]
    (rec.valid_keys if status == "valid" else rec.invalid_keys if status == "invalid" else []).append(key)
    if status == "invalid" and any(a.article == ref.article and (law is None or a.law == law) for a in ev.withheld):
        rec.irrelevant.append(ref.article)
    return status


def check(answer: str, ev: Evidence) -> tuple[str, Citations]:
    """The answer with unverified citations replaced and web-only ones marked, and the record of the check."""
    rec, seen = Citations(), set()
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), applied from the end
    for ref in iter_article_refs(answer):
        law = ev.kb_law_of(ref.law)
        if law is False:  # another law's article
            label = f"{ref.law}第{ref.article}条"
            if _in_web(ev, ref):
                if label not in rec.external:
                    rec.external.append(label)
                edits.append((ref.end, ref.end, WEB_SOURCED))
            else:
                if label not in rec.external_invalid:
                    rec.external_invalid.append(label)
                edits.append((ref.start, ref.end, UNVERIFIED))
        elif _record_kb(rec, ev, ref, law, seen) == "invalid":
            edits.append((ref.number_start, ref.end, UNVERIFIED))
    text = answer
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return (_drop_bare_markers(text) if edits else text), rec


def _drop_bare_markers(text: str) -> str:
    """Sentences left with only a removed citation and connectives are dropped (sentence by sentence, so the streamed
    pieces, which end at sentence boundaries, are cleaned exactly as the whole answer is)."""
    return "".join(s for s in _SENTENCE.split(text) if UNVERIFIED not in s or _FILLER.sub("", s.replace(UNVERIFIED, "")))


def note(rec: Citations) -> str:
    """The line appended to an answer whose citations had to be removed (empty when none were)."""
    bad = [article_cn(n) for n in rec.invalid] + rec.external_invalid
    return NOTE.format(bad="、".join(bad)) if bad else ""
