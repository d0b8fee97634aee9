"""A real LocalRetriever over the real PIPL text with a fast fake embedder: stage and workflow tests without models.

`BigramEmbedder` hashes character 2-grams into a normalised vector — a crude but deterministic bag-of-words
"embedding", so the dense channel ranks articles that share words with the question first, and its cosine behaves
like a similarity (unrelated text scores low). Everything else (index files, FAISS, jieba BM25, fusion, exact
lookup) is the production code.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import numpy as np

from agentic_rag.config import PROJECT_ROOT, Settings
from agentic_rag.knowledge.corpus import file_sha256, load_corpus
from agentic_rag.knowledge.index import build_index, load_index
from agentic_rag.retrieval.retriever import LocalRetriever
from agentic_rag.retrieval.tokenizer import LegalTokenizer, char_bigrams

CORPUS = PROJECT_ROOT / "chinese_law.txt"
STRUCTURE = PROJECT_ROOT / "agentic_rag" / "resources" / "pipl_structure.jsonl"


class BigramEmbedder:
    model_id = "bigram-hash-256"
    dim = 256

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, np.float32)
        for gram in char_bigrams(text):
            v[int.from_bytes(hashlib.md5(gram.encode()).digest()[:4], "little") % self.dim] += 1.0
        norm = np.linalg.norm(v)
        return v / norm if norm else v

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts])

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def build_fake_index(data_dir: Path, corpus: Path = CORPUS, laws: list[str] | None = None) -> Path:
    docs = load_corpus(corpus, structure=STRUCTURE if corpus == CORPUS else None, laws=laws)
    build_index(docs, BigramEmbedder(), LegalTokenizer(), data_dir, corpus_source=str(corpus),
                corpus_file_sha256=file_sha256(corpus))
    return data_dir


@lru_cache(maxsize=4)
def fake_retriever(data_dir: Path, min_vector_score: float = 0.0) -> LocalRetriever:
    # The fake embedder is a crude bag of bigrams: a small BM25 voice (the weights the agent used before
    # cross-validation settled on the dense order) keeps its rankings plausible for the workflow tests.
    weights = {t: {"bm25": 0.05} for t in ("semantic", "keyword", "exact")}
    settings = Settings(_env_file=None, data_dir=data_dir, reranker="none", min_vector_score=min_vector_score,
                        fusion_weights=weights)
    return LocalRetriever(load_index(data_dir), BigramEmbedder(), LegalTokenizer(), None, settings)
