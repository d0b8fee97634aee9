"""Chinese tokenisation for the keyword channel: jieba + a legal user dictionary + stopwords.

Why not plain ``jieba.lcut``: the naive keyword arm (see the retrieval baselines) ranks wrong articles high on
colloquial questions. Three fixes live here:

* a legal user dictionary keeps terms such as 个人信息处理者, 单独同意, 去标识化 whole;
* search-mode cutting also emits the sub-words of long terms, so 处理者 still matches 个人信息处理者;
* stopwords and single characters are dropped (question words, particles, 规定/法律 that every article has);
* a small colloquial → statute vocabulary (孩子 → 未成年人/不满十四周岁, 杀熟 → 自动化决策 …) is added to
  *queries* only (`expand_query`), so the keyword channel can meet the statute's wording.

A private `jieba.Tokenizer` instance is used (never the global one), initialised once under a lock, so the
dictionary does not leak into other users of jieba and concurrent first calls are safe.
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path

import jieba

jieba.setLogLevel(logging.WARNING)  # its INFO/DEBUG lines about the prefix dict are noise for users

_RESOURCES = resources.files("agentic_rag") / "resources"
_WORD_RE = re.compile(r"[\w\u4e00-\u9fff]")
_PUNCT_RE = re.compile(r"[^\w\u4e00-\u9fff]+")


class LegalTokenizer:
    """Tokenises statute text and questions the same way, so BM25 compares like with like."""

    def __init__(self, user_dict: Path | None = None, stopwords: Path | None = None,
                 colloquial: Path | None = None):
        self._user_dict = Path(user_dict or _RESOURCES / "legal_dict.txt")
        self._stopwords_path = Path(stopwords or _RESOURCES / "stopwords.txt")
        self._colloquial_path = Path(colloquial or _RESOURCES / "colloquial_terms.json")
        self._lock = threading.Lock()
        self._jieba: jieba.Tokenizer | None = None

    @cached_property
    def stopwords(self) -> frozenset[str]:
        return frozenset(w.strip() for w in self._stopwords_path.read_text(encoding="utf-8").splitlines() if w.strip())

    @cached_property
    def legal_terms(self) -> frozenset[str]:
        """The words of the legal user dictionary (query analysis uses them to spot keyword queries)."""
        lines = self._user_dict.read_text(encoding="utf-8").splitlines()
        return frozenset(line.split()[0] for line in lines if line.strip())

    @cached_property
    def colloquial(self) -> dict[str, list[str]]:
        data = json.loads(self._colloquial_path.read_text(encoding="utf-8"))
        return {k: v for k, v in data.items() if not k.startswith("_")}

    @cached_property
    def version(self) -> str:
        """Identifies the tokenisation (jieba version + dictionaries): the index manifest records it."""
        h = hashlib.sha256()
        for p in (self._user_dict, self._stopwords_path):
            h.update(p.read_bytes())
        return f"jieba-{jieba.__version__}+legal-{h.hexdigest()[:12]}"

    def _tokenizer(self) -> jieba.Tokenizer:
        with self._lock:
            if self._jieba is None:
                tk = jieba.Tokenizer()
                tk.initialize()
                tk.load_userdict(str(self._user_dict))
                self._jieba = tk
            return self._jieba

    def tokenize(self, text: str) -> list[str]:
        """Search-mode jieba tokens without stopwords, punctuation and single characters."""
        out = []
        for tok in self._tokenizer().cut_for_search(text):
            tok = tok.strip().lower()
            if len(tok) < 2 or tok in self.stopwords or not _WORD_RE.search(tok):
                continue
            out.append(tok)
        return out

    def expand_query(self, text: str) -> list[str]:
        """Query tokens plus the statute terms of the colloquial words found in the question."""
        tokens = self.tokenize(text)
        extra: list[str] = []
        for word, terms in self.colloquial.items():
            if word in text:
                for term in terms:
                    extra.extend(self.tokenize(term))
        return tokens + [t for t in dict.fromkeys(extra) if t not in tokens]


def hanzi_bigrams(text: str) -> set[str]:
    """The distinct 2-grams of the text's Chinese characters and digits (all else dropped): the answer stage's
    measure of how much a question and a clause share."""
    chars = re.sub(r"[^\u4e00-\u9fff0-9]", "", text)
    return {chars[i:i + 2] for i in range(len(chars) - 1)}


def char_bigrams(text: str) -> list[str]:
    """Overlapping character 2-grams of the text with punctuation removed (the `gram` matcher's terms)."""
    out: list[str] = []
    for run in _PUNCT_RE.split(text.lower()):
        out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return out


@lru_cache(maxsize=1)
def default_legal_terms() -> frozenset[str]:
    """The shipped legal dictionary's words (what query analysis uses when it has no tokenizer at hand)."""
    return LegalTokenizer().legal_terms
