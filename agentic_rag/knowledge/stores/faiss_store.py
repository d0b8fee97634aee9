"""FAISS exact inner-product store (`IndexFlatIP`): the single-machine default.

Vectors are L2-normalised by the embedder, so inner product is cosine similarity.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


class FaissStore:
    kind = "faiss"
    FILE = "vectors.faiss"

    @classmethod
    def create(cls, dim: int) -> FaissStore:
        return cls(dim)

    def __init__(self, dim: int, index=None):
        import faiss

        self.dim = dim
        self._index = index if index is not None else faiss.IndexFlatIP(dim)

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def add(self, vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"expected vectors of shape (n, {self.dim}), got {vectors.shape}")
        self._index.add(vectors)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        k = max(1, min(k, len(self))) if len(self) else 1
        if len(self) == 0:
            n = len(queries)
            return np.zeros((n, 1), np.float32), -np.ones((n, 1), np.int64)
        return self._index.search(np.ascontiguousarray(queries, dtype=np.float32), k)

    def vectors(self, ids: list[int]) -> np.ndarray:
        if not ids:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._index.reconstruct(int(i)) for i in ids])

    def save(self, directory: Path) -> list[str]:
        import faiss

        faiss.write_index(self._index, str(directory / self.FILE))
        return [self.FILE]

    @classmethod
    def load(cls, directory: Path) -> FaissStore:
        import faiss

        index = faiss.read_index(str(directory / cls.FILE))
        return cls(index.d, index)
