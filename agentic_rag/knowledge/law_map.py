"""Where each law sits in embedding space: the knowledge base's laws and the other national laws, one vector each.

A law is represented by its title and first articles (which say what it governs: "为了规范劳动合同…"); the other
national laws come from `resources/law_catalogue.jsonl`, the knowledge base's own from its documents, built the
same way so that they compare fairly. The router asks whether a question sits closer to a law the knowledge base
does not hold than to every law it holds (劳动合同 questions against a PIPL knowledge base). Built with the index
(`law_vectors.npy` + `laws.json`, listed in the manifest); an index without them simply has no such signal.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from .corpus import Document

LAWS_FILE = "laws.json"
VECTORS_FILE = "law_vectors.npy"
FIRST_ARTICLES = 3
MAX_CHARS = 300


@dataclass
class LawMap:
    titles: list[str]
    in_kb: np.ndarray  # bool per title
    vectors: np.ndarray  # (n, dim), normalised

    def nearest(self, query_vector: np.ndarray) -> dict:
        """The closest knowledge-base law and the closest other law, with their cosines."""
        cos = self.vectors @ query_vector
        kb, other = np.flatnonzero(self.in_kb), np.flatnonzero(~self.in_kb)
        best = {}
        for name, rows in (("kb", kb), ("other", other)):
            if len(rows):
                i = rows[int(np.argmax(cos[rows]))]
                best[f"{name}_law"], best[f"{name}_cosine"] = self.titles[i], float(cos[i])
        return best


def entries(docs: list[Document]) -> list[tuple[str, bool, str]]:
    """(title, in the knowledge base, text) for every law of the knowledge base and of the catalogue."""
    own: dict[str, list[str]] = {}
    for d in docs:
        parts = own.setdefault(d.law, [])
        if len(parts) < FIRST_ARTICLES:
            parts.append(d.text)
    rows = [(law, True, (f"《{law}》" + "".join(parts))[:MAX_CHARS]) for law, parts in own.items()]
    catalogue = (resources.files("agentic_rag") / "resources" / "law_catalogue.jsonl").read_text(encoding="utf-8")
    for entry in map(json.loads, catalogue.splitlines()):
        if entry["law"] not in own:
            rows.append((entry["law"], False, entry["text"]))
    return rows


def write_law_map(directory: Path, docs: list[Document], embedder) -> list[str]:
    rows = entries(docs)
    vectors = embedder.encode_documents([text for _, _, text in rows])
    np.save(directory / VECTORS_FILE, np.asarray(vectors, dtype=np.float32), allow_pickle=False)
    (directory / LAWS_FILE).write_text(json.dumps([{"law": t, "in_kb": k} for t, k, _ in rows], ensure_ascii=False),
                                       encoding="utf-8")
    return [LAWS_FILE, VECTORS_FILE]


def load_law_map(directory: Path) -> LawMap | None:
    if not (directory / LAWS_FILE).exists():
        return None
    laws = json.loads((directory / LAWS_FILE).read_text(encoding="utf-8"))
    vectors = np.load(directory / VECTORS_FILE, allow_pickle=False)
    return LawMap([x["law"] for x in laws], np.array([x["in_kb"] for x in laws], dtype=bool), vectors)
