"""Sentence-transformers embeddings, normalised, with the model's own query/document prompts.

EmbeddingGemma is trained with different prompts for queries and documents; `encode_query` /
`encode_document` apply them (and fall back to plain `encode` for models without prompts, like BGE-M3).
Vectors are L2-normalised so FAISS inner product is cosine similarity.
"""
from __future__ import annotations

import logging
import threading
from functools import lru_cache

import numpy as np

from .models import ResolvedModel

log = logging.getLogger(__name__)


class Embedder:
    def __init__(self, resolved: ResolvedModel, batch_size: int = 16):
        from sentence_transformers import SentenceTransformer

        self.model_id = resolved.model_id
        self.batch_size = batch_size
        self._model = SentenceTransformer(resolved.path, device="cpu", local_files_only=True)
        self.dim = int(self._model.get_embedding_dimension())
        # torch modules are not documented as safe for concurrent forward passes; one at a time.
        self._lock = threading.Lock()
        log.info("embedder %s loaded (dim %d)", self.model_id, self.dim)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            vecs = self._model.encode_query(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                            convert_to_numpy=True, show_progress_bar=False)
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        with self._lock:
            vecs = self._model.encode_document(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                               convert_to_numpy=True, show_progress_bar=show_progress)
        return np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(texts), self.dim)


@lru_cache(maxsize=4)
def load_embedder(resolved: ResolvedModel, batch_size: int = 16) -> Embedder:
    """One instance per model per process: loading costs seconds and a gigabyte."""
    return Embedder(resolved, batch_size=batch_size)
