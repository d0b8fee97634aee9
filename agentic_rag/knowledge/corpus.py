"""Statute corpora → `Document`s with metadata.

Two sources are understood:

* the one-article-per-line text format of ``chinese_law.txt``:
  ``《中华人民共和国个人信息保护法》第二十八条规定，<article text>``, optionally enriched with chapter/section
  from a JSONL structure file (``{"article": 28, "chapter": ..., "section": ...}``);
* the LawRefBook JSONL(.gz) dump (``law, category, path, article, seq, text``), keyed by ``path#article``.

Malformed lines are collected with their line numbers; `load_*` raises `CorpusError` listing them unless the
caller explicitly allows skipping them, in which case each skipped line is logged. Nothing is dropped silently.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..legal.numerals import cn_to_int
from ..legal.refs import NUMBER

log = logging.getLogger(__name__)

_LINE_RE = re.compile(
    rf"^《(?P<law>[^《》]+)》(?P<article_cn>第(?P<num>{NUMBER})条(?:之[一二三四五六七八九十]+)?)"
    r"(?:规定)?[，,：:]?\s*(?P<text>.*)$"
)
_ARTICLE_RE = re.compile(rf"^第(?P<num>{NUMBER})条")


@dataclass
class Document:
    """One statute article: the unit of retrieval and of citation."""

    id: str
    law: str
    article_cn: str
    text: str
    article: int | None = None
    chapter: str | None = None
    section: str | None = None
    source: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def title(self) -> str:
        """How an answer cites it: 《个人信息保护法》第二十八条."""
        return f"《{self.law}》{self.article_cn}"

    @property
    def index_text(self) -> str:
        """What the embedder and BM25 see: the citation header (it disambiguates laws) and the text."""
        return f"{self.title}：{self.text}"

    @property
    def keyword_text(self) -> str:
        """What the keyword channels see: no article number (its numeral pieces, 二十/十四, would match ages)."""
        return f"{self.law} {self.text}"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Document:
        return cls(**d)


@dataclass
class LineProblem:
    line_no: int
    reason: str
    snippet: str

    def __str__(self) -> str:
        return f"line {self.line_no}: {self.reason}: {self.snippet!r}"


class CorpusError(ValueError):
    """The corpus has malformed lines; the message lists them with line numbers."""

    def __init__(self, path: Path | str, problems: list[LineProblem]):
        self.problems = problems
        shown = "\n  ".join(str(p) for p in problems[:20])
        more = f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"{path}: {len(problems)} malformed line(s):\n  {shown}{more}\n"
                         "Fix them, or pass --allow-malformed to index the rest and skip these (each is logged).")


@dataclass
class ParseResult:
    documents: list[Document]
    problems: list[LineProblem]

    def checked(self, path: Path | str, allow_malformed: bool) -> list[Document]:
        """Return the documents, raising on problems unless the caller accepted skipping them."""
        if self.problems and not allow_malformed:
            raise CorpusError(path, self.problems)
        for p in self.problems:
            log.warning("skipped malformed corpus line %s", p)
        return self.documents


def parse_law_lines(lines: Iterable[str], source: str = "") -> ParseResult:
    """Parse the one-article-per-line format. Blank lines are separators, not problems."""
    docs: list[Document] = []
    problems: list[LineProblem] = []
    seen: dict[str, int] = {}
    for line_no, raw in enumerate(lines, start=1):
        line = raw.strip().lstrip("\ufeff")
        if not line:
            continue
        m = _LINE_RE.match(line)
        if not m:
            problems.append(LineProblem(line_no, "expected 《法律名》第X条规定，正文", line[:60]))
            continue
        text = m["text"].strip()
        if not text:
            problems.append(LineProblem(line_no, "article has no text", line[:60]))
            continue
        try:
            number = cn_to_int(m["num"])
        except ValueError:
            problems.append(LineProblem(line_no, f"bad article number {m['num']!r}", line[:60]))
            continue
        doc_id = f"{m['law']}#{m['article_cn']}"
        if doc_id in seen:
            problems.append(LineProblem(line_no, f"duplicate of line {seen[doc_id]} ({m['article_cn']})", line[:60]))
            continue
        seen[doc_id] = line_no
        docs.append(Document(id=doc_id, law=m["law"], article_cn=m["article_cn"], text=text,
                             article=number, source=source))
    return ParseResult(docs, problems)


def apply_structure(docs: list[Document], structure_path: Path) -> None:
    """Attach chapter/section from a JSONL structure file (one object per article number). A row that carries the
    article's text applies only to an article with that text: the default file describes the PIPL, and a user's own
    corpus (CORPUS_PATH) must not get the PIPL's chapters by article number."""
    by_article: dict[int, dict] = {}
    with open(structure_path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                by_article[int(row["article"])] = row
            except (ValueError, KeyError, TypeError) as e:
                raise CorpusError(structure_path, [LineProblem(line_no, f"bad structure row ({e})", line[:60])]) from e
    missing = []
    for doc in docs:
        row = by_article.get(doc.article) if doc.article is not None else None
        if row is None or row.get("text") not in (None, doc.text):  # no row, or the same number in another law
            missing.append(doc)
            continue
        doc.chapter, doc.section = row.get("chapter"), row.get("section")
    if docs and len(missing) == len(docs):
        log.warning("%s describes none of these %d articles: no chapters attached", structure_path.name, len(docs))
        return
    for doc in missing:
        log.warning("%s: no chapter/section for %s in %s", doc.id, doc.article_cn, structure_path)


def load_law_text(path: Path, structure: Path | None = None, allow_malformed: bool = False) -> list[Document]:
    """Load a one-article-per-line file (e.g. chinese_law.txt)."""
    with open(path, encoding="utf-8") as f:
        docs = parse_law_lines(f, source=path.name).checked(path, allow_malformed)
    if structure is not None and structure.exists():
        apply_structure(docs, structure)
    return docs


def _open_text(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def parse_lawrefbook(path: Path, keys: set[tuple[str, str]] | None = None,
                     national_only: bool = False, laws: set[str] | None = None) -> ParseResult:
    """Parse the LawRefBook dump; `keys` restricts to (path, article) pairs, `national_only` drops DLC/ laws,
    `laws` keeps the named laws (full titles) only."""
    docs: list[Document] = []
    problems: list[LineProblem] = []
    with _open_text(path) as f:
        for line_no, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                law, rel, art, text = row["law"], row["path"], row["article"], row["text"]
            except (ValueError, KeyError, TypeError) as e:
                problems.append(LineProblem(line_no, f"bad JSON row ({type(e).__name__})", line[:60]))
                continue
            if national_only and str(row.get("category", "")).startswith("DLC/"):
                continue
            if keys is not None and (rel, art) not in keys:
                continue
            if laws is not None and law not in laws:
                continue
            if not text or not str(text).strip():
                problems.append(LineProblem(line_no, "article has no text", line[:60]))
                continue
            m = _ARTICLE_RE.match(art)
            number = cn_to_int(m["num"]) if m else None
            docs.append(Document(id=f"{rel}#{art}", law=law, article_cn=art, text=str(text).strip(),
                                 article=number, source=rel, extra={"category": row.get("category", "")}))
    return ParseResult(docs, problems)


def load_corpus(path: Path, structure: Path | None = None, allow_malformed: bool = False,
                keys_file: Path | None = None, national_only: bool = False,
                laws: list[str] | None = None) -> list[Document]:
    """Load any supported corpus by its file name: ``*.jsonl[.gz]`` = LawRefBook, anything else = law text."""
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        keys = None
        if keys_file is not None:
            with open(keys_file, encoding="utf-8") as f:
                keys = {(r["path"], r["article"]) for r in map(json.loads, filter(str.strip, f))}
        docs = parse_lawrefbook(path, keys=keys, national_only=national_only,
                                laws=set(laws) if laws else None).checked(path, allow_malformed)
        missing = sorted(set(laws or ()) - {d.law for d in docs})
        if missing:
            raise CorpusError(path, [LineProblem(0, "no article of this law in the corpus (use the full title)", m)
                                     for m in missing])
        return docs
    return load_law_text(path, structure=structure, allow_malformed=allow_malformed)


def corpus_sha256(docs: Iterable[Document]) -> str:
    """A hash of what is indexed (ids and texts), independent of the file it came from."""
    h = hashlib.sha256()
    for d in docs:
        h.update(d.id.encode())
        h.update(b"\x00")
        h.update(d.text.encode())
        h.update(b"\x01")
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def iter_jsonl(path: Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)
