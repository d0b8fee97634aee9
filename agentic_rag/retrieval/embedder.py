"""Sentence-transformers embeddings, normalised, with the model's own query/document prompts.

EmbeddingGemma is trained with different prompts for queries and documents; `encode_query` /
`encode_document` apply them (and fall back to plain `encode` for models without prompts, like BGE-M3).
Vectors are L2-normalised so FAISS inner product is cosine similarity.

Query embedding runs with its own torch thread count (one thread is fastest for one short query on two busy
cores: bench/results/bench.json) and a small cache, because the router and the retrieval stage embed the same
question.
"""
from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from functools import lru_cache

import numpy as np

from .models import ResolvedModel

log = logging.getLogger(__name__)


QUERY_CACHE_SIZE = 256


class Embedder:
    def __init__(self, resolved: ResolvedModel, batch_size: int = 16, query_threads: int | None = None):
        from sentence_transformers import SentenceTransformer

        self.model_id = resolved.model_id
        self.batch_size = batch_size
        self._model = SentenceTransformer(resolved.path, device="cpu", local_files_only=True)
        self.dim = int(self._model.get_embedding_dimension())
        # torch modules are not documented as safe for concurrent forward passes; one at a time.
        self._lock = threading.Lock()
        self._query_threads = query_threads
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        log.info("embedder %s loaded (dim %d)", self.model_id, self.dim)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                for text, vec in zip(missing, self._encode_queries(missing)):
                    self._cache[text] = vec
            rows = [self._cache[t] for t in texts]
            for text in texts:
                self._cache.move_to_end(text)
            while len(self._cache) > QUERY_CACHE_SIZE:
                self._cache.popitem(last=False)
        return np.ascontiguousarray(np.stack(rows), dtype=np.float32) if rows else np.zeros((0, self.dim), np.float32)

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        import torch

        threads = torch.get_num_threads()
        if self._query_threads:
            torch.set_num_threads(self._query_threads)
        try:
            return self._model.encode_query(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                            convert_to_numpy=True, show_progress_bar=False)
        finally:
            torch.set_num_threads(threads)

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        with self._lock:
            vecs = self._model.encode_document(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                               convert_to_numpy=True, show_progress_bar=show_progress)
        return np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(texts), self.dim)


@lru_cache(maxsize=4)
def load_embedder(resolved: ResolvedModel, batch_size: int = 16, query_threads: int | None = None) -> Embedder:
    """One instance per model per process: loading costs seconds and a gigabyte."""
    return Embedder(resolved, batch_size=batch_size, query_threads=query_threads)
